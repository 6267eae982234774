package failover_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/failover"
	"github.com/slotd/slotd/gossip"
	"github.com/slotd/slotd/gossip/gossiptest"
	"github.com/slotd/slotd/slots"
)

// sim runs gossip and failover machines on the in-memory hub, with a toy
// replication: a replica that reaches its master copies its offset; one that
// does not has its link down since the first tick it could not.
type sim struct {
	t   testing.TB
	h   *gossiptest.Hub
	fm  []*failover.Machine
	off []int64
	// linkDown is when member i's replication link went down (0 = up).
	linkDown []int64
	frozen   []bool  // replication stopped by the story (stale replica)
	paused   []int64 // writes held until (manual failover)
	events   [][]failover.Event
	promoted []int
	verbose  bool
	// violation is the first broken invariant seen while running.
	violation string
	lastKill  int
}

func simSeed(t testing.TB, fallback uint64) uint64 {
	if v := os.Getenv("FAILOVER_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err == nil {
			return s
		}
	}
	return fallback
}

func newSim(t testing.TB, seed uint64) *sim {
	t.Logf("seed %d (replay with FAILOVER_SEED=%d)", seed, seed)
	s := &sim{t: t, h: gossiptest.New(seed), lastKill: -1}
	s.h.AfterTick = s.afterTick
	s.h.AfterStep = func(i int) {
		if s.fm[i].InManualFailover() {
			s.apply(i, s.fm[i].Progress(s.h.Now, s.h.Members[i].State))
		}
	}
	s.h.OnOutput = s.onOutput
	return s
}

// add makes n members with failover machines seeded from the hub's seed.
func (s *sim) add(n int, timeout int64) {
	for _, i := range s.h.Add(n, timeout) {
		s.fm = append(s.fm, failover.New(failover.DefaultConfig(rand.New(rand.NewPCG(s.h.Seed, uint64(1000+i))))))
		s.off = append(s.off, 0)
		s.linkDown = append(s.linkDown, 0)
		s.frozen = append(s.frozen, false)
		s.paused = append(s.paused, 0)
		s.events = append(s.events, nil)
	}
}

// cluster builds masters masters with consecutive slot ranges and epochs
// 1..masters, and replicas replicas per master (replica k of the masters
// follows master k%masters), and waits until every node agrees.
func (s *sim) cluster(masters, replicas, extra int, timeout int64) error {
	s.add(masters*(1+replicas)+extra, timeout)
	h := s.h
	for k := 0; k < masters; k++ {
		var list []int
		for j := k * slots.Count / masters; j < (k+1)*slots.Count/masters; j++ {
			list = append(list, j)
		}
		st := h.Members[k].State
		outs, err := st.AddSlots(h.Now, list)
		if err != nil {
			return err
		}
		h.Apply(k, outs)
		outs, err = st.SetConfigEpoch(h.Now, uint64(k+1))
		if err != nil {
			return err
		}
		h.Apply(k, outs)
	}
	for k := 0; k+1 < len(h.Members); k++ {
		a, b := h.Members[k], h.Members[k+1]
		h.Apply(k, a.State.Meet(h.Now, b.Addr.IP, b.State.Myself.Port, b.Addr.CPort))
	}
	if !s.runUntil(60_000, func() bool { return s.knowsAll() }) {
		return fmt.Errorf("nodes did not meet: %v", s.convergedErr())
	}
	for r := masters; r < len(h.Members); r++ {
		m := r % masters
		if r >= masters*(1+replicas) {
			m = 0 // extra replicas all follow n0
		}
		outs, err := h.Members[r].State.Replicate(h.Now, h.ID(m))
		if err != nil {
			return err
		}
		h.Apply(r, outs)
	}
	if !s.runUntil(60_000, func() bool { return s.converged() }) {
		return fmt.Errorf("cluster did not converge: %v", s.convergedErr())
	}
	return nil
}

func (s *sim) afterTick(i int) {
	h := s.h
	st := h.Members[i].State
	s.replicate(i)
	st.SetReplOffset(s.off[i])
	s.fm[i].SetMasterLinkDown(s.linkDown[i])
	s.apply(i, s.fm[i].Tick(h.Now, st))
}

func (s *sim) replicate(i int) {
	h := s.h
	me := h.Members[i].State.Myself
	if !me.IsReplica() {
		s.linkDown[i] = 0
		return
	}
	mi := s.index(me.Master)
	if mi >= 0 && !s.frozen[i] && !h.Members[mi].Down && h.CanReach(i, mi) && h.CanReach(mi, i) &&
		h.Members[mi].State.Myself.IsMaster() {
		s.off[i] = s.off[mi]
		s.linkDown[i] = 0
		return
	}
	if s.linkDown[i] == 0 {
		s.linkDown[i] = h.Now
	}
}

func (s *sim) onOutput(i int, o gossip.Output) {
	if f, ok := o.(*gossip.Forward); ok {
		s.apply(i, s.fm[i].Step(s.h.Now, s.h.Members[i].State, f))
	}
}

func (s *sim) apply(i int, outs []failover.Output) {
	h := s.h
	for _, o := range outs {
		switch o := o.(type) {
		case gossip.Output:
			h.Apply(i, []gossip.Output{o})
		case *failover.Event:
			s.events[i] = append(s.events[i], *o)
			if s.verbose {
				s.t.Logf("t=%d n%d %s %s %s", h.Now, i, o.Kind, s.name(o.Node), o.Detail)
			}
		case *failover.Promote:
			s.promoted = append(s.promoted, i)
		case *failover.PauseWrites:
			s.paused[i] = o.Until
			s.apply(i, s.fm[i].WritesPaused(h.Now, h.Members[i].State, s.off[i]))
		case *failover.ResumeWrites:
			s.paused[i] = 0
		default:
			panic(fmt.Sprintf("unknown output %T", o))
		}
	}
}

// index finds the member with node id id, -1 if none.
func (s *sim) index(id gossip.NodeID) int {
	for i, m := range s.h.Members {
		if m.State.Myself.ID == id {
			return i
		}
	}
	return -1
}

func (s *sim) name(id gossip.NodeID) string {
	if i := s.index(id); i >= 0 {
		return "n" + strconv.Itoa(i)
	}
	if len(id) > 8 {
		return string(id[:8])
	}
	return string(id)
}

// runUntil runs up to d ms, checking the invariants every 100 ms, and stops
// when cond holds (cond may be nil: run the whole d).
func (s *sim) runUntil(d int64, cond func() bool) bool {
	return s.h.RunUntil(d, func() bool {
		s.checkInvariants()
		return cond != nil && cond()
	})
}

// checkInvariants: no two masters claim a slot with the same config epoch
// (down members count with the config they will restart from), and every
// node's currentEpoch is at least every config epoch it knows.
func (s *sim) checkInvariants() {
	if s.violation != "" {
		return
	}
	type claim struct {
		who   int
		epoch uint64
	}
	var owners [slots.Count]claim
	for j := range owners {
		owners[j].who = -1
	}
	for i, m := range s.h.Members {
		st := m.State
		me := st.Myself
		for _, n := range st.Nodes {
			if n.ConfigEpoch > st.CurrentEpoch {
				s.violation = fmt.Sprintf("t=%d n%d: currentEpoch %d < config epoch %d of %s", s.h.Now, i, st.CurrentEpoch, n.ConfigEpoch, s.name(n.ID))
				return
			}
		}
		if !me.IsMaster() || me.NumSlots == 0 {
			continue
		}
		for j := 0; j < slots.Count; j++ {
			if !me.Slots.Has(j) {
				continue
			}
			if o := owners[j]; o.who >= 0 && o.epoch == me.ConfigEpoch {
				s.violation = fmt.Sprintf("t=%d slot %d claimed by n%d and n%d with the same config epoch %d", s.h.Now, j, o.who, i, o.epoch)
				return
			}
			owners[j] = claim{i, me.ConfigEpoch}
		}
	}
}

func (s *sim) live() []*gossiptest.Member {
	var l []*gossiptest.Member
	for _, m := range s.h.Members {
		if !m.Down {
			l = append(l, m)
		}
	}
	return l
}

func (s *sim) knowsAll() bool {
	live := s.live()
	for _, m := range live {
		for _, o := range live {
			n := m.State.Nodes[o.State.Myself.ID]
			if n == nil || n.InHandshake() {
				return false
			}
		}
	}
	return true
}

func (s *sim) converged() bool { return s.convergedErr() == nil }

// convergedErr: every live node knows the live nodes, none failing (and
// no stranger: a down member may still be known),
// all agree on roles and slot owners, every slot is served by a live
// master that claims it, and the cluster is ok everywhere.
func (s *sim) convergedErr() error {
	live := s.live()
	for _, m := range live {
		st := m.State
		for id := range st.Nodes {
			if i := s.index(id); i < 0 || (!s.h.Members[i].Down && st.Nodes[id].InHandshake()) {
				return fmt.Errorf("n%d knows a stranger or is in handshake with %s", m.Index, s.name(id))
			}
		}
		for _, o := range live {
			n := st.Nodes[o.State.Myself.ID]
			if n == nil || n.InHandshake() || n.Failing() {
				return fmt.Errorf("n%d: n%d missing or failing", m.Index, o.Index)
			}
			me := o.State.Myself
			if n.Flags&(gossip.FlagMaster|gossip.FlagSlave) != me.Flags&(gossip.FlagMaster|gossip.FlagSlave) || n.Master != me.Master {
				return fmt.Errorf("n%d sees n%d as %s of %s; it is %s of %s", m.Index, o.Index, n.Flags, s.name(n.Master), me.Flags, s.name(me.Master))
			}
		}
		if st.Owner != live[0].State.Owner {
			return fmt.Errorf("n%d disagrees with n%d on slot owners", m.Index, live[0].Index)
		}
		if st.Status != gossip.ClusterOK {
			return fmt.Errorf("n%d: cluster state %s", m.Index, st.Status)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return s.oneOwnerErr()
}

// oneOwnerErr: every slot is claimed by exactly one live master, the one
// every live node names.
func (s *sim) oneOwnerErr() error {
	live := s.live()
	var claims [slots.Count]int
	for _, m := range live {
		me := m.State.Myself
		if !me.IsMaster() {
			continue
		}
		for j := 0; j < slots.Count; j++ {
			if me.Slots.Has(j) {
				claims[j]++
			}
		}
	}
	for j, c := range claims {
		if c != 1 {
			return fmt.Errorf("slot %d has %d live masters claiming it", j, c)
		}
		if o := s.index(live[0].State.Owner[j]); o < 0 || s.h.Members[o].Down || !s.h.Members[o].State.Myself.Slots.Has(j) {
			return fmt.Errorf("slot %d: n%d names owner %s, which does not serve it", j, live[0].Index, s.name(live[0].State.Owner[j]))
		}
	}
	return nil
}

// kill stops member i (its machine restarts fresh with it).
func (s *sim) kill(i int) {
	s.h.Kill(i)
	s.lastKill = i
}

func (s *sim) restart(i int) error {
	if err := s.h.Restart(i); err != nil {
		return err
	}
	s.fm[i] = failover.New(s.fm[i].Cfg)
	s.paused[i] = 0
	if s.h.Members[i].State.Myself.IsReplica() {
		s.linkDown[i] = s.h.Now
	}
	return nil
}

// write tries a write of n bytes on member i, as a client would: only a
// live master in an ok cluster whose writes are not paused takes it.
func (s *sim) write(i int, n int64) bool {
	m := s.h.Members[i]
	if m.Down || !m.State.Myself.IsMaster() || m.State.Myself.NumSlots == 0 ||
		m.State.Status != gossip.ClusterOK || s.paused[i] > s.h.Now {
		return false
	}
	s.off[i] += n
	return true
}

func (s *sim) hasEvent(i int, kind string) bool {
	for _, e := range s.events[i] {
		if e.Kind.String() == kind {
			return true
		}
	}
	for _, e := range s.h.Members[i].Events {
		if e.Kind.String() == kind {
			return true
		}
	}
	return false
}

func (s *sim) countEvents(i int, kind string) int {
	c := 0
	for _, e := range s.events[i] {
		if e.Kind.String() == kind {
			c++
		}
	}
	for _, e := range s.h.Members[i].Events {
		if e.Kind.String() == kind {
			c++
		}
	}
	return c
}

func parseMS(v string) (int64, error) {
	if d, err := time.ParseDuration(v); err == nil {
		return d.Milliseconds(), nil
	}
	return strconv.ParseInt(v, 10, 64)
}

func nodeList(v string) []string { return strings.Split(v, ",") }
