package node

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Replies below were checked against redis-server 7.0.15.

func TestExpireOptions(t *testing.T) {
	tc := newTestServer(t)
	tc.expect(":0|", "EXPIRE", "k", "10")
	tc.expect("+OK|", "SET", "k", "v")
	tc.expect("-ERR NX and XX, GT or LT options at the same time are not compatible|", "EXPIRE", "k", "100", "nx", "xx")
	tc.expect("-ERR GT and LT options at the same time are not compatible|", "EXPIRE", "k", "100", "gt", "lt")
	tc.expect("-ERR NX and XX, GT or LT options at the same time are not compatible|", "EXPIRE", "k", "100", "nx", "gt")
	tc.expect("-ERR Unsupported option foo|", "EXPIRE", "k", "100", "foo")
	tc.expect("-ERR Unsupported option foo|", "EXPIRE", "k", "x", "foo")
	tc.expect("-ERR value is not an integer or out of range|", "EXPIRE", "k", "x")
	tc.expect("-ERR value is not an integer or out of range|", "EXPIRE", "k", "1.5")
	tc.expect(":0|", "EXPIRE", "k", "100", "xx")
	tc.expect(":0|", "EXPIRE", "k", "100", "gt") // no TTL counts as infinite
	tc.expect(":1|", "EXPIRE", "k", "100", "nx")
	tc.expect(":0|", "EXPIRE", "k", "100", "NX", "NX")
	tc.expect(":100|", "TTL", "k")
	tc.expect(":0|", "EXPIRE", "k", "50", "gt")
	tc.expect(":1|", "EXPIRE", "k", "200", "gt")
	tc.expect(":1|", "EXPIRE", "k", "50", "lt")
	tc.expect(":0|", "EXPIRE", "k", "60", "lt")
	tc.expect(":1|", "PERSIST", "k")
	tc.expect(":0|", "PERSIST", "k")
	tc.expect(":0|", "PERSIST", "nx")
	tc.expect(":1|", "EXPIRE", "k", "50", "lt")
	tc.expect(":1|", "EXPIRE", "k", "100", "xx", "xx")
	tc.expect(":0|", "PEXPIRE", "k", "-1", "gt")
	tc.expect(":0|", "EXPIRE", "k", "0", "gt")
	tc.expect(":1|", "EXISTS", "k")
}

func TestExpireLimits(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+OK|", "SET", "k", "v")
	tc.expect("-ERR invalid expire time in 'expire' command|", "EXPIRE", "k", "9223372036854775807")
	tc.expect("-ERR invalid expire time in 'expire' command|", "EXPIRE", "k", "9223372036854775")
	tc.expect("-ERR invalid expire time in 'expire' command|", "EXPIRE", "k", "-9223372036854775808")
	tc.expect("-ERR invalid expire time in 'expire' command|", "EXPIRE", "nx", "9223372036854775807")
	tc.expect("-ERR invalid expire time in 'pexpire' command|", "PEXPIRE", "k", "9223372036854775807")
	tc.expect("-ERR invalid expire time in 'expireat' command|", "EXPIREAT", "k", "9223372036854775807")
	tc.expect(":1|", "EXPIRE", "k", "9223372036854")
	tc.expect(":1|", "PEXPIREAT", "k", "9223372036854775807")
	tc.expect(":9223372036854776|", "EXPIRETIME", "k")
	tc.expect(":9223372036854775807|", "PEXPIRETIME", "k")
	tc.expect(":-2|", "EXPIRETIME", "nx")
	tc.expect(":-2|", "PEXPIRETIME", "nx")
	tc.expect(":-2|", "TTL", "nx")
	tc.expect(":-2|", "PTTL", "nx")
	tc.expect("+OK|", "SET", "p", "v")
	tc.expect(":-1|", "TTL", "p")
	tc.expect(":-1|", "PTTL", "p")
	tc.expect(":-1|", "EXPIRETIME", "p")
	tc.expect(":-1|", "PEXPIRETIME", "p")
	tc.expect(":1|", "EXPIREAT", "p", "4000000000")
	tc.expect(":4000000000|", "EXPIRETIME", "p")
	tc.expect(":4000000000000|", "PEXPIRETIME", "p")
}

func TestExpirePastDeletes(t *testing.T) {
	tc := newTestServer(t)
	for _, c := range [][]string{
		{"PEXPIREAT", "k", "1"},
		{"EXPIRE", "k", "-1"},
		{"EXPIRE", "k", "0", "nx"},
		{"PEXPIREAT", "k", "-5"},
		{"EXPIREAT", "k", "100"},
	} {
		tc.expect("+OK|", "SET", "k", "v")
		tc.expect(":1|", c...)
		tc.expect(":0|", "EXISTS", "k")
	}
	tc.expect("+OK|", "SET", "k", "v")
	tc.expect(":1|", "EXPIRE", "k", "100")
	tc.expect(":1|", "EXPIRE", "k", "0", "lt")
	tc.expect(":0|", "EXISTS", "k")
	tc.expect("+OK|", "SET", "k", "v")
	tc.expect(":0|", "EXPIRE", "k", "-5", "xx")
	tc.expect(":1|", "EXISTS", "k")
}

func TestTTLRounding(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+OK|", "SET", "k", "v")
	tc.expect(":1|", "PEXPIRE", "k", "1400")
	tc.expect(":1|", "TTL", "k")
	tc.expect(":1|", "PEXPIRE", "k", "499")
	tc.expect(":0|", "TTL", "k")
	tc.expect(":1|", "PEXPIRE", "k", "100000")
	r := tc.do("PTTL", "k")
	if n, _ := strconv.Atoi(strings.TrimSpace(r[1:])); n < 99000 || n > 100000 {
		t.Fatalf("PTTL %q", r)
	}
	time.Sleep(2 * time.Millisecond)
	tc.expect(":1|", "PEXPIRE", "k", "1")
	time.Sleep(3 * time.Millisecond)
	tc.expect(":-2|", "PTTL", "k")
	tc.expect("$-1|", "GET", "k")
}

func TestExpireTouchesWatch(t *testing.T) {
	a := newTestServer(t)
	b := a.newClient()
	a.expect("+OK|", "SET", "k", "v")
	a.expect("+OK|", "WATCH", "k")
	b.expect(":1|", "EXPIRE", "k", "100")
	a.expect("+OK|", "MULTI")
	a.expect("+QUEUED|", "GET", "k")
	a.expect("*-1|", "EXEC")
}

// TestActiveExpire checks that the cron's cycle removes keys nobody reads
// and that it stops at its time budget.
func TestActiveExpire(t *testing.T) {
	tc := newTestServer(t)
	const n = 3000
	for i := 0; i < n; i++ {
		tc.expect("+OK|", "SET", fmt.Sprint("t:", i), "v", "PX", "1")
	}
	tc.expect("+OK|", "SET", "keep", "v", "EX", "1000")
	time.Sleep(5 * time.Millisecond)
	now := time.Now().UnixMilli()
	db := tc.s.ks.DB(0)
	// A zero budget still does a little work but stops early.
	tc.s.activeExpire(now, 0)
	if got := db.Len(); got == 1 || got > n+1 {
		t.Fatalf("after a zero-budget cycle %d keys remain", got)
	}
	for i := 0; i < 100 && db.Len() > 1; i++ {
		tc.s.activeExpire(now, 25*time.Millisecond)
	}
	if got := db.Len(); got != 1 {
		t.Fatalf("%d keys remain after active expiry", got)
	}
	if got := tc.s.ks.ExpiredKeys.Load(); got != n {
		t.Fatalf("expired_keys %d", got)
	}
	tc.expect(":1|", "EXISTS", "keep")
}

func TestSetActiveExpire(t *testing.T) {
	tc := newTestServer(t, "hz", "100")
	tc.s.SetActiveExpire(false)
	go tc.s.cron()
	defer close(tc.s.done)
	tc.expect("+OK|", "SET", "k", "v", "PX", "1")
	time.Sleep(50 * time.Millisecond)
	if tc.s.ks.DB(0).Len() != 1 {
		t.Fatal("active expiry ran while disabled")
	}
	tc.s.SetActiveExpire(true)
	deadline := time.Now().Add(2 * time.Second)
	for tc.s.ks.DB(0).Len() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("key not expired by the cron")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
