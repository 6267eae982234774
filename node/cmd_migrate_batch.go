package node

import (
	"strings"

	"go.uber.org/zap"

	"github.com/slotd/slotd/gossip"
	"github.com/slotd/slotd/slots"
)

// SLOTD.MIGRATE SETSLOTS <IMPORTING|MIGRATING|NODE|STABLE> <node-id|-> <slot> [<slot> ...]
//
// runs CLUSTER SETSLOT for each slot, with the same rules and error texts,
// on one pass of the cluster loop and with one write (and fsync) of the
// cluster config for all of them. It answers an array with one reply per
// slot (+OK or the error SETSLOT would give). slotctl sends it to slotd
// nodes to coalesce the SETSLOT calls of the slots it moves in parallel:
// the config is persisted once per batch instead of once per slot, which
// is what bounds a reshard of thousands of slots with few keys each.
func cmdSetSlots(x *Ctx) {
	action := strings.ToLower(x.Arg(2))
	switch action {
	case "importing", "migrating", "node", "stable":
	default:
		x.W.Error("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
		return
	}
	ss := make([]int, 0, len(x.Args)-4)
	for _, a := range x.Args[4:] {
		n, ok := ParseInt(a)
		if !ok || n < 0 || n >= slots.Count {
			x.W.Error("ERR Invalid or out of range slot")
			return
		}
		ss = append(ss, int(n))
	}
	id := gossip.NodeID(x.Arg(3))
	var msgs []string
	var waitOff int64
	ran := false
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		ran = true
		if x.master {
			// From this replica's master: its view follows.
			for _, slot := range ss {
				cn.apply(applyReplicatedSetSlot(st, now, slot, action, id))
			}
			if err := persistSlotChange(cn, st); err != nil {
				cn.log.Error("cannot write the cluster config", zap.Error(err))
			}
			return
		}
		if st.Myself.IsReplica() {
			x.W.Error("ERR Please use SETSLOT only with masters.")
			return
		}
		var target *gossip.Node
		if action != "stable" {
			target = st.Nodes[id]
			if target == nil {
				if action == "node" {
					x.W.Error("ERR Unknown node " + x.Arg(3))
				} else {
					x.W.Error("ERR I don't know about node " + x.Arg(3))
				}
				return
			}
			if target.IsReplica() {
				x.W.Error("ERR Target node is not a master")
				return
			}
		}
		msgs = make([]string, len(ss))
		changed := false
		// The outputs of all the slots are applied once: one config write
		// for the batch (before anything is announced), one SlotsLost for
		// every slot given away.
		var outs []gossip.Output
		var lost slots.Bitmap
		anyLost := false
		for i, slot := range ss {
			o, msg := applySetSlot(x, st, now, slot, action, target)
			msgs[i] = msg
			changed = changed || msg == ""
			for _, out := range o {
				switch out := out.(type) {
				case *gossip.Persist:
				case *gossip.SlotsLost:
					for i := range lost {
						lost[i] |= out.Slots[i]
					}
					anyLost = true
				default:
					outs = append(outs, out)
				}
			}
		}
		if changed {
			if err := cn.persist(st.Saved()); err != nil {
				msgs = nil
				x.W.Error("ERR error saving the cluster node config: " + err.Error())
				return
			}
		}
		if anyLost {
			outs = append(outs, &gossip.SlotsLost{Slots: lost})
		}
		cn.apply(outs)
		if changed {
			// The replicas get the slots that changed here.
			args := [][]byte{[]byte("SLOTD.MIGRATE"), []byte("SETSLOTS"), []byte(strings.ToUpper(action)), []byte(id)}
			for i, slot := range ss {
				if msgs[i] == "" {
					args = append(args, []byte(itoa(slot)))
				}
			}
			waitOff = replicateSlotChange(x, st, args...)
		}
	})
	if !ran || msgs == nil {
		if ran && x.master {
			x.W.OK()
		}
		return
	}
	acked := waitOff == 0 || x.S.waitReplicaAcks(x.C, waitOff, setSlotDefaultTimeout)
	x.W.Array(len(msgs))
	for _, m := range msgs {
		switch {
		case m != "":
			x.W.Error(m)
		case !acked:
			x.W.Error(errSlotNoReplicaAck)
		default:
			x.W.OK()
		}
	}
}
