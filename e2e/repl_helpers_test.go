package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Replication tests take their ports from 25500-26499 (bus ports +10000),
// so that they do not collide with the other suites running beside them;
// SLOTD_E2E_REPL_PORTS ("lo-hi") gives another range.
var replNextPort atomic.Int32

func replPort(t *testing.T) int {
	t.Helper()
	lo, hi := 25500, 26499
	if spec := os.Getenv("SLOTD_E2E_REPL_PORTS"); spec != "" {
		a, b, _ := strings.Cut(spec, "-")
		lo, _ = strconv.Atoi(a)
		hi, _ = strconv.Atoi(b)
	}
	n := hi - lo + 1
	for i := 0; i < n; i++ {
		p := lo + int(replNextPort.Add(1)-1)%n
		ok := true
		for _, q := range []int{p, p + 10000} {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(q))
			if err != nil {
				ok = false
				break
			}
			ln.Close()
		}
		if ok {
			return p
		}
	}
	t.Fatalf("no free port in %d-%d", lo, hi)
	return 0
}

// startReplProc starts bin on a port of the replication range.
func startReplProc(t *testing.T, name, bin string, args ...string) *server {
	t.Helper()
	return startServerOn(t, replPort, name, bin, args...)
}

func replSlotd(t *testing.T, extra ...string) *server {
	t.Helper()
	// No background saves: they would only take CPU from the test.
	args := append(append([]string(nil), commonArgs...), "--save", "")
	args = append(args, extra...)
	return startReplProc(t, "slotd", slotdBinary(t), args...)
}

func replRedis(t *testing.T, extra ...string) *server {
	t.Helper()
	args := append(append(append([]string(nil), commonArgs...), redisOnlyArgs...), extra...)
	return startReplProc(t, "redis-server", redisServerBinary(t), args...)
}

func replClient(t *testing.T, s *server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr:            s.Addr(),
		Protocol:        2,
		DisableIdentity: true,
		DialTimeout:     5 * time.Second,
		ReadTimeout:     60 * time.Second,
		MaxRetries:      -1,
		PoolSize:        4,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// infoField returns one field of INFO section.
func replInfo(ctx context.Context, c *redis.Client, section, field string) string {
	s, err := c.Info(ctx, section).Result()
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}

func replInt(ctx context.Context, c *redis.Client, section, field string) int64 {
	n, _ := strconv.ParseInt(replInfo(ctx, c, section, field), 10, 64)
	return n
}

// waitUntil polls cond until it holds or d passes.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool, diag ...func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			for _, f := range diag {
				t.Log(f())
			}
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitSynced waits until replica's link is up and its offset equals the
// master's.
func waitSynced(t *testing.T, ctx context.Context, master, replica *redis.Client, d time.Duration) {
	t.Helper()
	waitUntil(t, d, "replica in sync", func() bool {
		if replInfo(ctx, replica, "replication", "master_link_status") != "up" {
			return false
		}
		mo := replInt(ctx, master, "replication", "master_repl_offset")
		ro := replInt(ctx, replica, "replication", "master_repl_offset")
		return mo > 0 && mo == ro || mo == 0 && ro == 0
	})
}

// mixedWrites sends n pipelined writes of several types over a small key
// space, so that keys are created, changed, expired and deleted.
func mixedWrites(ctx context.Context, c *redis.Client, seed uint64, n int) error {
	r := rand.New(rand.NewPCG(seed, 7))
	const batch = 200
	for done := 0; done < n; done += batch {
		p := c.Pipeline()
		for i := 0; i < batch; i++ {
			k := strconv.Itoa(r.IntN(5000))
			switch r.IntN(12) {
			case 0, 1, 2:
				p.Set(ctx, "s:"+k, strconv.Itoa(r.IntN(1e6)), 0)
			case 3:
				p.Incr(ctx, "n:"+k)
			case 4:
				p.LPush(ctx, "l:"+k, r.IntN(100))
			case 5:
				p.HSet(ctx, "h:"+k, "f"+strconv.Itoa(r.IntN(20)), r.IntN(100))
			case 6:
				p.SAdd(ctx, "z:"+k, r.IntN(50))
			case 7:
				p.ZAdd(ctx, "o:"+k, redis.Z{Score: float64(r.IntN(100)), Member: strconv.Itoa(r.IntN(30))})
			case 8:
				p.Del(ctx, "s:"+k)
			case 9:
				p.Set(ctx, "e:"+k, "x", time.Duration(1+r.IntN(300))*time.Millisecond)
			case 10:
				p.Expire(ctx, "s:"+k, time.Duration(100+r.IntN(100))*time.Second)
			case 11:
				p.Append(ctx, "s:"+k, "a")
			}
		}
		if _, err := p.Exec(ctx); err != nil && err != redis.Nil {
			return err
		}
	}
	return nil
}

// readKeys returns, for each key, its type, its value in a canonical text
// (sorted where the type has no order) and its PTTL.
func readKeys(ctx context.Context, c *redis.Client, keys []string) (vals []string, ttls []time.Duration) {
	p := c.Pipeline()
	types := make([]*redis.StatusCmd, len(keys))
	pttls := make([]*redis.DurationCmd, len(keys))
	for i, k := range keys {
		types[i] = p.Type(ctx, k)
		pttls[i] = p.PTTL(ctx, k)
	}
	p.Exec(ctx)
	p = c.Pipeline()
	cmds := make([]redis.Cmder, len(keys))
	for i, k := range keys {
		switch types[i].Val() {
		case "string":
			cmds[i] = p.Get(ctx, k)
		case "list":
			cmds[i] = p.LRange(ctx, k, 0, -1)
		case "set":
			cmds[i] = p.SMembers(ctx, k)
		case "hash":
			cmds[i] = p.HGetAll(ctx, k)
		case "zset":
			cmds[i] = p.ZRangeWithScores(ctx, k, 0, -1)
		}
	}
	p.Exec(ctx)
	for i := range keys {
		v := types[i].Val() + " "
		switch cmd := cmds[i].(type) {
		case *redis.StringCmd:
			v += cmd.Val()
		case *redis.StringSliceCmd:
			l := cmd.Val()
			if types[i].Val() == "set" {
				slices.Sort(l)
			}
			v += strings.Join(l, ",")
		case *redis.MapStringStringCmd:
			m := cmd.Val()
			var kv []string
			for f, x := range m {
				kv = append(kv, f+"="+x)
			}
			slices.Sort(kv)
			v += strings.Join(kv, ",")
		case *redis.ZSliceCmd:
			v += fmt.Sprint(cmd.Val())
		}
		vals = append(vals, v)
		ttls = append(ttls, pttls[i].Val())
	}
	return vals, ttls
}

// compareKeyspaces checks that a and b hold the same keys with the same
// values and, within slack, the same TTLs.
func compareKeyspaces(t *testing.T, ctx context.Context, a, b *redis.Client) {
	t.Helper()
	na, _ := a.DBSize(ctx).Result()
	nb, _ := b.DBSize(ctx).Result()
	var keys []string
	iter := a.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatalf("SCAN: %v", err)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	diffs := 0
	for i := 0; i < len(keys); i += 1000 {
		part := keys[i:min(i+1000, len(keys))]
		va, ta := readKeys(ctx, a, part)
		vb, tb := readKeys(ctx, b, part)
		for j, k := range part {
			ttlOK := (ta[j] < 0) == (tb[j] < 0) && (ta[j] < 0 || (ta[j]-tb[j]).Abs() < 5*time.Second)
			if va[j] != vb[j] || !ttlOK {
				// A key with a TTL may expire between the two reads.
				if ta[j] >= 0 && ta[j] < 2*time.Second || tb[j] >= 0 && tb[j] < 2*time.Second {
					continue
				}
				if diffs < 10 {
					t.Errorf("key %q differs: %.200s ttl %v / %.200s ttl %v", k, va[j], ta[j], vb[j], tb[j])
				}
				diffs++
			}
		}
	}
	if diffs > 0 {
		t.Fatalf("%d of %d keys differ", diffs, len(keys))
	}
	// Short TTLs keep expiring on the master (and its DELs reach the
	// replica a moment later): the sizes must meet within a few reads.
	for i := 0; na != nb; i++ {
		if i == 40 {
			ka, _ := a.Keys(ctx, "*").Result()
			kb, _ := b.Keys(ctx, "*").Result()
			in := map[string]int{}
			for _, k := range ka {
				in[k] |= 1
			}
			for _, k := range kb {
				in[k] |= 2
			}
			var only []string
			for k, w := range in {
				if w != 3 && len(only) < 10 {
					ttl, _ := b.PTTL(ctx, k).Result()
					only = append(only, fmt.Sprintf("%s(in %d, pttl on second %v)", k, w, ttl))
				}
			}
			if len(only) == 0 {
				// Same live keys: the difference is in keys whose time
				// has passed and which a replica keeps until a DEL.
				t.Logf("DBSIZE %d vs %d with the same live keys (expired keys still held)", na, nb)
				break
			}
			t.Fatalf("DBSIZE %d vs %d; keys on one side only: %v", na, nb, only)
		}
		time.Sleep(50 * time.Millisecond)
		na, _ = a.DBSize(ctx).Result()
		nb, _ = b.DBSize(ctx).Result()
	}
	t.Logf("compared %d keys", len(keys))
}

// writer runs mixedWrites in the background until stop.
type writer struct {
	wg   sync.WaitGroup
	stop atomic.Bool
	n    atomic.Int64
	err  atomic.Value
}

func startWriter(ctx context.Context, c *redis.Client, seed uint64) *writer {
	w := &writer{}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for i := uint64(0); !w.stop.Load(); i++ {
			if err := mixedWrites(ctx, c, seed+i, 2000); err != nil {
				w.err.Store(err)
				return
			}
			w.n.Add(2000)
		}
	}()
	return w
}

func (w *writer) finish(t *testing.T) {
	t.Helper()
	w.stop.Store(true)
	w.wg.Wait()
	if err, _ := w.err.Load().(error); err != nil {
		t.Fatalf("writer: %v", err)
	}
}

// stopProc sends SIGSTOP and waits until the process is stopped.
func stopProc(t *testing.T, s *server) {
	t.Helper()
	syscall.Kill(s.Pid(), syscall.SIGSTOP)
	waitUntil(t, 5*time.Second, "process stopped", func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(s.Pid()) + "/stat")
		if err != nil {
			return true
		}
		// The state follows the parenthesised command name.
		i := strings.LastIndexByte(string(b), ')')
		return i > 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't')
	})
}
