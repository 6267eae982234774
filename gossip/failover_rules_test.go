package gossip

import (
	"math/rand/v2"
	"strings"
	"testing"
)

var (
	ruleMe = NodeID(strings.Repeat("a", 40))
	ruleB  = NodeID(strings.Repeat("b", 40))
	ruleC  = NodeID(strings.Repeat("c", 40))
)

// ruleState: this node serves 200-299; its (old) view gives 0-99 to B
// with config epoch 2 and knows C, epoch 4, serving nothing yet.
func ruleState(t *testing.T) *State {
	t.Helper()
	conf := string(ruleMe) + " 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 200-299\n" +
		string(ruleB) + " 10.0.0.2:7001@17001 master - 0 0 2 connected 0-99\n" +
		string(ruleC) + " 10.0.0.3:7002@17002 master - 0 0 4 connected\n" +
		"vars currentEpoch 5 lastVoteEpoch 0\n"
	s, err := ParseNodesConf([]byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	s.Cfg.NodeTimeout = 1000
	s.Cfg.Rand = rand.New(rand.NewPCG(1, 2))
	s.Restart(1000)
	return s
}

func claimPong(id NodeID, epoch uint64, lo, hi int) *Pong {
	p := &Pong{Header: Header{Sender: id, CurrentEpoch: epoch, ConfigEpoch: epoch, Flags: FlagMaster,
		IP: "10.0.0." + string(id[0]-'a'+'1'), Port: 7000, CPort: 17000}}
	for j := lo; j <= hi; j++ {
		p.Slots.Set(j)
	}
	return p
}

// A master's heartbeat is what it serves now: slots our old view gave it
// are freed, so that their real owner's claim wins them even with a
// config epoch older than the one the stale owner has now.
func TestHeartbeatFreesUnclaimedSlots(t *testing.T) {
	heartbeatFreesB(t, ruleState(t))
}

// heartbeatFreesB steps B's heartbeat (epoch 5, serving 100-199 now) and
// C's claim on 0-99 (epoch 4) into s, whose view gives 0-99 to B: B's
// heartbeat must free them and C's older epoch must win them.
func heartbeatFreesB(t *testing.T, s *State) {
	t.Helper()
	s.Step(1100, "", claimPong(ruleB, 5, 100, 199))
	if s.Owner[0] != "" || s.Owner[99] != "" || s.Owner[100] != ruleB {
		t.Fatalf("B's old slots not freed or new ones not taken: %q %q %q", s.Owner[0], s.Owner[99], s.Owner[100])
	}
	s.Step(1200, "", claimPong(ruleC, 4, 0, 99))
	if s.Owner[0] != ruleC || s.Owner[99] != ruleC {
		t.Fatalf("C's claim with epoch 4 did not win the freed slots: %q", s.Owner[0])
	}
	if s.Owner[200] != ruleMe {
		t.Fatal("our own slots moved")
	}
}

// The same holds when B's newer epoch reached us first on a message that
// is not a heartbeat (here an UPDATE B sent about another node's slots):
// B's next heartbeat still frees what our view gave it under its old
// claim (found by failover's random schedules, seed 1796044728312837204).
func TestHeartbeatFreesUnclaimedAfterNewerEpochElsewhere(t *testing.T) {
	s := ruleState(t)
	u := &Update{Header: claimPong(ruleB, 5, 100, 199).Header, ID: ruleC, ConfigEpoch: 4}
	u.Header.Slots = claimPong(ruleB, 5, 100, 199).Slots
	s.Step(1050, "", u)
	if s.Nodes[ruleB].ConfigEpoch != 5 {
		t.Fatalf("B's epoch from the UPDATE's header: %d", s.Nodes[ruleB].ConfigEpoch)
	}
	heartbeatFreesB(t, s)
}

// PFAIL comes after a node timeout of silence even while no ping of ours
// is pending (our next one would have gone out only later).
func TestPFailAfterSilence(t *testing.T) {
	s := ruleState(t)
	s.Step(1000, "", claimPong(ruleB, 2, 0, 99))
	s.Step(1000, "", claimPong(ruleC, 4, 100, 199))
	b := s.Nodes[ruleB]
	for now := int64(1000); now <= 2000; now += 100 {
		s.Step(now, "", claimPong(ruleC, 4, 100, 199))
		b.PingSent = 0 // as if we had no reason to ping B yet
		s.Tick(now)
		if b.Flags&FlagPFail != 0 {
			t.Fatalf("B PFAIL at %d, silent for only %d ms", now, now-1000)
		}
	}
	b.PingSent = 0
	s.Tick(2100)
	if b.Flags&FlagPFail == 0 {
		t.Fatal("B not PFAIL after 1100 ms of silence with node timeout 1000")
	}
}

// A slot master that marks a node PFAIL pings the other slot masters at
// once, so its report reaches them without waiting for a scheduled ping.
func TestPFailSpreadsReport(t *testing.T) {
	s := ruleState(t)
	s.Step(1000, "", claimPong(ruleB, 2, 0, 99))
	s.Step(1000, "", claimPong(ruleC, 4, 100, 199))
	for now := int64(1100); now <= 1900; now += 100 {
		s.Step(now, "", claimPong(ruleC, 4, 100, 199))
		s.Tick(now)
	}
	s.Step(2100, "", claimPong(ruleC, 4, 100, 199))
	outs := s.Tick(2100)
	if s.Nodes[ruleB].Flags&FlagPFail == 0 {
		t.Fatal("B not PFAIL")
	}
	var told bool
	for _, snd := range sendsOf(outs) {
		if snd.To != ruleC || snd.Msg.Type() != TypePing {
			continue
		}
		for _, g := range gossipOf(snd.Msg) {
			if g.ID == ruleB && g.Flags&FlagPFail != 0 {
				told = true
			}
		}
	}
	if !told {
		t.Fatal("C was not pinged with B's PFAIL at once")
	}
}
