package node

import "testing"

// TestSetSlotChecksOwnerFirst: MIGRATING and IMPORTING check who owns the
// slot before they look the node up, as redis-server does.
func TestSetSlotChecksOwnerFirst(t *testing.T) {
	port := 0
	for p := 23800; p < 23900; p++ {
		if portFree(p) && portFree(p+10000) {
			port = p
			break
		}
	}
	if port == 0 {
		t.Fatal("no free port pair in 23800-23899")
	}
	m, err := startMember(t, port, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer m.s.Close()
	m.tc.expect("+OK|", "CLUSTER", "ADDSLOTSRANGE", "0", "100")
	m.tc.expect("-ERR I'm already the owner of hash slot 5|", "CLUSTER", "SETSLOT", "5", "IMPORTING", "nosuchnode")
	m.tc.expect("-ERR I'm not the owner of hash slot 500|", "CLUSTER", "SETSLOT", "500", "MIGRATING", "nosuchnode")
	m.tc.expect("-ERR I don't know about node nosuchnode|", "CLUSTER", "SETSLOT", "5", "MIGRATING", "nosuchnode")
	m.tc.expect("-ERR I don't know about node nosuchnode|", "CLUSTER", "SETSLOT", "500", "IMPORTING", "nosuchnode")
	m.tc.expect("-ERR Unknown node nosuchnode|", "CLUSTER", "SETSLOT", "500", "NODE", "nosuchnode")
}
