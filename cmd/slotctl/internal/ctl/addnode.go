package ctl

import (
	"context"
	"fmt"
)

// AddNode joins the empty node at newAddr to the cluster that existing
// belongs to: it checks the cluster and the new node, makes the new node
// meet the existing one (CLUSTER MEET), waits until every reachable node
// knows it and it knows them all, and with replicaOf (a node id or unique
// prefix of a master) attaches it with CLUSTER REPLICATE. It returns the new
// node's id. A master joins without slots; moving slots to it is reshard's
// job.
func AddNode(ctx context.Context, newAddr, existing, replicaOf string, o *Options) (string, error) {
	r := NewReporter(o)
	r.Section("Adding node %s to cluster %s", newAddr, existing)
	c, err := Load(ctx, existing, o)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if res := c.Check(r); !res.OK() {
		r.Warn("The cluster has problems (see above); adding the node anyway.")
	}

	var master *Node
	if replicaOf != "" {
		if master, err = c.Find(replicaOf); err != nil {
			return "", err
		}
		if !master.Info().IsMaster() {
			return "", fmt.Errorf("node %s (%s) is not a master: a replica can only replicate a master", master.Addr, master.ID)
		}
	}

	nm, err := dialEmpty(ctx, newAddr, o)
	if err != nil {
		return "", err
	}
	defer nm.conn.Close()
	r.OK("New node %s (%s) is empty and in cluster mode.", newAddr, nm.id)

	entry := c.Nodes[0]
	meet, err := meetArgs(ctx, entry.Addr, entry.Info().BusPort)
	if err != nil {
		return "", err
	}
	r.Section("Send CLUSTER MEET to node %s to make it join the cluster.", newAddr)
	if err := nm.conn.OK(ctx, meet...); err != nil {
		return "", err
	}

	// The members to wait for: the new node and every node we can reach.
	all := []*member{nm}
	for _, n := range c.Nodes {
		if n.Conn != nil {
			all = append(all, &member{addr: n.Addr, conn: n.Conn, id: n.ID})
		}
	}
	ids := map[string]bool{}
	for _, n := range c.Nodes {
		ids[n.ID] = true
	}
	ids[nm.id] = true
	if err := waitKnown(ctx, o, r, all, ids, nil); err != nil {
		return "", err
	}
	r.OK("Node %s is known by all %d nodes.", newAddr, len(all)-1)

	if master != nil {
		r.Section("Configure node as replica of %s (%s).", master.Addr, master.ID)
		if err := nm.conn.OK(ctx, "CLUSTER", "REPLICATE", master.ID); err != nil {
			return "", err
		}
		if err := waitKnown(ctx, o, r, all, ids, map[string]string{nm.id: master.ID}); err != nil {
			return "", err
		}
		r.OK("Every node sees %s as a replica of %s.", newAddr, master.Addr)
	}
	r.OK("New node added correctly.")
	return nm.id, nil
}

// waitKnown waits until every member lists every id in ids outside of a
// handshake, and each replica in roles under its master.
func waitKnown(ctx context.Context, o *Options, r *Reporter, all []*member, ids map[string]bool, roles map[string]string) error {
	what := "the node to join"
	if roles != nil {
		what = "the replica to attach"
	}
	return waitFor(ctx, o, r, what, func() (bool, string) {
		ready, waiting := 0, []string(nil)
		for _, m := range all {
			view, err := m.conn.Nodes(ctx)
			if err != nil {
				waiting = append(waiting, m.addr)
				continue
			}
			known := 0
			good := true
			for _, n := range view {
				if !ids[n.ID] {
					continue
				}
				if n.Has("handshake") {
					good = false
				}
				if mid, ok := roles[n.ID]; ok && (!n.IsReplica() || n.MasterID != mid) {
					good = false
				}
				known++
			}
			if good && known == len(ids) {
				ready++
			} else {
				waiting = append(waiting, m.addr)
			}
		}
		return ready == len(all), fmt.Sprintf("%d of %d nodes ready%s", ready, len(all), waitingOn(waiting))
	})
}
