package ctl

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// DelNode removes the node with the given id (or unique prefix) from the
// cluster that addr belongs to. It refuses while the node owns slots. The
// node's replicas are first moved to the master with the fewest replicas
// (a node cannot forget its own master); then every other node gets CLUSTER
// FORGET <id>, and the node itself CLUSTER RESET SOFT so that it does not
// rejoin through gossip, and SHUTDOWN when shutdown is set.
func DelNode(ctx context.Context, addr, id string, shutdown bool, o *Options) error {
	r := NewReporter(o)
	c, err := Load(ctx, addr, o)
	if err != nil {
		return err
	}
	defer c.Close()
	victim, err := c.Find(id)
	if err != nil {
		return fmt.Errorf("%v (loaded from %s)", err, addr)
	}
	r.Section("Removing node %s (%s) from the cluster %s", victim.ID, victim.Addr, addr)

	// Slots it owns, by its own word or by anyone else's.
	owned := victim.Info().SlotCount()
	for _, n := range c.Nodes {
		for _, line := range n.View {
			if line.ID == victim.ID && line.SlotCount() > owned {
				owned = line.SlotCount()
			}
		}
	}
	if owned > 0 {
		return fmt.Errorf("node %s (%s) still owns %d slots: move them to other masters first, then delete it", victim.Addr, victim.ID, owned)
	}

	if reps := c.ReplicasOf(victim.ID); len(reps) > 0 {
		to := leastReplicated(c, victim.ID)
		if to == nil {
			return fmt.Errorf("node %s (%s) has %d replicas and no other master can take them", victim.Addr, victim.ID, len(reps))
		}
		for _, rep := range reps {
			if rep.Conn == nil {
				r.Warn("Replica %s (%s) cannot be reached: %v", rep.Addr, rep.ID, rep.Err)
				continue
			}
			r.Line("Moving replica %s to master %s (%s)", rep.Addr, to.Addr, to.ID)
			if err := rep.Conn.OK(ctx, "CLUSTER", "REPLICATE", to.ID); err != nil {
				return err
			}
		}
	}

	r.Section("Sending CLUSTER FORGET messages to the cluster...")
	for _, n := range c.Nodes {
		if n == victim {
			continue
		}
		if n.Conn == nil {
			r.Warn("Node %s (%s) cannot be reached and will still know %s: %v", n.Addr, n.ID, victim.ID, n.Err)
			continue
		}
		if err := n.Conn.OK(ctx, "CLUSTER", "FORGET", victim.ID); err != nil {
			return err
		}
	}

	if victim.Conn == nil {
		r.Warn("Node %s cannot be reached, so it was not reset: %v", victim.Addr, victim.Err)
	} else {
		r.Section("Resetting node %s (CLUSTER RESET SOFT)", victim.Addr)
		if err := victim.Conn.OK(ctx, "CLUSTER", "RESET", "SOFT"); err != nil {
			return err
		}
		if shutdown {
			r.Section("Shutting down node %s", victim.Addr)
			if err := shutdownNode(ctx, victim.Conn); err != nil {
				return err
			}
		}
	}

	// FORGET is immediate on every node it reached; a node that still
	// lists the id means gossip from an unreached node brought it back.
	c.Refresh(ctx)
	for _, n := range c.Nodes {
		if n == victim {
			continue
		}
		for _, line := range n.View {
			if line.ID == victim.ID {
				return fmt.Errorf("node %s still lists %s after CLUSTER FORGET", n.Addr, victim.ID)
			}
		}
	}
	r.OK("Node %s (%s) removed from the cluster.", victim.Addr, victim.ID)
	return nil
}

// leastReplicated returns the slot-owning master other than skip with the
// fewest replicas, or nil.
func leastReplicated(c *Cluster, skip string) *Node {
	var best *Node
	bestN := 0
	for _, m := range c.Masters() {
		if m.ID == skip || m.Conn == nil || m.Info().SlotCount() == 0 {
			continue
		}
		n := len(c.ReplicasOf(m.ID))
		if best == nil || n < bestN {
			best, bestN = m, n
		}
	}
	return best
}

// shutdownNode sends SHUTDOWN. A node that shuts down closes the
// connection without a reply, so only an error reply counts as failure.
func shutdownNode(ctx context.Context, c *Conn) error {
	_, err := c.Do(ctx, "SHUTDOWN")
	if err == nil {
		return nil
	}
	var ce *CmdError
	if errors.As(err, &ce) && isServerError(ce.Err) {
		return err
	}
	return nil
}

// isServerError tells an error reply from the node from a network failure.
func isServerError(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}
