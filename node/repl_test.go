package node

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestReplCommandsOnMaster(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("*3|$6|master|:0|*0|", "ROLE")
	tc.expect("+OK|", "REPLCONF", "listening-port", "6380", "capa", "eof", "capa", "psync2")
	tc.expect("-ERR Unrecognized REPLCONF option: nope|", "REPLCONF", "nope", "1")
	tc.expect("-ERR syntax error|", "REPLCONF", "listening-port")
	tc.expect(":0|", "WAIT", "0", "0")
	tc.expect(":0|", "WAIT", "1", "10")
	tc.expect("-ERR timeout is negative|", "WAIT", "1", "-1")
	tc.expect("-ERR value is not an integer or out of range|", "WAIT", "x", "1")
	tc.expect("-ERR Invalid master port|", "REPLICAOF", "127.0.0.1", "70000")
	info := tc.do("INFO", "replication")
	for _, f := range []string{"role:master", "connected_slaves:0", "master_failover_state:no-failover",
		"master_replid2:0000000000000000000000000000000000000000", "master_repl_offset:0", "second_repl_offset:-1",
		"repl_backlog_active:0", "repl_backlog_size:1048576", "repl_backlog_first_byte_offset:0", "repl_backlog_histlen:0"} {
		if !strings.Contains(info, f+"\r\n") {
			t.Errorf("INFO replication lacks %q:\n%s", f, info)
		}
	}
}

// A replica whose master cannot be reached refuses writes, and with
// replica-serve-stale-data no also reads; its master link applies writes
// without replies, and sees keys whose time passed until the master
// deletes them.
func TestReplReplicaRefusalsAndMasterLink(t *testing.T) {
	tc := newTestServer(t)
	defer tc.s.Close()
	tc.expect("+OK|", "SET", "k", "v")
	// Nothing listens on port 1: the link stays down.
	tc.expect("+OK|", "REPLICAOF", "127.0.0.1", "1")
	tc.expect("+OK Already connected to specified master|", "REPLICAOF", "127.0.0.1", "1")
	tc.expect("-READONLY You can't write against a read only replica.|", "SET", "k", "w")
	tc.expect("$1|v|", "GET", "k")
	tc.expect("+OK|", "MULTI")
	tc.expect("-READONLY You can't write against a read only replica.|", "SET", "k", "w")
	tc.expect("-EXECABORT Transaction discarded because of previous errors.|", "EXEC")
	tc.expect("-ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.|", "WAIT", "1", "0")
	role := tc.do("ROLE")
	if !strings.HasPrefix(role, "*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:1\r\n") || !strings.HasSuffix(role, ":-1\r\n") {
		t.Fatalf("ROLE = %q", role)
	}
	tc.expect("+OK|", "CONFIG", "SET", "replica-serve-stale-data", "no")
	tc.expect("-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.|", "GET", "k")
	if info := tc.do("INFO", "replication"); !strings.Contains(info, "master_link_status:down\r\n") {
		t.Fatalf("INFO: %s", info)
	}
	tc.expect("+OK|", "CONFIG", "SET", "replica-serve-stale-data", "yes")

	// The master link: writes pass (its replies are dropped by the stream
	// loop, not here).
	m := tc.newClient()
	m.c.Flags |= ClientMaster
	m.c.x.master = true
	m.c.publish()
	m.expect("+OK|", "SET", "k", "w")
	m.expect("+OK|", "SET", "e", "x", "PX", "1")
	time.Sleep(5 * time.Millisecond)
	tc.expect("$1|w|", "GET", "k")
	// Expired for clients, kept for the master link until its DEL.
	tc.expect("$-1|", "GET", "e")
	tc.expect(":2|", "DBSIZE")
	m.expect(":2|", "APPEND", "e", "y")
	tc.expect("$-1|", "GET", "e")
	m.do("DEL", "e")
	tc.expect(":1|", "DBSIZE")
	if !strings.Contains(tc.do("CLIENT", "LIST"), " flags=M ") {
		t.Fatalf("CLIENT LIST shows no master link:\n%s", tc.do("CLIENT", "LIST"))
	}

	// Promotion: a master again, with a new id that keeps the old one.
	tc.expect("+OK|", "REPLICAOF", "NO", "ONE")
	tc.expect("+OK|", "SET", "k", "x")
	info := tc.do("INFO", "replication")
	if !strings.Contains(info, "role:master\r\n") || strings.Contains(info, "second_repl_offset:-1\r\n") {
		t.Fatalf("INFO after promotion:\n%s", info)
	}
}

// TestReplMasterLinkKeepsPastTimes: a time that has passed on the replica
// but was ahead on the master when it sent it (SET PXAT, PEXPIREAT,
// RESTORE ABSTTL) gives the key that TTL on the master link instead of
// deleting it: the replica holds every key its master holds until the
// master's DEL. Once promoted, the node expires those keys itself and
// propagates their DELs to the replicas that continue from it; a replica
// that had dropped them silently would leave them on those replicas for
// good.
func TestReplMasterLinkKeepsPastTimes(t *testing.T) {
	tc := newTestServer(t)
	defer tc.s.Close()
	tc.expect("+OK|", "SET", "src", "v")
	payload := tc.do("DUMP", "src")
	payload = payload[strings.IndexByte(payload, '\n')+1 : len(payload)-2]
	tc.expect(":1|", "DEL", "src")
	// Nothing listens on port 1: the link stays down, the master link is
	// driven by hand.
	tc.expect("+OK|", "REPLICAOF", "127.0.0.1", "1")
	m := tc.newClient()
	m.c.Flags |= ClientMaster
	m.c.x.master = true
	m.c.publish()
	past := strconv.FormatInt(time.Now().UnixMilli()-1000, 10)
	m.expect("+OK|", "SET", "a", "v", "PXAT", past)
	m.expect("+OK|", "SET", "b", "v")
	m.expect(":1|", "PEXPIREAT", "b", past)
	m.expect("+OK|", "RESTORE", "c", past, payload, "ABSTTL")
	m.expect("+OK|", "SET", "d", "v", "PX", "1")
	time.Sleep(5 * time.Millisecond)
	// d has expired here but not on the master, which overwrote it.
	m.expect("+OK|", "SET", "d", "w", "XX")
	for _, k := range []string{"a", "b", "c"} {
		tc.expect("$-1|", "GET", k)
	}
	tc.expect("$1|w|", "GET", "d")
	tc.expect(":4|", "DBSIZE")

	r := attachRec(t, tc)
	tc.expect("+OK|", "REPLICAOF", "NO", "ONE")
	for _, k := range []string{"a", "b", "c"} {
		tc.expect("$-1|", "GET", k)
	}
	tc.expect(":1|", "DBSIZE")
	got := r.take(tc.s.feed)
	for _, k := range []string{"a", "b", "c"} {
		if !strings.Contains(got, "*2|$3|DEL|$1|"+k+"|") {
			t.Errorf("no DEL of %s propagated after the promotion: %q", k, got)
		}
	}
}

// TestReplicaOfWaitsForTheAppliedCommand: a change of master falls between
// two commands of the master link, so that the offset the node continues
// from covers exactly what it applied.
func TestReplicaOfWaitsForTheAppliedCommand(t *testing.T) {
	tc := newTestServer(t)
	defer tc.s.Close()
	tc.expect("+OK|", "REPLICAOF", "127.0.0.1", "1")
	r := &tc.s.repl
	gen := func() uint64 { r.mu.Lock(); defer r.mu.Unlock(); return r.gen }
	before := gen()
	// The master link in the middle of a command.
	r.applyMu.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		tc.s.replicaOf("", 0)
	}()
	time.Sleep(50 * time.Millisecond)
	if g := gen(); g != before {
		t.Fatalf("REPLICAOF NO ONE changed the master (gen %d -> %d) while a command was being applied", before, g)
	}
	r.applyMu.Unlock()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("REPLICAOF NO ONE did not finish after the command")
	}
	if g := gen(); g == before {
		t.Fatal("REPLICAOF NO ONE did not change the master")
	}
	// A command that cannot finish does not hold the change for long.
	r.applyMu.Lock()
	defer r.applyMu.Unlock()
	start := time.Now()
	tc.s.replicaOf("127.0.0.1", 1)
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("REPLICAOF waited %v for a stuck command", d)
	}
}
