package node

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slotd/slotd/slots"
)

// reshardPorts picks n free client ports (bus = port+10000) in 24500-24999,
// the range the migration tests own.
func reshardPorts(t *testing.T, n int) []int {
	t.Helper()
	return freePorts(t, 24500+os.Getpid()%300, 25000, n, 10000)
}

// twoMasters starts two in-process masters, A with slots 0-8191 and B with
// 8192-16383, and waits until both agree.
func twoMasters(t *testing.T) (a, b *clusterMember, ida, idb string) {
	t.Helper()
	dir := t.TempDir()
	ports := reshardPorts(t, 2)
	var ms []*clusterMember
	for _, p := range ports {
		// These tests are about moving keys, not failure detection: a
		// node timeout of 5 s keeps a loaded test machine (the race
		// detector, other packages' tests) from failing the cluster
		// while a million-member set is built.
		m, err := startMember(t, p, dir, "--cluster-node-timeout", "5000")
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
		t.Cleanup(func() { m.s.Close() })
	}
	ms[0].tc.expect("+OK|", "CLUSTER", "ADDSLOTSRANGE", "0", "8191")
	ms[1].tc.expect("+OK|", "CLUSTER", "ADDSLOTSRANGE", "8192", "16383")
	ms[0].tc.expect("+OK|", "CLUSTER", "SET-CONFIG-EPOCH", "1")
	ms[1].tc.expect("+OK|", "CLUSTER", "SET-CONFIG-EPOCH", "2")
	ms[1].tc.expect("+OK|", "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(ports[0]))
	waitUntil(t, "both nodes to agree", 15*time.Second, func() bool {
		var sc []string
		for _, m := range ms {
			if !strings.Contains(m.tc.do("CLUSTER", "INFO"), "cluster_state:ok") {
				return false
			}
			sc = append(sc, slotsConfig(bulkText(m.tc.do("CLUSTER", "NODES"))))
		}
		return sc[0] == sc[1] && strings.Count(sc[0], "|") == 1
	})
	return ms[0], ms[1], bulkText(ms[0].tc.do("CLUSTER", "MYID")), bulkText(ms[1].tc.do("CLUSTER", "MYID"))
}

// parseArray splits a flat array reply of bulk strings.
func parseArray(t *testing.T, r string) []string {
	t.Helper()
	if !strings.HasPrefix(r, "*") {
		t.Fatalf("not an array: %q", r)
	}
	lines := strings.Split(strings.TrimSuffix(r, "\r\n"), "\r\n")
	n, _ := strconv.Atoi(lines[0][1:])
	var out []string
	for i := 1; i < len(lines); i++ {
		switch lines[i][0] {
		case '$':
			i++
			out = append(out, lines[i])
		case ':':
			out = append(out, lines[i][1:])
		}
	}
	if len(out) != n {
		t.Fatalf("array of %d, parsed %d: %q", n, len(out), r[:min(len(r), 200)])
	}
	return out
}

// moveChunked moves key from a to b with the SLOTD.MIGRATE protocol, as
// slotctl does, count elements per piece. It returns the longest a single
// command ran (the longest it held the slot's lock).
func moveChunked(t *testing.T, a, b *clusterMember, key string, count int) (longest time.Duration) {
	t.Helper()
	per := map[string]time.Duration{}
	timed := func(m *clusterMember, args ...string) string {
		start := time.Now()
		r := m.tc.do(args...)
		d := time.Since(start)
		longest = max(longest, d)
		per[args[1]] = max(per[args[1]], d)
		return r
	}
	defer func() { t.Logf("longest per command: %v", per) }()
	head := parseArray(t, timed(a, "SLOTD.MIGRATE", "FREEZE", key, "30000"))
	kind, length, pttl := head[0], head[1], head[2]
	cursor := "0"
	for {
		r := parseArray(t, timed(a, "SLOTD.MIGRATE", "CHUNK", key, cursor, strconv.Itoa(count)))
		cursor = r[0]
		if len(r) > 1 {
			args := append([]string{"SLOTD.MIGRATE", "STAGE", key, kind}, r[1:]...)
			if got := timed(b, args...); !strings.HasPrefix(got, ":") {
				t.Fatalf("STAGE: %q", got)
			}
		}
		if cursor == "0" {
			break
		}
	}
	if r := timed(b, "SLOTD.MIGRATE", "COMMIT", key, pttl, length); r != "+OK\r\n" {
		t.Fatalf("COMMIT: %q", r)
	}
	if r := timed(a, "SLOTD.MIGRATE", "DELFROZEN", key); r != ":1\r\n" {
		t.Fatalf("DELFROZEN: %q", r)
	}
	return longest
}

// TestChunkedMoveLatency moves a 1,000,000-member sorted set while another
// client works on other keys of the same slot and of other slots of the
// source node, and checks that no request of that client waited 100 ms,
// that writes to the moving key answer TRYAGAIN while reads are served,
// and that the set arrives whole.
func TestChunkedMoveLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 1,000,000-member sorted set")
	}
	a, b, ida, idb := twoMasters(t)
	const key = "{big}z"
	slot := slots.OfString(key)
	if slot >= 8192 {
		t.Fatalf("slot %d not on A", slot)
	}
	const n = 1_000_000
	args := []string{"ZADD", key}
	for i := 0; i < n; i++ {
		args = append(args, strconv.Itoa(i%977)+"."+strconv.Itoa(i), "m"+strconv.Itoa(i))
		if len(args) >= 2002 || i == n-1 {
			if r := a.tc.do(args...); !strings.HasPrefix(r, ":") {
				t.Fatalf("ZADD: %q", r)
			}
			args = args[:2]
		}
	}
	a.tc.expect(":1000000|", "ZCARD", key)
	a.tc.expect(":1|", "PEXPIRE", key, "3600000")
	b.tc.expect("+OK|", "CLUSTER", "SETSLOT", strconv.Itoa(slot), "IMPORTING", ida)
	a.tc.expect("+OK|", "CLUSTER", "SETSLOT", strconv.Itoa(slot), "MIGRATING", idb)

	// Long timeouts: the latency a request sees is measured (and checked
	// when the machine is idle); on a loaded machine under the race
	// detector a request can wait seconds, which is not an error here.
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(a.port), MaxRetries: -1,
		ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	defer c.Close()
	ctx := context.Background()
	var stop atomic.Bool
	var worst atomic.Int64
	var ops, slow atomic.Int64
	var errs []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			k := "{big}k" + strconv.Itoa(i%50)
			if i%2 == 1 {
				k = "other" + strconv.Itoa(i%50) // another slot, same node or not
			}
			start := time.Now()
			err := c.Set(ctx, k, i, 0).Err()
			d := time.Since(start)
			if int64(d) > worst.Load() {
				worst.Store(int64(d))
			}
			if d > 20*time.Millisecond {
				slow.Add(1)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "MOVED") && !strings.HasPrefix(err.Error(), "ASK") {
				mu.Lock()
				errs = append(errs, err.Error())
				mu.Unlock()
			}
			ops.Add(1)
		}
	}()
	waitUntil(t, "the load to start", 5*time.Second, func() bool { return ops.Load() > 100 })
	// The same load with nothing moving, for as long, gives the latency
	// this (shared) machine adds on its own.
	time.Sleep(3 * time.Second)
	baseline := time.Duration(worst.Swap(0))
	slow.Store(0)

	// The other client's writes to the frozen key are refused, reads
	// served; checked from a second in-process client mid-move.
	head := parseArray(t, a.tc.do("SLOTD.MIGRATE", "FREEZE", key, "30000"))
	if head[0] != "zset" || head[1] != "1000000" {
		t.Fatalf("FREEZE: %v", head)
	}
	other := a.tc.newClient()
	other.expect("-"+ErrTryAgain+"|", "ZADD", key, "1", "new")
	other.expect(":1000000|", "ZCARD", key)
	other.expect("-"+ErrTryAgain+"|", "DEL", key)
	a.tc.expect(":1|", "SLOTD.MIGRATE", "THAW", key)

	start := time.Now()
	longest := moveChunked(t, a, b, key, 1000)
	took := time.Since(start)
	stop.Store(true)
	wg.Wait()
	if len(errs) > 0 {
		t.Errorf("client errors: %v", errs[:min(len(errs), 5)])
	}
	checkMoved(t, a, b, key, slot)
	w := time.Duration(worst.Load())
	t.Logf("moved %d members in %v, longest command %v; concurrent client: %d ops, %d over 20ms, worst %v (worst with nothing moving: %v)",
		n, took, longest, ops.Load(), slow.Load(), w, baseline)
	if load := loadAverage(); load > float64(runtime.NumCPU()) {
		// Wall-clock stalls on an oversubscribed machine measure the
		// machine, not the move: report them, do not judge them.
		t.Logf("load average %.1f on %d CPUs: latency figures reported, not checked", load, runtime.NumCPU())
		return
	}
	if raceOn {
		t.Log("race detector on: latency figures reported, not checked (go test ./node -run TestChunkedMoveLatency checks them)")
		return
	}
	if longest > 50*time.Millisecond {
		t.Errorf("one migration command ran (held the slot lock) for %v", longest)
	}
	// On a machine shared with other work the client sees stalls that are
	// not the move's: only a worst case beyond both 100 ms and what the
	// same load saw without a move counts.
	if w > 100*time.Millisecond && w > baseline*3/2 {
		t.Errorf("a concurrent request waited %v (%v with nothing moving)", w, baseline)
	}
}

// checkMoved checks the sorted set that TestChunkedMoveLatency moved.
func checkMoved(t *testing.T, a, b *clusterMember, key string, slot int) {
	t.Helper()

	a.tc.expect("-ASK "+strconv.Itoa(slot)+" 127.0.0.1:"+strconv.Itoa(b.port)+"|", "ZCARD", key)
	b.tc.expect("+OK|", "ASKING")
	b.tc.expect(":1000000|", "ZCARD", key)
	for _, i := range []int{0, 1, 977, 123456, 999999} {
		b.tc.expect("+OK|", "ASKING")
		want := strconv.Itoa(i%977) + "." + strconv.Itoa(i)
		f, _ := strconv.ParseFloat(want, 64)
		got := bulkText(b.tc.do("ZSCORE", key, "m"+strconv.Itoa(i)))
		if g, _ := strconv.ParseFloat(got, 64); g != f {
			t.Errorf("ZSCORE m%d = %q, want %v", i, got, f)
		}
	}
	b.tc.expect("+OK|", "ASKING")
	if r := b.tc.do("PTTL", key); !strings.HasPrefix(r, ":") || r == ":-1\r\n" || r == ":-2\r\n" {
		t.Errorf("PTTL after the move: %q", r)
	}
	b.tc.expect("+OK|", "ASKING")
	b.tc.expect("$8|skiplist|", "OBJECT", "ENCODING", key)
}

// TestChunkedMoveKinds moves a hash, a set, an intset and a list and
// checks each arrives equal, and exercises the protocol's errors.
func TestChunkedMoveKinds(t *testing.T) {
	a, b, ida, idb := twoMasters(t)
	slot := slots.OfString("{k}")
	for i := 0; i < 2000; i++ {
		a.tc.do("HSET", "{k}h", "f"+strconv.Itoa(i), "v"+strconv.Itoa(i))
		a.tc.do("SADD", "{k}s", "m"+strconv.Itoa(i))
		a.tc.do("SADD", "{k}i", strconv.Itoa(i))
		a.tc.do("RPUSH", "{k}l", "e"+strconv.Itoa(i))
	}
	a.tc.do("SET", "{k}str", "v")
	a.tc.do("HSET", "{k}h2", "f", "v")
	b.tc.expect("+OK|", "CLUSTER", "SETSLOT", strconv.Itoa(slot), "IMPORTING", ida)
	a.tc.expect("+OK|", "CLUSTER", "SETSLOT", strconv.Itoa(slot), "MIGRATING", idb)
	big := parseArray(t, a.tc.do("SLOTD.MIGRATE", "BIGKEYS", strconv.Itoa(slot), "1000", "10"))
	if len(big) != 4 {
		t.Fatalf("BIGKEYS: %v", big)
	}
	dump := func(m *clusterMember, asking bool, args ...string) string {
		if asking {
			m.tc.do("ASKING")
		}
		return m.tc.do(args...)
	}
	want := map[string]string{
		"{k}h": dump(a, false, "HGETALL", "{k}h"),
		"{k}s": dump(a, false, "SMEMBERS", "{k}s"),
		"{k}i": dump(a, false, "SMEMBERS", "{k}i"),
		"{k}l": dump(a, false, "LRANGE", "{k}l", "0", "-1"),
	}
	for _, k := range []string{"{k}h", "{k}s", "{k}i", "{k}l"} {
		moveChunked(t, a, b, k, 333)
	}
	got := map[string]string{
		"{k}h": dump(b, true, "HGETALL", "{k}h"),
		"{k}s": dump(b, true, "SMEMBERS", "{k}s"),
		"{k}i": dump(b, true, "SMEMBERS", "{k}i"),
		"{k}l": dump(b, true, "LRANGE", "{k}l", "0", "-1"),
	}
	for k := range want {
		w, g := parseArray(t, want[k]), parseArray(t, got[k])
		if k != "{k}l" {
			slicesSort(w)
			slicesSort(g)
		}
		if fmt.Sprint(w) != fmt.Sprint(g) {
			t.Errorf("%s differs after the move", k)
		}
	}
	b.tc.do("ASKING")
	b.tc.expect("$9|hashtable|", "OBJECT", "ENCODING", "{k}i")

	// Errors.
	a.tc.expect("-ERR strings are moved with MIGRATE|", "SLOTD.MIGRATE", "FREEZE", "{k}str", "1000")
	a.tc.expect("-ERR key is not frozen|", "SLOTD.MIGRATE", "CHUNK", "{k}str", "0", "10")
	a.tc.expect("-ERR key is not frozen|", "SLOTD.MIGRATE", "DELFROZEN", "{k}str")
	a.tc.expect(":0|", "SLOTD.MIGRATE", "THAW", "{k}str")
	b.tc.expect("-ERR unknown kind|", "SLOTD.MIGRATE", "STAGE", "{k}x", "string", "a")
	b.tc.expect("-ERR syntax error|", "SLOTD.MIGRATE", "STAGE", "{k}x", "zset", "a")
	b.tc.expect("-ERR value is not a valid float|", "SLOTD.MIGRATE", "STAGE", "{k}x", "zset", "a", "x")
	b.tc.expect(":1|", "SLOTD.MIGRATE", "STAGE", "{k}x", "zset", "a", "1")
	b.tc.expect("-ERR staged value is of another kind|", "SLOTD.MIGRATE", "STAGE", "{k}x", "set", "a")
	b.tc.expect("-ERR staged 1 elements, expected 2|", "SLOTD.MIGRATE", "COMMIT", "{k}x", "-1", "2")
	b.tc.expect(":1|", "SLOTD.MIGRATE", "DISCARD", "{k}x")
	b.tc.expect("-ERR nothing staged for this key|", "SLOTD.MIGRATE", "COMMIT", "{k}x", "-1", "1")
	b.tc.expect(":1|", "SLOTD.MIGRATE", "STAGE", "{k}h", "set", "a")
	b.tc.expect("-BUSYKEY Target key name already exists.|", "SLOTD.MIGRATE", "COMMIT", "{k}h", "-1", "1")
	b.tc.expect(":1|", "SLOTD.MIGRATE", "VERSION")
	a.tc.expect("-ERR unknown subcommand 'NOPE'. Try SLOTD.MIGRATE HELP.|", "SLOTD.MIGRATE", "NOPE")
	a.tc.expect("-ERR Invalid slot or number of keys|", "SLOTD.MIGRATE", "BIGKEYS", "16384", "1", "1")

	// A lease that runs out unfreezes the key by itself.
	parseArray(t, a.tc.do("SLOTD.MIGRATE", "FREEZE", "{k}h2", "1"))
	waitUntil(t, "the lease to end", 2*time.Second, func() bool { return a.tc.do("HSET", "{k}h2", "f", "w") == ":0\r\n" })
}

// loadAverage returns the one-minute load average (0 when unknown).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return f
}

// TestSetSlots runs SETSLOT's transitions for several slots at once and
// checks the per-slot replies and errors.
func TestSetSlots(t *testing.T) {
	a, b, ida, idb := twoMasters(t)
	b.tc.expect("*3|+OK|+OK|+OK|", "SLOTD.MIGRATE", "SETSLOTS", "IMPORTING", ida, "1", "2", "3")
	a.tc.expect("*3|+OK|+OK|-ERR I'm not the owner of hash slot 8192|", "SLOTD.MIGRATE", "SETSLOTS", "MIGRATING", idb, "1", "2", "8192")
	b.tc.expect("*1|-ERR I'm already the owner of hash slot 8192|", "SLOTD.MIGRATE", "SETSLOTS", "importing", ida, "8192")
	nodes := bulkText(a.tc.do("CLUSTER", "NODES"))
	if !strings.Contains(nodes, "[1->-"+idb+"]") || !strings.Contains(nodes, "[2->-"+idb+"]") {
		t.Fatalf("A's open slots: %s", nodes)
	}
	b.tc.expect("*2|+OK|+OK|", "SLOTD.MIGRATE", "SETSLOTS", "NODE", idb, "1", "2")
	a.tc.expect("*2|+OK|+OK|", "SLOTD.MIGRATE", "SETSLOTS", "NODE", idb, "1", "2")
	b.tc.expect("*1|+OK|", "SLOTD.MIGRATE", "SETSLOTS", "STABLE", "-", "3")
	for _, m := range []*clusterMember{a, b} {
		nodes := bulkText(m.tc.do("CLUSTER", "NODES"))
		if strings.Contains(nodes, "[") {
			t.Errorf("open slots left: %s", nodes)
		}
	}
	if !strings.Contains(bulkText(a.tc.do("CLUSTER", "NODES")), "myself,master - 0 0 1 connected 0 3-8191") {
		t.Errorf("A's slots after the move: %s", bulkText(a.tc.do("CLUSTER", "NODES")))
	}
	a.tc.expect("-ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP|", "SLOTD.MIGRATE", "SETSLOTS", "bogus", "-", "1")
	a.tc.expect("-ERR Unknown node nope|", "SLOTD.MIGRATE", "SETSLOTS", "NODE", "nope", "1")
	a.tc.expect("-ERR I don't know about node nope|", "SLOTD.MIGRATE", "SETSLOTS", "MIGRATING", "nope", "1")
	a.tc.expect("-ERR Invalid or out of range slot|", "SLOTD.MIGRATE", "SETSLOTS", "STABLE", "-", "16384")
	a.tc.expect("-ERR Invalid or out of range slot|", "SLOTD.MIGRATE", "SETSLOTS", "STABLE", "-", "x")
}

// TestChunkedMovePropagation checks what a chunked move sends to replicas
// and the AOF: the target's STAGE, DISCARD and COMMIT as run (the TTL as a
// PEXPIREAT), the source's DELFROZEN as a DEL, nothing for the rest; and
// that replaying the target's stream builds the same key.
func TestChunkedMovePropagation(t *testing.T) {
	a, b, ida, idb := twoMasters(t)
	slot := strconv.Itoa(slots.OfString("{k}ph"))
	a.tc.expect(":2|", "HSET", "{k}ph", "f1", "v1", "f2", "v2")
	a.tc.expect(":1|", "PEXPIRE", "{k}ph", "100000")
	b.tc.expect("+OK|", "CLUSTER", "SETSLOT", slot, "IMPORTING", ida)
	a.tc.expect("+OK|", "CLUSTER", "SETSLOT", slot, "MIGRATING", idb)
	ra, rb := attachRec(t, a.tc), attachRec(t, b.tc)

	expectProp(t, a.tc, ra, nil, "SLOTD.MIGRATE", "FREEZE", "{k}ph", "30000")
	expectProp(t, a.tc, ra, nil, "SLOTD.MIGRATE", "CHUNK", "{k}ph", "0", "10")
	expectProp(t, b.tc, rb, []string{"SLOTD.MIGRATE STAGE {k}px set a b"}, "SLOTD.MIGRATE", "STAGE", "{k}px", "set", "a", "b")
	expectProp(t, b.tc, rb, []string{"SLOTD.MIGRATE DISCARD {k}px"}, "SLOTD.MIGRATE", "DISCARD", "{k}px")
	expectProp(t, b.tc, rb, nil, "SLOTD.MIGRATE", "DISCARD", "{k}px")
	expectProp(t, b.tc, rb, []string{"SLOTD.MIGRATE STAGE {k}ph hash f1 v1 f2 v2"}, "SLOTD.MIGRATE", "STAGE", "{k}ph", "hash", "f1", "v1", "f2", "v2")
	stream := rb.takeCmds(t, b.s.feed)
	expectProp(t, b.tc, rb, []string{"MULTI", "SLOTD.MIGRATE COMMIT {k}ph -1 2", "PEXPIREAT {k}ph <ms:100000>", "EXEC"}, "SLOTD.MIGRATE", "COMMIT", "{k}ph", "100000", "2")
	expectProp(t, a.tc, ra, []string{"DEL {k}ph"}, "SLOTD.MIGRATE", "DELFROZEN", "{k}ph")

	// A replica (or an AOF load) replaying the target's commands.
	replica := newTestServer(t)
	if len(stream) != 0 {
		t.Fatalf("stream not empty after the checks: %q", stream)
	}
	for _, c := range []string{"SLOTD.MIGRATE STAGE {k}px set a b", "SLOTD.MIGRATE DISCARD {k}px",
		"SLOTD.MIGRATE STAGE {k}ph hash f1 v1 f2 v2", "SLOTD.MIGRATE COMMIT {k}ph -1 2"} {
		replica.do(strings.Fields(c)...)
	}
	replica.expect("$2|v2|", "HGET", "{k}ph", "f2")
	replica.expect(":2|", "HLEN", "{k}ph")
}

// takeArgv is takeCmds with the arguments kept apart (binary payloads).
func (r *recSink) takeArgv(t *testing.T, f *feed) [][]string {
	t.Helper()
	f.pump()
	r.mu.Lock()
	b := string(r.b)
	r.b = r.b[:0]
	r.mu.Unlock()
	var out [][]string
	for len(b) > 0 {
		i := strings.Index(b, "\r\n")
		n, _ := strconv.Atoi(b[1:i])
		b = b[i+2:]
		args := make([]string, n)
		for j := range args {
			i = strings.Index(b, "\r\n")
			l, _ := strconv.Atoi(b[1:i])
			args[j] = b[i+2 : i+2+l]
			b = b[i+2+l+2:]
		}
		if !strings.EqualFold(args[0], "select") {
			out = append(out, args)
		}
	}
	return out
}

// TestChunkedCommitAfterSnapshot: a snapshot (a replica's full sync, an
// AOF rewrite, BGSAVE) taken between the first STAGE and the COMMIT holds
// none of the staged pieces. The COMMIT then propagates the whole value
// (DISCARD, RESTORE) instead of COMMIT, so that a replica or an AOF that
// starts from that snapshot builds the key; one that saw every piece
// builds the same.
func TestChunkedCommitAfterSnapshot(t *testing.T) {
	a, b, ida, idb := twoMasters(t)
	key := "{k}snap"
	slot := strconv.Itoa(slots.OfString(key))
	b.tc.expect("+OK|", "CLUSTER", "SETSLOT", slot, "IMPORTING", ida)
	a.tc.expect("+OK|", "CLUSTER", "SETSLOT", slot, "MIGRATING", idb)
	rb := attachRec(t, b.tc)
	b.tc.expect(":2|", "SLOTD.MIGRATE", "STAGE", key, "zset", "m1", "1", "m2", "2")
	before := rb.takeArgv(t, b.s.feed)
	// The snapshot: what a full sync or an AOF rewrite takes.
	b.s.ks.LockAllQuiet()
	sn := b.s.beginSnapshot(true)
	b.s.ks.UnlockAll()
	sn.end()
	b.tc.expect(":3|", "SLOTD.MIGRATE", "STAGE", key, "zset", "m3", "3")
	b.tc.expect("+OK|", "SLOTD.MIGRATE", "COMMIT", key, "100000", "3")
	after := rb.takeArgv(t, b.s.feed)
	var names []string
	for _, c := range after {
		n := strings.ToUpper(c[0])
		if len(c) > 1 && n != "RESTORE" {
			n += " " + strings.ToUpper(c[1])
		}
		names = append(names, n)
	}
	if got, want := strings.Join(names, "|"), "SLOTD.MIGRATE STAGE|MULTI|SLOTD.MIGRATE DISCARD|RESTORE|EXEC"; got != want {
		t.Fatalf("after the snapshot: %q, want %q", got, want)
	}
	replay := func(cmds [][]string) *testClient {
		r := newTestServer(t)
		for _, c := range cmds {
			if reply := r.do(c...); strings.HasPrefix(reply, "-") {
				t.Fatalf("%q: %q", c[:2], reply)
			}
		}
		return r
	}
	// From the snapshot (an empty image here) and the stream after it.
	late := replay(after)
	late.expect(":3|", "ZCARD", key)
	late.expect("$1|3|", "ZSCORE", key, "m3")
	late.expect("$1|1|", "ZSCORE", key, "m1")
	if ttl, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(late.do("PTTL", key), ":"))); ttl < 90000 {
		t.Fatalf("PTTL %d", ttl)
	}
	// From the start of the stream: the same key, nothing left staged.
	full := replay(append(before, after...))
	full.expect(":3|", "ZCARD", key)
	full.s.chunks.mu.Lock()
	left := len(full.s.chunks.staged)
	full.s.chunks.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d values left staged", left)
	}
	// Without a snapshot in between, COMMIT is propagated as such.
	key2 := "{k}snap2"
	b.tc.expect(":1|", "SLOTD.MIGRATE", "STAGE", key2, "set", "x")
	b.tc.expect("+OK|", "SLOTD.MIGRATE", "COMMIT", key2, "0", "1")
	got := rb.takeCmds(t, b.s.feed)
	if len(got) != 2 || got[1] != "SLOTD.MIGRATE COMMIT {k}snap2 -1 1" {
		t.Fatalf("propagated %q", got)
	}
}
