package node

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slotd/slotd/slots"
)

// Replies below were checked against redis-server 7.0.15.

func TestKeysRenameCopyMove(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+OK|", "SET", "a", "1")
	tc.expect("+OK|", "RENAME", "a", "a")
	tc.expect("-ERR no such key|", "RENAME", "nx", "b")
	tc.expect("-ERR no such key|", "RENAME", "nx", "nx")
	tc.expect("+OK|", "RENAME", "a", "b")
	tc.expect(":0|", "EXISTS", "a")
	tc.expect(":0|", "RENAMENX", "b", "b")
	tc.expect("+OK|", "SET", "c", "2")
	tc.expect(":0|", "RENAMENX", "b", "c")
	tc.expect(":1|", "RENAMENX", "b", "d")
	tc.expect("-ERR no such key|", "RENAMENX", "nx", "d")
	// RENAME carries the TTL and replaces the destination.
	tc.expect(":1|", "PEXPIRE", "d", "100000")
	tc.expect("+OK|", "RENAME", "d", "c")
	tc.expect("$1|1|", "GET", "c")
	if r := tc.do("PTTL", "c"); r == ":-1\r\n" || r == ":-2\r\n" {
		t.Fatalf("TTL lost: %q", r)
	}
	tc.expect("-ERR source and destination objects are the same|", "COPY", "c", "c")
	tc.expect(":1|", "COPY", "c", "e")
	tc.expect(":0|", "COPY", "c", "e")
	tc.expect(":1|", "COPY", "c", "e", "REPLACE")
	tc.expect("-ERR syntax error|", "COPY", "c", "e", "db")
	tc.expect("-ERR DB index is out of range|", "COPY", "c", "e", "DB", "99")
	tc.expect("-ERR value is not an integer or out of range|", "COPY", "c", "e", "db", "x")
	tc.expect("-ERR syntax error|", "COPY", "c", "e", "foo")
	tc.expect(":1|", "COPY", "c", "e", "db", "1", "replace")
	tc.expect(":0|", "COPY", "c", "e", "db", "0")
	tc.expect(":0|", "COPY", "nx", "e")
	tc.expect(":1|", "COPY", "c", "c", "DB", "2")
	// The copy is independent of the source.
	tc.expect("+OK|", "SET", "c", "changed")
	tc.expect("$1|1|", "GET", "e")
	tc.expect("-ERR source and destination objects are the same|", "MOVE", "e", "0")
	tc.expect("-ERR source and destination objects are the same|", "MOVE", "nx", "0")
	tc.expect(":0|", "MOVE", "e", "1") // e exists in db 1 already
	tc.expect(":1|", "MOVE", "c", "3")
	tc.expect(":0|", "MOVE", "c", "3")
	tc.expect("-ERR value is not an integer or out of range|", "MOVE", "c", "x")
	tc.expect("-ERR DB index is out of range|", "MOVE", "c", "16")
	tc.expect("-ERR DB index is out of range|", "MOVE", "nx", "-1")
	tc.expect(":0|", "MOVE", "nx", "1")
	tc.expect("+OK|", "SELECT", "3")
	tc.expect("$7|changed|", "GET", "c")
	tc.expect("+OK|", "SELECT", "1")
	tc.expect("$1|1|", "GET", "e")
}

func TestKeysTypeTouchUnlink(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+none|", "TYPE", "nx")
	tc.expect("+OK|", "SET", "c", "v")
	tc.expect("+string|", "TYPE", "c")
	tc.expect(":1|", "TOUCH", "c", "d", "nx")
	tc.expect(":2|", "EXISTS", "c", "c", "nx")
	tc.expect(":1|", "UNLINK", "c", "d", "nx")
	tc.expect(":0|", "EXISTS", "c")
	tc.expect("-ERR wrong number of arguments for 'unlink' command|", "UNLINK")
}

func TestKeysFlushSwap(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+OK|", "SET", "a", "0")
	tc.expect("+OK|", "SELECT", "1")
	tc.expect("+OK|", "SET", "b", "1")
	tc.expect("-ERR invalid second DB index|", "SWAPDB", "0", "x")
	tc.expect("-ERR invalid first DB index|", "SWAPDB", "x", "0")
	tc.expect("-ERR DB index is out of range|", "SWAPDB", "0", "16")
	tc.expect("-ERR DB index is out of range|", "SWAPDB", "-1", "0")
	tc.expect("+OK|", "SWAPDB", "0", "0")
	tc.expect("+OK|", "SWAPDB", "0", "1")
	tc.expect("*1|$1|a|", "KEYS", "*")
	tc.expect("+OK|", "SELECT", "0")
	tc.expect("*1|$1|b|", "KEYS", "*")
	tc.expect("-ERR syntax error|", "FLUSHDB", "x")
	tc.expect("-ERR syntax error|", "FLUSHDB", "sync", "async")
	tc.expect("-ERR syntax error|", "FLUSHALL", "x")
	tc.expect("+OK|", "FLUSHDB", "ASYNC")
	tc.expect(":0|", "DBSIZE")
	tc.expect("$-1|", "RANDOMKEY")
	tc.expect("+OK|", "SELECT", "1")
	tc.expect(":1|", "DBSIZE")
	tc.expect("+OK|", "FLUSHALL", "sync")
	tc.expect(":0|", "DBSIZE")
	if used := tc.s.ks.UsedMemory(); used != 0 {
		t.Fatalf("used memory after FLUSHALL: %d", used)
	}
}

func TestSwapDBTouchesWatchers(t *testing.T) {
	a := newTestServer(t)
	b := a.newClient()
	a.expect("+OK|", "SELECT", "1")
	a.expect("+OK|", "WATCH", "k") // absent in db 1, present in db 0
	b.expect("+OK|", "SET", "k", "v")
	b.expect("+OK|", "SWAPDB", "0", "1")
	a.expect("+OK|", "MULTI")
	a.expect("+QUEUED|", "GET", "k")
	a.expect("*-1|", "EXEC")
}

func TestKeysPatternAndRandomKey(t *testing.T) {
	tc := newTestServer(t)
	for _, k := range []string{"hello", "hallo", "hxllo", "hllo", "h*llo", "foo"} {
		tc.expect("+OK|", "SET", k, "1")
	}
	got := func(pat string) string {
		r := tc.do("KEYS", pat)
		keys := regexp.MustCompile(`\$\d+\r\n([^\r]*)\r\n`).FindAllStringSubmatch(r, -1)
		var out []string
		for _, m := range keys {
			out = append(out, m[1])
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	for pat, want := range map[string]string{
		"h?llo":     "h*llo,hallo,hello,hxllo",
		"h[ae]llo":  "hallo,hello",
		"h[^e]llo":  "h*llo,hallo,hxllo",
		"h[a-b]llo": "hallo",
		"h\\*llo":   "h*llo",
		"*":         "foo,h*llo,hallo,hello,hllo,hxllo",
		"f*":        "foo",
		"nomatch":   "",
	} {
		if g := got(pat); g != want {
			t.Errorf("KEYS %q = %q want %q", pat, g, want)
		}
	}
	// Expired keys never show.
	tc.expect(":1|", "PEXPIREAT", "foo", "1000")
	if strings.Contains(tc.do("KEYS", "*"), "foo") {
		t.Fatal("expired key listed")
	}
	tc.expect("+OK|", "FLUSHALL")
	tc.expect("+OK|", "SET", "only", "1")
	tc.expect("$4|only|", "RANDOMKEY")
	tc.expect("+OK|", "SET", "gone", "1", "PX", "1")
	tc.expect(":1|", "DEL", "only")
	time.Sleep(5 * time.Millisecond)
	tc.expect("$-1|", "RANDOMKEY")
	tc.expect(":0|", "DBSIZE")
}

func TestScanArgs(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("-ERR wrong number of arguments for 'scan' command|", "SCAN")
	tc.expect("-ERR invalid cursor|", "SCAN", "x")
	tc.expect("-ERR invalid cursor|", "SCAN", "18446744073709551616")
	tc.expect("*2|$1|0|*0|", "SCAN", "-1")
	tc.expect("*2|$1|0|*0|", "SCAN", "18446744073709551615")
	tc.expect("-ERR syntax error|", "SCAN", "0", "count", "0")
	tc.expect("-ERR syntax error|", "SCAN", "0", "count", "-1")
	tc.expect("-ERR value is not an integer or out of range|", "SCAN", "0", "count", "x")
	tc.expect("-ERR syntax error|", "SCAN", "0", "match")
	tc.expect("-ERR syntax error|", "SCAN", "0", "foo", "bar")
	tc.expect("+OK|", "SET", "k", "v")
	tc.expect("*2|$1|0|*1|$1|k|", "SCAN", "0", "type", "strinG")
	tc.expect("*2|$1|0|*0|", "SCAN", "0", "type", "foo")
	tc.expect("*2|$1|0|*1|$1|k|", "SCAN", "0", "match", "k*", "count", "10", "type", "string")
	tc.expect("*2|$1|0|*0|", "SCAN", "0", "match", "x*")
}

// scanAll runs a full SCAN iteration with the given COUNT and calls between
// after each call.
func scanAll(t *testing.T, tc *testClient, count int, between func()) (map[string]int, int) {
	t.Helper()
	seen := map[string]int{}
	cursor, calls := "0", 0
	re := regexp.MustCompile(`^\*2\r\n\$\d+\r\n(\d+)\r\n\*(\d+)\r\n`)
	for {
		r := tc.do("SCAN", cursor, "COUNT", strconv.Itoa(count))
		m := re.FindStringSubmatch(r)
		if m == nil {
			t.Fatalf("bad SCAN reply %q", r)
		}
		n, _ := strconv.Atoi(m[2])
		rest := r[len(m[0]):]
		inSlots := map[int]bool{}
		for i := 0; i < n; i++ {
			var l int
			fmt.Sscanf(rest, "$%d\r\n", &l)
			rest = rest[strings.Index(rest, "\r\n")+2:]
			seen[rest[:l]]++
			inSlots[slots.Of([]byte(rest[:l]))] = true
			rest = rest[l+2:]
		}
		// A call returns whole slots: more than COUNT keys only when they
		// all come from one slot.
		if n > count && len(inSlots) > 1 {
			t.Fatalf("SCAN COUNT %d returned %d keys from %d slots", count, n, len(inSlots))
		}
		calls++
		cursor = m[1]
		if cursor == "0" {
			return seen, calls
		}
		between()
	}
}

func TestScanComplete(t *testing.T) {
	tc := newTestServer(t)
	for i := 0; i < 1000; i++ {
		tc.expect("+OK|", "SET", fmt.Sprint("key:", i), "v")
	}
	seen, _ := scanAll(t, tc, 7, func() {})
	if len(seen) != 1000 {
		t.Fatalf("saw %d keys", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%s seen %d times without concurrent changes", k, n)
		}
	}
}

// TestScanConcurrentWrites scans while other clients add and delete keys:
// every key present for the whole iteration must be returned.
func TestScanConcurrentWrites(t *testing.T) {
	tc := newTestServer(t)
	const stable = 2000
	for i := 0; i < stable; i++ {
		tc.expect("+OK|", "SET", fmt.Sprint("stable:", i), "v")
	}
	for i := 0; i < 2000; i++ {
		tc.expect("+OK|", "SET", fmt.Sprint("churn:", i), "v")
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		c := tc.newClient()
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprint("churn:", rng.IntN(4000))
				if rng.IntN(2) == 0 {
					c.do("DEL", k)
				} else {
					c.do("SET", k, "v")
				}
			}
		}(w)
	}
	seen, calls := scanAll(t, tc, 10, func() {})
	close(stop)
	wg.Wait()
	for i := 0; i < stable; i++ {
		if seen[fmt.Sprint("stable:", i)] == 0 {
			t.Fatalf("stable:%d missed", i)
		}
	}
	if calls < 300 {
		t.Fatalf("only %d calls for ~3000 keys at COUNT 10", calls)
	}
}

func TestScanSkipsExpired(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+OK|", "SET", "live", "v")
	tc.expect("+OK|", "SET", "dead", "v")
	tc.expect(":1|", "PEXPIREAT", "dead", strconv.FormatInt(time.Now().UnixMilli()+1, 10))
	time.Sleep(5 * time.Millisecond)
	seen, _ := scanAll(t, tc, 100, func() {})
	if seen["dead"] != 0 || seen["live"] != 1 {
		t.Fatalf("seen %v", seen)
	}
	tc.expect(":1|", "DBSIZE") // the scan reclaimed the expired key
}

func TestScanInsideMulti(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+OK|", "SET", "k", "v")
	tc.expect("+OK|", "MULTI")
	tc.expect("+QUEUED|", "SET", "k2", "v")
	tc.expect("+QUEUED|", "SCAN", "0")
	tc.expect("+QUEUED|", "RANDOMKEY")
	r := tc.do("EXEC")
	if !strings.HasPrefix(r, "*3\r\n+OK\r\n*2\r\n$1\r\n0\r\n*2\r\n") {
		t.Fatalf("EXEC %q", r)
	}
}

func TestObjectCommand(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+OK|", "SET", "k", "v")
	tc.expect("+OK|", "SET", "n", "123")
	tc.expect("+OK|", "SET", "big", "12345")
	tc.expect("+OK|", "SET", "long", strings.Repeat("x", 45))
	tc.expect("$6|embstr|", "OBJECT", "ENCODING", "k")
	tc.expect("$3|int|", "OBJECT", "encoding", "n")
	tc.expect("$3|raw|", "OBJECT", "encoding", "long")
	tc.expect("$-1|", "OBJECT", "ENCODING", "nx")
	tc.expect("$-1|", "OBJECT", "IDLETIME", "nx")
	tc.expect("$-1|", "OBJECT", "FREQ", "nx")
	tc.expect("$-1|", "OBJECT", "REFCOUNT", "nx")
	tc.expect(":0|", "OBJECT", "IDLETIME", "k")
	tc.expect(":1|", "OBJECT", "REFCOUNT", "k")
	tc.expect(":2147483647|", "OBJECT", "REFCOUNT", "n")
	tc.expect(":1|", "OBJECT", "REFCOUNT", "big")
	tc.expect("-"+errNoLFU+"|", "OBJECT", "FREQ", "k")
	tc.expect("-ERR unknown subcommand 'foo'. Try OBJECT HELP.|", "OBJECT", "foo", "k")
	tc.expect("-ERR wrong number of arguments for 'object' command|", "OBJECT")
	tc.expectRaw("-ERR wrong number of arguments for 'object|encoding' command\r\n", "OBJECT", "encoding")
	tc.expectRaw("-ERR wrong number of arguments for 'object|help' command\r\n", "OBJECT", "help", "x")
	tc.expect("*12|+OBJECT <subcommand> [<arg> ...] -- subcommands:|+ENCODING <key>|+    Names the internal layout of the value at <key> (listpack, hashtable, ...).|+FREQ <key>|+    The LFU counter of <key>, which grows with the log of its recent use;|+    only while maxmemory-policy is an LFU one.|+IDLETIME <key>|+    About how many seconds ago <key> was last used; not under LFU policies.|+REFCOUNT <key>|+    How many references hold the value at <key>.|+HELP|+    Lists these subcommands.|", "OBJECT", "HELP")
	// Idle time follows the LRU clock and OBJECT itself does not touch.
	tc.s.lru.Add(7)
	tc.expect(":7|", "OBJECT", "IDLETIME", "k")
	tc.expect(":7|", "OBJECT", "IDLETIME", "k")
	tc.expect("$1|v|", "GET", "k")
	tc.expect(":0|", "OBJECT", "IDLETIME", "k")
	if err := tc.s.Cfg.Set("maxmemory-policy", "allkeys-lfu"); err != nil {
		t.Fatal(err)
	}
	tc.expect("-"+errLFU+"|", "OBJECT", "IDLETIME", "k")
	tc.expect("+OK|", "SET", "f", "v")
	tc.expect(":5|", "OBJECT", "FREQ", "f")
	for i := 0; i < 2000; i++ {
		tc.do("GET", "f")
	}
	// 2000 hits with lfu-log-factor 10 push the counter to roughly 15-25.
	r := tc.do("OBJECT", "FREQ", "f")
	n, _ := strconv.Atoi(strings.TrimSpace(r[1:]))
	if n < 10 || n > 40 {
		t.Fatalf("FREQ after 2000 hits = %q", r)
	}
}

func TestMemoryCommand(t *testing.T) {
	tc := newTestServer(t)
	// Values from redis-server 7.0.15 (jemalloc) for the same strings.
	tc.expect("+OK|", "SET", "k", "v")
	tc.expect(":64|", "MEMORY", "USAGE", "k")
	tc.expect(":64|", "MEMORY", "usage", "k", "SAMPLES", "0", "samples", "1")
	tc.expect("+OK|", "SET", "n", "123")
	tc.expect(":48|", "MEMORY", "USAGE", "n")
	for n, want := range map[int]int{1: 64, 12: 64, 13: 80, 29: 96, 44: 96, 45: 112, 100: 160, 200: 272} {
		tc.expect("+OK|", "SET", "k", strings.Repeat("x", n))
		tc.expect(fmt.Sprintf(":%d|", want), "MEMORY", "USAGE", "k")
	}
	for n, want := range map[int]int{5: 48, 12: 56, 20: 72, 44: 88, 45: 104, 100: 152, 200: 264} {
		k := strings.Repeat("k", n)
		tc.expect("+OK|", "SET", k, "1")
		tc.expect(fmt.Sprintf(":%d|", want), "MEMORY", "USAGE", k)
	}
	tc.expect("$-1|", "MEMORY", "USAGE", "nx")
	tc.expect("-ERR syntax error|", "MEMORY", "USAGE", "k", "samples")
	tc.expect("-ERR syntax error|", "MEMORY", "USAGE", "k", "samples", "-5")
	tc.expect("-ERR value is not an integer or out of range|", "MEMORY", "USAGE", "k", "samples", "x")
	tc.expect("-ERR syntax error|", "MEMORY", "USAGE", "k", "foo")
	tc.expectRaw("-ERR wrong number of arguments for 'memory|usage' command\r\n", "MEMORY", "USAGE")
	tc.expectRaw("-ERR wrong number of arguments for 'memory|stats' command\r\n", "MEMORY", "STATS", "x")
	tc.expect("*14|+MEMORY <subcommand> [<arg> ...] -- subcommands:|+DOCTOR|+    A plain-text opinion on the node's memory use.|+MALLOC-STATS|+    The allocator's own statistics, when it keeps any.|+PURGE|+    Hands unused memory pages back to the operating system.|+STATS|+    Where the node's memory goes, field by field.|+USAGE <key> [SAMPLES <count>]|+    Estimated bytes held by <key> and its value; for collections the estimate|+    looks at <count> elements (5 when omitted, 0 for every element).|+HELP|+    Lists these subcommands.|", "MEMORY", "HELP")
	tc.expect("+OK|", "MEMORY", "PURGE")
	if r := tc.do("MEMORY", "STATS"); !strings.HasPrefix(r, "*54\r\n$14\r\npeak.allocated\r\n:") || !strings.Contains(r, "$18\r\ndataset.percentage\r\n$") {
		t.Fatalf("MEMORY STATS %q", r)
	}
	tc.expectRaw("$65\r\nThe node holds less than 5MB: too little for a memory diagnosis.\n\r\n", "MEMORY", "DOCTOR")
	tc.do("HELLO", "3")
	if r := tc.do("MEMORY", "STATS"); !strings.HasPrefix(r, "%27\r\n") || !strings.Contains(r, "$18\r\ndataset.percentage\r\n,") {
		t.Fatalf("MEMORY STATS RESP3 %q", r)
	}
	tc.expectRaw("=69\r\ntxt:The node holds less than 5MB: too little for a memory diagnosis.\n\r\n", "MEMORY", "DOCTOR")
}

func TestJemallocSize(t *testing.T) {
	for n, want := range map[int64]int64{1: 8, 8: 8, 9: 16, 17: 32, 33: 48, 128: 128, 129: 160, 161: 192, 257: 320, 513: 640, 1025: 1280} {
		if got := jemallocSize(n); got != want {
			t.Errorf("jemallocSize(%d)=%d want %d", n, got, want)
		}
	}
}

// expectRaw is expect for replies that contain '|' themselves.
func (tc *testClient) expectRaw(want string, args ...string) {
	tc.t.Helper()
	if got := tc.do(args...); got != want {
		tc.t.Fatalf("%q:\n got  %q\n want %q", args, got, want)
	}
}

func TestKeysClusterMode(t *testing.T) {
	tc := newTestServer(t, "cluster-enabled", "yes")
	tc.expect("+OK|", "SET", "{a}1", "1")
	tc.expect("-ERR Copying to another database is not allowed in cluster mode|", "COPY", "{a}1", "{a}2", "db", "1")
	tc.expect(":1|", "COPY", "{a}1", "{a}2", "db", "0")
	tc.expect("-ERR value is not an integer or out of range|", "COPY", "{a}1", "{a}2", "db", "x")
	tc.expect("-ERR source and destination objects are the same|", "COPY", "{a}1", "{a}1", "db", "0")
	tc.expect("-ERR MOVE is not allowed in cluster mode|", "MOVE", "{a}1", "x")
	tc.expect("-ERR SWAPDB is not allowed in cluster mode|", "SWAPDB", "x", "1")
	tc.expect(":64|", "MEMORY", "USAGE", "{a}1") // 16 more bytes of slot-to-key links
}

func TestMemoryDoctorWithData(t *testing.T) {
	tc := newTestServer(t, "enable-debug-command", "yes")
	tc.expect("+OK|", "DEBUG", "POPULATE", "20000", "key", "300")
	if used := tc.s.ks.UsedMemory(); used < 5<<20 {
		t.Fatalf("populate made only %d bytes", used)
	}
	msg := "No memory problem found. slotd keeps no allocator statistics, so fragmentation and allocator overhead are not judged.\n"
	tc.expectRaw(fmt.Sprintf("$%d\r\n%s\r\n", len(msg), msg), "MEMORY", "DOCTOR")
}

// TestScanWholeSlots checks the cursor layout (the next slot to visit) and
// that a slot holding more keys than COUNT comes back whole in one call,
// while slots are churned between calls.
func TestScanWholeSlots(t *testing.T) {
	tc := newTestServer(t)
	tags := []string{"{a}", "{b}", "{c}", "{d}", "{e}"}
	for _, tag := range tags {
		for i := 0; i < 30; i++ {
			tc.expect("+OK|", "SET", fmt.Sprint(tag, "stable:", i), "v")
		}
	}
	r := tc.do("SCAN", "0", "COUNT", "3")
	first := slots.Of([]byte("{b}")) // the lowest of the five slots
	for _, tag := range tags {
		first = min(first, slots.Of([]byte(tag)))
	}
	if want := fmt.Sprintf("*2\r\n$%d\r\n%d\r\n*30\r\n", len(strconv.Itoa(first+1)), first+1); !strings.HasPrefix(r, want) {
		t.Fatalf("first call %q, want prefix %q", r, want)
	}
	n := 0
	seen, _ := scanAll(t, tc, 3, func() {
		tag := tags[n%len(tags)]
		tc.expect(":1|", "SADD", fmt.Sprint(tag, "churn:", n), "m")
		if n > 3 {
			tc.expect(":1|", "DEL", fmt.Sprint(tags[(n-3)%len(tags)], "churn:", n-3))
		}
		n++
	})
	for _, tag := range tags {
		for i := 0; i < 30; i++ {
			if k := fmt.Sprint(tag, "stable:", i); seen[k] != 1 {
				t.Fatalf("%s seen %d times", k, seen[k])
			}
		}
	}
	tc.expect("*2|$1|0|*0|", "SCAN", "16384")
}
