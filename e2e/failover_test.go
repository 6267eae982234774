package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Failover measurements on real processes: 3 masters + 3 replicas with
// cluster-node-timeout 5000, for slotd and redis-server side by side. The
// probe writes to one slot without pause, following MOVED from any live
// node, and the unavailability is the longest gap between two acknowledged
// writes around the event. They take minutes, so they run only with
// SLOTD_E2E_FAILOVER=1 (SLOTD_E2E_FAILOVER_ROUNDS, default 5, rounds each).
//
// Ports: client ports from SLOTD_E2E_FAILOVER_PORTS (default 24000-24249);
// each node's bus port is its client port + 250 (cluster-port), so all of
// it stays below the ephemeral range.

const failoverNodeTimeout = 5000

type foCluster struct {
	t     *testing.T
	bin   string
	redis bool
	dir   string
	nodes []*server
}

var (
	foPortMu   sync.Mutex
	foPortNext int
)

func foPort(t *testing.T) int {
	t.Helper()
	lo, hi := 24000, 24249
	if spec := os.Getenv("SLOTD_E2E_FAILOVER_PORTS"); spec != "" {
		a, b, _ := strings.Cut(spec, "-")
		lo, _ = strconv.Atoi(a)
		hi, _ = strconv.Atoi(b)
	}
	foPortMu.Lock()
	defer foPortMu.Unlock()
	for i := 0; i <= hi-lo; i++ {
		if foPortNext < lo || foPortNext > hi {
			foPortNext = lo
		}
		p := foPortNext
		foPortNext++
		if portFreeTCP(p) && portFreeTCP(p+250) && portFreeUDP(p+250) {
			return p
		}
	}
	t.Fatal("no free failover ports")
	return 0
}

func newFOCluster(t *testing.T, bin string, redis bool) *foCluster {
	t.Helper()
	c := &foCluster{t: t, bin: bin, redis: redis, dir: t.TempDir()}
	t.Cleanup(func() {
		if t.Failed() {
			for _, s := range c.nodes {
				t.Logf("--- log of %s %s ---\n%s", s.Name, s.Addr(), tail(s.Output(), 3000))
			}
		}
		for _, s := range c.nodes {
			s.kill()
			if out := s.Output(); strings.Contains(out, "WARNING: DATA RACE") || strings.Contains(out, "panic:") {
				t.Errorf("%s %s reported a data race or a panic:\n%s", s.Name, s.Addr(), tail(out, 5000))
			}
		}
	})
	for i := 0; i < 6; i++ {
		c.nodes = append(c.nodes, c.start())
	}
	return c
}

func (c *foCluster) start() *server {
	c.t.Helper()
	for attempt := 0; attempt < 3; attempt++ {
		if s := c.startAt(foPort(c.t)); s != nil {
			return s
		}
	}
	c.t.Fatalf("%s did not start", c.name())
	return nil
}

func (c *foCluster) name() string {
	if c.redis {
		return "redis-server"
	}
	return "slotd"
}

// startAt starts a node on port (its nodes.conf, if any, is kept) and
// returns nil if it did not become ready.
func (c *foCluster) startAt(port int) *server {
	t := c.t
	t.Helper()
	args := []string{"--port", strconv.Itoa(port), "--cluster-enabled", "yes",
		"--cluster-port", strconv.Itoa(port + 250),
		"--cluster-config-file", filepath.Join(c.dir, "nodes-"+strconv.Itoa(port)+".conf"),
		"--cluster-node-timeout", strconv.Itoa(failoverNodeTimeout),
		"--bind", "127.0.0.1", "--dir", c.dir, "--loglevel", "notice"}
	if c.redis {
		args = append(args, redisOnlyArgs...)
	}
	s := &server{Name: c.name(), Port: port, out: &lockedBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(c.bin, args...)
	s.cmd.Dir = c.dir
	s.cmd.Stdout = s.out
	s.cmd.Stderr = s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	if err := s.waitReady(10 * time.Second); err != nil {
		s.kill()
		return nil
	}
	return s
}

// create: nodes 0-2 masters with a third of the slots each, 3-5 their
// replicas; waits until every node is ok and replication is up.
func (c *foCluster) create() {
	t := c.t
	t.Helper()
	bounds := [][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}
	for i := 0; i < 3; i++ {
		mustCmd(t, c.nodes[i].Addr(), "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(bounds[i][0]), strconv.Itoa(bounds[i][1]))
		mustCmd(t, c.nodes[i].Addr(), "CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1))
	}
	p0 := c.nodes[0].Port
	for _, s := range c.nodes[1:] {
		mustCmd(t, s.Addr(), "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(p0), strconv.Itoa(p0+250))
	}
	waitFor(t, 30*time.Second, "every node to know six", func() (bool, string) {
		for _, s := range c.nodes {
			out, err := cmd(s.Addr(), "CLUSTER", "NODES")
			if err != nil || strings.Count(strings.TrimSpace(out), "\n") != 5 || strings.Contains(out, "handshake") {
				return false, s.Addr() + ": " + out
			}
		}
		return true, ""
	})
	for i := 3; i < 6; i++ {
		id := mustCmd(t, c.nodes[i-3].Addr(), "CLUSTER", "MYID")
		mustCmd(t, c.nodes[i].Addr(), "CLUSTER", "REPLICATE", id)
	}
	waitFor(t, 60*time.Second, "cluster ok with three replicas everywhere", func() (bool, string) {
		for _, s := range c.nodes {
			info, err := cmd(s.Addr(), "CLUSTER", "INFO")
			if err != nil || infoField(info, "cluster_state") != "ok" {
				return false, s.Addr() + " not ok"
			}
			nodes, _ := cmd(s.Addr(), "CLUSTER", "NODES")
			if strings.Count(nodes, "slave") != 3 || strings.Contains(nodes, "fail") {
				return false, s.Addr() + ": " + nodes
			}
		}
		if c.redis {
			for _, s := range c.nodes[3:] {
				info, _ := cmd(s.Addr(), "INFO", "replication")
				if infoField(info, "master_link_status") != "up" {
					return false, s.Addr() + " replication not up"
				}
			}
		}
		return true, ""
	})
}

// The shards of create: node i masters shardSlots[i], node i+3 replicates it.
var shardSlots = [3]slotRange{{0, 5460}, {5461, 10922}, {10923, 16383}}

// foKill kills master 0 under the load and waits until writes to its slots
// are acknowledged again; it returns the unavailability, the time just
// before the kill and the time the process was gone.
func foKill(t *testing.T, c *foCluster, l *foLoad) (gap time.Duration, killed, dead time.Time) {
	t.Helper()
	waitFor(t, 20*time.Second, "writes acknowledged with WAIT on every shard", func() (bool, string) {
		_, waited := l.snapshot()
		seen := [3]int{}
		for _, w := range waited {
			for i, r := range shardSlots {
				if r.has(w.slot) {
					seen[i]++
				}
			}
		}
		return seen[0] >= 20 && seen[1] >= 20 && seen[2] >= 20, fmt.Sprint(seen)
	})
	killed = time.Now()
	c.nodes[0].kill()
	dead = time.Now()
	waitFor(t, 60*time.Second, "writes to shard 0 after kill -9", func() (bool, string) {
		return l.recovered(shardSlots[0], killed), ""
	})
	time.Sleep(300 * time.Millisecond)
	return l.gap(shardSlots[0], killed, time.Now()), killed, dead
}

// foManual runs CLUSTER FAILOVER on node 4 (replica of master 1) under the
// load and returns the unavailability of shard 1.
func foManual(t *testing.T, c *foCluster, l *foLoad) time.Duration {
	t.Helper()
	waitFor(t, 30*time.Second, "replica 4 in sync", func() (bool, string) {
		ri, _ := cmd(c.nodes[4].Addr(), "INFO", "replication")
		return infoField(ri, "master_link_status") == "up", ri
	})
	time.Sleep(300 * time.Millisecond) // load on every shard before the event
	started := time.Now()
	mustCmd(t, c.nodes[4].Addr(), "CLUSTER", "FAILOVER")
	waitFor(t, 30*time.Second, "replica 4 to be master", func() (bool, string) {
		me := foMyself(c.nodes[4])
		return strings.Contains(me, "master"), me
	})
	promoted := time.Now()
	waitFor(t, 30*time.Second, "writes to shard 1 after the manual failover", func() (bool, string) {
		return l.recovered(shardSlots[1], promoted), ""
	})
	time.Sleep(300 * time.Millisecond)
	return l.gap(shardSlots[1], started, time.Now())
}

// foMyself returns the myself line of a node's CLUSTER NODES.
func foMyself(s *server) string {
	out, _ := cmd(s.Addr(), "CLUSTER", "NODES")
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "myself") {
			return l
		}
	}
	return out
}

func (c *foCluster) addrs() []string {
	var a []string
	for _, s := range c.nodes {
		a = append(a, s.Addr())
	}
	return a
}

// liveAddrs leaves out the node killed by foKill.
func (c *foCluster) liveAddrs() []string { return c.addrs()[1:] }

// waitedBefore returns the writes acknowledged with WAIT before t0.
func waitedBefore(waited []foAck, t0 time.Time) []foAck {
	var out []foAck
	for _, w := range waited {
		if w.done.Before(t0) {
			out = append(out, w)
		}
	}
	return out
}

// TestFailoverKillKeepsWaitedWrites: kill -9 of a master under a go-redis
// load; every write acknowledged with WAIT 1 before the kill is still
// there; the old master, restarted and partitioned from the rest, takes a
// write and drops it when it learns of the new master, whose replica it
// becomes.
func TestFailoverKillKeepsWaitedWrites(t *testing.T) {
	c := newFOCluster(t, slotdBinary(t), false)
	c.create()
	l := startFOLoad(t, c.addrs())
	gap, killed, dead := foKill(t, c, l)
	t.Logf("kill -9: writes to the shard unavailable for %v", gap)
	time.Sleep(500 * time.Millisecond)
	l.close()
	acks, waited := l.snapshot()
	before := waitedBefore(waited, killed)
	if lost, n := foMissing(t, c.liveAddrs(), before); n > 0 {
		t.Fatalf("%d of %d writes acknowledged with WAIT 1 before the kill are lost: %v", n, len(before), lost)
	}
	// Plain writes to the killed shard acknowledged before it died may be
	// lost; those sent once it was gone went to the new master.
	var plain, after []foAck
	for _, a := range acks {
		switch {
		case !shardSlots[0].has(a.slot) || a.sent.After(dead):
			after = append(after, a)
		case a.done.Before(killed):
			plain = append(plain, a)
		}
	}
	_, nl := foMissing(t, c.liveAddrs(), plain)
	t.Logf("%d writes acknowledged with WAIT before the kill, all present; %d of %d plain writes to the killed shard lost",
		len(before), nl, len(plain))
	if lost, n := foMissing(t, c.liveAddrs(), after); n > 0 {
		t.Fatalf("%d of %d writes acknowledged by live masters are lost: %v", n, len(after), lost)
	}

	// The old master comes back while the others are frozen (a partition
	// with it alone), takes a write to its old slots if it accepts one,
	// then meets the others.
	newID := mustCmd(t, c.nodes[3].Addr(), "CLUSTER", "MYID")
	for _, s := range c.nodes[1:] {
		stopProc(t, s)
	}
	frozen := true
	thaw := func() {
		if frozen {
			for _, s := range c.nodes[1:] {
				syscall.Kill(s.Pid(), syscall.SIGCONT)
			}
			frozen = false
		}
	}
	defer thaw()
	old := c.startAt(c.nodes[0].Port)
	if old == nil {
		thaw()
		t.Fatal("the old master did not restart")
	}
	c.nodes[0] = old
	key := "{" + tagForSlot(0) + "}partitioned"
	took := false
	deadline := time.Now().Add(2500 * time.Millisecond)
	var lastErr error
	for time.Now().Before(deadline) {
		if _, lastErr = cmd(old.Addr(), "SET", key, "lost"); lastErr == nil {
			took = true
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	thaw()
	if took {
		t.Logf("the partitioned old master took a write")
	} else {
		t.Logf("the partitioned old master refused writes: %v", lastErr)
	}
	waitFor(t, 30*time.Second, "old master to replicate the new one", func() (bool, string) {
		me := foMyself(old)
		f := strings.Fields(me)
		if len(f) < 4 || !strings.Contains(f[2], "slave") || f[3] != newID {
			return false, me
		}
		ri, _ := cmd(old.Addr(), "INFO", "replication")
		return infoField(ri, "master_link_status") == "up", ri
	})
	got, err := cmdPipeline(old.Addr(), [][]string{{"READONLY"}, {"GET", key}})
	if err != nil {
		t.Fatal(err)
	}
	if got[1] != "" {
		t.Fatalf("the old master kept the write it took while partitioned: %q", got[1])
	}
	if v, err := cmd(c.nodes[3].Addr(), "GET", key); err == nil && v != "" {
		t.Fatalf("the partitioned write reached the new master: %q", v)
	}
	// Its dataset is the new master's.
	waitFor(t, 20*time.Second, "the old master's keys to be the new master's", func() (bool, string) {
		a, _ := cmd(old.Addr(), "DBSIZE")
		b, _ := cmd(c.nodes[3].Addr(), "DBSIZE")
		return a == b && a != "0", a + " vs " + b
	})
}

// TestFailoverManualLosesNothing: CLUSTER FAILOVER on a replica under the
// go-redis load loses no acknowledged write and stops writes to the shard
// for less than a second.
func TestFailoverManualLosesNothing(t *testing.T) {
	c := newFOCluster(t, slotdBinary(t), false)
	c.create()
	l := startFOLoad(t, c.addrs())
	waitFor(t, 10*time.Second, "load", func() (bool, string) {
		a, _ := l.snapshot()
		return len(a) > 300, ""
	})
	gap := foManual(t, c, l)
	time.Sleep(300 * time.Millisecond)
	l.close()
	acks, waited := l.snapshot()
	t.Logf("manual failover: writes to the shard unavailable for %v; %d acknowledged writes (%d with WAIT), %d errors",
		gap, len(acks), len(waited), l.errs)
	if lost, n := foMissing(t, c.addrs(), acks); n > 0 {
		t.Fatalf("%d of %d acknowledged writes are lost: %v", n, len(acks), lost)
	}
	if gap >= time.Second {
		t.Errorf("manual failover unavailability %v is not under 1 s", gap)
	}
	old := foMyself(c.nodes[1])
	if !strings.Contains(old, "slave") {
		t.Errorf("the old master is not a replica: %s", old)
	}
}

// TestFailoverUnavailability measures kill -9 and manual failover on slotd
// and redis-server clusters of the same shape with the same load.
func TestFailoverUnavailability(t *testing.T) {
	if os.Getenv("SLOTD_E2E_FAILOVER") == "" {
		t.Skip("minutes long: set SLOTD_E2E_FAILOVER=1")
	}
	rounds := 5
	if v, err := strconv.Atoi(os.Getenv("SLOTD_E2E_FAILOVER_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	targets := []struct {
		name  string
		bin   string
		redis bool
	}{{"slotd", slotdBinary(t), false}, {"redis-server", redisServerBinary(t), true}}
	results := map[string][2][]time.Duration{}
	for r := 0; r < rounds; r++ {
		// Alternate the targets so that the machine's load hits both alike.
		for _, tg := range targets {
			t.Run(fmt.Sprintf("%s/%d", tg.name, r), func(t *testing.T) {
				c := newFOCluster(t, tg.bin, tg.redis)
				c.create()
				l := startFOLoad(t, c.addrs())
				k, killed, _ := foKill(t, c, l)
				m := foManual(t, c, l)
				l.close()
				_, waited := l.snapshot()
				before := waitedBefore(waited, killed)
				_, lost := foMissing(t, c.liveAddrs(), before)
				if lost > 0 && !tg.redis {
					t.Errorf("%d writes acknowledged with WAIT lost", lost)
				}
				res := results[tg.name]
				res[0] = append(res[0], k)
				res[1] = append(res[1], m)
				results[tg.name] = res
				t.Logf("%s round %d: kill -9 unavailability %v, manual failover %v, WAIT-acked writes lost %d of %d",
					tg.name, r, k.Round(time.Millisecond), m.Round(time.Millisecond), lost, len(before))
			})
		}
	}
	med := func(d []time.Duration) time.Duration {
		if len(d) == 0 {
			return 0
		}
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2]
	}
	sk, sm := med(results["slotd"][0]), med(results["slotd"][1])
	rk, rm := med(results["redis-server"][0]), med(results["redis-server"][1])
	t.Logf("all: slotd kill %v manual %v; redis-server kill %v manual %v", results["slotd"][0], results["slotd"][1],
		results["redis-server"][0], results["redis-server"][1])
	t.Logf("median over %d rounds, node timeout %d ms: kill -9: slotd %v, redis-server %v (ratio %.2f); manual CLUSTER FAILOVER: slotd %v, redis-server %v",
		rounds, failoverNodeTimeout, sk.Round(time.Millisecond), rk.Round(time.Millisecond), float64(sk)/float64(max(rk, 1)),
		sm.Round(time.Millisecond), rm.Round(time.Millisecond))
	if rk > 0 && float64(sk) > 0.8*float64(rk) {
		t.Errorf("slotd's kill -9 unavailability %v is above 0.8 x redis-server's %v", sk, rk)
	}
	if sm >= time.Second {
		t.Errorf("slotd's manual failover unavailability %v is not under 1 s", sm)
	}
}

func portFreeTCP(p int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

func portFreeUDP(p int) bool {
	c, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	c.Close()
	return true
}
