package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slotd/slotd/slots"
)

// These tests drive slotctl reshard, rebalance, fix and drain against real
// slotd processes. Set SLOTD_E2E_CLUSTER_PORTS to the range a run may use.

var (
	slotctlOnce sync.Once
	slotctlPath string
	slotctlErr  error
)

// slotctlBinary builds ./cmd/slotctl once per run.
func slotctlBinary(t *testing.T) string {
	t.Helper()
	slotctlOnce.Do(func() {
		dir, err := os.MkdirTemp("", "slotctl-e2e-")
		if err != nil {
			slotctlErr = err
			return
		}
		slotctlPath = filepath.Join(dir, "slotctl")
		out, err := exec.Command("go", "build", "-o", slotctlPath, "github.com/slotd/slotd/cmd/slotctl").CombinedOutput()
		if err != nil {
			slotctlErr = fmt.Errorf("go build slotctl: %v\n%s", err, out)
		}
	})
	if slotctlErr != nil {
		t.Fatal(slotctlErr)
	}
	return slotctlPath
}

// slotctl runs the tool with args and returns its combined output.
func slotctl(t *testing.T, d time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	out, err := exec.CommandContext(ctx, slotctlBinary(t), args...).CombinedOutput()
	return string(out), err
}

func mustSlotctl(t *testing.T, d time.Duration, args ...string) string {
	t.Helper()
	out, err := slotctl(t, d, args...)
	if err != nil {
		t.Fatalf("slotctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// reshardUnderLoad runs the load while move runs, then checks every key
// and that the cluster is consistent.
func reshardUnderLoad(t *testing.T, c *cluster, move func()) {
	t.Helper()
	total := int64(200000)
	if s := os.Getenv("SLOTD_E2E_RESHARD_OPS"); s != "" {
		total, _ = strconv.ParseInt(s, 10, 64)
	}
	l := newReshardLoad(c, 50000, 16, total)
	defer l.rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l.start(ctx)
	waitFor(t, 30*time.Second, "some load before the move", func() (bool, string) {
		return l.done.Load() > total/10 || l.errs.Load() > 0, fmt.Sprint(l.done.Load())
	})
	start := time.Now()
	move()
	t.Logf("the move took %v, %d ops done meanwhile", time.Since(start).Round(time.Millisecond), l.done.Load())
	l.finished.Wait()
	l.verify(t)
	c.WaitCheck(c.Nodes[0], 20*time.Second)
	out := mustSlotctl(t, time.Minute, "check", c.Nodes[0].Addr())
	if !strings.Contains(out, "[OK] All 16384 slots covered.") {
		t.Errorf("slotctl check after the move:\n%s", out)
	}
}

// TestSlotctlReshardUnderLoad moves a third of the slots with slotctl
// reshard while the load runs. It needs MIGRATE on the nodes.
func TestSlotctlReshardUnderLoad(t *testing.T) {
	if targetIsRedis() {
		t.Skip("slotctl is exercised against slotd here")
	}
	c := newCluster(t, 3)
	c.Create()
	a, b := c.Nodes[0], c.Nodes[1]
	reshardUnderLoad(t, c, func() {
		out := mustSlotctl(t, 5*time.Minute, "reshard", a.Addr(), "--from", a.ID(t), "--to", b.ID(t), "--slots", "5461",
			"--yes", "--parallel", "16", "--pipeline", "100")
		t.Logf("slotctl reshard:\n%s", tail(out, 1500))
	})
	owners := slotOwners(t, c.Nodes[2])
	for s := 0; s <= 5460; s++ {
		if owners[s] != b.Addr() {
			t.Fatalf("slot %d is served by %s, want %s", s, owners[s], b.Addr())
		}
	}
}

// TestSlotctlRebalanceAfterAddNode adds an empty master with slotctl
// add-node and rebalances onto it under load. It needs MIGRATE.
func TestSlotctlRebalanceAfterAddNode(t *testing.T) {
	if targetIsRedis() {
		t.Skip("slotctl is exercised against slotd here")
	}
	c := newCluster(t, 3)
	c.Create()
	nd := c.AddNode()
	mustSlotctl(t, time.Minute, "add-node", nd.Addr(), c.Nodes[0].Addr())
	c.WaitOK(15 * time.Second)
	reshardUnderLoad(t, c, func() {
		out := mustSlotctl(t, 5*time.Minute, "rebalance", c.Nodes[0].Addr(), "--use-empty-masters", "--yes", "--parallel", "64")
		t.Logf("slotctl rebalance:\n%s", tail(out, 1500))
	})
	counts := map[string]int{}
	for _, o := range slotOwners(t, c.Nodes[0]) {
		counts[o]++
	}
	for _, n := range c.Nodes {
		if got := counts[n.Addr()]; got < 4000 || got > 4200 {
			t.Errorf("%s serves %d slots after the rebalance", n.Addr(), got)
		}
	}
}

// TestSlotctlMovesBigKeysInChunks reshards slots holding only large
// collections, which slotctl moves with SLOTD.MIGRATE (no MIGRATE call is
// needed), and checks their contents on the new owner.
func TestSlotctlMovesBigKeysInChunks(t *testing.T) {
	if targetIsRedis() {
		t.Skip("SLOTD.MIGRATE is slotd's")
	}
	c := newCluster(t, 3)
	c.Create()
	a, b := c.Nodes[0], c.Nodes[1]
	ctx := context.Background()
	ac := redis.NewClient(&redis.Options{Addr: a.Addr()})
	defer ac.Close()
	var keys []string
	for _, s := range []int{0, 100, 5460} {
		k := "{" + tagForSlot(s) + "}"
		keys = append(keys, k+"z", k+"h", k+"l")
		for i := 0; i < 5000; i += 500 {
			var zs []redis.Z
			var hs, ls []any
			for j := i; j < i+500; j++ {
				zs = append(zs, redis.Z{Score: float64(j) / 7, Member: "m" + strconv.Itoa(j)})
				hs = append(hs, "f"+strconv.Itoa(j), "v"+strconv.Itoa(j))
				ls = append(ls, "e"+strconv.Itoa(j))
			}
			ac.ZAdd(ctx, k+"z", zs...)
			ac.HSet(ctx, k+"h", hs...)
			ac.RPush(ctx, k+"l", ls...)
		}
		ac.PExpire(ctx, k+"z", time.Hour)
	}
	out := mustSlotctl(t, 2*time.Minute, "reshard", a.Addr(), "--from", a.ID(t), "--to", b.ID(t), "--slots", "5461",
		"--yes", "--big-key", "1000", "--chunk", "300", "--parallel", "64")
	if !strings.Contains(out, "9 keys (9 in chunks)") {
		t.Errorf("slotctl reshard output:\n%s", out)
	}
	bc := redis.NewClient(&redis.Options{Addr: b.Addr()})
	defer bc.Close()
	for _, k := range keys {
		switch k[len(k)-1] {
		case 'z':
			if n, err := bc.ZCard(ctx, k).Result(); n != 5000 || err != nil {
				t.Errorf("ZCARD %s = %d, %v", k, n, err)
			}
			if s, _ := bc.ZScore(ctx, k, "m4999").Result(); s != 4999.0/7 {
				t.Errorf("ZSCORE %s m4999 = %v", k, s)
			}
			if ttl, _ := bc.PTTL(ctx, k).Result(); ttl <= 0 {
				t.Errorf("PTTL %s = %v", k, ttl)
			}
		case 'h':
			if v, _ := bc.HGet(ctx, k, "f1234").Result(); v != "v1234" {
				t.Errorf("HGET %s = %q", k, v)
			}
		case 'l':
			got, _ := bc.LRange(ctx, k, 0, -1).Result()
			if len(got) != 5000 || got[0] != "e0" || got[4999] != "e4999" {
				t.Errorf("LRANGE %s: %d elements", k, len(got))
			}
		}
		if n, _ := ac.Exists(ctx, k).Result(); n != 0 {
			t.Errorf("%s still on the source", k)
		}
	}
}

// TestSlotctlFixAndResume leaves slots as an interrupted run would (after
// each step of the per-slot protocol) and checks that slotctl fix rolls
// back a move that moved nothing, finishes one that reached the target,
// and that a rerun of reshard finishes what is open before planning.
func TestSlotctlFixAndResume(t *testing.T) {
	if targetIsRedis() {
		t.Skip("slotctl is exercised against slotd here")
	}
	c := newCluster(t, 3)
	c.Create()
	a, b, o := c.Nodes[0], c.Nodes[1], c.Nodes[2]
	ida, idb := a.ID(t), b.ID(t)
	// Slot 1: opened on both, nothing moved -> rolled back.
	mustCmd(t, b.Addr(), "CLUSTER", "SETSLOT", "1", "IMPORTING", ida)
	mustCmd(t, a.Addr(), "CLUSTER", "SETSLOT", "1", "MIGRATING", idb)
	// Slot 2: importing only -> mark cleared.
	mustCmd(t, b.Addr(), "CLUSTER", "SETSLOT", "2", "IMPORTING", ida)
	// Slot 3: interrupted after SETSLOT NODE on the target -> finished
	// (or, once gossip has told the source, its stale mark cleared).
	mustCmd(t, b.Addr(), "CLUSTER", "SETSLOT", "3", "IMPORTING", ida)
	mustCmd(t, a.Addr(), "CLUSTER", "SETSLOT", "3", "MIGRATING", idb)
	mustCmd(t, b.Addr(), "CLUSTER", "SETSLOT", "3", "NODE", idb)

	out, _ := slotctl(t, time.Minute, "check", a.Addr())
	if !strings.Contains(out, "open") {
		t.Fatalf("slotctl check does not see the open slots:\n%s", out)
	}
	dry := mustSlotctl(t, time.Minute, "fix", a.Addr(), "--dry-run")
	for _, want := range []string{"Slot 1: rollback", "Slot 2: clear", "Slot 3: "} {
		if !strings.Contains(dry, want) {
			t.Errorf("fix --dry-run lacks %q:\n%s", want, dry)
		}
	}
	mustSlotctl(t, time.Minute, "fix", a.Addr(), "--yes")
	waitFor(t, 20*time.Second, "slots 1-3 settled on every node", func() (bool, string) {
		for _, nd := range []*clusterNode{a, b, o} {
			my := nd.Myself(t)
			for _, s := range my.Slots {
				if strings.HasPrefix(s, "[") {
					return false, nd.Addr() + " still has " + s
				}
			}
			owners := slotOwners(t, nd)
			if owners[1] != a.Addr() || owners[2] != a.Addr() || owners[3] != b.Addr() {
				return false, fmt.Sprintf("%s: owners %s %s %s", nd.Addr(), owners[1], owners[2], owners[3])
			}
		}
		return true, ""
	})

	// Resume: a slot opened on both, then a rerun of reshard finishes it
	// (towards its target) before moving what it was asked.
	mustCmd(t, b.Addr(), "CLUSTER", "SETSLOT", "4", "IMPORTING", ida)
	mustCmd(t, a.Addr(), "CLUSTER", "SETSLOT", "4", "MIGRATING", idb)
	out = mustSlotctl(t, time.Minute, "reshard", a.Addr(), "--from", ida, "--to", o.ID(t), "--slots", "10", "--yes")
	if !strings.Contains(out, "Finishing 1 open slot") {
		t.Errorf("reshard did not finish the open slot first:\n%s", out)
	}
	waitFor(t, 20*time.Second, "slot 4 on B and ten slots on C", func() (bool, string) {
		owners := slotOwners(t, o)
		if owners[4] != b.Addr() {
			return false, "slot 4 on " + owners[4]
		}
		n := 0
		for s := 0; s < slots.Count; s++ {
			if owners[s] == o.Addr() {
				n++
			}
		}
		return n == 5461+10, fmt.Sprintf("C serves %d slots", n)
	})
}

// TestSlotctlDrainDryRun checks the plan of a drain and that --dry-run
// moves nothing.
func TestSlotctlDrainDryRun(t *testing.T) {
	if targetIsRedis() {
		t.Skip("slotctl is exercised against slotd here")
	}
	c := newCluster(t, 3)
	c.Create()
	a := c.Nodes[0]
	out := mustSlotctl(t, time.Minute, "drain", a.Addr(), a.ID(t), "--dry-run")
	for _, want := range []string{"Plan (drain): 5461 slots to move", "-> 0", "Dry run: nothing moved."} {
		if !strings.Contains(out, want) {
			t.Errorf("drain --dry-run lacks %q:\n%s", want, out)
		}
	}
	if owners := slotOwners(t, c.Nodes[1]); owners[0] != a.Addr() {
		t.Errorf("dry run moved slot 0 to %s", owners[0])
	}
}
