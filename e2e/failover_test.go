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
		}
	})
	for i := 0; i < 6; i++ {
		c.nodes = append(c.nodes, c.start())
	}
	return c
}

func (c *foCluster) start() *server {
	t := c.t
	t.Helper()
	name := "slotd"
	if c.redis {
		name = "redis-server"
	}
	for attempt := 0; attempt < 3; attempt++ {
		port := foPort(t)
		args := []string{"--port", strconv.Itoa(port), "--cluster-enabled", "yes",
			"--cluster-port", strconv.Itoa(port + 250),
			"--cluster-config-file", filepath.Join(c.dir, "nodes-"+strconv.Itoa(port)+".conf"),
			"--cluster-node-timeout", strconv.Itoa(failoverNodeTimeout),
			"--bind", "127.0.0.1", "--dir", c.dir, "--loglevel", "notice"}
		if c.redis {
			args = append(args, redisOnlyArgs...)
		}
		s := &server{Name: name, Port: port, out: &lockedBuffer{}, done: make(chan struct{})}
		s.cmd = exec.Command(c.bin, args...)
		s.cmd.Dir = c.dir
		s.cmd.Stdout = s.out
		s.cmd.Stderr = s.out
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { s.cmd.Wait(); close(s.done) }()
		if err := s.waitReady(10 * time.Second); err == nil {
			return s
		}
		s.kill()
	}
	t.Fatalf("%s did not start", name)
	return nil
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

// probe writes to slot without pause until stopped, following MOVED from
// any live node, and records when each write was acknowledged.
type probe struct {
	mu    sync.Mutex
	acks  []time.Time
	stop  chan struct{}
	done  chan struct{}
	dead  map[string]bool
	nodes []string
}

func startProbe(c *foCluster, slot int) *probe {
	p := &probe{stop: make(chan struct{}), done: make(chan struct{}), dead: map[string]bool{}}
	for _, s := range c.nodes {
		p.nodes = append(p.nodes, s.Addr())
	}
	key := "{" + tagForSlot(slot) + "}probe"
	go func() {
		defer close(p.done)
		target := ""
		for n := 0; ; n++ {
			select {
			case <-p.stop:
				return
			default:
			}
			if target == "" {
				p.mu.Lock()
				live := []string{}
				for _, a := range p.nodes {
					if !p.dead[a] {
						live = append(live, a)
					}
				}
				p.mu.Unlock()
				target = live[n%len(live)]
			}
			_, err := cmd(target, "SET", key, strconv.Itoa(n))
			if err == nil {
				p.mu.Lock()
				p.acks = append(p.acks, time.Now())
				p.mu.Unlock()
				continue
			}
			if f := strings.Fields(err.Error()); len(f) == 3 && f[0] == "MOVED" {
				target = f[2]
				continue
			}
			target = ""
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return p
}

func (p *probe) markDead(addr string) {
	p.mu.Lock()
	p.dead[addr] = true
	p.mu.Unlock()
}

func (p *probe) ackedAfter(t0 time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acks) > 0 && p.acks[len(p.acks)-1].After(t0)
}

// gap is the longest time between consecutive acks from..to, counting from
// the last ack before from.
func (p *probe) gap(from, to time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var g time.Duration
	var prev time.Time
	for _, a := range p.acks {
		if a.Before(from) {
			prev = a
			continue
		}
		if a.After(to) {
			break
		}
		if !prev.IsZero() {
			g = max(g, a.Sub(prev))
		}
		prev = a
	}
	return g
}

func (p *probe) close() {
	close(p.stop)
	<-p.done
}

func TestFailoverUnavailability(t *testing.T) {
	if os.Getenv("SLOTD_E2E_FAILOVER") == "" {
		t.Skip("minutes long: set SLOTD_E2E_FAILOVER=1")
	}
	needTool(t, "redis-cli")
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
	for _, tg := range targets {
		var kills, manuals []time.Duration
		for r := 0; r < rounds; r++ {
			t.Run(fmt.Sprintf("%s/%d", tg.name, r), func(t *testing.T) {
				k, m := failoverRound(t, tg.bin, tg.redis)
				kills = append(kills, k)
				manuals = append(manuals, m)
				t.Logf("%s round %d: kill -9 unavailability %v, manual failover %v", tg.name, r, k, m)
			})
		}
		results[tg.name] = [2][]time.Duration{kills, manuals}
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
	t.Logf("median over %d rounds, node timeout %d ms: kill -9: slotd %v, redis-server %v (ratio %.2f); manual CLUSTER FAILOVER: slotd %v, redis-server %v",
		rounds, failoverNodeTimeout, sk, rk, float64(sk)/float64(max(rk, 1)), sm, rm)
	if rk > 0 && float64(sk) > 0.8*float64(rk) {
		t.Errorf("slotd's kill -9 unavailability %v is above 0.8 x redis-server's %v", sk, rk)
	}
	if sm >= time.Second {
		t.Errorf("slotd's manual failover unavailability %v is not under 1 s", sm)
	}
}

// failoverRound builds a cluster, kills master 0 under a probe on slot 0,
// then runs CLUSTER FAILOVER on the replica of master 1 under a probe on
// slot 6000; it returns both unavailabilities.
func failoverRound(t *testing.T, bin string, redis bool) (time.Duration, time.Duration) {
	c := newFOCluster(t, bin, redis)
	c.create()
	p := startProbe(c, 0)
	defer p.close()
	waitFor(t, 10*time.Second, "probe writes", func() (bool, string) { return p.ackedAfter(time.Now().Add(-time.Second)), "" })
	time.Sleep(300 * time.Millisecond)
	killed := time.Now()
	c.nodes[0].kill()
	p.markDead(c.nodes[0].Addr())
	// A write in flight at the kill may be acknowledged just after it; any
	// ack half a second later comes from the new master.
	waitFor(t, 60*time.Second, "writes to slot 0 after kill -9", func() (bool, string) {
		return p.ackedAfter(killed.Add(500 * time.Millisecond)), ""
	})
	kill := p.gap(killed, time.Now())
	if os.Getenv("SLOTD_E2E_FAILOVER_LOGS") != "" {
		t.Logf("killed at %s", killed.Format("15:04:05.000"))
		for _, s := range c.nodes[1:] {
			for _, l := range strings.Split(s.Output(), "\n") {
				if strings.Contains(l, "event") || strings.Contains(l, "promoted") || strings.Contains(l, "Failover") ||
					strings.Contains(l, "FAIL") || strings.Contains(l, "election") {
					t.Logf("%s: %s", s.Addr(), l)
				}
			}
		}
	}

	q := startProbe(c, 6000)
	defer q.close()
	q.markDead(c.nodes[0].Addr())
	waitFor(t, 10*time.Second, "probe writes to slot 6000", func() (bool, string) { return q.ackedAfter(time.Now().Add(-time.Second)), "" })
	time.Sleep(300 * time.Millisecond)
	started := time.Now()
	mustCmd(t, c.nodes[4].Addr(), "CLUSTER", "FAILOVER")
	waitFor(t, 30*time.Second, "replica 4 to be master", func() (bool, string) {
		out, _ := cmd(c.nodes[4].Addr(), "CLUSTER", "NODES")
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "myself") {
				return strings.Contains(l, "master"), l
			}
		}
		return false, out
	})
	time.Sleep(time.Second)
	manual := q.gap(started.Add(-100*time.Millisecond), time.Now())
	return kill, manual
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
