package keyspace

import "sync/atomic"

// Object is implemented by every collection value held in Entry.Obj.
type Object interface {
	// Encoding is the name OBJECT ENCODING prints: what redis-server would
	// use for the same value under the same limits.
	Encoding() string
	// Len is the number of elements.
	Len() int
	// MemoryUsage estimates the bytes the value holds, for MEMORY USAGE and
	// maxmemory accounting.
	MemoryUsage() int
	// Clone returns a deep copy (COPY).
	Clone() Object
}

// Limits are the thresholds at which redis-server changes a value's
// encoding (the *-max-listpack-* and set-max-intset-entries directives).
type Limits struct {
	HashMaxListpackEntries int
	HashMaxListpackValue   int
	SetMaxIntsetEntries    int
	ZSetMaxListpackEntries int
	ZSetMaxListpackValue   int
	ListMaxListpackSize    int // negative: -1..-5 = 4KB..64KB per node
	ListCompressDepth      int
}

var limits atomic.Pointer[Limits]

func init() {
	limits.Store(&Limits{
		HashMaxListpackEntries: 512,
		HashMaxListpackValue:   64,
		SetMaxIntsetEntries:    512,
		ZSetMaxListpackEntries: 128,
		ZSetMaxListpackValue:   64,
		ListMaxListpackSize:    -2,
	})
}

// CurrentLimits returns the encoding thresholds in force.
func CurrentLimits() *Limits { return limits.Load() }

// SetLimits replaces the encoding thresholds (on CONFIG SET).
func SetLimits(l Limits) { limits.Store(&l) }
