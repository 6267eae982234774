package node

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/node/config"
)

// clusterPorts returns n client ports whose bus ports (port+10000) are free
// for TCP and UDP as well.
func clusterPorts(t *testing.T, n int) []int {
	t.Helper()
	var out []int
	// Client ports 20500-20999, bus ports 30500-30999: both below Linux's
	// ephemeral range (32768+), so other tests' outgoing connections cannot
	// take them.
	for p := 20500 + os.Getpid()%400; len(out) < n && p < 21000; p++ {
		if portFree(p) && portFree(p+10000) {
			out = append(out, p)
		}
	}
	if len(out) < n {
		t.Fatal("no free ports")
	}
	return out
}

// freePorts returns n client ports in [lo, hi) whose cluster bus ports
// (client port + bus) are free too.
func freePorts(t *testing.T, lo, hi, n, bus int) []int {
	t.Helper()
	var out []int
	for p := lo; len(out) < n && p < hi; p++ {
		if portFree(p) && portFree(p+bus) {
			out = append(out, p)
		}
	}
	if len(out) < n {
		t.Fatalf("no free ports in %d-%d", lo, hi-1)
	}
	return out
}

func portFree(p int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	l.Close()
	u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	u.Close()
	return true
}

type clusterMember struct {
	s    *Server
	tc   *testClient
	port int
	dir  string
}

// startMember runs a cluster-enabled server in process on port, with its
// config file in dir; extra directives (as command-line options) come last
// and override the defaults.
func startMember(t *testing.T, port int, dir string, extra ...string) (*clusterMember, error) {
	t.Helper()
	cfg, err := config.Load(append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
		// An absolute config path, not --dir: dir changes the process's
		// working directory, which other tests rely on.
		"--cluster-node-timeout", "1000", "--cluster-config-file", filepath.Join(dir, "nodes-"+strconv.Itoa(port)+".conf")}, extra...))
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, nil)
	if err := s.Listen(); err != nil {
		return nil, err
	}
	go s.Serve()
	m := &clusterMember{s: s, tc: &testClient{t: t, s: s, c: s.testClient()}, port: port, dir: dir}
	return m, nil
}

func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// slotsConfig is redis-cli's "all nodes agree" signature of one node's view.
func slotsConfig(nodes string) string {
	var parts []string
	for _, l := range strings.Split(strings.TrimSpace(nodes), "\n") {
		f := strings.Fields(l)
		if len(f) > 8 {
			parts = append(parts, f[0]+":"+strings.Join(f[8:], ","))
		}
	}
	slicesSort(parts)
	return strings.Join(parts, "|")
}

func slicesSort(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// bulkText extracts the text of a bulk or verbatim reply.
func bulkText(r string) string {
	i := strings.Index(r, "\r\n")
	if i < 0 {
		return ""
	}
	body := strings.TrimSuffix(r[i+2:], "\r\n")
	return strings.TrimPrefix(body, "txt:")
}

func TestClusterCreateRouteRestart(t *testing.T) {
	dir := t.TempDir()
	ports := clusterPorts(t, 3)
	var ms []*clusterMember
	for _, p := range ports {
		m, err := startMember(t, p, dir)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
		t.Cleanup(func() { m.s.Close() })
	}
	// The steps redis-cli --cluster create takes.
	bounds := [][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}
	for i, m := range ms {
		m.tc.expect("+OK|", "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(bounds[i][0]), strconv.Itoa(bounds[i][1]))
		m.tc.expect("+OK|", "CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1))
	}
	for _, m := range ms[1:] {
		m.tc.expect("+OK|", "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(ports[0]))
	}
	waitUntil(t, "all nodes to agree and be ok", 15*time.Second, func() bool {
		first := ""
		for _, m := range ms {
			if !strings.Contains(m.tc.do("CLUSTER", "INFO"), "cluster_state:ok") {
				return false
			}
			sc := slotsConfig(bulkText(m.tc.do("CLUSTER", "NODES")))
			if first == "" {
				first = sc
			} else if sc != first {
				return false
			}
		}
		return strings.Count(first, "|") == 2
	})
	// "foo" is slot 12182: the third node's.
	ms[2].tc.expect("+OK|", "SET", "foo", "bar")
	ms[0].tc.expect("-MOVED 12182 127.0.0.1:"+strconv.Itoa(ports[2])+"|", "GET", "foo")
	ms[1].tc.expect("-MOVED 12182 127.0.0.1:"+strconv.Itoa(ports[2])+"|", "SET", "foo", "x")
	id2 := bulkText(ms[2].tc.do("CLUSTER", "MYID"))
	if len(id2) != 40 {
		t.Fatalf("MYID %q", id2)
	}
	slotsReply := ms[0].tc.do("CLUSTER", "SLOTS")
	if !strings.HasPrefix(slotsReply, "*3\r\n*3\r\n:0\r\n:5460\r\n*4\r\n$9\r\n127.0.0.1\r\n:"+strconv.Itoa(ports[0])+"\r\n$40\r\n") {
		t.Fatalf("CLUSTER SLOTS: %q", slotsReply)
	}
	// SETSLOT rules.
	ms[0].tc.expect("-ERR I'm not the owner of hash slot 12182|", "CLUSTER", "SETSLOT", "12182", "MIGRATING", id2)
	ms[0].tc.expect("-ERR I don't know about node nope|", "CLUSTER", "SETSLOT", "0", "MIGRATING", "nope")
	ms[2].tc.expect("-ERR Can't assign hashslot 12182 to a different node while I still hold keys for this hash slot.|",
		"CLUSTER", "SETSLOT", "12182", "NODE", bulkText(ms[0].tc.do("CLUSTER", "MYID")))
	ms[2].tc.expect("-ERR I'm already the owner of hash slot 12182|", "CLUSTER", "SETSLOT", "12182", "IMPORTING", id2)
	ms[0].tc.expect("-ERR Slot 0 is already busy|", "CLUSTER", "ADDSLOTS", "0")
	ms[0].tc.expect("-ERR Invalid or out of range slot|", "CLUSTER", "ADDSLOTS", "16384")
	ms[0].tc.expect("-ERR I tried hard but I can't forget myself...|", "CLUSTER", "FORGET", bulkText(ms[0].tc.do("CLUSTER", "MYID")))
	ms[2].tc.expect("-ERR CLUSTER RESET can't be called with master nodes containing keys|", "CLUSTER", "RESET")
	ms[0].tc.expect("-ERR Invalid TCP base port specified: x|", "CLUSTER", "MEET", "127.0.0.1", "x")

	// A newer claim takes slot 12182 from the third node: it must drop the
	// slot's keys. The first node assigns the slot to itself and takes a
	// new config epoch; the third learns of it by gossip (or an UPDATE).
	ms[2].tc.expect("+OK|", "SET", "{foo}2", "v")
	ms[2].tc.expect(":2|", "CLUSTER", "COUNTKEYSINSLOT", "12182")
	id0 := bulkText(ms[0].tc.do("CLUSTER", "MYID"))
	ms[0].tc.expect("+OK|", "CLUSTER", "SETSLOT", "12182", "NODE", id0)
	if r := ms[0].tc.do("CLUSTER", "BUMPEPOCH"); !strings.HasPrefix(r, "+BUMPED") && !strings.HasPrefix(r, "+STILL") {
		t.Fatalf("BUMPEPOCH: %q", r)
	}
	waitUntil(t, "the third node to lose slot 12182 and drop its keys", 10*time.Second, func() bool {
		return ms[2].tc.do("CLUSTER", "COUNTKEYSINSLOT", "12182") == ":0\r\n"
	})
	ms[2].tc.expect("-MOVED 12182 127.0.0.1:"+strconv.Itoa(ports[0])+"|", "GET", "foo")
	// Give the slot back so that the rest of the test sees the first layout.
	ms[2].tc.expect("+OK|", "CLUSTER", "SETSLOT", "12182", "NODE", id2)
	ms[2].tc.do("CLUSTER", "BUMPEPOCH")
	waitUntil(t, "slot 12182 to return to the third node", 10*time.Second, func() bool {
		return strings.Contains(ms[0].tc.do("GET", "foo"), "MOVED 12182 127.0.0.1:"+strconv.Itoa(ports[2]))
	})
	ms[2].tc.expect("+OK|", "SET", "foo", "bar")

	// A second process cannot use the same config file.
	cfg, _ := config.Load([]string{"--port", strconv.Itoa(ports[2]), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
		"--cluster-config-file", filepath.Join(dir, "nodes-"+strconv.Itoa(ports[2])+".conf")})
	other := New(cfg, nil)
	if err := other.startCluster(); err == nil || !strings.Contains(err.Error(), "already used by a different Redis Cluster node") {
		t.Fatalf("a second node on the same config file: %v", err)
	}

	// Restart the third node: same id, same slots, and it rejoins.
	ms[2].s.Close()
	waitUntil(t, "the others to see the node fail", 10*time.Second, func() bool {
		return strings.Contains(bulkText(ms[0].tc.do("CLUSTER", "NODES")), "master,fail")
	})
	// The old bus socket may take a moment to be released.
	var m *clusterMember
	waitUntil(t, "the restarted node to bind its ports", 10*time.Second, func() bool {
		var err error
		m, err = startMember(t, ports[2], dir)
		return err == nil
	})
	t.Cleanup(func() { m.s.Close() })
	if got := bulkText(m.tc.do("CLUSTER", "MYID")); got != id2 {
		t.Fatalf("restarted node id %q, want %q", got, id2)
	}
	waitUntil(t, "the cluster to be ok again", 15*time.Second, func() bool {
		return strings.Contains(ms[0].tc.do("CLUSTER", "INFO"), "cluster_state:ok") &&
			strings.Contains(m.tc.do("CLUSTER", "INFO"), "cluster_state:ok")
	})
	data, err := os.ReadFile(filepath.Join(dir, "nodes-"+strconv.Itoa(ports[2])+".conf"))
	if err != nil || !strings.Contains(string(data), "myself,master") || !strings.Contains(string(data), "10923-16383") {
		t.Fatalf("nodes.conf: %v %q", err, data)
	}
}

func TestClusterCorruptConfigStopsStart(t *testing.T) {
	dir := t.TempDir()
	port := clusterPorts(t, 1)[0]
	path := filepath.Join(dir, "nodes-"+strconv.Itoa(port)+".conf")
	if err := os.WriteFile(path, []byte("this is not a cluster config\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := startMember(t, port, dir); err == nil || !strings.Contains(err.Error(), "corrupted cluster config file") {
		t.Fatalf("corrupt nodes.conf: %v", err)
	}
	// Nothing was reset: the file is as it was.
	if data, _ := os.ReadFile(path); string(data) != "this is not a cluster config\n" {
		t.Fatalf("file changed: %q", data)
	}
}
