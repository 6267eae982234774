package node

import (
	"fmt"
	"github.com/slotd/slotd/slots"
	"strconv"
	"strings"
	"testing"
)

func setCfg(t *testing.T, tc *testClient, name, val string) {
	t.Helper()
	if err := tc.s.Cfg.Set(name, val); err != nil {
		t.Fatal(err)
	}
}

// shrink sets maxmemory to a fraction of the memory in use, so that the
// next command must evict.
func shrink(t *testing.T, tc *testClient, frac float64) int64 {
	// Unbounded tenacity: evict to the limit in one go, however slow the
	// machine (or the race detector) makes it.
	setCfg(t, tc, "maxmemory-eviction-tenacity", "100")
	limit := int64(float64(tc.s.ks.UsedMemory()) * frac)
	setCfg(t, tc, "maxmemory", strconv.FormatInt(limit, 10))
	return limit
}

func countPrefix(tc *testClient, prefix string, n int) int {
	alive := 0
	for i := 0; i < n; i++ {
		if tc.do("EXISTS", fmt.Sprint(prefix, i)) == ":1\r\n" {
			alive++
		}
	}
	return alive
}

func fill(tc *testClient, prefix string, n int, extra ...string) {
	for i := 0; i < n; i++ {
		tc.do(append([]string{"SET", fmt.Sprint(prefix, i), strings.Repeat("v", 100)}, extra...)...)
	}
}

func TestEvictNoEviction(t *testing.T) {
	tc := newTestServer(t)
	fill(tc, "k:", 50)
	shrink(t, tc, 0.5)
	tc.expect("-OOM command not allowed when used memory > 'maxmemory'.|", "SET", "x", "y")
	tc.expect("$-1|", "GET", "x")
	tc.expect(":1|", "DEL", "k:0") // not denyoom: allowed, and frees memory
	tc.expect(":1|", "EXISTS", "k:1")
	// In MULTI every command but the transaction controls is refused.
	tc.expect("+OK|", "MULTI")
	tc.expect("-OOM command not allowed when used memory > 'maxmemory'.|", "GET", "k:1")
	tc.expect("-EXECABORT Transaction discarded because of previous errors.|", "EXEC")
	// A transaction queued before memory ran out is refused at EXEC.
	setCfg(t, tc, "maxmemory", "0")
	tc.expect("+OK|", "MULTI")
	tc.expect("+QUEUED|", "SET", "x", "y")
	tc.expect("+QUEUED|", "GET", "x")
	shrink(t, tc, 0.5)
	tc.expect("-EXECABORT Transaction discarded because of: OOM command not allowed when used memory > 'maxmemory'.|", "EXEC")
	tc.expect("-ERR EXEC without MULTI|", "EXEC")
	tc.expect("$-1|", "GET", "x")
	if tc.s.ks.EvictedKeys.Load() != 0 {
		t.Fatal("noeviction evicted")
	}
	setCfg(t, tc, "maxmemory", "0")
	tc.expect("+OK|", "SET", "x", "y")
}

func TestEvictAllKeysLRU(t *testing.T) {
	tc := newTestServer(t, "maxmemory-policy", "allkeys-lru")
	fill(tc, "old:", 200)
	tc.s.lru.Add(1000)
	fill(tc, "new:", 200)
	limit := shrink(t, tc, 0.75)
	tc.expect("+OK|", "SET", "x", "y")
	if used := tc.s.ks.UsedMemory(); used > limit+200 { // evicted before SET added x
		t.Fatalf("used %d > limit %d", used, limit)
	}
	evicted := tc.s.ks.EvictedKeys.Load()
	if evicted < 80 {
		t.Fatalf("evicted %d", evicted)
	}
	if n := countPrefix(tc, "new:", 200); n < 195 {
		t.Fatalf("only %d of 200 recently used keys kept (evicted %d)", n, evicted)
	}
}

func TestEvictVolatileLRU(t *testing.T) {
	tc := newTestServer(t, "maxmemory-policy", "volatile-lru")
	fill(tc, "perm:", 200)
	fill(tc, "vol:", 200, "EX", "1000")
	shrink(t, tc, 0.7)
	tc.expect("+OK|", "SET", "x", "y")
	if n := countPrefix(tc, "perm:", 200); n != 200 {
		t.Fatalf("volatile-lru evicted %d keys without a TTL", 200-n)
	}
	if n := countPrefix(tc, "vol:", 200); n > 120 {
		t.Fatalf("%d volatile keys left", n)
	}
	// Once no volatile key is left, nothing can be evicted.
	shrink(t, tc, 0.3)
	tc.expect("-OOM command not allowed when used memory > 'maxmemory'.|", "SET", "x", "y")
	tc.expect("$1|y|", "GET", "x")
}

func TestEvictAllKeysLFU(t *testing.T) {
	tc := newTestServer(t, "maxmemory-policy", "allkeys-lfu")
	fill(tc, "cold:", 200)
	fill(tc, "hot:", 200)
	for r := 0; r < 30; r++ {
		for i := 0; i < 200; i++ {
			tc.do("GET", fmt.Sprint("hot:", i))
		}
	}
	shrink(t, tc, 0.75)
	tc.expect("+OK|", "SET", "x", "y")
	if n := countPrefix(tc, "hot:", 200); n < 190 {
		t.Fatalf("only %d of 200 frequently used keys kept", n)
	}
}

func TestEvictVolatileLFU(t *testing.T) {
	tc := newTestServer(t, "maxmemory-policy", "volatile-lfu")
	fill(tc, "perm:", 100)
	fill(tc, "cold:", 150, "EX", "1000")
	fill(tc, "hot:", 150, "EX", "1000")
	for r := 0; r < 30; r++ {
		for i := 0; i < 150; i++ {
			tc.do("GET", fmt.Sprint("hot:", i))
		}
	}
	shrink(t, tc, 0.75)
	tc.expect("+OK|", "SET", "x", "y")
	if n := countPrefix(tc, "perm:", 100); n != 100 {
		t.Fatalf("evicted %d keys without a TTL", 100-n)
	}
	if n := countPrefix(tc, "hot:", 150); n < 140 {
		t.Fatalf("only %d of 150 hot keys kept", n)
	}
}

func TestEvictRandom(t *testing.T) {
	tc := newTestServer(t, "maxmemory-policy", "allkeys-random")
	fill(tc, "a:", 300)
	limit := shrink(t, tc, 0.5)
	tc.expect("+OK|", "SET", "x", "y")
	if used := tc.s.ks.UsedMemory(); used > limit+200 { // evicted before SET added x
		t.Fatalf("used %d > %d", used, limit)
	}
	if n := countPrefix(tc, "a:", 300); n > 160 || n < 100 {
		t.Fatalf("%d keys left", n)
	}

	tc = newTestServer(t, "maxmemory-policy", "volatile-random")
	fill(tc, "perm:", 200)
	fill(tc, "vol:", 200, "PX", "1000000")
	shrink(t, tc, 0.7)
	tc.expect("+OK|", "SET", "x", "y")
	if n := countPrefix(tc, "perm:", 200); n != 200 {
		t.Fatalf("volatile-random evicted %d keys without a TTL", 200-n)
	}
	if n := countPrefix(tc, "vol:", 200); n > 120 {
		t.Fatalf("%d volatile keys left", n)
	}
}

func TestEvictVolatileTTL(t *testing.T) {
	tc := newTestServer(t, "maxmemory-policy", "volatile-ttl")
	fill(tc, "perm:", 100)
	fill(tc, "short:", 150, "EX", "100")
	fill(tc, "long:", 150, "EX", "100000")
	shrink(t, tc, 0.8)
	tc.expect("+OK|", "SET", "x", "y")
	if n := countPrefix(tc, "perm:", 100); n != 100 {
		t.Fatalf("evicted %d keys without a TTL", 100-n)
	}
	if n := countPrefix(tc, "long:", 150); n < 140 {
		t.Fatalf("only %d of 150 long-TTL keys kept", n)
	}
	if n := countPrefix(tc, "short:", 150); n > 100 {
		t.Fatalf("%d short-TTL keys left", n)
	}
}

// TestEvictRecharge checks that a value grown in place is re-charged, so a
// limit is enforced even when no key is stored anew.
func TestEvictRecharge(t *testing.T) {
	tc := newTestServer(t, "maxmemory-policy", "allkeys-lru", "maxmemory", "100000000")
	tc.expect("+OK|", "SET", "k", "v")
	before := tc.s.ks.UsedMemory()
	e := tc.s.ks.DB(0).Peek(slotsOf("k"), []byte("k"))
	e.SetBytes(append(e.Bytes(), make([]byte, 5000)...))
	tc.c.x.DB = tc.s.ks.DB(0)
	tc.c.x.Modified([]byte("k"))
	if after := tc.s.ks.UsedMemory(); after < before+5000 {
		t.Fatalf("not re-charged: %d -> %d", before, after)
	}
}

func TestLFUCounter(t *testing.T) {
	tc := newTestServer(t, "maxmemory-policy", "allkeys-lfu")
	tc.expect("+OK|", "SET", "k", "v")
	e := tc.s.ks.DB(0).Peek(slotsOf("k"), []byte("k"))
	if e.Access&0xff != lfuInitVal {
		t.Fatalf("new key counter %d", e.Access&0xff)
	}
	// Decay: one step per lfu-decay-time minutes since the last decrement.
	e.Access = (lfuMinutes()-3)&0xffff<<8 | 10
	if got := tc.s.lfuDecayed(e); got != 7 {
		t.Fatalf("decayed %d want 7", got)
	}
	e.Access = (lfuMinutes()-30)&0xffff<<8 | 10
	if got := tc.s.lfuDecayed(e); got != 0 {
		t.Fatalf("decayed %d want 0", got)
	}
	e.Access = lfuMinutes()<<8 | 255
	tc.s.lfuTouch(e)
	if e.Access&0xff != 255 {
		t.Fatal("counter overflowed")
	}
}

func slotsOf(k string) int { return slots.Of([]byte(k)) }

// TestEvictBudget checks that one command's eviction stops at the time
// budget and lets the command run; the next commands carry on.
func TestEvictBudget(t *testing.T) {
	tc := newTestServer(t, "maxmemory-policy", "allkeys-random")
	fill(tc, "a:", 20000)
	setCfg(t, tc, "maxmemory-eviction-tenacity", "0")
	setCfg(t, tc, "maxmemory", "1000")
	tc.expect("+OK|", "SET", "x", "y")
	if n := tc.s.ks.EvictedKeys.Load(); n == 0 || n == 20000 {
		t.Fatalf("evicted %d with a zero budget", n)
	}
	for i := 0; i < 20000 && tc.s.ks.UsedMemory() > 1000; i++ {
		tc.do("GET", "x")
	}
	if used := tc.s.ks.UsedMemory(); used > 1000 {
		t.Fatalf("used %d", used)
	}
}

// TestEvictReplicaIgnoresMaxmemory: a replica neither evicts nor refuses
// commands over maxmemory unless replica-ignore-maxmemory is no.
func TestEvictReplicaIgnoresMaxmemory(t *testing.T) {
	tc := newTestServer(t, "maxmemory-policy", "allkeys-random")
	defer tc.s.Close()
	tc.expect("+OK|", "REPLICAOF", "127.0.0.1", "1")
	m := tc.newClient()
	m.c.Flags |= ClientMaster
	m.c.x.master = true
	m.c.publish()
	fill(m, "k:", 50)
	shrink(t, tc, 0.5)
	tc.expect("$-1|", "GET", "x")
	m.expect("+OK|", "SET", "x", "y")
	tc.expect(":51|", "DBSIZE")
	setCfg(t, tc, "replica-ignore-maxmemory", "no")
	tc.expect("$-1|", "GET", "nosuchkey")
	if n := countPrefix(tc, "k:", 50); n >= 50 {
		t.Fatalf("%d keys of 50 left with replica-ignore-maxmemory no", n)
	}
}
