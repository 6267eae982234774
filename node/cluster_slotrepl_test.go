package node

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/slots"
)

// Scenarios of a slot migration whose source or target fails over in the
// middle: the masters' SETSLOT reaches their replicas, so the promoted
// replica serves the open slot as its master did, and the migration is
// finished with no key lost. Five real nodes on loopback: A (slots
// 0-5460) with its replica A1, B (5461-10922) with its replica B1, and C
// (10923-16383), a third master so that an election can have a majority.

// migPorts returns n client ports in 21000-21249 whose bus ports (+10000)
// are free.
func migPorts(t *testing.T, n int) []int {
	t.Helper()
	return freePorts(t, 21000, 21250, n, 10000)
}

func startMigMember(t *testing.T, port int, dir string) *clusterMember {
	t.Helper()
	m, err := startMember(t, port, dir, "--repl-diskless-sync-delay", "0", "--save", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.s.Close() })
	return m
}

type migCluster struct {
	a, b, a1, b1, cm     *clusterMember
	idA, idB, idA1, idB1 string
	slot                 int
	tag                  string
	all                  []*clusterMember
}

func (c *migCluster) addr(m *clusterMember) string { return "127.0.0.1:" + strconv.Itoa(m.port) }

// key returns the i-th key of the migrated slot.
func (c *migCluster) key(i int) string { return "{" + c.tag + "}" + strconv.Itoa(i) }

func newMigCluster(t *testing.T) *migCluster {
	t.Helper()
	dir := t.TempDir()
	ports := migPorts(t, 5)
	c := &migCluster{}
	for _, p := range ports {
		c.all = append(c.all, startMigMember(t, p, dir))
	}
	c.a, c.b, c.a1, c.b1, c.cm = c.all[0], c.all[1], c.all[2], c.all[3], c.all[4]
	c.a.tc.expect("+OK|", "CLUSTER", "ADDSLOTSRANGE", "0", "5460")
	c.a.tc.expect("+OK|", "CLUSTER", "SET-CONFIG-EPOCH", "1")
	c.b.tc.expect("+OK|", "CLUSTER", "ADDSLOTSRANGE", "5461", "10922")
	c.b.tc.expect("+OK|", "CLUSTER", "SET-CONFIG-EPOCH", "2")
	c.cm.tc.expect("+OK|", "CLUSTER", "ADDSLOTSRANGE", "10923", "16383")
	c.cm.tc.expect("+OK|", "CLUSTER", "SET-CONFIG-EPOCH", "3")
	for _, m := range c.all[1:] {
		m.tc.expect("+OK|", "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(ports[0]))
	}
	c.idA = bulkText(c.a.tc.do("CLUSTER", "MYID"))
	c.idB = bulkText(c.b.tc.do("CLUSTER", "MYID"))
	c.idA1 = bulkText(c.a1.tc.do("CLUSTER", "MYID"))
	c.idB1 = bulkText(c.b1.tc.do("CLUSTER", "MYID"))
	waitUntil(t, "every node to know every other", 15*time.Second, func() bool {
		for _, m := range c.all {
			nodes := bulkText(m.tc.do("CLUSTER", "NODES"))
			for _, id := range []string{c.idA, c.idB, c.idA1, c.idB1} {
				if !strings.Contains(nodes, id) {
					return false
				}
			}
			if strings.Contains(nodes, "handshake") {
				return false
			}
		}
		return true
	})
	c.a1.tc.expect("+OK|", "CLUSTER", "REPLICATE", c.idA)
	c.b1.tc.expect("+OK|", "CLUSTER", "REPLICATE", c.idB)
	waitUntil(t, "the replicas to sync and the cluster to be ok", 20*time.Second, func() bool {
		for _, m := range c.all {
			if !strings.Contains(m.tc.do("CLUSTER", "INFO"), "cluster_state:ok") {
				return false
			}
			if !strings.Contains(bulkText(m.tc.do("CLUSTER", "NODES")), "slave "+c.idA) ||
				!strings.Contains(bulkText(m.tc.do("CLUSTER", "NODES")), "slave "+c.idB) {
				return false
			}
		}
		for _, m := range []*clusterMember{c.a, c.b} {
			if !strings.Contains(m.tc.do("INFO", "replication"), "state=online") {
				return false
			}
		}
		for _, m := range []*clusterMember{c.a1, c.b1} {
			if !strings.Contains(m.tc.do("INFO", "replication"), "master_link_status:up") {
				return false
			}
		}
		return true
	})
	// A hash tag whose slot is A's.
	for i := 0; ; i++ {
		tag := "t" + strconv.Itoa(i)
		if s := slots.Of([]byte(tag)); s <= 5460 {
			c.tag, c.slot = tag, s
			break
		}
	}
	return c
}

// open opens the slot on both sides, as redis-cli and slotctl do.
func (c *migCluster) open(t *testing.T) {
	t.Helper()
	s := strconv.Itoa(c.slot)
	c.b.tc.expect("+OK|", "CLUSTER", "SETSLOT", s, "IMPORTING", c.idA)
	c.a.tc.expect("+OK|", "CLUSTER", "SETSLOT", s, "MIGRATING", c.idB)
}

// fill writes n keys of the slot on A and waits for A1 to hold them.
func (c *migCluster) fill(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		c.a.tc.expect("+OK|", "SET", c.key(i), "v"+strconv.Itoa(i))
	}
	waitUntil(t, "A1 to hold the keys", 10*time.Second, func() bool {
		return c.a1.tc.do("DBSIZE") == ":"+strconv.Itoa(n)+"\r\n"
	})
}

// migrate moves keys [from, to) of the slot from src to dst with MIGRATE.
func (c *migCluster) migrate(t *testing.T, src, dst *clusterMember, from, to int) {
	t.Helper()
	args := []string{"MIGRATE", "127.0.0.1", strconv.Itoa(dst.port), "", "0", "5000", "KEYS"}
	for i := from; i < to; i++ {
		args = append(args, c.key(i))
	}
	src.tc.expect("+OK|", args...)
}

// failover promotes replica r of master m with CLUSTER FAILOVER.
func (c *migCluster) failover(t *testing.T, r, m *clusterMember, idR string) {
	t.Helper()
	r.tc.expect("+OK|", "CLUSTER", "FAILOVER")
	waitUntil(t, "the replica to be master and its old master to follow it", 15*time.Second, func() bool {
		return strings.Contains(myLine(r), "myself,master") && strings.Contains(myLine(m), "slave "+idR)
	})
}

// nodesConf reads m's nodes.conf.
func nodesConf(t *testing.T, m *clusterMember) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(m.dir, "nodes-"+strconv.Itoa(m.port)+".conf"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSetSlotReachesReplicas: the masters' SETSLOT calls reach their
// replicas before the reply, in their CLUSTER NODES and nodes.conf; STABLE
// and NODE close the slot there too; the batch form does the same; a
// replica that does not acknowledge in time makes SETSLOT fail.
func TestSetSlotReachesReplicas(t *testing.T) {
	c := newMigCluster(t)
	s := strconv.Itoa(c.slot)
	mig := "[" + s + "->-" + c.idB + "]"
	imp := "[" + s + "-<-" + c.idA + "]"
	c.open(t)
	// No wait: the reply came after the replicas' ACK.
	if l := myLine(c.a1); !strings.Contains(l, mig) {
		t.Fatalf("A1 after MIGRATING: %q", l)
	}
	if l := myLine(c.b1); !strings.Contains(l, imp) {
		t.Fatalf("B1 after IMPORTING: %q", l)
	}
	if conf := nodesConf(t, c.a1); !strings.Contains(conf, mig) {
		t.Fatalf("A1's nodes.conf: %q", conf)
	}
	if conf := nodesConf(t, c.b1); !strings.Contains(conf, imp) {
		t.Fatalf("B1's nodes.conf: %q", conf)
	}
	// A replica that joins now gets the open slot after its image.
	e := startMigMember(t, migPorts(t, 1)[0], t.TempDir())
	e.tc.expect("+OK|", "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(c.a.port))
	waitUntil(t, "E to know A", 10*time.Second, func() bool {
		return strings.Contains(bulkText(e.tc.do("CLUSTER", "NODES")), c.idA+" 127.0.0.1:"+strconv.Itoa(c.a.port)+"@"+strconv.Itoa(c.a.port+10000)+" master - 0")
	})
	e.tc.expect("+OK|", "CLUSTER", "REPLICATE", c.idA)
	waitUntil(t, "E to sync and take the open slot", 15*time.Second, func() bool {
		return strings.Contains(e.tc.do("INFO", "replication"), "master_link_status:up") && strings.Contains(myLine(e), mig)
	})
	e.s.Close()
	waitUntil(t, "A to drop E's link", 10*time.Second, func() bool {
		return strings.Contains(c.a.tc.do("INFO", "replication"), "connected_slaves:1")
	})

	// A replica routes as before: MOVED to its master, not ASK.
	c.a1.tc.expect("-MOVED "+s+" "+c.addr(c.a)+"|", "GET", c.key(0))
	c.b1.tc.do("ASKING")
	c.b1.tc.expect("-MOVED "+s+" "+c.addr(c.a)+"|", "GET", c.key(0))

	// TIMEOUT: its syntax, and the error when a replica does not ACK.
	c.a.tc.expect("+OK|", "CLUSTER", "SETSLOT", s, "MIGRATING", c.idB, "TIMEOUT", "1000")
	c.a.tc.expect("-ERR timeout is negative|", "CLUSTER", "SETSLOT", s, "MIGRATING", c.idB, "TIMEOUT", "-1")
	c.a.tc.expect("-ERR timeout is not an integer or out of range|", "CLUSTER", "SETSLOT", s, "STABLE", "TIMEOUT", "x")
	c.a.tc.expect("-ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP|", "CLUSTER", "SETSLOT", s, "STABLE", "WAIT", "1")
	c.a.tc.expect("-ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP|", "CLUSTER", "SETSLOT", s, "MIGRATING", c.idB, "TIMEOUT")
	c.a1.tc.expect("-ERR Please use SETSLOT only with masters.|", "CLUSTER", "SETSLOT", s, "STABLE")
	// A1 holds still (as a replica stuck applying a command would): A
	// keeps the change but says that A1 did not acknowledge it.
	c.a1.s.repl.applyMu.Lock()
	start := time.Now()
	c.a.tc.expect("-"+errSlotNoReplicaAck+"|", "CLUSTER", "SETSLOT", s, "STABLE", "TIMEOUT", "200")
	if d := time.Since(start); d < 200*time.Millisecond || d > 5*time.Second {
		t.Errorf("SETSLOT TIMEOUT 200 took %v", d)
	}
	c.a1.s.repl.applyMu.Unlock()
	if l := myLine(c.a); strings.Contains(l, "[") {
		t.Fatalf("A after STABLE: %q", l)
	}
	waitUntil(t, "A1 to apply the STABLE", 5*time.Second, func() bool { return !strings.Contains(myLine(c.a1), "[") })
	// Sent again once the replica is back: acknowledged.
	c.a.tc.expect("+OK|", "CLUSTER", "SETSLOT", s, "MIGRATING", c.idB)
	if l := myLine(c.a1); !strings.Contains(l, mig) {
		t.Fatalf("A1 after MIGRATING again: %q", l)
	}

	// STABLE reaches the replicas.
	c.a.tc.expect("+OK|", "CLUSTER", "SETSLOT", s, "STABLE")
	c.b.tc.expect("+OK|", "CLUSTER", "SETSLOT", s, "STABLE")
	for _, m := range []*clusterMember{c.a1, c.b1} {
		if l := myLine(m); strings.Contains(l, "[") {
			t.Fatalf("replica after STABLE: %q", l)
		}
	}

	// The batch form, on two slots of A's.
	other := strconv.Itoa((c.slot + 1) % 5461)
	c.b.tc.expect("*2|+OK|+OK|", "SLOTD.MIGRATE", "SETSLOTS", "IMPORTING", c.idA, s, other)
	c.a.tc.expect("*2|+OK|+OK|", "SLOTD.MIGRATE", "SETSLOTS", "MIGRATING", c.idB, s, other)
	for _, want := range []string{mig, "[" + other + "->-" + c.idB + "]"} {
		if l := myLine(c.a1); !strings.Contains(l, want) {
			t.Fatalf("A1 after SETSLOTS MIGRATING: %q, want %s", l, want)
		}
	}
	if l := myLine(c.b1); !strings.Contains(l, imp) || !strings.Contains(l, "["+other+"-<-"+c.idA+"]") {
		t.Fatalf("B1 after SETSLOTS IMPORTING: %q", l)
	}
	// NODE on both sides (the slots are empty): the replicas close the
	// slots and see B as their owner at once.
	c.b.tc.expect("*2|+OK|+OK|", "SLOTD.MIGRATE", "SETSLOTS", "NODE", c.idB, s, other)
	c.a.tc.expect("*2|+OK|+OK|", "SLOTD.MIGRATE", "SETSLOTS", "NODE", c.idB, s, other)
	for _, m := range []*clusterMember{c.a1, c.b1} {
		if l := myLine(m); strings.Contains(l, "[") {
			t.Fatalf("replica after SETSLOTS NODE: %q", l)
		}
		// (B's announcement of its new epoch was built after the first
		// slot of the batch: the second one may be unassigned for a
		// heartbeat or so in the other nodes' view.)
		waitUntil(t, "the replicas to route the slot to B", 5*time.Second, func() bool {
			return m.tc.do("GET", c.key(0)) == "-MOVED "+s+" "+c.addr(c.b)+"\r\n"
		})
	}
	if conf := nodesConf(t, c.b1); strings.Contains(conf, "[") {
		t.Fatalf("B1's nodes.conf after NODE: %q", conf)
	}
}

// TestMigrationSourceFailover: half of the slot's keys are on B when A1
// takes over from A. A1 still has the slot migrating to B: ASK for the
// moved keys, TRYAGAIN for a mix, the rest served; B's importing mark
// follows A1; the migration is then finished from A1 with no key lost.
func TestMigrationSourceFailover(t *testing.T) {
	t.Run("manual", func(t *testing.T) { testMigrationSourceFailover(t, false) })
	t.Run("crash", func(t *testing.T) { testMigrationSourceFailover(t, true) })
}

// With crash, A stops (its replica is elected after cluster-node-timeout)
// instead of handing over with CLUSTER FAILOVER.
func testMigrationSourceFailover(t *testing.T, crash bool) {
	c := newMigCluster(t)
	s := strconv.Itoa(c.slot)
	c.fill(t, 10)
	c.open(t)
	c.migrate(t, c.a, c.b, 0, 5)
	c.a.tc.expect("-ASK "+s+" "+c.addr(c.b)+"|", "GET", c.key(0))
	waitUntil(t, "A1 to drop the moved keys", 10*time.Second, func() bool { return c.a1.tc.do("DBSIZE") == ":5\r\n" })

	if crash {
		c.a.s.Close()
		waitUntil(t, "A1 to be elected", 20*time.Second, func() bool { return strings.Contains(myLine(c.a1), "myself,master") })
		c.all = []*clusterMember{c.b, c.a1, c.b1, c.cm}
	} else {
		c.failover(t, c.a1, c.a, c.idA1)
	}
	if l := myLine(c.a1); !strings.Contains(l, "["+s+"->-"+c.idB+"]") || !strings.Contains(l, "0-5460") {
		t.Fatalf("A1 after the failover: %q", l)
	}
	c.a1.tc.expect("-ASK "+s+" "+c.addr(c.b)+"|", "GET", c.key(0))
	c.a1.tc.expect("$2|v7|", "GET", c.key(7))
	c.a1.tc.expect("-TRYAGAIN Multiple keys request during rehashing of slot|", "MGET", c.key(1), c.key(8))
	waitUntil(t, "B to hear of A1's promotion", 10*time.Second, func() bool {
		return c.b.tc.do("GET", c.key(0)) == "-MOVED "+s+" "+c.addr(c.a1)+"\r\n"
	})
	c.b.tc.do("ASKING")
	c.b.tc.expect("$2|v0|", "GET", c.key(0))
	waitUntil(t, "B's importing mark to name A1", 10*time.Second, func() bool {
		return strings.Contains(myLine(c.b), "["+s+"-<-"+c.idA1+"]")
	})
	if !crash {
		// The old master, now A1's replica, routes as a replica.
		waitUntil(t, "A to redirect to A1", 10*time.Second, func() bool {
			return c.a.tc.do("GET", c.key(7)) == "-MOVED "+s+" "+c.addr(c.a1)+"\r\n"
		})
	}

	// Finish from the new source.
	c.migrate(t, c.a1, c.b, 5, 10)
	c.b.tc.expect("+OK|", "CLUSTER", "SETSLOT", s, "NODE", c.idB)
	c.a1.tc.expect("+OK|", "CLUSTER", "SETSLOT", s, "NODE", c.idB)
	c.a1.tc.expect(":0|", "CLUSTER", "COUNTKEYSINSLOT", s)
	c.b.tc.expect(":10|", "CLUSTER", "COUNTKEYSINSLOT", s)
	for i := 0; i < 10; i++ {
		c.b.tc.expect("$2|v"+strconv.Itoa(i)+"|", "GET", c.key(i))
		c.a1.tc.expect("-MOVED "+s+" "+c.addr(c.b)+"|", "GET", c.key(i))
	}
	for _, m := range c.all {
		if l := myLine(m); strings.Contains(l, "[") {
			t.Fatalf("an open slot is left: %q", l)
		}
	}
	waitUntil(t, "every node to route the slot to B", 10*time.Second, func() bool {
		for _, m := range c.all {
			if m.tc.do("GET", c.key(0)) != "$2\r\nv0\r\n" && m.tc.do("GET", c.key(0)) != "-MOVED "+s+" "+c.addr(c.b)+"\r\n" {
				return false
			}
		}
		return true
	})
	waitUntil(t, "B1 to hold the keys", 10*time.Second, func() bool { return c.b1.tc.do("DBSIZE") == ":10\r\n" })
}

// TestMigrationTargetFailover: half of the slot's keys are on B when B1
// takes over from B. B1 still has the slot importing: it serves the moved
// keys after ASKING, MOVED without; A's migrating mark follows B1, so its
// ASK names B1; the migration is finished to B1 with no key lost.
func TestMigrationTargetFailover(t *testing.T) {
	t.Run("manual", func(t *testing.T) { testMigrationTargetFailover(t, false) })
	t.Run("crash", func(t *testing.T) { testMigrationTargetFailover(t, true) })
}

// With crash, B stops instead of handing over with CLUSTER FAILOVER.
func testMigrationTargetFailover(t *testing.T, crash bool) {
	c := newMigCluster(t)
	s := strconv.Itoa(c.slot)
	c.fill(t, 10)
	c.open(t)
	c.migrate(t, c.a, c.b, 0, 5)
	waitUntil(t, "B1 to hold the moved keys", 10*time.Second, func() bool { return c.b1.tc.do("DBSIZE") == ":5\r\n" })

	if crash {
		c.b.s.Close()
		waitUntil(t, "B1 to be elected", 20*time.Second, func() bool { return strings.Contains(myLine(c.b1), "myself,master") })
		c.all = []*clusterMember{c.a, c.a1, c.b1, c.cm}
	} else {
		c.failover(t, c.b1, c.b, c.idB1)
	}
	if l := myLine(c.b1); !strings.Contains(l, "["+s+"-<-"+c.idA+"]") || !strings.Contains(l, "5461-10922") {
		t.Fatalf("B1 after the failover: %q", l)
	}
	c.b1.tc.expect("-MOVED "+s+" "+c.addr(c.a)+"|", "GET", c.key(0))
	c.b1.tc.do("ASKING")
	c.b1.tc.expect("$2|v0|", "GET", c.key(0))
	c.b1.tc.do("ASKING")
	c.b1.tc.expect("-TRYAGAIN Multiple keys request during rehashing of slot|", "MGET", c.key(0), c.key(8))
	waitUntil(t, "A's migrating mark to name B1", 10*time.Second, func() bool {
		return strings.Contains(myLine(c.a), "["+s+"->-"+c.idB1+"]")
	})
	c.a.tc.expect("-ASK "+s+" "+c.addr(c.b1)+"|", "GET", c.key(0))
	c.a.tc.expect("$2|v9|", "GET", c.key(9))

	// Finish to the new target.
	c.migrate(t, c.a, c.b1, 5, 10)
	c.b1.tc.expect("+OK|", "CLUSTER", "SETSLOT", s, "NODE", c.idB1)
	c.a.tc.expect("+OK|", "CLUSTER", "SETSLOT", s, "NODE", c.idB1)
	c.a.tc.expect(":0|", "CLUSTER", "COUNTKEYSINSLOT", s)
	c.b1.tc.expect(":10|", "CLUSTER", "COUNTKEYSINSLOT", s)
	for i := 0; i < 10; i++ {
		c.b1.tc.expect("$2|v"+strconv.Itoa(i)+"|", "GET", c.key(i))
		c.a.tc.expect("-MOVED "+s+" "+c.addr(c.b1)+"|", "GET", c.key(i))
	}
	for _, m := range c.all {
		if l := myLine(m); strings.Contains(l, "[") {
			t.Fatalf("an open slot is left: %q", l)
		}
	}
	if !crash {
		waitUntil(t, "B (now B1's replica) to hold the keys", 10*time.Second, func() bool { return c.b.tc.do("DBSIZE") == ":10\r\n" })
	}
}

// TestAOFReplaySkipsSlotChanges: the slot changes a master sends its
// replicas reach its AOF too; a replay leaves them out (the slot state is
// in nodes.conf) and runs the rest.
func TestAOFReplaySkipsSlotChanges(t *testing.T) {
	m := startMigMember(t, migPorts(t, 1)[0], t.TempDir())
	m.tc.expect("+OK|", "CLUSTER", "ADDSLOTSRANGE", "0", "16383")
	id := bulkText(m.tc.do("CLUSTER", "MYID"))
	waitUntil(t, "the cluster to be ok", 10*time.Second, func() bool {
		return strings.Contains(m.tc.do("CLUSTER", "INFO"), "cluster_state:ok")
	})
	var aof []byte
	for _, c := range [][]string{
		{"SELECT", "0"},
		{"SET", "a", "1"},
		{"CLUSTER", "SETSLOT", "5", "MIGRATING", id},
		{"MULTI"}, {"SET", "b", "2"}, {"CLUSTER", "SETSLOT", "6", "MIGRATING", id}, {"EXEC"},
		{"SLOTD.MIGRATE", "SETSLOTS", "MIGRATING", id, "7", "8"},
		{"SET", "c", "3"},
	} {
		aof = appendCommand(aof, c...)
	}
	valid, err := m.s.replayAOF(bufio.NewReader(bytes.NewReader(aof)))
	if err != nil || valid != int64(len(aof)) {
		t.Fatalf("replay: %d of %d bytes, %v", valid, len(aof), err)
	}
	m.tc.expect(":3|", "DBSIZE")
	if l := myLine(m); strings.Contains(l, "[") {
		t.Fatalf("the replay opened slots: %q", l)
	}
}
