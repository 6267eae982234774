package ctl

import (
	"context"
	"sort"
	"strings"

	"github.com/slotd/slotd/slots"
)

// CheckResult lists what a check found. The zero problem counts mean a
// healthy cluster.
type CheckResult struct {
	// Agree is true when every reachable node has the same slot signature.
	Agree bool
	// Uncovered counts the slots no master claims (in its own view).
	Uncovered int
	// OpenSlots are the slots some node marks migrating or importing.
	OpenSlots []int
	// Failing lists "observer: node" pairs where a node flags another as
	// fail or fail?.
	Failing []string
	// Unreachable lists the nodes slotctl could not read.
	Unreachable []string
}

// OK reports whether the check found no problem.
func (r *CheckResult) OK() bool {
	return r.Agree && r.Uncovered == 0 && len(r.OpenSlots) == 0 && len(r.Failing) == 0 && len(r.Unreachable) == 0
}

// Check loads the cluster through addr and checks it.
func Check(ctx context.Context, addr string, o *Options) (*CheckResult, error) {
	c, err := Load(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Check(NewReporter(o)), nil
}

// Check reports on the loaded topology: the node listing, agreement on
// the slot configuration, open slots, coverage and failing nodes, with
// redis-cli's wording for the checks both make.
func (c *Cluster) Check(r *Reporter) *CheckResult {
	res := &CheckResult{}
	r.Section("Performing Cluster Check (using node %s)", c.EntryAddr)
	c.printNodes(r)

	sig, agree := "", true
	for _, n := range c.Nodes {
		if n.View == nil {
			continue
		}
		s := ConfigSignature(n.View)
		if sig == "" {
			sig = s
		} else if s != sig {
			agree = false
		}
	}
	res.Agree = agree
	if agree {
		r.OK("All nodes agree about slots configuration.")
	} else {
		r.Err("Nodes don't agree about configuration!")
	}

	r.Section("Check for open slots...")
	open := map[int]bool{}
	for _, n := range c.Nodes {
		if n.Self == nil {
			continue
		}
		for _, kind := range []struct {
			name string
			m    map[int]string
		}{{"migrating", n.Self.Migrating}, {"importing", n.Self.Importing}} {
			if len(kind.m) == 0 {
				continue
			}
			var ss []int
			for s := range kind.m {
				ss = append(ss, s)
				open[s] = true
			}
			sort.Ints(ss)
			r.Warn("Node %s has slots in %s state %s.", n.Addr, kind.name, joinInts(ss))
		}
	}
	for s := range open {
		res.OpenSlots = append(res.OpenSlots, s)
	}
	sort.Ints(res.OpenSlots)
	if len(res.OpenSlots) > 0 {
		r.Warn("The following slots are open: %s.", joinInts(res.OpenSlots))
	}

	r.Section("Check slots coverage...")
	var covered slots.Bitmap
	for _, n := range c.Nodes {
		for _, rg := range n.Info().Slots {
			for s := rg.Start; s <= rg.End; s++ {
				covered.Set(s)
			}
		}
	}
	res.Uncovered = slots.Count - covered.Count()
	if res.Uncovered == 0 {
		r.OK("All %d slots covered.", slots.Count)
	} else {
		r.Err("Not all %d slots are covered by nodes (%d uncovered).", slots.Count, res.Uncovered)
	}

	r.Section("Check for failing nodes...")
	for _, n := range c.Nodes {
		if n.Err != nil {
			res.Unreachable = append(res.Unreachable, n.Addr)
			r.Err("Node %s (%s) cannot be read: %v", n.Addr, shortID(n.ID), n.Err)
		}
		for _, line := range n.View {
			if line.Failing() {
				flag := "fail"
				if !line.Has("fail") {
					flag = "fail?"
				}
				res.Failing = append(res.Failing, n.Addr+": "+line.Addr())
				r.Err("Node %s flags %s (%s) as %s.", n.Addr, line.Addr(), shortID(line.ID), flag)
			}
			if line.Has("handshake") {
				r.Warn("Node %s is still in handshake with %s.", n.Addr, line.Addr())
			}
		}
	}
	if len(res.Failing) == 0 && len(res.Unreachable) == 0 {
		r.OK("No failing nodes.")
	}
	return res
}

// printNodes lists masters then replicas the way redis-cli does:
//
//	M: <id> <addr>
//	   slots:[0-5460] (5461 slots) master
//	   1 additional replica(s)
func (c *Cluster) printNodes(r *Reporter) {
	ms := c.Masters()
	for _, m := range ms {
		printNode(r, m, len(c.ReplicasOf(m.ID)))
	}
	for _, n := range c.Nodes {
		if !n.Info().IsMaster() {
			printNode(r, n, 0)
		}
	}
}

func printNode(r *Reporter, n *Node, replicas int) {
	i := n.Info()
	role := "M"
	if !i.IsMaster() {
		role = "S"
	}
	r.Line("%s: %s %s", role, n.ID, n.Addr)
	roles := make([]string, 0, len(i.Flags))
	for _, f := range i.Flags {
		if f != "myself" {
			roles = append(roles, f)
		}
	}
	r.Line("   slots:%s (%d slots) %s", FormatSlots(i.Slots), i.SlotCount(), strings.Join(roles, ","))
	if i.IsReplica() {
		r.Line("   replicates %s", i.MasterID)
	}
	if replicas > 0 {
		r.Line("   %d additional replica(s)", replicas)
	}
}
