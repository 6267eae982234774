package ctl

import (
	"context"
	"errors"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotd/slotd/slots"
)

// TestBinaryCreateAndCheck runs the built slotctl: create three masters,
// then check with slotctl and with the unmodified redis-cli.
func TestBinaryCreateAndCheck(t *testing.T) {
	bin := slotctlBinary(t)
	ns := startNodes(t, 3)
	args := append([]string{"create"}, addrsOf(ns)...)
	args = append(args, "--yes", "--timeout", "5s", "--wait", "30s")
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("slotctl create: %v\n%s", err, out)
	}
	for _, want := range []string{
		"Master[0] -> Slots 0 - 5460",
		"[OK] All nodes agree about slots configuration.",
		"[OK] All 16384 slots covered.",
		"[OK] cluster_state:ok on all 3 nodes.",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("create output lacks %q:\n%s", want, out)
		}
	}

	out, err = exec.Command(bin, "check", ns[1].Addr()).CombinedOutput()
	if err != nil {
		t.Fatalf("slotctl check: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "[OK] All nodes agree about slots configuration.") {
		t.Errorf("check output:\n%s", out)
	}
	if cli, ok := redisCliCheck(t, ns[2].Addr()); !ok ||
		!strings.Contains(cli, "[OK] All nodes agree about slots configuration.") ||
		!strings.Contains(cli, "[OK] All 16384 slots covered.") {
		t.Errorf("redis-cli --cluster check (ok=%v):\n%s", ok, cli)
	}

	// Each node owns exactly the planned range, in its own view.
	want := []string{"0-5460", "5461-10922", "10923-16383"}
	for i, n := range ns {
		view, err := ParseNodes(nodeCmd(t, n.Addr(), "CLUSTER", "NODES").(string))
		if err != nil {
			t.Fatal(err)
		}
		if me := Myself(view); !reflect.DeepEqual(me.SlotTokens, []string{want[i]}) {
			t.Errorf("%s owns %v, want %s", n.Addr(), me.SlotTokens, want[i])
		}
	}

	// A broken cluster makes check exit 1 and say why.
	nodeCmd(t, ns[0].Addr(), "CLUSTER", "DELSLOTS", "0")
	out, err = exec.Command(bin, "check", ns[0].Addr()).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("check on an uncovered slot: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "[ERR] Not all 16384 slots are covered by nodes") {
		t.Errorf("check output:\n%s", out)
	}

	// Usage errors exit 2; an unreachable node exits 1 and is named.
	if err := exec.Command(bin, "check").Run(); !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("check without address: %v", err)
	}
	dead := "127.0.0.1:" + strconv.Itoa(reservePort(t))
	out, err = exec.Command(bin, "info", dead, "--timeout", "1s").CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "node "+dead+": PING") {
		t.Errorf("info on a dead node: %v\n%s", err, out)
	}
}

// TestBinaryConfirm: without --yes, create acts only after "yes".
func TestBinaryConfirm(t *testing.T) {
	bin := slotctlBinary(t)
	ns := startNodes(t, 3)
	cmd := exec.Command(bin, append([]string{"create"}, addrsOf(ns)...)...)
	cmd.Stdin = strings.NewReader("no\n")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "type 'yes' to accept") || !strings.Contains(string(out), "aborted") {
		t.Fatalf("declined create: %v\n%s", err, out)
	}
	// Nothing changed: still no slots anywhere.
	ci := nodeCmd(t, ns[0].Addr(), "CLUSTER", "INFO").(string)
	if !strings.Contains(ci, "cluster_slots_assigned:0") {
		t.Errorf("declined create changed the node:\n%s", ci)
	}
	cmd = exec.Command(bin, append([]string{"create", "--wait", "30s"}, addrsOf(ns)...)...)
	cmd.Stdin = strings.NewReader("yes\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("accepted create: %v\n%s", err, out)
	}
}

func TestCreateSixMasters(t *testing.T) {
	ns := createCluster(t, 6, 0)
	o, out := testOptions(t)
	res, err := Check(context.Background(), ns[3].Addr(), o)
	if err != nil || !res.OK() {
		t.Fatalf("check: %v %+v\n%s", err, res, out)
	}
	if cli, ok := redisCliCheck(t, ns[0].Addr()); !ok || !strings.Contains(cli, "[OK] All 16384 slots covered.") {
		t.Errorf("redis-cli --cluster check (ok=%v):\n%s", ok, cli)
	}
	info, err := Info(context.Background(), ns[0].Addr(), o)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{2731, 2730, 2731, 2731, 2730, 2731}
	if len(info.Masters) != 6 || info.Slots != slots.Count {
		t.Fatalf("info: %+v", info)
	}
	for i, m := range info.Masters {
		if m.Slots != want[i] || m.Replicas != 0 || m.Addr != ns[i].Addr() {
			t.Errorf("master %d: %+v, want %d slots at %s", i, m, want[i], ns[i].Addr())
		}
	}
}

func TestCreateWithReplicas(t *testing.T) {
	ns := createCluster(t, 3, 1)
	o, out := testOptions(t)
	c, err := Load(context.Background(), ns[0].Addr(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	masters := c.Masters()
	if len(masters) != 3 {
		t.Fatalf("%d masters", len(masters))
	}
	for i, m := range masters {
		if m.Addr != ns[i].Addr() {
			t.Errorf("master %d is %s, want %s", i, m.Addr, ns[i].Addr())
		}
		reps := c.ReplicasOf(m.ID)
		if len(reps) != 1 || reps[0].Addr != ns[3+i].Addr() {
			t.Errorf("master %s replicas %v, want %s", m.Addr, reps, ns[3+i].Addr())
		}
		// The replica agrees, in its own words.
		if len(reps) == 1 {
			role := nodeCmd(t, reps[0].Addr, "ROLE").([]any)
			if role[0] != "slave" {
				t.Errorf("ROLE of %s: %v", reps[0].Addr, role)
			}
		}
	}
	info, err := c.Info(context.Background(), NewReporter(o))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range info.Masters {
		if m.Replicas != 1 {
			t.Errorf("info: %+v\n%s", m, out)
		}
	}
	if cli, ok := redisCliCheck(t, ns[4].Addr()); !ok || !strings.Contains(cli, "1 additional replica(s)") {
		t.Errorf("redis-cli --cluster check (ok=%v):\n%s", ok, cli)
	}
}

func TestInfoCountsKeys(t *testing.T) {
	ns := createCluster(t, 3, 0)
	extra := startNodes(t, 3)
	ctx := context.Background()
	o, out := testOptions(t)

	// A node of another cluster cannot be used to create one.
	_, err := Create(ctx, []string{extra[0].Addr(), extra[2].Addr(), ns[0].Addr()}, 0, o)
	if err == nil || !strings.Contains(err.Error(), "node "+ns[0].Addr()+": CLUSTER INFO") || !strings.Contains(err.Error(), "cluster_known_nodes:3") {
		t.Errorf("create with a clustered node: %v", err)
	}

	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrsOf(ns)})
	defer cc.Close()
	perSlotOwner := make([]int64, 3)
	bounds := []int{5460, 10922, 16383}
	for i := 0; i < 300; i++ {
		k := "key:" + strconv.Itoa(i)
		if err := cc.Set(ctx, k, i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		s := slots.OfString(k)
		for j, b := range bounds {
			if s <= b {
				perSlotOwner[j]++
				break
			}
		}
	}
	info, err := Info(ctx, ns[1].Addr(), o)
	if err != nil {
		t.Fatal(err)
	}
	if info.Keys != 300 {
		t.Errorf("total keys %d, want 300\n%s", info.Keys, out)
	}
	for i, m := range info.Masters {
		if m.Keys != perSlotOwner[i] {
			t.Errorf("master %s: %d keys, want %d", m.Addr, m.Keys, perSlotOwner[i])
		}
	}
	if !strings.Contains(out.String(), "[OK] 300 keys in 3 masters") {
		t.Errorf("info output:\n%s", out)
	}

	// Nor can a node that holds keys.
	// (A node without slots refuses writes: own the key's slot for the
	// write, then give it up; the key stays.)
	xs := strconv.Itoa(slots.OfString("x"))
	nodeCmd(t, extra[1].Addr(), "CONFIG", "SET", "cluster-require-full-coverage", "no")
	nodeCmd(t, extra[1].Addr(), "CLUSTER", "ADDSLOTS", xs)
	// The node serves the slot once its cluster state turns ok (after a
	// rejoin delay).
	c1, err := Dial(ctx, extra[1].Addr(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if err := c1.OK(ctx, "SET", "x", "1"); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	nodeCmd(t, extra[1].Addr(), "CLUSTER", "DELSLOTS", xs)
	_, err = Create(ctx, addrsOf(extra), 0, o)
	if err == nil || !strings.Contains(err.Error(), "node "+extra[1].Addr()+": INFO") || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("create with a non-empty node: %v", err)
	}
}

func TestAddAndDelNode(t *testing.T) {
	ns := createCluster(t, 3, 0)
	extra := startNodes(t, 2)
	ctx := context.Background()
	o, out := testOptions(t)

	masterID := nodeCmd(t, ns[0].Addr(), "CLUSTER", "MYID").(string)
	newMaster, err := AddNode(ctx, extra[0].Addr(), ns[1].Addr(), "", o)
	if err != nil {
		t.Fatalf("add-node: %v\n%s", err, out)
	}
	newReplica, err := AddNode(ctx, extra[1].Addr(), ns[2].Addr(), masterID[:10], o)
	if err != nil {
		t.Fatalf("add-node --replica-of: %v\n%s", err, out)
	}
	info, err := Info(ctx, ns[0].Addr(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Masters) != 4 || info.Masters[0].Replicas != 1 || info.Masters[3].ID != newMaster || info.Masters[3].Slots != 0 {
		t.Fatalf("info after add-node: %+v\n%s", info, out)
	}
	if res, err := Check(ctx, extra[1].Addr(), o); err != nil || !res.OK() {
		t.Fatalf("check after add-node: %v %+v\n%s", err, res, out)
	}
	if cli, ok := redisCliCheck(t, extra[0].Addr()); !ok {
		t.Errorf("redis-cli --cluster check after add-node:\n%s", cli)
	}

	// A slot owner is refused and nothing is sent.
	err = DelNode(ctx, ns[0].Addr(), masterID, false, o)
	if err == nil || !strings.Contains(err.Error(), "still owns 5461 slots") {
		t.Fatalf("del-node of a slot owner: %v", err)
	}
	// Unknown id.
	if err := DelNode(ctx, ns[0].Addr(), "ffffffffff", false, o); err == nil || !strings.Contains(err.Error(), "no node with id") {
		t.Errorf("del-node of an unknown id: %v", err)
	}

	if err := DelNode(ctx, ns[0].Addr(), newReplica, false, o); err != nil {
		t.Fatalf("del-node replica: %v\n%s", err, out)
	}
	if err := DelNode(ctx, ns[1].Addr(), newMaster[:8], true, o); err != nil {
		t.Fatalf("del-node --shutdown: %v\n%s", err, out)
	}
	if !extra[0].exited(5 * time.Second) {
		t.Error("del-node --shutdown: the node still runs")
	}
	// The removed replica was reset: it knows only itself again.
	if ci := nodeCmd(t, extra[1].Addr(), "CLUSTER", "INFO").(string); !strings.Contains(ci, "cluster_known_nodes:1\r") {
		t.Errorf("removed node not reset:\n%s", ci)
	}
	// Wait past a few gossip rounds: nobody brings the removed nodes back.
	time.Sleep(1500 * time.Millisecond)
	for _, n := range ns {
		nodes := nodeCmd(t, n.Addr(), "CLUSTER", "NODES").(string)
		if strings.Contains(nodes, newMaster) || strings.Contains(nodes, newReplica) {
			t.Errorf("%s still knows a removed node:\n%s", n.Addr(), nodes)
		}
	}
	if res, err := Check(ctx, ns[2].Addr(), o); err != nil || !res.OK() {
		t.Fatalf("check after del-node: %v %+v\n%s", err, res, out)
	}
	if cli, ok := redisCliCheck(t, ns[0].Addr()); !ok || !strings.Contains(cli, "[OK] All 16384 slots covered.") {
		t.Errorf("redis-cli --cluster check after del-node:\n%s", cli)
	}
}

// TestDelNodeMovesReplicas: deleting a slotless master re-homes its replica
// first (a replica cannot forget its own master).
func TestDelNodeMovesReplicas(t *testing.T) {
	ns := createCluster(t, 3, 0)
	extra := startNodes(t, 2)
	ctx := context.Background()
	o, out := testOptions(t)
	m, err := AddNode(ctx, extra[0].Addr(), ns[0].Addr(), "", o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AddNode(ctx, extra[1].Addr(), ns[0].Addr(), m, o); err != nil {
		t.Fatal(err)
	}
	if err := DelNode(ctx, ns[0].Addr(), m, false, o); err != nil {
		t.Fatalf("del-node: %v\n%s", err, out)
	}
	c, err := Load(ctx, ns[0].Addr(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rep, err := c.Find(nodeCmd(t, extra[1].Addr(), "CLUSTER", "MYID").(string))
	if err != nil {
		t.Fatal(err)
	}
	if owner, err := c.Find(rep.Info().MasterID); err != nil || owner.Info().SlotCount() == 0 {
		t.Errorf("replica now follows %v (%v)", rep.Info().MasterID, err)
	}
}

func TestCheckFindsProblems(t *testing.T) {
	ns := createCluster(t, 3, 0)
	ctx := context.Background()
	o, out := testOptions(t)

	// An open slot: migrating on its owner.
	dst := nodeCmd(t, ns[1].Addr(), "CLUSTER", "MYID").(string)
	nodeCmd(t, ns[0].Addr(), "CLUSTER", "SETSLOT", "200", "MIGRATING", dst)
	res, err := Check(ctx, ns[0].Addr(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || !reflect.DeepEqual(res.OpenSlots, []int{200}) || !res.Agree || res.Uncovered != 0 {
		t.Errorf("migrating slot: %+v\n%s", res, out)
	}
	if !strings.Contains(out.String(), "[WARNING] Node "+ns[0].Addr()+" has slots in migrating state 200.") {
		t.Errorf("output:\n%s", out)
	}
	// And importing on the target, seen through another node.
	src := nodeCmd(t, ns[0].Addr(), "CLUSTER", "MYID").(string)
	nodeCmd(t, ns[1].Addr(), "CLUSTER", "SETSLOT", "200", "IMPORTING", src)
	if res, _ := Check(ctx, ns[2].Addr(), o); !reflect.DeepEqual(res.OpenSlots, []int{200}) ||
		!strings.Contains(out.String(), "has slots in importing state 200.") {
		t.Errorf("importing slot: %+v\n%s", res, out)
	}
	nodeCmd(t, ns[0].Addr(), "CLUSTER", "SETSLOT", "200", "STABLE")
	nodeCmd(t, ns[1].Addr(), "CLUSTER", "SETSLOT", "200", "STABLE")
	if res, _ := Check(ctx, ns[0].Addr(), o); !res.OK() {
		t.Errorf("after STABLE: %+v", res)
	}

	// An uncovered slot: its owner drops it; the others still list it
	// there, so the nodes also disagree.
	nodeCmd(t, ns[2].Addr(), "CLUSTER", "DELSLOTS", "16000")
	res, err = Check(ctx, ns[1].Addr(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || res.Uncovered != 1 || res.Agree {
		t.Errorf("uncovered slot: %+v\n%s", res, out)
	}
	if _, ok := redisCliCheck(t, ns[0].Addr()); ok {
		t.Error("redis-cli --cluster check passed a cluster with an uncovered slot")
	}

	// A node that is down is reported.
	ns[2].stop()
	res, err = Check(ctx, ns[0].Addr(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Unreachable) != 1 || res.Unreachable[0] != ns[2].Addr() {
		t.Errorf("stopped node: %+v\n%s", res, out)
	}
}

// TestPlanMatchesRedisCli: a cluster built by the unmodified redis-cli
// --cluster create has the slot ranges PlanCreate picks, and slotctl check
// accepts it.
func TestPlanMatchesRedisCli(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatal("redis-cli not found on PATH: install redis-tools (scripts/install-deps.sh)")
	}
	ns := startNodes(t, 6)
	args := append([]string{"--cluster", "create"}, addrsOf(ns)...)
	args = append(args, "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, stripANSI(string(out)))
	}
	plan, err := PlanCreate(addrsOf(ns), 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range ns {
		view, err := ParseNodes(nodeCmd(t, n.Addr(), "CLUSTER", "NODES").(string))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := Myself(view).Slots, []slots.Range{plan.Masters[i].Slots}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: redis-cli gave %v, plan says %v", n.Addr(), got, want)
		}
	}
	o, out := testOptions(t)
	o.Wait = 10 * time.Second
	// redis-cli returns once the slots agree; give gossip a moment to
	// settle every node before checking.
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := Check(context.Background(), ns[5].Addr(), o)
		if err == nil && res.OK() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("check of a redis-cli cluster: %v %+v\n%s", err, res, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestPassword: -a/--pass reaches every node; without it the error names
// the node and the refused command.
func TestPassword(t *testing.T) {
	ns := startNodes(t, 3)
	for _, n := range ns {
		nodeCmd(t, n.Addr(), "CONFIG", "SET", "requirepass", "s3cret")
	}
	ctx := context.Background()
	o, out := testOptions(t)
	_, err := Create(ctx, addrsOf(ns), 0, o)
	if err == nil || !strings.Contains(err.Error(), "node "+ns[0].Addr()+": PING") || !strings.Contains(err.Error(), "NOAUTH") {
		t.Fatalf("create without password: %v", err)
	}
	o.Password = "s3cret"
	res, err := Create(ctx, addrsOf(ns), 0, o)
	if err != nil || !res.OK() {
		t.Fatalf("create with password: %v %+v\n%s", err, res, out)
	}
	if _, err := Info(ctx, ns[2].Addr(), o); err != nil {
		t.Errorf("info with password: %v", err)
	}
}
