package ctl

import (
	"bytes"
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
)

// These tests start real cluster nodes. By default they are redis-server 7
// processes; set SLOTCTL_TEST_NODE=/path/to/slotd to run the same tests
// against slotd (it takes redis-server's command line), or change
// launchNode below.

// Client ports come from this range; each node's bus port is port+10000.
const (
	portLo = 23000
	portHi = 23499
)

// launchNode starts one cluster node on a free port. Swapping the kind of
// node the tests use is this one line.
var launchNode = func(t *testing.T) *testNode { return startNode(t, nodeBinary(t), clusterArgs) }

// clusterArgs returns the command line of a cluster node on port, in
// redis-server's form (slotd accepts the same).
func clusterArgs(port int) []string {
	return []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", "5000",
		"--save", "",
		"--appendonly", "no",
	}
}

var redisVersionRE = regexp.MustCompile(`v=(\d+)\.(\d+)\.(\d+)`)

// nodeBinary returns SLOTCTL_TEST_NODE, or redis-server after checking
// that it is version 7.
func nodeBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SLOTCTL_TEST_NODE"); p != "" {
		return p
	}
	p, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server not found on PATH: these tests start real cluster nodes; install redis-server 7 (scripts/install-deps.sh) or set SLOTCTL_TEST_NODE to a slotd binary")
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		t.Fatalf("redis-server --version: %v", err)
	}
	if m := redisVersionRE.FindSubmatch(out); m == nil || string(m[1]) != "7" {
		t.Fatalf("redis-server 7 is needed, found %q", bytes.TrimSpace(out))
	}
	return p
}

// testNode is a node process under test.
type testNode struct {
	Port int
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// Addr returns 127.0.0.1:port.
func (n *testNode) Addr() string { return "127.0.0.1:" + strconv.Itoa(n.Port) }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var (
	portMu   sync.Mutex
	nextPort = portLo + os.Getpid()%50
)

// reservePort returns a port in the range whose client and bus ports
// were both free a moment ago.
func reservePort(t *testing.T) int {
	t.Helper()
	portMu.Lock()
	defer portMu.Unlock()
	for tries := 0; tries <= portHi-portLo; tries++ {
		p := nextPort
		nextPort++
		if nextPort > portHi {
			nextPort = portLo
		}
		if portFree(p) && portFree(p+10000) {
			return p
		}
	}
	t.Fatalf("no free port pair in %d-%d", portLo, portHi)
	return 0
}

func portFree(p int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// startNode runs bin with args(port) in a fresh directory, waits until it
// answers PING, and stops it when the test ends.
func startNode(t *testing.T, bin string, args func(port int) []string) *testNode {
	t.Helper()
	var last string
	for attempt := 0; attempt < 3; attempt++ {
		n := &testNode{Port: reservePort(t), out: &syncBuffer{}, done: make(chan struct{})}
		n.cmd = exec.Command(bin, args(n.Port)...)
		n.cmd.Dir = t.TempDir()
		n.cmd.Stdout, n.cmd.Stderr = n.out, n.out
		n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := n.cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", bin, err)
		}
		go func() { n.cmd.Wait(); close(n.done) }()
		err := n.waitPing(10 * time.Second)
		if err == nil {
			t.Cleanup(n.stop)
			return n
		}
		n.stop()
		last = err.Error()
		if !strings.Contains(n.out.String(), "in use") {
			break
		}
	}
	t.Fatalf("node %s did not start: %s", bin, last)
	return nil
}

func (n *testNode) waitPing(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		select {
		case <-n.done:
			return fmt.Errorf("exited: %s", n.out.String())
		default:
		}
		c, err := net.DialTimeout("tcp", n.Addr(), time.Second)
		if err == nil {
			c.SetDeadline(time.Now().Add(time.Second))
			c.Write([]byte("*1\r\n$4\r\nPING\r\n"))
			buf := make([]byte, 7)
			k, _ := c.Read(buf)
			c.Close()
			if string(buf[:k]) == "+PONG\r\n" {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no PONG after %v: %v\n%s", d, err, n.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the node's process group: SIGTERM, then SIGKILL after 3 s.
func (n *testNode) stop() {
	select {
	case <-n.done:
		return
	default:
	}
	syscall.Kill(-n.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-n.done:
	case <-time.After(3 * time.Second):
		syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
		<-n.done
	}
}

// exited reports whether the process ended within d.
func (n *testNode) exited(d time.Duration) bool {
	select {
	case <-n.done:
		return true
	case <-time.After(d):
		return false
	}
}

// startNodes launches k nodes.
func startNodes(t *testing.T, k int) []*testNode {
	t.Helper()
	ns := make([]*testNode, k)
	for i := range ns {
		ns[i] = launchNode(t)
	}
	return ns
}

func addrsOf(ns []*testNode) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Addr()
	}
	return out
}

// testOptions returns options that write the report to the test log.
func testOptions(t *testing.T) (*Options, *syncBuffer) {
	buf := &syncBuffer{}
	return &Options{Yes: true, Timeout: 5 * time.Second, Wait: 30 * time.Second, Out: buf}, buf
}

// createCluster starts masters*(replicas+1) nodes and builds a cluster
// of them with Create.
func createCluster(t *testing.T, masters, replicas int) []*testNode {
	t.Helper()
	ns := startNodes(t, masters*(replicas+1))
	o, out := testOptions(t)
	res, err := Create(context.Background(), addrsOf(ns), replicas, o)
	if err != nil {
		t.Fatalf("create: %v\n%s", err, out)
	}
	if !res.OK() {
		t.Fatalf("create: check after create failed: %+v\n%s", res, out)
	}
	return ns
}

// redisCliCheck runs the unmodified redis-cli --cluster check and returns
// its output (colours removed) and whether it exited 0.
func redisCliCheck(t *testing.T, addr string) (string, bool) {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatal("redis-cli not found on PATH: install redis-tools (scripts/install-deps.sh)")
	}
	out, err := exec.Command(cli, "--cluster", "check", addr).CombinedOutput()
	return stripANSI(string(out)), err == nil
}

var ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*m")

func stripANSI(s string) string { return ansiRE.ReplaceAllString(s, "") }

// nodeCmd sends one command to addr and returns the reply.
func nodeCmd(t *testing.T, addr string, args ...any) any {
	t.Helper()
	o, _ := testOptions(t)
	c, err := Dial(context.Background(), addr, o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := c.Do(context.Background(), args...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// slotctlBinary builds cmd/slotctl into the test's temporary directory.
func slotctlBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "slotctl")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/slotd/slotd/cmd/slotctl").CombinedOutput()
	if err != nil {
		t.Fatalf("go build slotctl: %v\n%s", err, out)
	}
	return bin
}
