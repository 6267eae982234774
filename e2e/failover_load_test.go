package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotd/slotd/slots"
)

// foLoad is the write load of the failover tests and the probe of their
// measurements: go-redis ClusterClient writers, each write a new key with a
// unique value. Every acknowledged write is recorded with its slot and the
// times it was sent and acknowledged; the WAIT writer follows each write
// with WAIT 1 on the same master's connection and records the writes that
// at least one replica acknowledged.
type foLoad struct {
	rdb  *redis.ClusterClient
	ctx  context.Context
	stop chan struct{}
	wg   sync.WaitGroup

	mu     sync.Mutex
	acks   []foAck
	waited []foAck // acknowledged with WAIT 1 >= 1
	errs   int
}

type foAck struct {
	key, val   string
	slot       int
	sent, done time.Time
}

const (
	foPlainWriters = 3
	foWaitTimeout  = "1000" // ms, WAIT's timeout
)

var quietGoRedis sync.Once

func startFOLoad(t *testing.T, addrs []string) *foLoad {
	// go-redis logs every refused dial to the killed node.
	quietGoRedis.Do(func() { redis.SetLogger(quietLogger{}) })
	l := &foLoad{ctx: context.Background(), stop: make(chan struct{})}
	l.rdb = redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: addrs, DisableIdentity: true,
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 3 * time.Second, WriteTimeout: 3 * time.Second,
		MaxRetries: 0, // one attempt per write; the writer loop retries
	})
	for g := 0; g < foPlainWriters; g++ {
		l.wg.Add(1)
		go l.plainWriter(g)
	}
	l.wg.Add(1)
	go l.waitWriter(foPlainWriters)
	t.Cleanup(l.close)
	return l
}

func (l *foLoad) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

func (l *foLoad) plainWriter(g int) {
	defer l.wg.Done()
	for n := 0; !l.stopped(); n++ {
		key := "fo:" + strconv.Itoa(g) + ":" + strconv.Itoa(n)
		val := "v" + strconv.Itoa(g) + "-" + strconv.Itoa(n) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		sent := time.Now()
		if err := l.rdb.Set(l.ctx, key, val, 0).Err(); err != nil {
			l.failed()
			continue
		}
		l.record(foAck{key: key, val: val, slot: slots.OfString(key), sent: sent, done: time.Now()}, false)
		time.Sleep(time.Millisecond)
	}
}

// waitWriter sends SET and WAIT 1 in one pipeline to the key's master.
func (l *foLoad) waitWriter(g int) {
	defer l.wg.Done()
	for n := 0; !l.stopped(); n++ {
		key := "fo:" + strconv.Itoa(g) + ":" + strconv.Itoa(n)
		val := "w" + strconv.Itoa(g) + "-" + strconv.Itoa(n) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		sent := time.Now()
		m, err := l.rdb.MasterForKey(l.ctx, key)
		if err != nil {
			l.failed()
			continue
		}
		var set *redis.StatusCmd
		var wait *redis.Cmd
		_, err = m.Pipelined(l.ctx, func(p redis.Pipeliner) error {
			set = p.Set(l.ctx, key, val, 0)
			wait = p.Do(l.ctx, "WAIT", "1", foWaitTimeout)
			return nil
		})
		if set == nil || set.Err() != nil {
			// MOVED or a dead node: the slot map is stale.
			l.rdb.ReloadState(l.ctx)
			l.failed()
			continue
		}
		a := foAck{key: key, val: val, slot: slots.OfString(key), sent: sent, done: time.Now()}
		k, werr := wait.Int64()
		l.record(a, err == nil && werr == nil && k >= 1)
	}
}

func (l *foLoad) failed() {
	l.mu.Lock()
	l.errs++
	l.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
}

func (l *foLoad) record(a foAck, waited bool) {
	l.mu.Lock()
	l.acks = append(l.acks, a)
	if waited {
		l.waited = append(l.waited, a)
	}
	l.mu.Unlock()
}

func (l *foLoad) close() {
	select {
	case <-l.stop:
		return
	default:
	}
	close(l.stop)
	l.wg.Wait()
	l.rdb.Close()
}

// snapshot returns copies of the acknowledged writes so far.
func (l *foLoad) snapshot() (acks, waited []foAck) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]foAck(nil), l.acks...), append([]foAck(nil), l.waited...)
}

// slotRange is the slots lo..hi.
type slotRange [2]int

func (r slotRange) has(slot int) bool { return slot >= r[0] && slot <= r[1] }

// recovered reports whether a write to r sent after t0 was acknowledged.
func (l *foLoad) recovered(r slotRange, t0 time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.acks) - 1; i >= 0 && l.acks[i].done.After(t0); i-- {
		if a := l.acks[i]; r.has(a.slot) && a.sent.After(t0) {
			return true
		}
	}
	return false
}

// gap is the longest time between consecutive acknowledgements of writes
// to r in [from, to], counting from the last one before from.
func (l *foLoad) gap(r slotRange, from, to time.Time) time.Duration {
	l.mu.Lock()
	var done []time.Time
	for _, a := range l.acks {
		if r.has(a.slot) && !a.done.After(to) {
			done = append(done, a.done)
		}
	}
	l.mu.Unlock()
	slices.SortFunc(done, func(a, b time.Time) int { return a.Compare(b) })
	var g time.Duration
	var prev time.Time
	for _, d := range done {
		if d.After(from) && !prev.IsZero() {
			g = max(g, d.Sub(prev))
		}
		prev = d
	}
	return g
}

// foMissing reads every write through a new cluster client and returns those
// whose value is not there (at most 10 described, and the count).
func foMissing(t *testing.T, addrs []string, writes []foAck) ([]string, int) {
	t.Helper()
	ctx := context.Background()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, DisableIdentity: true})
	defer rdb.Close()
	var lost []string
	n := 0
	for i := 0; i < len(writes); i += 500 {
		batch := writes[i:min(i+500, len(writes))]
		var cmds []*redis.StringCmd
		var err error
		for try := 0; try < 20; try++ {
			cmds = cmds[:0]
			_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, w := range batch {
					cmds = append(cmds, p.Get(ctx, w.key))
				}
				return nil
			})
			if err == nil || err == redis.Nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil && err != redis.Nil {
			t.Fatalf("reading the writes back: %v", err)
		}
		for j, c := range cmds {
			if v, _ := c.Result(); v != batch[j].val {
				n++
				if len(lost) < 10 {
					lost = append(lost, fmt.Sprintf("%s=%q (got %q, acked %s)", batch[j].key, batch[j].val, v, batch[j].done.Format("15:04:05.000")))
				}
			}
		}
	}
	return lost, n
}

type quietLogger struct{}

func (quietLogger) Printf(ctx context.Context, format string, v ...any) {}
