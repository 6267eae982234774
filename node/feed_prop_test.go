package node

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// takeCmds pumps the feed and returns the commands delivered since the
// last take, each as its arguments joined by spaces, SELECTs left out.
func (r *recSink) takeCmds(t *testing.T, f *feed) []string {
	t.Helper()
	f.pump()
	r.mu.Lock()
	b := string(r.b)
	r.b = r.b[:0]
	r.mu.Unlock()
	var out []string
	for len(b) > 0 {
		if b[0] != '*' {
			t.Fatalf("bad stream at %q", b)
		}
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
		if strings.EqualFold(args[0], "select") {
			continue
		}
		out = append(out, strings.Join(args, " "))
	}
	return out
}

// expectProp runs a command and checks what it propagated: want holds
// the commands, and "<ms:N>" in one stands for an absolute time about N
// ms from now.
func expectProp(t *testing.T, tc *testClient, r *recSink, want []string, args ...string) {
	t.Helper()
	before := time.Now().UnixMilli()
	tc.do(args...)
	after := time.Now().UnixMilli()
	got := r.takeCmds(t, tc.s.feed)
	if len(got) != len(want) {
		t.Fatalf("%v propagated %q, want %q", args, got, want)
	}
	for i, w := range want {
		g := got[i]
		if j := strings.Index(w, "<ms:"); j >= 0 {
			k := strings.Index(w[j:], ">")
			d, _ := strconv.ParseInt(w[j+4:j+k], 10, 64)
			rest := w[j+k+1:]
			if !strings.HasPrefix(g, w[:j]) || !strings.HasSuffix(g, rest) {
				t.Fatalf("%v propagated %q, want %q", args, g, w)
			}
			ms, err := strconv.ParseInt(g[j:len(g)-len(rest)], 10, 64)
			if err != nil || ms < before+d || ms > after+d {
				t.Fatalf("%v propagated %q: time not in [%d, %d]", args, g, before+d, after+d)
			}
			continue
		}
		if g != w {
			t.Fatalf("%v propagated %q, want %q", args, got, want)
		}
	}
}

func TestPropagateStrings(t *testing.T) {
	tc := newTestServer(t)
	r := attachRec(t, tc)
	p := func(want []string, args ...string) { t.Helper(); expectProp(t, tc, r, want, args...) }
	p([]string{"SET k v PXAT <ms:100000>"}, "SET", "k", "v", "EX", "100")
	p([]string{"SET k v PXAT <ms:5000>"}, "SET", "k", "v", "PX", "5000", "XX")
	p([]string{"SET k v PXAT 4102444800000"}, "SET", "k", "v", "EXAT", "4102444800")
	p([]string{"set k v pxat 4102444800001"}, "set", "k", "v", "pxat", "4102444800001")
	p([]string{"SET k v PXAT <ms:3000>"}, "SET", "k", "v", "GET", "PX", "3000")
	p([]string{"SET k w"}, "SET", "k", "w", "GET")
	p([]string{"SET k w KEEPTTL"}, "SET", "k", "w", "KEEPTTL", "GET")
	p(nil, "SET", "k", "w", "NX")
	p([]string{"DEL k"}, "SET", "k", "v", "PXAT", "1")
	p(nil, "SET", "k", "v", "PXAT", "1") // nothing to delete
	p([]string{"SET k v PXAT <ms:7000>"}, "SETEX", "k", "7", "v")
	p([]string{"SET k v PXAT <ms:7>"}, "PSETEX", "k", "7", "v")
	tc.do("SET", "k", "v")
	r.takeCmds(t, tc.s.feed)
	p([]string{"PEXPIREAT k <ms:9000>"}, "GETEX", "k", "EX", "9")
	p([]string{"PEXPIREAT k 4102444800000"}, "GETEX", "k", "EXAT", "4102444800")
	p([]string{"PERSIST k"}, "GETEX", "k", "PERSIST")
	p(nil, "GETEX", "k", "PERSIST") // no TTL: nothing changed
	p(nil, "GETEX", "k")
	p([]string{"DEL k"}, "GETEX", "k", "PXAT", "1")
	tc.do("SET", "k", "v")
	r.takeCmds(t, tc.s.feed)
	p([]string{"DEL k"}, "GETDEL", "k")
	p(nil, "GETDEL", "k")
	tc.do("SET", "f", "10.5")
	tc.do("EXPIRE", "f", "100")
	r.takeCmds(t, tc.s.feed)
	p([]string{"SET f 15.6 KEEPTTL"}, "INCRBYFLOAT", "f", "5.1")
	p([]string{"SET g 3000 KEEPTTL"}, "INCRBYFLOAT", "g", "3e3")
	p(nil, "INCRBYFLOAT", "k2", "x")
}

func TestPropagateExpire(t *testing.T) {
	tc := newTestServer(t)
	r := attachRec(t, tc)
	p := func(want []string, args ...string) { t.Helper(); expectProp(t, tc, r, want, args...) }
	tc.do("SET", "k", "v")
	r.takeCmds(t, tc.s.feed)
	p([]string{"PEXPIREAT k <ms:100000>"}, "EXPIRE", "k", "100")
	p([]string{"PEXPIREAT k <ms:200000> GT"}, "PEXPIRE", "k", "200000", "GT")
	p([]string{"PEXPIREAT k 4102444800000"}, "EXPIREAT", "k", "4102444800")
	p([]string{"PEXPIREAT k 4102444800001"}, "PEXPIREAT", "k", "4102444800001")
	p(nil, "EXPIRE", "k", "100", "NX") // has a TTL: nothing done
	p(nil, "EXPIRE", "nokey", "100")
	p([]string{"DEL k"}, "EXPIRE", "k", "-1")
	tc.do("SET", "k", "v")
	r.takeCmds(t, tc.s.feed)
	p([]string{"DEL k"}, "PEXPIREAT", "k", "1")
}

func TestPropagateCollections(t *testing.T) {
	tc := newTestServer(t)
	r := attachRec(t, tc)
	p := func(want []string, args ...string) { t.Helper(); expectProp(t, tc, r, want, args...) }
	p([]string{"HSET h f 1.5"}, "HINCRBYFLOAT", "h", "f", "1.5")
	p([]string{"HSET h f 3"}, "HINCRBYFLOAT", "h", "f", "1.5")

	// SPOP: the members actually popped, as SREM.
	tc.do("SADD", "s", "a")
	r.takeCmds(t, tc.s.feed)
	p([]string{"SREM s a"}, "SPOP", "s")
	tc.do("SADD", "s", "a", "b", "c")
	r.takeCmds(t, tc.s.feed)
	tc.do("SPOP", "s", "2")
	got := r.takeCmds(t, tc.s.feed)
	if len(got) != 1 || !strings.HasPrefix(got[0], "SREM s ") || len(strings.Fields(got[0])) != 4 {
		t.Fatalf("SPOP 2 propagated %q", got)
	}
	rest := tc.do("SMEMBERS", "s")
	for _, m := range strings.Fields(got[0])[2:] {
		if strings.Contains(rest, "\r\n"+m+"\r\n") {
			t.Fatalf("propagated %q but %q still in the set", m, m)
		}
	}
	p([]string{"DEL s"}, "SPOP", "s", "5")
	p(nil, "SPOP", "s", "5")
	// A large SPOP: SREMs of at most 1024 members in MULTI/EXEC.
	args := []string{"SADD", "big"}
	for i := 0; i < 3000; i++ {
		args = append(args, strconv.Itoa(i))
	}
	tc.do(args...)
	r.takeCmds(t, tc.s.feed)
	tc.do("SPOP", "big", "2500")
	got = r.takeCmds(t, tc.s.feed)
	if len(got) != 5 || got[0] != "MULTI" || got[4] != "EXEC" {
		t.Fatalf("SPOP 2500 propagated %d commands", len(got))
	}
	for i, n := range []int{1024, 1024, 452} {
		if f := strings.Fields(got[i+1]); f[0] != "SREM" || len(f) != 2+n {
			t.Fatalf("SREM %d has %d members", i, len(f)-2)
		}
	}

	tc.do("RPUSH", "l", "a", "b", "c")
	r.takeCmds(t, tc.s.feed)
	p([]string{"LPOP l 2"}, "LMPOP", "2", "nol", "l", "LEFT", "COUNT", "2")
	p([]string{"RPOP l 1"}, "LMPOP", "1", "l", "RIGHT", "COUNT", "10")
	p(nil, "LMPOP", "1", "l", "RIGHT")

	tc.do("ZADD", "z", "1", "a", "2", "b", "3", "c")
	r.takeCmds(t, tc.s.feed)
	p([]string{"ZPOPMIN z 1"}, "ZMPOP", "1", "z", "MIN")
	p([]string{"ZPOPMAX z 2"}, "ZMPOP", "1", "z", "MAX", "COUNT", "5")
	p(nil, "ZMPOP", "1", "z", "MAX", "COUNT", "5")
}

func TestPropagateRestore(t *testing.T) {
	tc := newTestServer(t)
	tc.do("SET", "src", "v")
	payload := tc.do("DUMP", "src")
	payload = payload[strings.Index(payload, "\r\n")+2 : len(payload)-2]
	r := attachRec(t, tc)
	p := func(want []string, args ...string) { t.Helper(); expectProp(t, tc, r, want, args...) }
	p([]string{"RESTORE k <ms:100000> " + payload + " ABSTTL"}, "RESTORE", "k", "100000", payload)
	p([]string{"RESTORE k 4102444800000 " + payload + " REPLACE ABSTTL"}, "RESTORE", "k", "4102444800000", payload, "REPLACE", "ABSTTL")
	p([]string{"RESTORE k2 0 " + payload}, "RESTORE", "k2", "0", payload)
	// A time already passed: the key replaced is deleted, as DEL.
	p([]string{"DEL k"}, "RESTORE", "k", "1", payload, "REPLACE", "ABSTTL")
	p(nil, "RESTORE", "k", "1", payload, "ABSTTL")
}

func TestPropagateMigrateAsDel(t *testing.T) {
	_, addr := startTCP(t, "port", "26710")
	host, port := hostPort(t, addr)
	if port != "26710" {
		t.Fatalf("target on %s", addr)
	}
	tc := newTestServer(t)
	tc.do("SET", "a", "1")
	tc.do("SET", "b", "2")
	r := attachRec(t, tc)
	p := func(want []string, args ...string) { t.Helper(); expectProp(t, tc, r, want, args...) }
	p([]string{"DEL a b"}, "MIGRATE", host, port, "", "0", "5000", "KEYS", "a", "b", "nokey")
	tc.do("SET", "c", "3")
	r.takeCmds(t, tc.s.feed)
	p(nil, "MIGRATE", host, port, "c", "0", "5000", "COPY")
	p(nil, "MIGRATE", host, port, "nokey", "0", "5000")
}
