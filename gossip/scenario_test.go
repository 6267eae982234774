package gossip_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/slotd/slotd/gossip"
	"github.com/slotd/slotd/gossip/gossiptest"
	"github.com/slotd/slotd/slots"
)

// newHub makes a hub from a fresh seed (or SEED in the test name's log) and
// logs the seed so a failing schedule can be replayed.
func newHub(t *testing.T) *gossiptest.Hub {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("GOSSIP_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (replay with GOSSIP_SEED=%d)", seed, seed)
	h := gossiptest.New(seed)
	return h
}

// slotted gives the members consecutive slot ranges and distinct config
// epochs 1..n, as redis-cli --cluster create does.
func slotted(t *testing.T, h *gossiptest.Hub, members []int, epochs bool) {
	t.Helper()
	n := len(members)
	for k, i := range members {
		var list []int
		for j := k * slots.Count / n; j < (k+1)*slots.Count/n; j++ {
			list = append(list, j)
		}
		do(t, h, i)(h.Members[i].State.AddSlots(h.Now, list))
		if epochs {
			do(t, h, i)(h.Members[i].State.SetConfigEpoch(h.Now, uint64(k+1)))
		}
	}
}

// do applies a command's outputs on member i, failing the test on error:
// do(t, h, i)(state.AddSlots(...)).
func do(t *testing.T, h *gossiptest.Hub, i int) func([]gossip.Output, error) {
	return func(outs []gossip.Output, err error) {
		t.Helper()
		must(t, err)
		h.Apply(i, outs)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func meetChain(h *gossiptest.Hub, members []int) {
	for k := 0; k+1 < len(members); k++ {
		a, b := h.Members[members[k]], h.Members[members[k+1]]
		h.Apply(a.Index, a.State.Meet(h.Now, b.Addr.IP, b.State.Myself.Port, b.Addr.CPort))
	}
}

// converged: every live member knows exactly the live members, none of them
// failing, and all agree on every slot's owner.
func converged(h *gossiptest.Hub) bool { return convergedErr(h) == nil }

func convergedErr(h *gossiptest.Hub) error {
	var live []*gossiptest.Member
	for _, m := range h.Members {
		if !m.Down {
			live = append(live, m)
		}
	}
	for _, m := range live {
		s := m.State
		if len(s.Nodes) != len(live) {
			return fmt.Errorf("n%d knows %d nodes, want %d", m.Index, len(s.Nodes), len(live))
		}
		for _, o := range live {
			n := s.Nodes[o.State.Myself.ID]
			if n == nil || n.InHandshake() || n.Failing() {
				return fmt.Errorf("n%d: node n%d missing or failing (%v)", m.Index, o.Index, n)
			}
		}
		if s.Owner != live[0].State.Owner {
			return fmt.Errorf("n%d disagrees with n%d on slot owners", m.Index, live[0].Index)
		}
	}
	return nil
}

func allOK(h *gossiptest.Hub) bool {
	for _, m := range h.Members {
		if !m.Down && m.State.Status != gossip.ClusterOK {
			return false
		}
	}
	return true
}

func hasEvent(m *gossiptest.Member, k gossip.EventKind, about gossip.NodeID) bool {
	for _, e := range m.Events {
		if e.Kind == k && (about == "" || e.Node == about) {
			return true
		}
	}
	return false
}

func TestSixNodesConverge(t *testing.T) {
	h := newHub(t)
	ids := h.Add(6, 15000)
	slotted(t, h, ids, true)
	meetChain(h, ids)
	start := h.Now
	if !h.RunUntil(60_000, func() bool { return converged(h) && allOK(h) }) {
		t.Fatalf("seed %d: not converged after 60 s: %v", h.Seed, convergedErr(h))
	}
	t.Logf("6 nodes converged in %d ms simulated", h.Now-start)
	b0, r0 := h.Bytes, h.RedisBytes
	h.Run(60_000)
	t.Logf("6 nodes steady state: %.0f bytes/node/s (Redis's format: %.0f)",
		float64(h.Bytes-b0)/6/60, float64(h.RedisBytes-r0)/6/60)
	if err := convergedErr(h); err != nil {
		t.Fatalf("seed %d: %v", h.Seed, err)
	}
	for _, m := range h.Members {
		for _, id := range ids {
			want := h.Members[id].State.Myself.ConfigEpoch
			if got := m.State.Nodes[h.ID(id)].ConfigEpoch; got != want {
				t.Errorf("seed %d: n%d sees n%d epoch %d want %d", h.Seed, m.Index, id, got, want)
			}
		}
	}
}

func TestHundredNodesConverge(t *testing.T) {
	if testing.Short() {
		t.Skip("long simulation")
	}
	h := newHub(t)
	ids := h.Add(100, 15000)
	slotted(t, h, ids, true)
	meetChain(h, ids)
	start, ticks0, bytes0 := h.Now, h.Ticks(), h.Bytes
	if !h.RunUntil(300_000, func() bool { return converged(h) }) {
		t.Fatalf("seed %d: 100 nodes not converged after 300 s: %v", h.Seed, convergedErr(h))
	}
	dt := h.Now - start
	t.Logf("100 nodes converged in %d ms simulated, %d ticks, %d frames; bus %.0f bytes/node/s while converging",
		dt, h.Ticks()-ticks0, h.Frames, float64(h.Bytes-bytes0)/100/(float64(dt)/1000))
	// Steady state: a minute of a quiet converged cluster.
	b0, f0, r0 := h.Bytes, h.Frames, h.RedisBytes
	h.Run(60_000)
	if err := convergedErr(h); err != nil {
		t.Fatalf("seed %d: diverged in steady state: %v", h.Seed, err)
	}
	if !allOK(h) {
		t.Fatalf("seed %d: cluster not ok", h.Seed)
	}
	bps := float64(h.Bytes-b0) / 100 / 60
	t.Logf("steady state: %.0f bytes/node/s, %.1f frames/node/s, %.0f bytes/frame; the same messages in Redis's format: %.0f bytes/node/s",
		bps, float64(h.Frames-f0)/100/60, float64(h.Bytes-b0)/float64(h.Frames-f0), float64(h.RedisBytes-r0)/100/60)
	if h.MaxFrame > 1400 {
		t.Errorf("seed %d: largest frame %d bytes does not fit a memberlist UDP packet", h.Seed, h.MaxFrame)
	}
	t.Logf("largest frame: %d bytes", h.MaxFrame)
	if bps > 20_000 {
		t.Errorf("seed %d: bus cost %.0f bytes/node/s is above the 20 KB/s budget", h.Seed, bps)
	}
}

func TestMinorityNeverFailsMajority(t *testing.T) {
	h := newHub(t)
	ids := h.Add(5, 2000)
	slotted(t, h, ids, true)
	meetChain(h, ids)
	if !h.RunUntil(30_000, func() bool { return converged(h) && allOK(h) }) {
		t.Fatalf("seed %d: %v", h.Seed, convergedErr(h))
	}
	h.Partition([]int{0, 1}, []int{2, 3, 4})
	h.Run(20_000)
	for _, i := range []int{0, 1} {
		m := h.Members[i]
		for _, j := range []int{2, 3, 4} {
			if hasEvent(m, gossip.EventFail, h.ID(j)) || m.State.Nodes[h.ID(j)].Flags&gossip.FlagFail != 0 {
				t.Fatalf("seed %d: minority n%d marked n%d FAIL", h.Seed, i, j)
			}
			if m.State.Nodes[h.ID(j)].Flags&gossip.FlagPFail == 0 {
				t.Fatalf("seed %d: n%d should see n%d PFAIL", h.Seed, i, j)
			}
		}
		if m.State.Status != gossip.ClusterFail {
			t.Fatalf("seed %d: minority n%d still says ok", h.Seed, i)
		}
	}
	for _, j := range []int{2, 3, 4} {
		for _, i := range []int{0, 1} {
			if h.Members[j].State.Nodes[h.ID(i)].Flags&gossip.FlagFail == 0 {
				t.Fatalf("seed %d: majority n%d did not mark n%d FAIL", h.Seed, j, i)
			}
		}
	}
	h.Heal()
	if !h.RunUntil(30_000, func() bool { return converged(h) && allOK(h) }) {
		t.Fatalf("seed %d: no recovery after heal: %v", h.Seed, convergedErr(h))
	}
}

func TestFailNeedsMajority(t *testing.T) {
	h := newHub(t)
	ids := h.Add(5, 2000)
	slotted(t, h, ids, true)
	meetChain(h, ids)
	if !h.RunUntil(30_000, func() bool { return converged(h) && allOK(h) }) {
		t.Fatalf("seed %d: %v", h.Seed, convergedErr(h))
	}
	dead := h.ID(4)
	h.Kill(4)
	h.Partition([]int{0, 1}, []int{2, 3}, []int{4})
	h.Run(15_000)
	for i := 0; i < 4; i++ {
		n := h.Members[i].State.Nodes[dead]
		if n.Flags&gossip.FlagFail != 0 {
			t.Fatalf("seed %d: n%d marked FAIL with only 2 of 5 masters", h.Seed, i)
		}
		if n.Flags&gossip.FlagPFail == 0 {
			t.Fatalf("seed %d: n%d does not even see PFAIL", h.Seed, i)
		}
	}
	h.Partition([]int{0, 1, 2, 3}, []int{4})
	failAt := h.Now
	ok := h.RunUntil(10_000, func() bool {
		for i := 0; i < 4; i++ {
			if h.Members[i].State.Nodes[dead].Flags&gossip.FlagFail == 0 {
				return false
			}
		}
		return true
	})
	if !ok {
		t.Fatalf("seed %d: 4 of 5 masters did not agree on FAIL", h.Seed)
	}
	t.Logf("FAIL agreed %d ms after the majority could talk", h.Now-failAt)
}

func TestEpochCollisionResolves(t *testing.T) {
	h := newHub(t)
	ids := h.Add(6, 15000)
	slotted(t, h, ids, false) // every master at config epoch 0
	meetChain(h, ids)
	distinct := func() bool {
		seen := map[uint64]bool{}
		for _, m := range h.Members {
			e := m.State.Myself.ConfigEpoch
			if seen[e] {
				return false
			}
			seen[e] = true
		}
		return true
	}
	if !h.RunUntil(120_000, func() bool { return converged(h) && distinct() }) {
		t.Fatalf("seed %d: epochs not distinct: converged=%v", h.Seed, convergedErr(h))
	}
	for _, m := range h.Members {
		if m.State.CurrentEpoch < m.State.Myself.ConfigEpoch {
			t.Fatalf("seed %d: currentEpoch below config epoch on n%d", h.Seed, m.Index)
		}
	}
}

func TestEpochCollisionSmallerIDBumps(t *testing.T) {
	h := newHub(t)
	ids := h.Add(2, 15000)
	slotted(t, h, ids, false)
	for _, i := range ids {
		do(t, h, i)(h.Members[i].State.SetConfigEpoch(h.Now, 7))
	}
	meetChain(h, ids)
	if !h.RunUntil(30_000, func() bool {
		return converged(h) && h.Members[0].State.Myself.ConfigEpoch != h.Members[1].State.Myself.ConfigEpoch
	}) {
		t.Fatalf("seed %d: no resolution", h.Seed)
	}
	small, big := h.Members[0], h.Members[1]
	if big.State.Myself.ID < small.State.Myself.ID {
		small, big = big, small
	}
	if big.State.Myself.ConfigEpoch != 7 || small.State.Myself.ConfigEpoch != 8 {
		t.Fatalf("seed %d: smaller id has epoch %d, bigger %d; want 8 and 7", h.Seed,
			small.State.Myself.ConfigEpoch, big.State.Myself.ConfigEpoch)
	}
	if !hasEvent(small, gossip.EventEpochCollision, "") || hasEvent(big, gossip.EventEpochCollision, "") {
		t.Fatalf("seed %d: collision event on the wrong node", h.Seed)
	}
}

func TestUpdateCorrectsStaleOwner(t *testing.T) {
	h := newHub(t)
	ids := h.Add(3, 2000)
	slotted(t, h, ids, true)
	meetChain(h, ids)
	if !h.RunUntil(30_000, func() bool { return converged(h) && allOK(h) }) {
		t.Fatalf("seed %d: %v", h.Seed, convergedErr(h))
	}
	a, b := h.Members[0], h.Members[1]
	// While A is cut off, B takes slot 0 from it with a newer epoch.
	h.Partition([]int{0}, []int{1, 2})
	do(t, h, 1)(b.State.SetSlotNode(h.Now, 0, b.State.Myself.ID))
	_, bumped, _ := b.State.BumpEpoch(h.Now)
	if !bumped {
		t.Fatalf("B did not bump")
	}
	if !h.RunUntil(5000, func() bool { return h.Members[2].State.Owner[0] == b.State.Myself.ID }) {
		t.Fatalf("seed %d: C did not learn B's claim", h.Seed)
	}
	// A can hear only C, whose own pongs say nothing of slot 0: only an
	// UPDATE from C can correct A.
	h.Heal()
	h.Drop(1, 0, 100)
	if !h.RunUntil(20_000, func() bool { return a.State.Owner[0] == b.State.Myself.ID }) {
		t.Fatalf("seed %d: A still thinks it owns slot 0", h.Seed)
	}
	if a.State.Stats.Received[gossip.TypeUpdate] == 0 {
		t.Fatalf("seed %d: A was corrected without an UPDATE", h.Seed)
	}
	if !a.Lost.Has(0) || a.Lost.Count() != 1 {
		t.Fatalf("seed %d: A should drop the keys of slot 0 only, lost %v", h.Seed, a.Lost.Ranges())
	}
	if a.State.Myself.IsReplica() {
		t.Fatalf("A still has other slots and must stay a master")
	}
}

func TestForgetHolds60s(t *testing.T) {
	h := newHub(t)
	ids := h.Add(4, 2000)
	slotted(t, h, ids[:3], true)
	meetChain(h, ids)
	if !h.RunUntil(30_000, func() bool { return converged(h) && allOK(h) }) {
		t.Fatalf("seed %d: %v", h.Seed, convergedErr(h))
	}
	gone := h.ID(3)
	m0 := h.Members[0]
	do(t, h, 0)(m0.State.Forget(h.Now, gone))
	forgotAt := h.Now
	back := h.RunUntil(gossip.ForgetBan-200, func() bool { _, ok := m0.State.Nodes[gone]; return ok })
	if back {
		t.Fatalf("seed %d: forgotten node back after %d ms", h.Seed, h.Now-forgotAt)
	}
	// Others still gossip about it: once the ban expires it returns.
	if !h.RunUntil(30_000, func() bool { return converged(h) }) {
		t.Fatalf("seed %d: node did not come back after the ban: %v", h.Seed, convergedErr(h))
	}
	if h.Now-forgotAt < gossip.ForgetBan {
		t.Fatalf("back too early")
	}
	if _, err := m0.State.Forget(h.Now, m0.State.Myself.ID); err != gossip.ErrForgetMyself {
		t.Fatalf("forget myself: %v", err)
	}
}

func TestRestartRejoinsWithSameSlots(t *testing.T) {
	h := newHub(t)
	h.Latency, h.Jitter = 5, 30
	ids := h.Add(6, 2000)
	slotted(t, h, ids, true)
	meetChain(h, ids)
	if !h.RunUntil(30_000, func() bool { return converged(h) && allOK(h) }) {
		t.Fatalf("seed %d: %v", h.Seed, convergedErr(h))
	}
	m := h.Members[2]
	id, epoch, owned := m.State.Myself.ID, m.State.Myself.ConfigEpoch, m.State.Myself.Slots
	h.Kill(2)
	h.Run(10_000)
	if !hasEvent(h.Members[0], gossip.EventFail, id) {
		t.Fatalf("seed %d: the dead node was not marked FAIL", h.Seed)
	}
	must(t, h.Restart(2))
	if m.State.Myself.ID != id || m.State.Myself.ConfigEpoch != epoch || m.State.Myself.Slots != owned {
		t.Fatalf("seed %d: reloaded state differs", h.Seed)
	}
	if !h.RunUntil(30_000, func() bool { return converged(h) && allOK(h) }) {
		t.Fatalf("seed %d: restarted node did not rejoin: %v", h.Seed, convergedErr(h))
	}
	for _, o := range h.Members {
		if o.State.Nodes[id].Slots != owned {
			t.Fatalf("seed %d: n%d sees other slots for the restarted node", h.Seed, o.Index)
		}
	}
}

func TestMeetSurvivesLoss(t *testing.T) {
	h := newHub(t)
	ids := h.Add(3, 5000)
	slotted(t, h, ids, true)
	for a := range ids {
		for b := range ids {
			if a != b {
				h.Drop(a, b, 30)
			}
		}
	}
	meetChain(h, ids)
	if os.Getenv("GOSSIP_DEBUG") != "" {
		h.Logf = t.Logf
	}
	if !h.RunUntil(60_000, func() bool { return converged(h) }) {
		t.Fatalf("seed %d: lossy cluster did not converge: %v", h.Seed, convergedErr(h))
	}
}
