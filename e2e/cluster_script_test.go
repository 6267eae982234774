package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClusterScript runs the README's run command, scripts/cluster.sh, on
// ports of the test range: start must leave six nodes (3 masters with a
// replica each) with
// cluster_state:ok that pass redis-cli --cluster check; stop and start
// again must bring the same cluster back from its nodes.conf files; stop
// must leave nothing running.
func TestClusterScript(t *testing.T) {
	// redis-cli creates the cluster when it is installed; slotctl (go run)
	// is the path for a machine with only Go.
	for _, tool := range []string{"redis-cli", "slotctl"} {
		t.Run(tool, func(t *testing.T) { testClusterScript(t, tool) })
	}
}

func testClusterScript(t *testing.T, tool string) {
	needTool(t, "redis-cli")
	const n = 6
	base := clusterPortBlock(t, n)
	dir := t.TempDir()
	env := append(os.Environ(),
		fmt.Sprintf("CLUSTER_BASE_PORT=%d", base),
		fmt.Sprintf("CLUSTER_NODES=%d", n),
		"CLUSTER_DIR="+dir,
		fmt.Sprintf("CLUSTER_NODE_TIMEOUT=%d", nodeTimeout),
		"CLUSTER_TOOL="+tool,
	)
	if targetIsRedis() {
		env = append(env, "CLUSTER_SERVER="+redisServerBinary(t))
	}
	script, err := filepath.Abs("../scripts/cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	run := func(d time.Duration, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		c := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
		c.Env = env
		out, err := c.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() {
		if out, err := run(30*time.Second, "stop"); err != nil {
			t.Errorf("cluster.sh stop: %v\n%s", err, out)
		}
		if t.Failed() {
			for i := 0; i < n; i++ {
				b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprint(base+i), "node.log"))
				t.Logf("--- node.log of %d ---\n%s", base+i, tail(string(b), 3000))
			}
		}
	})

	nodes := make([]*clusterNode, n)
	c := &cluster{t: t}
	for i := range nodes {
		nodes[i] = &clusterNode{server: &server{Port: base + i}}
	}
	c.Nodes = nodes
	check := func(step string) []string {
		t.Helper()
		start := time.Now()
		out, err := run(90*time.Second, "start")
		t.Logf("cluster.sh start (%s) took %v", step, time.Since(start).Round(time.Millisecond))
		if err != nil {
			t.Fatalf("cluster.sh start (%s): %v\n%s", step, err, out)
		}
		if !strings.Contains(out, "cluster ready") {
			t.Fatalf("cluster.sh start (%s) did not say ready:\n%s", step, out)
		}
		if ok, why := stateOK(nodes); !ok {
			t.Fatalf("after cluster.sh start (%s): %s", step, why)
		}
		c.WaitCheck(nodes[0], 10*time.Second)
		st, err := run(20*time.Second, "status")
		if err != nil || strings.Count(st, "cluster_state:ok") != n {
			t.Fatalf("cluster.sh status: %v\n%s", err, st)
		}
		var ids []string
		slaves := 0
		for _, nd := range nodes {
			ids = append(ids, nd.ID(t))
			if nd.Myself(t).has("slave") {
				slaves++
			}
		}
		// The README's shape: 3 masters, each with a replica.
		if slaves != 3 {
			t.Fatalf("cluster.sh start (%s): %d replicas, want 3", step, slaves)
		}
		return ids
	}
	first := check("fresh")
	if out, err := run(30*time.Second, "stop"); err != nil {
		t.Fatalf("cluster.sh stop: %v\n%s", err, out)
	}
	for _, nd := range nodes {
		if _, err := cmd(nd.Addr(), "PING"); err == nil {
			t.Fatalf("%s still answers after stop", nd.Addr())
		}
	}
	again := check("restart")
	if strings.Join(first, " ") != strings.Join(again, " ") {
		t.Errorf("restart changed the node ids: %v, was %v", again, first)
	}
}
