package node

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// portNowhere is a port of this package's test range nothing listens on.
const portNowhere = "23999"

func hostPort(t *testing.T, addr string) (string, string) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return h, p
}

// TestMigrateBothWays runs the same MIGRATE scenarios from slotd into a
// real redis-server and from that redis-server into slotd: the replies must
// be the same and the keys must arrive intact (by digest).
func TestMigrateBothWays(t *testing.T) {
	rs := startRedis(t)
	ref := rs.dial(t)
	srv, addr := startTCP(t, "enable-debug-command", "yes")
	sd := (&refServer{addr: addr}).dial(t)
	rh, rp := hostPort(t, rs.addr)
	sh, sp := hostPort(t, addr)

	type side struct {
		name       string
		c          *refConn
		peerHost   string
		peerPort   string
		peer       *refConn
		setPeerCfg func(args ...string) string
	}
	sides := []side{
		{name: "slotd->redis-server", c: sd, peerHost: rh, peerPort: rp, peer: ref},
		{name: "redis-server->slotd", c: ref, peerHost: sh, peerPort: sp, peer: sd},
	}
	var replies [2][]string
	for i, sd := range sides {
		src, dst := sd.c, sd.peer
		src.do(t, "FLUSHALL")
		dst.do(t, "FLUSHALL")
		cmds, keys := digestDataset()
		for _, c := range cmds {
			src.do(t, c...)
		}
		srcDigest := src.do(t, "DEBUG", "DIGEST")
		log := func(args ...string) string {
			t.Helper()
			r := src.do(t, args...)
			replies[i] = append(replies[i], strings.Join(args[min(len(args), 3):], " ")+" => "+r)
			return r
		}
		mig := func(key, db string, more ...string) string {
			t.Helper()
			return log(append([]string{"MIGRATE", sd.peerHost, sd.peerPort, key, db, "5000"}, more...)...)
		}
		// One key at a time, then the rest with KEYS.
		if r := mig(keys[0], "0"); r != "+OK\r\n" {
			t.Fatalf("%s: MIGRATE %s: %q", sd.name, keys[0], r)
		}
		if r := mig("", "0", append([]string{"KEYS"}, keys[1:]...)...); r != "+OK\r\n" {
			t.Fatalf("%s: MIGRATE KEYS: %q", sd.name, r)
		}
		log("DBSIZE")
		if got := dst.do(t, "DEBUG", "DIGEST"); got != srcDigest {
			t.Fatalf("%s: target digest %q, source had %q", sd.name, got, srcDigest)
		}
		log("PTTL", "s:small")
		// Errors and options.
		mig("nokey", "0")
		mig("", "0", "KEYS", "nokey1", "nokey2")
		src.do(t, "SET", "a", "1")
		src.do(t, "SET", "b", "2")
		mig("a", "0", "COPY")
		log("EXISTS", "a")
		mig("a", "0")
		log("EXISTS", "a")
		src.do(t, "SET", "a", "new")
		mig("", "0", "COPY", "REPLACE", "KEYS", "a", "b", "missing")
		log("EXISTS", "a", "b")
		log("GET", "a")
		mig("a", "0", "KEYS", "b")
		mig("a", "0", "AUTH")
		mig("a", "0", "AUTH2", "u")
		mig("a", "0", "FOO")
		mig("a", "x")
		mig("a", "0", "COPY")
		log("MIGRATE", sd.peerHost, sd.peerPort, "a", "0", "abc")
		log("MIGRATE", sd.peerHost, sd.peerPort, "a", "x", "abc")
		mig("a", "3", "COPY")
		mig("a", "99", "COPY")
		mig("a", "0", "AUTH", "nopass")
		mig("a", "0", "AUTH2", "default", "nopass")
		log("MIGRATE", "127.0.0.1", portNowhere, "a", "0", "500")
		log("MIGRATE", "127.0.0.1", portNowhere, "", "0", "500", "KEYS", "nokey")
		// A key with a TTL keeps it.
		src.do(t, "SET", "t", "v", "PX", "50000")
		mig("t", "0")
		if ms := parseReply(t, dst.do(t, "PTTL", "t")).num; ms < 40000 || ms > 50000 {
			t.Fatalf("%s: PTTL after MIGRATE %d", sd.name, ms)
		}
		if got := dst.do(t, "SELECT", "3"); got != "+OK\r\n" {
			t.Fatal(got)
		}
		if got := dst.do(t, "GET", "a"); got != "$3\r\nnew\r\n" {
			t.Fatalf("%s: db 3 a=%q", sd.name, got)
		}
		dst.do(t, "SELECT", "0")
	}
	for j := range max(len(replies[0]), len(replies[1])) {
		if j >= len(replies[0]) || j >= len(replies[1]) || replies[0][j] != replies[1][j] {
			t.Fatalf("reply %d differs:\nslotd        %q\nredis-server %q", j, at(replies[0], j), at(replies[1], j))
		}
	}
	// The connection to the target is cached, then closed when idle.
	if n := srv.mig.size(); n != 1 {
		t.Fatalf("%d cached connections, want 1", n)
	}
	srv.mig.closeIdle(time.Now().Add(migrateCacheTTL + time.Second))
	if n := srv.mig.size(); n != 0 {
		t.Fatalf("%d cached connections after the idle time, want 0", n)
	}
}

func at(l []string, i int) string {
	if i < len(l) {
		return l[i]
	}
	return "(none)"
}

// TestMigrateAuth moves keys into a redis-server that needs a password,
// and reports its refusal as redis-server does.
func TestMigrateAuth(t *testing.T) {
	rs := startRedis(t)
	ref := rs.dial(t)
	ref.do(t, "CONFIG", "SET", "requirepass", "secret")
	ref.do(t, "AUTH", "secret")
	_, addr := startTCP(t)
	sd := (&refServer{addr: addr}).dial(t)
	rh, rp := hostPort(t, rs.addr)
	sd.do(t, "SET", "k", "v")
	if got := sd.do(t, "MIGRATE", rh, rp, "k", "0", "1000"); !strings.HasPrefix(got, "-ERR Target instance replied with error: NOAUTH") {
		t.Fatalf("without AUTH: %q", got)
	}
	if got := sd.do(t, "MIGRATE", rh, rp, "k", "0", "1000", "AUTH", "wrong"); got != "-ERR Target instance replied with error: WRONGPASS invalid username-password pair or user is disabled.\r\n" {
		t.Fatalf("wrong password: %q", got)
	}
	if got := sd.do(t, "EXISTS", "k"); got != ":1\r\n" {
		t.Fatalf("the key left after a refusal: %q", got)
	}
	if got := sd.do(t, "MIGRATE", rh, rp, "k", "0", "1000", "AUTH", "secret"); got != "+OK\r\n" {
		t.Fatalf("AUTH: %q", got)
	}
	sd.do(t, "SET", "k2", "v")
	if got := sd.do(t, "MIGRATE", rh, rp, "k2", "0", "1000", "AUTH2", "default", "secret"); got != "+OK\r\n" {
		t.Fatalf("AUTH2: %q", got)
	}
	if got := ref.do(t, "MGET", "k", "k2"); got != "*2\r\n$1\r\nv\r\n$1\r\nv\r\n" {
		t.Fatalf("target holds %q", got)
	}
}

// TestMigrateReconnects: a cached connection the target closed is
// replaced once, silently; a target that does not answer gets IOERR.
func TestMigrateReconnects(t *testing.T) {
	rs := startRedis(t)
	ref := rs.dial(t)
	_, addr := startTCP(t)
	sd := (&refServer{addr: addr}).dial(t)
	rh, rp := hostPort(t, rs.addr)
	for i := range 3 {
		k := "k" + strconv.Itoa(i)
		sd.do(t, "SET", k, "v")
		if got := sd.do(t, "MIGRATE", rh, rp, k, "0", "1000"); got != "+OK\r\n" {
			t.Fatalf("MIGRATE %d: %q", i, got)
		}
		// Close every client of the target but ours: the cached one goes.
		ref.do(t, "CLIENT", "KILL", "SKIPME", "yes")
	}

	// A listener that accepts and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	h, p := hostPort(t, ln.Addr().String())
	sd.do(t, "SET", "x", "v")
	if got := sd.do(t, "MIGRATE", h, p, "x", "0", "200"); got != "-IOERR error or timeout reading to target instance\r\n" {
		t.Fatalf("silent target: %q", got)
	}
	if got := sd.do(t, "EXISTS", "x"); got != ":1\r\n" {
		t.Fatalf("key lost after IOERR: %q", got)
	}
}
