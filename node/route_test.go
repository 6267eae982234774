package node

import (
	"testing"

	"github.com/slotd/slotd/slots"
)

// clusterRoute builds a route where this node (index 0) owns slots
// [0, 8191] and node 1 ("10.0.0.2:7001") owns the rest.
func clusterRoute(mod func(r *Route)) *Route {
	r := NewRoute()
	r.OK = true
	r.Nodes = []RouteNode{{ID: "me", Endpoint: "127.0.0.1:7000"}, {ID: "other", Endpoint: "10.0.0.2:7001"}}
	r.Myself = 0
	for i := range r.Owner {
		if i < 8192 {
			r.Owner[i] = 0
		} else {
			r.Owner[i] = 1
		}
	}
	if mod != nil {
		mod(r)
	}
	return r
}

func TestRouting(t *testing.T) {
	tc := newTestServer(t, "cluster-enabled", "yes")
	tc.s.SetRoute(clusterRoute(nil))
	// "bar" is slot 5061 (mine), "foo" 12182 (other's).
	tc.expect("+OK|", "SET", "bar", "1")
	tc.expect("-MOVED 12182 10.0.0.2:7001|", "SET", "foo", "1")
	tc.expect("-MOVED 12182 10.0.0.2:7001|", "GET", "foo")
	tc.expect("-CROSSSLOT Keys in request don't hash to the same slot|", "DEL", "bar", "foo")
	tc.expect(":1|", "DEL", "bar", "bar")
	tc.expect("+PONG|", "PING")
	tc.expect(":12182|", "CLUSTER", "KEYSLOT", "foo")
	tc.expect("-ERR SELECT is not allowed in cluster mode|", "SELECT", "1")

	// A MOVED while queueing makes EXEC abort.
	tc.expect("+OK|", "MULTI")
	tc.expect("-MOVED 12182 10.0.0.2:7001|", "SET", "foo", "1")
	tc.expect("-EXECABORT Transaction discarded because of previous errors.|", "EXEC")
	// Keys of two slots across one transaction: CROSSSLOT at EXEC.
	tc.expect("+OK|", "MULTI")
	tc.expect("+QUEUED|", "SET", "bar", "1")
	tc.expect("+QUEUED|", "SET", "{bar}x", "1")
	tc.expect("*2|+OK|+OK|", "EXEC")
	tc.expect("+OK|", "MULTI")
	tc.expect("+QUEUED|", "SET", "bar", "1")
	tc.expect("-MOVED 15495 10.0.0.2:7001|", "SET", "a", "1")
	tc.expect("-EXECABORT Transaction discarded because of previous errors.|", "EXEC")
	tc.expect("+OK|", "MULTI")
	tc.expect("+QUEUED|", "SET", "bar", "1")
	tc.expect("+QUEUED|", "SET", slotKey(0), "1")
	tc.expect("-CROSSSLOT Keys in request don't hash to the same slot|", "EXEC")
	tc.expect("-ERR EXEC without MULTI|", "EXEC")
}

func TestRoutingClusterDown(t *testing.T) {
	tc := newTestServer(t, "cluster-enabled", "yes")
	tc.s.SetRoute(clusterRoute(func(r *Route) { r.OK = false }))
	tc.expect("-CLUSTERDOWN The cluster is down|", "GET", "bar")
	tc.expect("+PONG|", "PING")
	tc.s.SetRoute(clusterRoute(func(r *Route) { r.OK = false; r.AllowReadsWhenDown = true }))
	tc.expect("$-1|", "GET", "bar")
	tc.expect("-CLUSTERDOWN The cluster is down and only accepts read commands|", "SET", "bar", "1")
	tc.s.SetRoute(clusterRoute(func(r *Route) { r.Owner[5061] = -1 }))
	tc.expect("-CLUSTERDOWN Hash slot not served|", "GET", "bar")
}

func TestRoutingMigration(t *testing.T) {
	tc := newTestServer(t, "cluster-enabled", "yes")
	tc.s.SetRoute(clusterRoute(nil))
	tc.expect("+OK|", "SET", "{bar}present", "v")
	tc.s.SetRoute(clusterRoute(func(r *Route) { r.Migrating = map[int]int16{5061: 1} }))
	tc.expect("-ASK 5061 10.0.0.2:7001|", "GET", "bar")
	tc.expect("-ASK 5061 10.0.0.2:7001|", "SET", "bar", "1")
	tc.expect("$1|v|", "GET", "{bar}present")
	tc.expect("-TRYAGAIN Multiple keys request during rehashing of slot|", "EXISTS", "{bar}present", "bar")

	// The importing side serves a slot only right after ASKING.
	tc.s.SetRoute(clusterRoute(func(r *Route) { r.Importing = map[int]int16{12182: 1} }))
	tc.expect("-MOVED 12182 10.0.0.2:7001|", "SET", "foo", "1")
	tc.expect("+OK|", "ASKING")
	tc.expect("+OK|", "SET", "foo", "1")
	tc.expect("-MOVED 12182 10.0.0.2:7001|", "GET", "foo")
	tc.expect("+OK|", "ASKING")
	tc.expect("-TRYAGAIN Multiple keys request during rehashing of slot|", "EXISTS", "foo", "{foo}missing")
}

func TestRoutingReplicaReadonly(t *testing.T) {
	tc := newTestServer(t, "cluster-enabled", "yes")
	// This node (index 2) replicates node 1, which owns slot 12182.
	tc.s.SetRoute(clusterRoute(func(r *Route) {
		r.Nodes = append(r.Nodes, RouteNode{ID: "me", Endpoint: "127.0.0.1:7002"})
		r.Myself, r.MyMaster = 2, 1
	}))
	tc.expect("-MOVED 12182 10.0.0.2:7001|", "GET", "foo")
	tc.expect("+OK|", "READONLY")
	tc.expect("$-1|", "GET", "foo")
	tc.expect("-MOVED 12182 10.0.0.2:7001|", "SET", "foo", "1")
	tc.expect("+OK|", "READWRITE")
	tc.expect("-MOVED 12182 10.0.0.2:7001|", "GET", "foo")
}

func TestClusterCommandsStandalone(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("-ERR This instance has cluster support disabled|", "CLUSTER", "KEYSLOT", "a")
	tc.expect("-ERR This instance has cluster support disabled|", "READONLY")
	tc.expect("-ERR unknown subcommand 'nope'. Try CLUSTER HELP.|", "CLUSTER", "nope")
}

func TestClusterSlotKeys(t *testing.T) {
	tc := newTestServer(t, "cluster-enabled", "yes")
	tc.s.SetRoute(clusterRoute(nil))
	for _, k := range []string{"{bar}1", "{bar}2", "{bar}3"} {
		tc.expect("+OK|", "SET", k, "v")
	}
	tc.expect(":3|", "CLUSTER", "COUNTKEYSINSLOT", "5061")
	if got := tc.do("CLUSTER", "GETKEYSINSLOT", "5061", "2"); len(got) < 4 || got[:4] != "*2\r\n" {
		t.Fatalf("got %q", got)
	}
	tc.expect("-ERR Invalid slot|", "CLUSTER", "COUNTKEYSINSLOT", "99999")
	tc.expect("-ERR Invalid slot or number of keys|", "CLUSTER", "GETKEYSINSLOT", "1", "-1")
	tc.expect("-ERR value is not an integer or out of range|", "CLUSTER", "GETKEYSINSLOT", "1", "a")
	if got := tc.do("CLUSTER", "KEYSLOT"); got != "-ERR wrong number of arguments for 'cluster|keyslot' command\r\n" {
		t.Fatalf("got %q", got)
	}
}

// slotKey returns a key that hashes to slot.
func slotKey(slot int) string {
	for i := 0; ; i++ {
		k := "k" + itoa(i)
		if slots.OfString(k) == slot {
			return k
		}
	}
}
