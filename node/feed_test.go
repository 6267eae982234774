package node

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// recSink records what the feed delivers.
type recSink struct {
	mu  sync.Mutex
	b   []byte
	end int64
}

func (r *recSink) feedWrite(chunk []byte, end int64) {
	r.mu.Lock()
	r.b = append(r.b, chunk...)
	r.end = end
	r.mu.Unlock()
}

// take pumps the feed and returns what arrived since the last take, with
// "|" for CRLF.
func (r *recSink) take(f *feed) string {
	f.pump()
	r.mu.Lock()
	defer r.mu.Unlock()
	s := strings.ReplaceAll(string(r.b), "\r\n", "|")
	r.b = r.b[:0]
	return s
}

func attachRec(t *testing.T, tc *testClient) *recSink {
	r := &recSink{}
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	tc.s.feed.attach(r, done)
	return r
}

func TestFeedPropagatesWrites(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+OK|", "SET", "before", "x") // not attached yet: not seen
	r := attachRec(t, tc)
	if got := r.take(tc.s.feed); got != "" {
		t.Fatalf("before any write: %q", got)
	}
	tc.expect("+OK|", "SET", "k", "v")
	tc.expect("$1|v|", "GET", "k")
	tc.expect(":0|", "DEL", "nosuchkey") // wrote nothing: not propagated
	if got, want := r.take(tc.s.feed), "*2|$6|SELECT|$1|0|*3|$3|SET|$1|k|$1|v|"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	tc.expect("+OK|", "SELECT", "3")
	tc.expect(":1|", "INCR", "n")
	tc.expect("+OK|", "SELECT", "0")
	tc.expect(":1|", "DEL", "k")
	if got, want := r.take(tc.s.feed), "*2|$6|SELECT|$1|3|*2|$4|INCR|$1|n|*2|$6|SELECT|$1|0|*2|$3|DEL|$1|k|"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if end, off := r.end, tc.s.feed.offset(); end != off || off == 0 {
		t.Fatalf("sink end %d, feed offset %d", end, off)
	}
}

func TestFeedWrapsTransactions(t *testing.T) {
	tc := newTestServer(t)
	r := attachRec(t, tc)
	tc.expect("+OK|", "SET", "a", "1")
	r.take(tc.s.feed)

	tc.expect("+OK|", "MULTI")
	tc.expect("+QUEUED|", "INCR", "a")
	tc.expect("+QUEUED|", "GET", "a")
	tc.expect("+QUEUED|", "SELECT", "1")
	tc.expect("+QUEUED|", "SET", "b", "2")
	tc.expect("*4|:2|$1|2|+OK|+OK|", "EXEC")
	want := "*1|$5|MULTI|*2|$4|INCR|$1|a|*2|$6|SELECT|$1|1|*3|$3|SET|$1|b|$1|2|*1|$4|EXEC|"
	if got := r.take(tc.s.feed); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// The stream is now in database 1: a write in 0 selects again.
	tc.expect("+OK|", "SELECT", "0")
	// One write in a transaction is not wrapped, as redis-server does.
	tc.expect("+OK|", "MULTI")
	tc.expect("+QUEUED|", "GET", "a")
	tc.expect("+QUEUED|", "SET", "c", "3")
	tc.expect("*2|$1|2|+OK|", "EXEC")
	want = "*2|$6|SELECT|$1|0|*3|$3|SET|$1|c|$1|3|"
	if got := r.take(tc.s.feed); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// A read-only transaction propagates nothing.
	tc.expect("+OK|", "MULTI")
	tc.expect("+QUEUED|", "GET", "a")
	tc.expect("*1|$1|2|", "EXEC")
	if got := r.take(tc.s.feed); got != "" {
		t.Fatalf("read-only EXEC propagated %q", got)
	}
}

func TestFeedPropagatesExpiry(t *testing.T) {
	tc := newTestServer(t)
	r := attachRec(t, tc)
	tc.expect("+OK|", "SET", "k", "v", "PX", "5")
	r.take(tc.s.feed)
	deadline := time.Now().Add(5 * time.Second)
	for tc.do("GET", "k") != "$-1\r\n" {
		if time.Now().After(deadline) {
			t.Fatal("key never expired")
		}
		time.Sleep(time.Millisecond)
	}
	if got, want := r.take(tc.s.feed), "*2|$3|DEL|$1|k|"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestFeedCustomPropagation(t *testing.T) {
	tc := newTestServer(t)
	r := attachRec(t, tc)
	// A handler that rewrites its propagation into two commands gets them
	// wrapped in MULTI/EXEC.
	x := &tc.c.x
	x.S, x.C, x.DB = tc.s, tc.c, tc.s.ks.DB(0)
	x.Propagate([]byte("SREM"), []byte("s"), []byte("a"))
	x.Propagate([]byte("SREM"), []byte("s"), []byte("b"))
	x.propagateCall(x.mods)
	tc.c.prop.flush(tc.s.feed)
	// SELECT precedes the block, not inside it.
	want := "*2|$6|SELECT|$1|0|*1|$5|MULTI|*3|$4|SREM|$1|s|$1|a|*3|$4|SREM|$1|s|$1|b|*1|$4|EXEC|"
	if got := r.take(tc.s.feed); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestFeedDetachStops(t *testing.T) {
	tc := newTestServer(t)
	r := &recSink{}
	done := make(chan struct{})
	defer close(done)
	tc.s.feed.attach(r, done)
	tc.s.feed.detach(r)
	if tc.s.feed.on.Load() {
		t.Fatal("feed still on with no sink")
	}
	tc.expect("+OK|", "SET", "k", "v")
	if got := r.take(tc.s.feed); got != "" {
		t.Fatalf("detached sink got %q", got)
	}
}
