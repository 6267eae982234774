package gossip

import (
	"errors"
	"strings"
	"testing"
)

// exchange delivers every Send in outs addressed to one of the states and
// returns what they answered, for hand-driven tests without a hub.
func exchange(now int64, outs []Output, by map[Addr]*State) []Output {
	var next []Output
	for _, o := range outs {
		if snd, ok := o.(*Send); ok {
			if dst := by[snd.Addr]; dst != nil {
				m, _, err := ParseMessage(Encode(snd.Msg))
				if err != nil {
					panic(err)
				}
				next = append(next, dst.Step(now, snd.To, m)...)
			}
		}
	}
	return next
}

func sendsOf(outs []Output) []*Send {
	var s []*Send
	for _, o := range outs {
		if x, ok := o.(*Send); ok {
			s = append(s, x)
		}
	}
	return s
}

func TestHandshakeTemporaryID(t *testing.T) {
	seed := testSeed(t)
	a, b := newTestState(t, seed), newTestState(t, seed+1)
	b.Myself.IP = "10.0.0.2"
	b.Myself.CPort = 17001
	by := map[Addr]*State{a.Myself.Addr(): a, b.Myself.Addr(): b}
	outs := a.Meet(10, "10.0.0.2", 7000, 17001)
	if len(a.Nodes) != 2 {
		t.Fatal("no handshake node")
	}
	var hs *Node
	for _, n := range a.Nodes {
		if n != a.Myself {
			hs = n
		}
	}
	if !hs.InHandshake() || hs.ID == b.Myself.ID || !ValidID(string(hs.ID)) {
		t.Fatalf("seed %d: handshake node %+v", seed, hs)
	}
	if line := FormatClusterNodes(a); !strings.Contains(line, string(hs.ID)+" 10.0.0.2:7000@17001 handshake - 0 0 0 disconnected\n") {
		t.Fatalf("handshake line:\n%s", line)
	}
	s := sendsOf(outs)
	if len(s) != 1 || s[0].Msg.Type() != TypeMeet || s[0].To != hs.ID {
		t.Fatalf("want one MEET to the handshake node, got %v", outs)
	}
	replies := exchange(20, outs, by)
	if b.Nodes[a.Myself.ID] == nil {
		t.Fatal("B did not add the node that met it")
	}
	exchange(30, replies, by)
	if n := a.Nodes[b.Myself.ID]; n == nil || n.InHandshake() || !n.IsMaster() || n != hs {
		t.Fatalf("seed %d: handshake not completed: %v", seed, a.Nodes)
	}
	if len(a.Nodes) != 2 || a.Nodes[hs.ID] != hs {
		t.Fatal("temporary id left behind")
	}
}

func TestHandshakeTimesOut(t *testing.T) {
	s := newTestState(t, testSeed(t))
	s.Meet(10, "10.9.9.9", 7000, 17000)
	for now := int64(10); now < 10+3*1000+200; now += 100 {
		s.Tick(now)
	}
	if len(s.Nodes) != 1 {
		t.Fatalf("handshake to a dead address still there: %d nodes", len(s.Nodes))
	}
}

func TestPersistBeforeAnnounce(t *testing.T) {
	seed := testSeed(t)
	a, b := newTestState(t, seed), newTestState(t, seed+1)
	b.Myself.CPort = 17001
	by := map[Addr]*State{a.Myself.Addr(): a, b.Myself.Addr(): b}
	exchange(30, exchange(20, exchange(10, a.Meet(10, "10.0.0.1", 7000, 17001), by), by), by)
	a.SetConfigEpoch(0, 0)
	if a.Nodes[b.Myself.ID] == nil || b.Nodes[a.Myself.ID] == nil {
		t.Fatal("not met")
	}
	// Equal epochs: the smaller id must bump and persist before replying.
	small, big := a, b
	if big.Myself.ID < small.Myself.ID {
		small, big = big, small
	}
	small.Myself.ConfigEpoch, big.Myself.ConfigEpoch = 5, 5
	small.CurrentEpoch, big.CurrentEpoch = 5, 5
	ping := &Ping{Header: big.header()}
	outs := small.Step(100, big.Myself.ID, ping)
	persist, send := -1, -1
	for i, o := range outs {
		switch o.(type) {
		case *Persist:
			if persist < 0 {
				persist = i
			}
		case *Send:
			send = i
		}
	}
	if persist < 0 || send < 0 || persist > send {
		t.Fatalf("want Persist before the pong, got %#v", outs)
	}
	if small.Myself.ConfigEpoch != 6 || sendsOf(outs)[0].Msg.Hdr().ConfigEpoch != 6 {
		t.Fatal("pong does not carry the new epoch")
	}
}

func TestClusterStateCoverage(t *testing.T) {
	s := newTestState(t, testSeed(t))
	all := make([]int, 16384)
	for i := range all {
		all[i] = i
	}
	s.AddSlots(0, all[1:])
	s.Tick(3000)
	if s.Status != ClusterFail {
		t.Fatal("ok with slot 0 unassigned")
	}
	s.AddSlots(3100, all[:1])
	s.Tick(3200)
	if s.Status != ClusterOK {
		t.Fatal("not ok with full coverage")
	}
	s.DelSlots(3300, []int{5})
	s.Cfg.RequireFullCoverage = false
	s.Tick(3400)
	if s.Status != ClusterOK {
		t.Fatal("cluster-require-full-coverage no should stay ok")
	}
}

func TestClusterStateWritableDelay(t *testing.T) {
	s := newTestState(t, testSeed(t))
	all := make([]int, 16384)
	for i := range all {
		all[i] = i
	}
	s.Tick(1000)
	s.AddSlots(1000, all)
	s.Tick(2000)
	if s.Status != ClusterFail {
		t.Fatal("a master must wait 2 s after start before saying ok")
	}
	s.Tick(3100)
	if s.Status != ClusterOK {
		t.Fatal("not ok after the delay")
	}
}

func TestCommandErrors(t *testing.T) {
	s := newTestState(t, testSeed(t))
	if _, err := s.AddSlots(0, []int{1, 1}); err == nil || err.Error() != "ERR Slot 1 specified multiple times" {
		t.Fatalf("dup: %v", err)
	}
	if _, err := s.AddSlots(0, []int{1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSlots(0, []int{2, 1}); err == nil || err.Error() != "ERR Slot 1 is already busy" {
		t.Fatalf("busy: %v", err)
	}
	if s.Owner[2] != "" {
		t.Fatal("a failed ADDSLOTS changed something")
	}
	if _, err := s.DelSlots(0, []int{3}); err == nil || err.Error() != "ERR Slot 3 is already unassigned" {
		t.Fatalf("unassigned: %v", err)
	}
	if _, err := s.SetConfigEpoch(0, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetConfigEpoch(0, 4); !errors.Is(err, ErrEpochSet) {
		t.Fatalf("epoch set: %v", err)
	}
	if _, b, e := s.BumpEpoch(0); b || e != 3 {
		t.Fatalf("BUMPEPOCH with the largest epoch must say STILL: %v %d", b, e)
	}
	s.CurrentEpoch = 10
	if _, b, e := s.BumpEpoch(0); !b || e != 11 || s.CurrentEpoch != 11 {
		t.Fatalf("BUMPEPOCH: %v %d", b, e)
	}
	if _, err := s.Forget(0, "3650ddb9b58c1e551861705dc26769f09084c718"); err == nil || err.Error() != "ERR Unknown node 3650ddb9b58c1e551861705dc26769f09084c718" {
		t.Fatalf("forget unknown: %v", err)
	}
	if _, err := s.Forget(0, s.Myself.ID); !errors.Is(err, ErrForgetMyself) {
		t.Fatal(err)
	}
	old := s.Myself.ID
	outs := s.Reset(0, true)
	if s.Myself.ID == old || s.CurrentEpoch != 0 || s.Myself.ConfigEpoch != 0 || s.Myself.NumSlots != 0 || s.Owner[1] != "" {
		t.Fatal("hard reset incomplete")
	}
	lost := false
	for _, o := range outs {
		if sl, ok := o.(*SlotsLost); ok && sl.Slots.Has(1) {
			lost = true
		}
	}
	if !lost {
		t.Fatal("reset must report the dropped slots")
	}
}

func TestWrongClusterRejected(t *testing.T) {
	s := newTestState(t, testSeed(t))
	other := newTestState(t, 99)
	h := other.header()
	h.Cluster = "other"
	outs := s.Step(10, "", &Meet{Header: h})
	if s.Stats.Rejected != 1 || len(s.Nodes) != 1 || len(sendsOf(outs)) != 0 {
		t.Fatal("message of another cluster accepted")
	}
}

func TestMasterLosingAllSlotsFollows(t *testing.T) {
	seed := testSeed(t)
	a, b := newTestState(t, seed), newTestState(t, seed+1)
	b.Myself.CPort = 17001
	by := map[Addr]*State{a.Myself.Addr(): a, b.Myself.Addr(): b}
	a.AddSlots(0, []int{0, 1, 2})
	a.SetConfigEpoch(0, 1)
	exchange(30, exchange(20, exchange(10, a.Meet(10, "10.0.0.1", 7000, 17001), by), by), by)
	// B took A's slots in a failover (epoch 2) while A was away.
	for j := 0; j < 3; j++ {
		b.Owner[j] = b.Myself.ID
		b.Myself.addSlot(j)
	}
	b.Myself.ConfigEpoch, b.CurrentEpoch = 2, 2
	outs := a.Step(100, b.Myself.ID, &Pong{Header: b.header()})
	var role *RoleChanged
	var lost *SlotsLost
	for _, o := range outs {
		switch x := o.(type) {
		case *RoleChanged:
			role = x
		case *SlotsLost:
			lost = x
		}
	}
	if role == nil || role.Master != b.Myself.ID || !a.Myself.IsReplica() || a.Myself.Master != b.Myself.ID {
		t.Fatalf("seed %d: A should follow B: %#v", seed, outs)
	}
	if lost == nil || lost.Slots.Count() != 3 {
		t.Fatal("lost slots not reported")
	}
	h := a.header()
	if h.ConfigEpoch != 2 || h.Slots.Count() != 3 || h.Master != b.Myself.ID {
		t.Fatal("a replica's header must carry its master's config")
	}
}

func TestClearFailRules(t *testing.T) {
	s := newTestState(t, testSeed(t))
	master := &Node{ID: "3650ddb9b58c1e551861705dc26769f09084c718", Flags: FlagMaster | FlagFail, FailTime: 1000}
	master.addSlot(1)
	replica := &Node{ID: "5413447bc70681b4f26425f4fa0873e8d3997a8f", Flags: FlagSlave | FlagFail, FailTime: 1000}
	s.addNode(master)
	s.addNode(replica)
	s.now = 1500
	s.clearFailureIfNeeded(replica)
	s.clearFailureIfNeeded(master)
	if replica.Flags&FlagFail != 0 {
		t.Fatal("a reachable replica is cleared at once")
	}
	if master.Flags&FlagFail == 0 {
		t.Fatal("a slot-owning master stays FAIL for 2 x node timeout")
	}
	s.now = 1000 + 2*1000 + 1
	s.clearFailureIfNeeded(master)
	if master.Flags&FlagFail != 0 {
		t.Fatal("master FAIL not cleared after 2 x node timeout")
	}
}

func TestRejoinDelay(t *testing.T) {
	s := newTestState(t, testSeed(t))
	s.Cfg.RequireFullCoverage = false
	s.AddSlots(0, []int{0})
	others := []*Node{
		{ID: "3650ddb9b58c1e551861705dc26769f09084c718", Flags: FlagMaster},
		{ID: "5413447bc70681b4f26425f4fa0873e8d3997a8f", Flags: FlagMaster},
	}
	for i, n := range others {
		n.DataReceived = 1 << 40 // always heard from: only the test sets PFAIL
		n.addSlot(i + 1)
		s.Owner[i+1] = n.ID
		s.addNode(n)
	}
	s.Tick(3000)
	if s.Status != ClusterOK {
		t.Fatal("not ok")
	}
	others[0].Flags |= FlagPFail
	others[1].Flags |= FlagPFail
	s.Tick(3100)
	if s.Status != ClusterFail {
		t.Fatal("ok in the minority")
	}
	others[0].Flags &^= FlagPFail
	s.Tick(3200)
	if s.Status != ClusterFail {
		t.Fatal("a master must wait the rejoin delay (node timeout) before saying ok")
	}
	s.Tick(3100 + 1000 + 100)
	if s.Status != ClusterOK {
		t.Fatal("not ok after the rejoin delay")
	}
}

func TestPromote(t *testing.T) {
	seed := testSeed(t)
	s := newTestState(t, seed)
	m := &Node{ID: "3650ddb9b58c1e551861705dc26769f09084c718", Flags: FlagMaster | FlagFail, ConfigEpoch: 1, IP: "10.0.0.9", CPort: 1}
	m.addSlot(7)
	s.Owner[7] = m.ID
	s.addNode(m)
	if _, err := s.Replicate(0, m.ID); err != nil {
		t.Fatal(err)
	}
	outs := s.Promote(10, 5)
	if s.Owner[7] != s.Myself.ID || !s.Myself.IsMaster() || s.Myself.ConfigEpoch != 5 || s.CurrentEpoch != 5 || m.NumSlots != 0 {
		t.Fatalf("seed %d: promote incomplete", seed)
	}
	if _, ok := outs[0].(*Persist); !ok {
		t.Fatalf("promote must persist before announcing: %#v", outs)
	}
	if b, ok := outs[1].(*Broadcast); !ok || b.Msg.Type() != TypePong || b.Msg.Hdr().ConfigEpoch != 5 {
		t.Fatalf("promote must broadcast a pong with the new epoch: %#v", outs)
	}
}

func TestMeetKnownNode(t *testing.T) {
	seed := testSeed(t)
	a, b := newTestState(t, seed), newTestState(t, seed+1)
	b.Myself.CPort = 17001
	by := map[Addr]*State{a.Myself.Addr(): a, b.Myself.Addr(): b}
	exchange(30, exchange(20, exchange(10, a.Meet(10, "10.0.0.1", 7000, 17001), by), by), by)
	if len(a.Nodes) != 2 {
		t.Fatal("not met")
	}
	exchange(50, exchange(40, a.Meet(40, "10.0.0.1", 7000, 17001), by), by)
	if len(a.Nodes) != 2 || len(b.Nodes) != 2 {
		t.Fatalf("seed %d: meeting a known node left %d/%d nodes", seed, len(a.Nodes), len(b.Nodes))
	}
}

// No epoch is taken past MaxEpoch: the frames of a node beyond it would be
// refused by every peer. BUMPEPOCH says STILL, an election asks no one, an
// epoch collision keeps the epoch, and a heartbeat at MaxEpoch is heard.
func TestEpochSaturates(t *testing.T) {
	s := newTestState(t, 3)
	s.CurrentEpoch = MaxEpoch
	s.Myself.ConfigEpoch = 5
	if _, b, e := s.BumpEpoch(0); b || e != 5 || s.CurrentEpoch != MaxEpoch {
		t.Fatalf("BUMPEPOCH at MaxEpoch: %v %d, current %d", b, e, s.CurrentEpoch)
	}
	outs, epoch := s.RequestVotes(0, false)
	if epoch != MaxEpoch || len(sendsOf(outs)) != 0 {
		t.Fatalf("RequestVotes at MaxEpoch: epoch %d, %d sends", epoch, len(sendsOf(outs)))
	}
	for _, o := range outs {
		if _, ok := o.(*Broadcast); ok {
			t.Fatal("RequestVotes at MaxEpoch broadcast a request")
		}
	}
	var exhausted bool
	for _, o := range outs {
		if e, ok := o.(*Event); ok && e.Kind == EventEpochExhausted {
			exhausted = true
		}
	}
	if !exhausted {
		t.Fatal("no epoch-exhausted event")
	}
	p := &Pong{Header: Header{Sender: NodeID(strings.Repeat("e", 40)), CurrentEpoch: MaxEpoch, ConfigEpoch: MaxEpoch, Flags: FlagMaster}}
	if _, _, err := ParseMessage(AppendMessage(nil, p)); err != nil {
		t.Fatalf("a frame at MaxEpoch: %v", err)
	}
}
