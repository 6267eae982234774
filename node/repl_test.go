package node

import (
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
