package node

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/node/config"
)

// failoverPorts returns n client ports in 21500-21749 whose bus ports
// (client port + 250, set with cluster-port) are free: both below the
// ephemeral range, and apart from every e2e family's ports (e2e's failover
// tests kill nodes in 24000-24499: a node of this package taking a killed
// node's port would answer that test's clients).
func failoverPorts(t *testing.T, n int) []int {
	t.Helper()
	return freePorts(t, 21500, 21750, n, 250)
}

func startFailoverMember(t *testing.T, port int, dir string) *clusterMember {
	t.Helper()
	cfg, err := config.Load([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
		"--cluster-port", strconv.Itoa(port + 250), "--cluster-node-timeout", "1000",
		"--cluster-config-file", filepath.Join(dir, "nodes-"+strconv.Itoa(port)+".conf")})
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, nil)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	m := &clusterMember{s: s, tc: &testClient{t: t, s: s, c: s.testClient()}, port: port, dir: dir}
	t.Cleanup(func() { s.Close() })
	return m
}

// myLine is the CLUSTER NODES line of the node itself.
func myLine(m *clusterMember) string {
	for _, l := range strings.Split(bulkText(m.tc.do("CLUSTER", "NODES")), "\n") {
		if strings.Contains(l, "myself") {
			return l
		}
	}
	return ""
}

func TestClusterFailoverErrors(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("-ERR This instance has cluster support disabled|", "CLUSTER", "FAILOVER")

	dir := t.TempDir()
	m := startFailoverMember(t, failoverPorts(t, 1)[0], dir)
	m.tc.expect("-ERR You should send CLUSTER FAILOVER to a replica|", "CLUSTER", "FAILOVER")
	m.tc.expect("-ERR syntax error|", "CLUSTER", "FAILOVER", "NOW")
	m.tc.expect("-ERR unknown subcommand or wrong number of arguments for 'FAILOVER'. Try CLUSTER HELP.|", "CLUSTER", "FAILOVER", "FORCE", "TAKEOVER")
	m.tc.expect("-ERR You should send CLUSTER FAILOVER to a replica|", "CLUSTER", "FAILOVER", "takeover")

	// cluster-replica-no-failover is the nofailover flag, at once.
	m.tc.expect("+OK|", "CONFIG", "SET", "cluster-replica-no-failover", "yes")
	waitUntil(t, "the nofailover flag", 5*time.Second, func() bool { return strings.Contains(myLine(m), "myself,master,nofailover") })
	m.tc.expect("+OK|", "CONFIG", "SET", "cluster-replica-no-failover", "no")
	waitUntil(t, "the nofailover flag to go", 5*time.Second, func() bool { return !strings.Contains(myLine(m), "nofailover") })
}

// TestClusterManualFailover runs CLUSTER FAILOVER between two real nodes on
// loopback: the replica takes the slots, the old master follows it and
// redirects writes; then TAKEOVER hands them back without a vote.
func TestClusterManualFailover(t *testing.T) {
	dir := t.TempDir()
	ports := failoverPorts(t, 2)
	a := startFailoverMember(t, ports[0], dir)
	b := startFailoverMember(t, ports[1], dir)
	a.tc.expect("+OK|", "CLUSTER", "ADDSLOTSRANGE", "0", "16383")
	a.tc.expect("+OK|", "CLUSTER", "SET-CONFIG-EPOCH", "1")
	b.tc.expect("+OK|", "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(ports[0]), strconv.Itoa(ports[0]+250))
	idA := bulkText(a.tc.do("CLUSTER", "MYID"))
	idB := bulkText(b.tc.do("CLUSTER", "MYID"))
	waitUntil(t, "b to know a", 10*time.Second, func() bool {
		return strings.Contains(bulkText(b.tc.do("CLUSTER", "NODES")), idA)
	})
	b.tc.expect("+OK|", "CLUSTER", "REPLICATE", idA)
	waitUntil(t, "a to see b as its replica and both ok", 15*time.Second, func() bool {
		nodes := bulkText(a.tc.do("CLUSTER", "NODES"))
		bn := bulkText(b.tc.do("CLUSTER", "NODES"))
		return strings.Contains(nodes, "slave "+idA) && strings.Contains(b.tc.do("CLUSTER", "INFO"), "cluster_state:ok") &&
			strings.Contains(a.tc.do("CLUSTER", "INFO"), "cluster_state:ok") && strings.Contains(bn, "master - 0") &&
			!strings.Contains(bn, "disconnected") &&
			// The replica holds the data (the first sync waits for
			// repl-diskless-sync-delay), so the failover measures the
			// handover, not the initial sync.
			strings.Contains(b.tc.do("INFO", "replication"), "master_link_status:up")
	})
	a.tc.expect("+OK|", "SET", "foo", "1")

	start := time.Now()
	b.tc.expect("+OK|", "CLUSTER", "FAILOVER")
	waitUntil(t, "b to be master and a its replica", 10*time.Second, func() bool {
		return strings.Contains(myLine(b), "myself,master") && strings.Contains(myLine(a), "slave "+idB)
	})
	t.Logf("manual failover took %v", time.Since(start))
	if time.Since(start) > 2*time.Second {
		t.Errorf("manual failover took %v", time.Since(start))
	}
	waitUntil(t, "a to redirect writes to b", 5*time.Second, func() bool {
		return a.tc.do("SET", "foo", "2") == "-MOVED 12182 127.0.0.1:"+strconv.Itoa(ports[1])+"\r\n"
	})
	b.tc.expect("+OK|", "SET", "foo", "3")
	b.tc.expect("-ERR You should send CLUSTER FAILOVER to a replica|", "CLUSTER", "FAILOVER")

	a.tc.expect("+OK|", "CLUSTER", "FAILOVER", "TAKEOVER")
	waitUntil(t, "a to be master again and b its replica", 10*time.Second, func() bool {
		return strings.Contains(myLine(a), "myself,master") && strings.Contains(myLine(b), "slave "+idA)
	})
}
