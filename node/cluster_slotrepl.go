package node

import (
	"time"

	"go.uber.org/zap"

	"github.com/slotd/slotd/gossip"
)

// Replicated slot state.
//
// A master that changes the state of a slot (CLUSTER SETSLOT, SLOTD.MIGRATE
// SETSLOTS) sends the command down its replication stream and replies only
// once the replicas online at that moment acknowledged it, as WAIT would,
// within a timeout (SETSLOT's TIMEOUT <ms>, 2000 by default). A replica
// applies the slot state to its own view and writes it to its nodes.conf,
// so that when it is promoted in the middle of a migration it serves the
// open slot as its master did: ASK for the keys already moved, TRYAGAIN,
// ASKING on the importing side, and SETSLOT NODE finishes the move there.
//
// A replica that joins by a full sync misses the commands sent before its
// image: it clears its open slots when it loads the image, and the master
// appends its current open slots to the stream right after the image starts
// (resyncOpenSlots). Replicas that were already online apply the same
// commands again, which changes nothing.
//
// The commands also reach the AOF, as the stream is one; they describe
// cluster metadata that lives in nodes.conf, so an AOF replay skips them
// (skipOnAOFReplay).

// setSlotDefaultTimeout is how long SETSLOT waits for the replicas' ACK
// when the command names no TIMEOUT.
const setSlotDefaultTimeout = 2000 * time.Millisecond

// errSlotNoReplicaAck is the reply when the replicas did not acknowledge a
// slot change in time. The change is made and saved on this node; the
// command may be sent again (it is idempotent) once the replicas are back.
const errSlotNoReplicaAck = "NOREPLICAS Not enough good replicas to write."

// replicateSlotChange sends a slot change this master made (on the cluster
// loop) to its replicas. It returns the stream offset to wait for, or 0
// when there is nothing to wait for: no cluster replica, or a transaction
// (which reaches the stream as one block when EXEC ends, and never waits).
func replicateSlotChange(x *Ctx, st *gossip.State, args ...[]byte) int64 {
	s := x.S
	if !s.feed.on.Load() || !s.hasClusterReplica(st) {
		return 0
	}
	x.Propagate(args...)
	if x.inExec {
		return 0
	}
	return x.C.prop.flush(s.feed)
}

// hasClusterReplica reports whether this master has a replica that is a
// node of the cluster: one the cluster view lists (attached or not: a
// replica that reconnects continues from the backlog), or an attached one
// whose address is a known node's (gossip may not have told yet whose
// replica it is). A replica outside the cluster (a standalone redis-server
// after REPLICAOF) would only answer the commands with an error, which
// redis-server 7 logs as CRITICAL each time.
func (s *Server) hasClusterReplica(st *gossip.State) bool {
	if len(replicasOf(st, st.Myself.ID, true)) > 0 {
		return true
	}
	r := &s.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.masterHost != "" {
		return false
	}
	for _, l := range r.replicas {
		for _, n := range st.Nodes {
			if n != st.Myself && n.Port == l.port && n.IP == l.ip {
				return true
			}
		}
	}
	return false
}

// waitReplicaAcks waits until every replica online now acknowledged the
// stream up to off, or timeout passes (0: no limit). It reports whether
// they all did.
func (s *Server) waitReplicaAcks(c *Client, off int64, timeout time.Duration) bool {
	r := &s.repl
	r.mu.Lock()
	var links []*replicaLink
	for _, l := range r.replicas {
		if l.state.Load() == rlOnline {
			links = append(links, l)
		}
	}
	r.mu.Unlock()
	acked := func() bool {
		for _, l := range links {
			if l.ackOff.Load() < off {
				return false
			}
		}
		return true
	}
	if acked() {
		return true
	}
	// Ask for the ACKs now rather than at the replicas' next second.
	if s.feed.on.Load() {
		s.feed.appendRaw(getackCmd)
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		wake := r.ackSignal()
		if acked() {
			return true
		}
		select {
		case <-deadline:
			return acked()
		case <-s.done:
			return acked()
		case <-wake:
		case <-tick.C:
			// A replica that went away never ACKs: the deadline ends
			// the wait; a client that went away ends it now.
			if c != nil && c.killed.Load() {
				return false
			}
		}
	}
}

// ackSignal returns a channel closed at the next replica ACK.
func (r *replication) ackSignal() <-chan struct{} {
	for {
		if p := r.ackWake.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		if r.ackWake.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// applyReplicatedSetSlot applies a slot change that came down the
// replication stream, to a replica's view: no ownership checks (the slot
// is its master's), unknown nodes kept as named (gossip brings them).
// NODE closes the slot's marks and gives the slot to its new owner without
// an epoch of its own: the owner's claim confirms it.
func applyReplicatedSetSlot(st *gossip.State, now int64, slot int, action string, id gossip.NodeID) []gossip.Output {
	switch action {
	case "migrating":
		st.SetSlotMigrating(slot, id)
	case "importing":
		st.SetSlotImporting(slot, id)
	case "stable":
		st.SetSlotStable(slot)
	case "node":
		st.SetSlotStable(slot)
		if n := st.Nodes[id]; n != nil && n.IsMaster() && n != st.Myself {
			outs, _ := st.SetSlotNode(now, slot, id)
			return outs
		}
	}
	return nil
}

// persistSlotChange writes the config after slot changes on the loop.
func persistSlotChange(cn *clusterNode, st *gossip.State) error {
	if p := st.Unsaved(); p != nil {
		return cn.persist(p.Sync)
	}
	return nil
}

// resyncOpenSlots appends this master's open slots to the replication
// stream, for a replica whose full sync just started (its image carries
// no slot state). It runs on the cluster loop, so that it is ordered with
// the SETSLOT calls around it.
func (s *Server) resyncOpenSlots() {
	cn := s.cl
	if cn == nil {
		return
	}
	cn.do(func() {
		st := cn.st
		if !st.Myself.IsMaster() || !s.feed.on.Load() || !s.hasClusterReplica(st) {
			return
		}
		for _, g := range []struct {
			action string
			marks  map[int]gossip.NodeID
		}{{"MIGRATING", st.Migrating}, {"IMPORTING", st.Importing}} {
			byNode := map[gossip.NodeID][][]byte{}
			var order []gossip.NodeID
			for slot, id := range g.marks {
				if _, ok := byNode[id]; !ok {
					order = append(order, id)
				}
				byNode[id] = append(byNode[id], []byte(itoa(slot)))
			}
			for _, id := range order {
				args := append([][]byte{[]byte("SLOTD.MIGRATE"), []byte("SETSLOTS"), []byte(g.action), []byte(id)}, byNode[id]...)
				s.feed.appendCommand(0, args...)
			}
		}
	})
}

// clearOpenSlotsForSync drops a replica's open slots when it loads its
// master's image: the master resends the ones still open.
func (s *Server) clearOpenSlotsForSync() {
	cn := s.cl
	if cn == nil {
		return
	}
	cn.do(func() {
		st := cn.st
		if len(st.Migrating) == 0 && len(st.Importing) == 0 {
			return
		}
		for slot := range st.Migrating {
			st.SetSlotStable(slot)
		}
		for slot := range st.Importing {
			st.SetSlotStable(slot)
		}
		if err := persistSlotChange(cn, st); err != nil {
			cn.log.Error("cannot write the cluster config", zap.Error(err))
		}
	})
}
