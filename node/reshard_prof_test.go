package node

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReshardProfile runs three cluster nodes in this process and moves 1000
// slots of 20,000 keys between them with redis-cli --cluster reshard, so that
// the nodes' side of a reshard can be profiled in one place:
//
//	SLOTD_PROFILE_RESHARD=1 go test ./node -run TestReshardProfile -v -cpuprofile cpu.out
//
// It is skipped unless SLOTD_PROFILE_RESHARD is set.
func TestReshardProfile(t *testing.T) {
	if os.Getenv("SLOTD_PROFILE_RESHARD") == "" {
		t.Skip()
	}
	dir := t.TempDir()
	var ms []*clusterMember
	var ports []int
	for p := 23900; p < 23990 && len(ports) < 3; p++ {
		if portFree(p) && portFree(p+10000) {
			ports = append(ports, p)
		}
	}
	for i := range 3 {
		m, err := startMember(t, ports[i], dir)
		if err != nil {
			t.Fatal(err)
		}
		defer m.s.Close()
		ms = append(ms, m)
	}
	for i := 1; i < 3; i++ {
		ms[0].tc.do("CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(ports[i]))
	}
	ms[0].tc.do("CLUSTER", "ADDSLOTSRANGE", "0", "5460")
	ms[1].tc.do("CLUSTER", "ADDSLOTSRANGE", "5461", "10922")
	ms[2].tc.do("CLUSTER", "ADDSLOTSRANGE", "10923", "16383")
	waitUntil(t, "ok", 20*time.Second, func() bool {
		for _, m := range ms {
			if !strings.Contains(m.tc.do("CLUSTER", "INFO"), "cluster_state:ok") {
				return false
			}
		}
		return true
	})
	time.Sleep(2 * time.Second)
	for i := range 20000 {
		ms[0].tc.do("SET", "k"+strconv.Itoa(i), "v")
	}
	from := strings.TrimSpace(bulkText(ms[0].tc.do("CLUSTER", "MYID")))
	to := strings.TrimSpace(bulkText(ms[1].tc.do("CLUSTER", "MYID")))
	start := time.Now()
	out, err := exec.Command("redis-cli", "--cluster", "reshard", "127.0.0.1:"+strconv.Itoa(ports[0]), "--cluster-from", from, "--cluster-to", to,
		"--cluster-slots", "1000", "--cluster-yes", "--cluster-pipeline", "100").CombinedOutput()
	if err != nil {
		t.Fatalf("%v %s", err, out)
	}
	t.Logf("1000 slots in %v", time.Since(start))
}
