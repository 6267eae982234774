package ctl

import (
	"errors"
	"fmt"
	"math"
	"net"

	"github.com/slotd/slotd/slots"
)

// MinMasters is the smallest cluster create builds, as redis-cli: with
// fewer masters no majority survives the loss of one.
const MinMasters = 3

// CreatePlan is what create will do: which node becomes a master with
// which slots, and which nodes replicate it. It is computed from the
// addresses alone, so it can be printed (or checked in a test) before any
// node is touched.
type CreatePlan struct {
	Masters []PlannedMaster
}

// PlannedMaster is one master of a CreatePlan.
type PlannedMaster struct {
	Addr     string
	Slots    slots.Range
	Replicas []string
}

// PlanCreate splits addrs into masters and replicas and the 16384 slots
// into contiguous, even ranges (the same boundaries redis-cli picks: 3
// masters get 0-5460, 5461-10922, 10923-16383). With replicas > 0 the first
// len(addrs)/(replicas+1) nodes, taken round-robin over hosts, become
// masters; every replica is placed on a host other than its master's when
// one is left. Nodes beyond masters*(replicas+1) become extra replicas of
// the masters with the fewest.
func PlanCreate(addrs []string, replicas int) (*CreatePlan, error) {
	if replicas < 0 {
		return nil, errors.New("--replicas must be 0 or more")
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("bad address %q: want host:port", a)
		}
		if seen[a] {
			return nil, fmt.Errorf("address %s is given twice", a)
		}
		seen[a] = true
	}
	nm := len(addrs) / (replicas + 1)
	if nm < MinMasters {
		return nil, fmt.Errorf("a cluster needs at least %d masters: %d nodes with %d replicas each give %d",
			MinMasters, len(addrs), replicas, nm)
	}

	// Group by host, keeping the order given, and take masters round-robin
	// over the hosts so they spread over machines.
	var hosts []string
	byHost := map[string][]string{}
	for _, a := range addrs {
		h := hostOf(a)
		if _, ok := byHost[h]; !ok {
			hosts = append(hosts, h)
		}
		byHost[h] = append(byHost[h], a)
	}
	var order []string
	for len(order) < len(addrs) {
		for _, h := range hosts {
			if len(byHost[h]) > 0 {
				order = append(order, byHost[h][0])
				byHost[h] = byHost[h][1:]
			}
		}
	}

	p := &CreatePlan{}
	per := float64(slots.Count) / float64(nm)
	first, cursor := 0, 0.0
	for i := 0; i < nm; i++ {
		last := int(math.Round(cursor + per - 1))
		if last > slots.Count-1 || i == nm-1 {
			last = slots.Count - 1
		}
		if last < first {
			last = first
		}
		p.Masters = append(p.Masters, PlannedMaster{Addr: order[i], Slots: slots.Range{Start: first, End: last}})
		first = last + 1
		cursor += per
	}

	rest := order[nm:]
	take := func(m *PlannedMaster) {
		avoid := map[string]bool{hostOf(m.Addr): true}
		for _, r := range m.Replicas {
			avoid[hostOf(r)] = true
		}
		pick := 0
		for i, a := range rest {
			if !avoid[hostOf(a)] {
				pick = i
				break
			}
		}
		m.Replicas = append(m.Replicas, rest[pick])
		rest = append(rest[:pick:pick], rest[pick+1:]...)
	}
	for round := 0; round < replicas; round++ {
		for i := range p.Masters {
			take(&p.Masters[i])
		}
	}
	if replicas > 0 {
		for len(rest) > 0 {
			best := 0
			for i := range p.Masters {
				if len(p.Masters[i].Replicas) < len(p.Masters[best].Replicas) {
					best = i
				}
			}
			take(&p.Masters[best])
		}
	}
	return p, nil
}

func hostOf(addr string) string {
	h, _, _ := net.SplitHostPort(addr)
	return h
}

// Print writes the plan; ids maps addresses to node ids when known.
func (p *CreatePlan) Print(r *Reporter, ids map[string]string) {
	r.Section("Performing hash slots allocation on %d nodes...", p.nodeCount())
	for i, m := range p.Masters {
		r.Line("Master[%d] -> Slots %d - %d", i, m.Slots.Start, m.Slots.End)
	}
	for _, m := range p.Masters {
		for _, rep := range m.Replicas {
			r.Line("Adding replica %s to %s", rep, m.Addr)
		}
	}
	for _, m := range p.Masters {
		r.Line("M: %s %s", ids[m.Addr], m.Addr)
		n := m.Slots.End - m.Slots.Start + 1
		r.Line("   slots:[%s] (%d slots) master", m.Slots, n)
	}
	for _, m := range p.Masters {
		for _, rep := range m.Replicas {
			r.Line("S: %s %s", ids[rep], rep)
			r.Line("   replicates %s (%s)", ids[m.Addr], m.Addr)
		}
	}
}

func (p *CreatePlan) nodeCount() int {
	n := 0
	for _, m := range p.Masters {
		n += 1 + len(m.Replicas)
	}
	return n
}
