package keyspace

import "sync/atomic"

// counterShards is the number of cache lines a Counter spreads over.
const counterShards = 8

// Counter is a statistics counter that goroutines on different cores can
// bump without sharing a cache line: each adds to its own shard (chosen by
// a caller-provided hint such as a client id) and Load sums the shards.
type Counter struct {
	shards [counterShards]struct {
		v atomic.Int64
		_ [56]byte
	}
}

// AddAt adds n to the shard picked by hint.
func (c *Counter) AddAt(hint int64, n int64) { c.shards[hint&(counterShards-1)].v.Add(n) }

// Add adds n to the first shard; for callers off the hot path.
func (c *Counter) Add(n int64) { c.shards[0].v.Add(n) }

// Load returns the sum of all shards.
func (c *Counter) Load() int64 {
	var t int64
	for i := range c.shards {
		t += c.shards[i].v.Load()
	}
	return t
}

// Store sets the counter to n (for CONFIG RESETSTAT).
func (c *Counter) Store(n int64) {
	for i := range c.shards {
		c.shards[i].v.Store(0)
	}
	c.shards[0].v.Store(n)
}
