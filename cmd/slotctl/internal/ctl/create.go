package ctl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// ErrAborted is returned when the user declines a plan.
var ErrAborted = errors.New("aborted: the plan was not confirmed")

// member is a node taking part in create or add-node.
type member struct {
	addr string
	conn *Conn
	id   string
	bus  int
}

func dialEmpty(ctx context.Context, addr string, o *Options) (*member, error) {
	c, err := Dial(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	if err := requireEmpty(ctx, c); err != nil {
		c.Close()
		return nil, err
	}
	view, err := c.Nodes(ctx)
	if err != nil {
		c.Close()
		return nil, err
	}
	me := Myself(view)
	return &member{addr: addr, conn: c, id: me.ID, bus: me.BusPort}, nil
}

// Create builds a new cluster from empty nodes: it checks them, prints the
// plan, asks for confirmation, assigns slots (CLUSTER ADDSLOTSRANGE), gives
// every node its own config epoch (CLUSTER SET-CONFIG-EPOCH 1..n), makes
// every node meet the first (CLUSTER MEET), waits until all nodes agree on
// the slot configuration, attaches replicas (CLUSTER REPLICATE), waits for
// cluster_state:ok everywhere and finally checks the result.
func Create(ctx context.Context, addrs []string, replicas int, o *Options) (*CheckResult, error) {
	r := NewReporter(o)
	plan, err := PlanCreate(addrs, replicas)
	if err != nil {
		return nil, err
	}
	members := map[string]*member{}
	defer func() {
		for _, m := range members {
			m.conn.Close()
		}
	}()
	ids := map[string]string{}
	for _, a := range addrs {
		m, err := dialEmpty(ctx, a, o)
		if err != nil {
			return nil, err
		}
		members[a] = m
		ids[a] = m.id
	}
	plan.Print(r, ids)
	if !o.confirm("Can I set the above configuration? (type 'yes' to accept): ") {
		return nil, ErrAborted
	}

	r.Section("Assigning slots")
	for _, pm := range plan.Masters {
		m := members[pm.Addr]
		if err := addSlotsRange(ctx, m.conn, pm.Slots.Start, pm.Slots.End); err != nil {
			return nil, err
		}
	}

	r.Section("Assign a different config epoch to each node")
	for i, a := range addrs {
		if err := members[a].conn.OK(ctx, "CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1)); err != nil {
			return nil, err
		}
	}

	r.Section("Sending CLUSTER MEET messages to join the cluster")
	first := members[addrs[0]]
	meet, err := meetArgs(ctx, first.addr, first.bus)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs[1:] {
		if err := members[a].conn.OK(ctx, meet...); err != nil {
			return nil, err
		}
	}

	all := make([]*member, 0, len(addrs))
	for _, a := range addrs {
		all = append(all, members[a])
	}
	want := map[string]string{}
	for _, pm := range plan.Masters {
		want[members[pm.Addr].id] = pm.Slots.String()
	}
	if err := waitAgree(ctx, o, r, all, want, nil); err != nil {
		return nil, err
	}
	r.OK("All %d nodes know each other and agree about slots configuration.", len(all))

	if replicas > 0 {
		r.Section("Attaching replicas")
		roles := map[string]string{}
		for _, pm := range plan.Masters {
			mid := members[pm.Addr].id
			for _, ra := range pm.Replicas {
				rm := members[ra]
				if err := rm.conn.OK(ctx, "CLUSTER", "REPLICATE", mid); err != nil {
					return nil, err
				}
				roles[rm.id] = mid
			}
		}
		if err := waitAgree(ctx, o, r, all, want, roles); err != nil {
			return nil, err
		}
		r.OK("Every node sees every replica attached to its master.")
	}

	if err := waitState(ctx, o, r, all); err != nil {
		return nil, err
	}
	r.OK("cluster_state:ok on all %d nodes.", len(all))

	c, err := Load(ctx, addrs[0], o)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Check(r), nil
}

// addSlotsRange assigns start..end with CLUSTER ADDSLOTSRANGE, falling back
// to CLUSTER ADDSLOTS (redis-server before 7.0 has no ADDSLOTSRANGE).
func addSlotsRange(ctx context.Context, c *Conn, start, end int) error {
	err := c.OK(ctx, "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(start), strconv.Itoa(end))
	if err == nil || !isUnknownCommand(err) {
		return err
	}
	args := []any{"CLUSTER", "ADDSLOTS"}
	for s := start; s <= end; s++ {
		args = append(args, strconv.Itoa(s))
	}
	return c.OK(ctx, args...)
}

// waitAgree waits until every member knows every other member (no
// handshake), its slot signature is the one want describes (master id ->
// slot token) and, for each replica id in roles, every member lists it as
// a replica of the given master.
func waitAgree(ctx context.Context, o *Options, r *Reporter, all []*member, want map[string]string, roles map[string]string) error {
	var wantView []NodeInfo
	for id, tok := range want {
		wantView = append(wantView, NodeInfo{ID: id, SlotTokens: []string{tok}})
	}
	wantSig := ConfigSignature(wantView)
	ids := map[string]bool{}
	for _, m := range all {
		ids[m.id] = true
	}
	what := "the cluster to join"
	if roles != nil {
		what = "the replicas to attach"
	}
	var lastErr error
	return waitFor(ctx, o, r, what, func() (bool, string) {
		ready, waiting := 0, []string(nil)
		lastErr = nil
		for _, m := range all {
			view, err := m.conn.Nodes(ctx)
			if err != nil {
				lastErr = err
				waiting = append(waiting, m.addr)
				continue
			}
			if viewReady(view, ids, wantSig, roles) {
				ready++
			} else {
				waiting = append(waiting, m.addr)
			}
		}
		prog := fmt.Sprintf("%d of %d nodes ready%s", ready, len(all), waitingOn(waiting))
		if lastErr != nil {
			prog += " (last error: " + lastErr.Error() + ")"
		}
		return ready == len(all), prog
	})
}

func viewReady(view []NodeInfo, ids map[string]bool, wantSig string, roles map[string]string) bool {
	known := 0
	for _, n := range view {
		if n.Has("handshake") || n.Has("noaddr") {
			return false
		}
		if ids[n.ID] {
			known++
		}
		if mid, ok := roles[n.ID]; ok && (!n.IsReplica() || n.MasterID != mid) {
			return false
		}
	}
	return known == len(ids) && ConfigSignature(view) == wantSig
}

// waitState waits for cluster_state:ok on every member.
func waitState(ctx context.Context, o *Options, r *Reporter, all []*member) error {
	return waitFor(ctx, o, r, "cluster_state:ok", func() (bool, string) {
		ok, waiting := 0, []string(nil)
		for _, m := range all {
			ci, err := m.conn.ClusterInfo(ctx)
			if err == nil && ci["cluster_state"] == "ok" {
				ok++
			} else {
				waiting = append(waiting, m.addr)
			}
		}
		return ok == len(all), fmt.Sprintf("%d of %d nodes ok%s", ok, len(all), waitingOn(waiting))
	})
}
