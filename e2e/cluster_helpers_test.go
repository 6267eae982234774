package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slotd/slotd/slots"
)

// Cluster tests start every node on a fixed port P whose bus is P+10000,
// so ports cannot come from the kernel's ephemeral range (P+10000 would
// overflow). They come from SLOTD_E2E_CLUSTER_PORTS ("first-last", default
// 22000-22499); a port is used only when P (TCP) and P+10000 (TCP and UDP)
// are free at that moment, and the allocator moves on round-robin so that a
// port is not reused while a previous test's node may still be exiting.
const defaultClusterPorts = "22000-22499"

// nodeTimeout is cluster-node-timeout for every test cluster, in ms.
const nodeTimeout = 2000

var (
	portMu   sync.Mutex
	portNext int
)

func clusterPortRange(t *testing.T) (int, int) {
	t.Helper()
	spec := os.Getenv("SLOTD_E2E_CLUSTER_PORTS")
	if spec == "" {
		spec = defaultClusterPorts
	}
	a, b, ok := strings.Cut(spec, "-")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || lo < 1024 || hi < lo || hi+10000 > 65535 {
		t.Fatalf("SLOTD_E2E_CLUSTER_PORTS=%q: want first-last with last+10000 <= 65535", spec)
	}
	return lo, hi
}

// clusterPort returns a port P such that P and its bus port P+10000 are
// free now.
func clusterPort(t *testing.T) int {
	t.Helper()
	lo, hi := clusterPortRange(t)
	portMu.Lock()
	defer portMu.Unlock()
	if portNext < lo || portNext > hi {
		portNext = lo
	}
	for i := 0; i <= hi-lo; i++ {
		p := portNext
		portNext++
		if portNext > hi {
			portNext = lo
		}
		if portFree(p) {
			return p
		}
	}
	t.Fatalf("no free port pair P, P+10000 in %d-%d", lo, hi)
	return 0
}

func portFree(p int) bool {
	for _, hp := range []struct {
		network string
		port    int
	}{{"tcp", p}, {"tcp", p + 10000}, {"udp", p + 10000}} {
		addr := "127.0.0.1:" + strconv.Itoa(hp.port)
		if hp.network == "udp" {
			c, err := net.ListenPacket("udp", addr)
			if err != nil {
				return false
			}
			c.Close()
			continue
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return false
		}
		ln.Close()
	}
	return true
}

// targetIsRedis reports whether SLOTD_E2E_TARGET=redis asks for the tests
// to run against redis-server instead of slotd.
func targetIsRedis() bool { return os.Getenv("SLOTD_E2E_TARGET") == "redis" }

// cluster is a set of cluster-enabled nodes, all in one temporary directory
// that holds their nodes-P.conf files.
type cluster struct {
	t     *testing.T
	dir   string
	bin   string
	redis bool
	Nodes []*clusterNode
}

// clusterNode is one node process. Its server is replaced on restart.
type clusterNode struct {
	*server
	c    *cluster
	Conf string
	args []string
}

// newCluster starts n empty cluster-enabled nodes (slotd, or redis-server
// with SLOTD_E2E_TARGET=redis). They are killed and their files removed at
// the end of the test; their logs are printed when the test failed.
func newCluster(t *testing.T, n int) *cluster {
	t.Helper()
	needTool(t, "redis-cli")
	c := &cluster{t: t, dir: t.TempDir(), redis: targetIsRedis()}
	if c.redis {
		c.bin = redisServerBinary(t)
	} else {
		c.bin = slotdBinary(t)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, nd := range c.Nodes {
				t.Logf("--- log of node %s (pid %d) ---\n%s", nd.Addr(), nd.Pid(), tail(nd.Output(), 4000))
			}
		}
	})
	for i := 0; i < n; i++ {
		c.AddNode()
	}
	return c
}

// AddNode starts one more empty node on a fresh port pair.
func (c *cluster) AddNode() *clusterNode {
	t := c.t
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port := clusterPort(t)
		nd := &clusterNode{c: c, Conf: filepath.Join(c.dir, fmt.Sprintf("nodes-%d.conf", port))}
		nd.args = []string{
			"--port", strconv.Itoa(port),
			"--cluster-enabled", "yes",
			"--cluster-config-file", nd.Conf,
			"--cluster-node-timeout", strconv.Itoa(nodeTimeout),
			"--bind", "127.0.0.1",
			"--dir", c.dir,
			// The nodes share the directory: each its own snapshot file.
			"--dbfilename", fmt.Sprintf("dump-%d.rdb", port),
			"--loglevel", "notice",
		}
		if c.redis {
			nd.args = append(nd.args, redisOnlyArgs...)
		}
		if lastErr = nd.launch(port); lastErr == nil {
			c.Nodes = append(c.Nodes, nd)
			return nd
		}
		if !strings.Contains(lastErr.Error(), "in use") {
			break
		}
	}
	t.Fatalf("cluster node did not start: %v", lastErr)
	return nil
}

// launch starts the node's process with its arguments and waits for PING.
func (nd *clusterNode) launch(port int) error {
	t := nd.c.t
	name := "slotd"
	if nd.c.redis {
		name = "redis-server"
	}
	s := &server{Name: name, Port: port, out: &lockedBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(nd.c.bin, nd.args...)
	s.cmd.Dir = nd.c.dir
	s.cmd.Stdout = s.out
	s.cmd.Stderr = s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %v", name, err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	if err := s.waitReady(10 * time.Second); err != nil {
		s.kill()
		return err
	}
	t.Cleanup(func() { s.stop(t) })
	nd.server = s
	return nil
}

// Kill9 kills the node's process with SIGKILL and waits for it to exit.
func (nd *clusterNode) Kill9() { nd.server.kill() }

// Restart starts the node again with the same port and nodes.conf.
func (nd *clusterNode) Restart() {
	nd.c.t.Helper()
	if err := nd.launch(nd.Port); err != nil {
		nd.c.t.Fatalf("restart %s: %v", nd.Addr(), err)
	}
}

// BusPort is the node's cluster bus port.
func (nd *clusterNode) BusPort() int { return nd.Port + 10000 }

// Addrs returns host:port of every node.
func (c *cluster) Addrs() []string {
	var a []string
	for _, nd := range c.Nodes {
		a = append(a, nd.Addr())
	}
	return a
}

// cmd sends one command on a new connection and returns the reply: the
// payload of a bulk string, the text of a simple string or integer, and an
// error for an error reply.
func cmd(addr string, args ...string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(encodeCommand(nil, args)); err != nil {
		return "", err
	}
	rp, err := readReply(bufio.NewReader(conn))
	if err != nil {
		return "", err
	}
	switch rp.Type {
	case '-':
		return "", fmt.Errorf("%s", rp.Line)
	case '$', '=':
		return string(rp.Bulk), nil
	case '+', ':':
		return string(rp.Line), nil
	}
	return string(rp.Raw), nil
}

// mustCmd is cmd that fails the test on any error.
func mustCmd(t *testing.T, addr string, args ...string) string {
	t.Helper()
	s, err := cmd(addr, args...)
	if err != nil {
		t.Fatalf("%s %s: %v", addr, strings.Join(args, " "), err)
	}
	return s
}

// infoField returns field's value in an INFO-style "k:v\r\n" text.
func infoField(text, field string) string {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), field+":"); ok {
			return v
		}
	}
	return ""
}

// nodeLine is one line of CLUSTER NODES.
type nodeLine struct {
	ID, Addr, Master, Link string
	Flags                  []string
	ConfigEpoch            string
	Slots                  []string
}

func (l nodeLine) has(flag string) bool {
	for _, f := range l.Flags {
		if f == flag {
			return true
		}
	}
	return false
}

// findNode returns the line of node id.
func findNode(ls []nodeLine, id string) (nodeLine, bool) {
	for _, l := range ls {
		if l.ID == id {
			return l, true
		}
	}
	return nodeLine{}, false
}

// parseNodes parses CLUSTER NODES output.
func parseNodes(text string) ([]nodeLine, error) {
	var out []nodeLine
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		f := strings.Split(line, " ")
		if len(f) < 8 {
			return nil, fmt.Errorf("CLUSTER NODES line has %d fields: %q", len(f), line)
		}
		out = append(out, nodeLine{ID: f[0], Addr: f[1], Flags: strings.Split(f[2], ","), Master: f[3],
			ConfigEpoch: f[6], Link: f[7], Slots: f[8:]})
	}
	return out, nil
}

// Nodes returns nd's CLUSTER NODES, parsed.
func (nd *clusterNode) Nodes() ([]nodeLine, error) {
	s, err := cmd(nd.Addr(), "CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	return parseNodes(s)
}

// ID returns the node's id (CLUSTER MYID).
func (nd *clusterNode) ID(t *testing.T) string {
	t.Helper()
	return mustCmd(t, nd.Addr(), "CLUSTER", "MYID")
}

// Myself returns the node's own CLUSTER NODES line.
func (nd *clusterNode) Myself(t *testing.T) nodeLine {
	t.Helper()
	ls, err := nd.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.has("myself") {
			return l
		}
	}
	t.Fatalf("%s: no myself line in CLUSTER NODES", nd.Addr())
	return nodeLine{}
}

// waitFor polls cond every 50 ms until it reports true or d has passed;
// then it fails the test with what and cond's last explanation. It returns
// how long it took.
func waitFor(t *testing.T, d time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(d)
	for {
		ok, why := cond()
		if ok {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v: %s", what, d, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stateOK reports whether every listed node says cluster_state:ok.
func stateOK(nodes []*clusterNode) (bool, string) {
	for _, nd := range nodes {
		info, err := cmd(nd.Addr(), "CLUSTER", "INFO")
		if err != nil {
			return false, fmt.Sprintf("%s: %v", nd.Addr(), err)
		}
		if st := infoField(info, "cluster_state"); st != "ok" {
			return false, fmt.Sprintf("%s: cluster_state:%s", nd.Addr(), st)
		}
	}
	return true, ""
}

// WaitOK waits until every node reports cluster_state:ok.
func (c *cluster) WaitOK(d time.Duration) time.Duration {
	c.t.Helper()
	return waitFor(c.t, d, "cluster_state:ok on all nodes", func() (bool, string) { return stateOK(c.Nodes) })
}

// redisCLIRun runs redis-cli with args (no -h/-p added) and returns its
// combined output and error; it never hangs longer than d.
func redisCLIRun(d time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("redis-cli %s: timed out after %v", strings.Join(args, " "), d)
	}
	return string(out), err
}

// Create runs `redis-cli --cluster create` over all nodes (no replicas)
// and waits until every node reports cluster_state:ok and
// `redis-cli --cluster check` passes.
func (c *cluster) Create() {
	t := c.t
	t.Helper()
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	start := time.Now()
	out, err := redisCLIRun(40*time.Second, args...)
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	if !strings.Contains(out, "[OK] All 16384 slots covered.") {
		t.Fatalf("redis-cli --cluster create did not cover all slots:\n%s", out)
	}
	t.Logf("--cluster create of %d nodes took %v", len(c.Nodes), time.Since(start).Round(time.Millisecond))
	c.WaitOK(15 * time.Second)
	c.WaitCheck(c.Nodes[0], 10*time.Second)
}

// checkOK lists what a passing `redis-cli --cluster check` prints.
var checkOK = []string{"[OK] All nodes agree about slots configuration.", "[OK] All 16384 slots covered."}

// WaitCheck polls `redis-cli --cluster check` through nd until its output
// has both [OK] lines (gossip may need a moment to converge) and returns
// the output.
func (c *cluster) WaitCheck(nd *clusterNode, d time.Duration) string {
	c.t.Helper()
	var out string
	waitFor(c.t, d, "redis-cli --cluster check "+nd.Addr(), func() (bool, string) {
		var err error
		out, err = redisCLIRun(20*time.Second, "--cluster", "check", nd.Addr())
		if err != nil {
			return false, fmt.Sprintf("%v\n%s", err, out)
		}
		for _, want := range checkOK {
			if !strings.Contains(out, want) {
				return false, "output lacks " + want + ":\n" + out
			}
		}
		return true, ""
	})
	return out
}

// slotOwners maps every slot to the address of the master that serves it,
// from nd's CLUSTER NODES.
func slotOwners(t *testing.T, nd *clusterNode) [slots.Count]string {
	t.Helper()
	var owner [slots.Count]string
	ls, err := nd.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		addr, _, _ := strings.Cut(l.Addr, "@")
		for _, s := range l.Slots {
			if strings.HasPrefix(s, "[") {
				continue
			}
			r, ok := slots.ParseRange(s)
			if !ok {
				t.Fatalf("bad slot token %q in %q", s, l.Addr)
			}
			for i := r.Start; i <= r.End; i++ {
				owner[i] = addr
			}
		}
	}
	for i, o := range owner {
		if o == "" {
			t.Fatalf("slot %d has no owner in CLUSTER NODES of %s", i, nd.Addr())
		}
	}
	return owner
}

var (
	tagOnce sync.Once
	slotTag [slots.Count]string
)

// tagForSlot returns a short hash tag whose keys "{tag}..." hash to slot.
func tagForSlot(slot int) string {
	tagOnce.Do(func() {
		left := slots.Count
		for i := 0; left > 0; i++ {
			s := strconv.Itoa(i)
			if sl := slots.OfString(s); slotTag[sl] == "" {
				slotTag[sl] = s
				left--
			}
		}
	})
	return slotTag[slot]
}

var infoLineRE = regexp.MustCompile(`(?m)^(\S+) \(([0-9a-f]{8})\.\.\.\) -> (\d+) keys \| (\d+) slots \| (\d+) slaves\.$`)

// clusterPortBlock returns a base port B such that B..B+n-1 and their bus
// ports are free now.
func clusterPortBlock(t *testing.T, n int) int {
	t.Helper()
	lo, hi := clusterPortRange(t)
	portMu.Lock()
	defer portMu.Unlock()
	if portNext < lo || portNext > hi {
		portNext = lo
	}
	for tries := 0; tries <= hi-lo; tries++ {
		base := portNext
		if base+n-1 > hi {
			portNext = lo
			continue
		}
		ok := true
		for p := base; p < base+n && ok; p++ {
			ok = portFree(p)
		}
		portNext = base + 1
		if ok {
			portNext = base + n
			return base
		}
	}
	t.Fatalf("no %d consecutive free port pairs in %d-%d", n, lo, hi)
	return 0
}
