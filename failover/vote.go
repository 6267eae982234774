package failover

import (
	"strconv"

	"github.com/slotd/slotd/slots"

	"github.com/slotd/slotd/gossip"
)

// onAuthRequest is a master's side of an election: grant the vote or say
// why not. Replicas and masters without slots do not vote.
func (m *Machine) onAuthRequest(now int64, st *gossip.State, from gossip.NodeID, req *gossip.FailoverAuthRequest) {
	me := st.Myself
	if !me.IsMaster() || me.NumSlots == 0 {
		return
	}
	why := m.refusal(now, st, from, req)
	if why != "" {
		m.Stats.VotesRefused++
		m.event(EventVoteRefused, from, why)
		return
	}
	node := st.Nodes[from]
	outs, ok := st.GrantVote(now, from, node.Master)
	if !ok {
		return
	}
	m.Stats.VotesGranted++
	m.event(EventVoteGranted, from, "epoch "+utoa(st.CurrentEpoch)+" to replace "+short(node.Master))
	m.gossip(outs)
}

// refusal returns why this master may not vote for the request, or "".
// The checks and their order are Redis's.
func (m *Machine) refusal(now int64, st *gossip.State, from gossip.NodeID, req *gossip.FailoverAuthRequest) string {
	if requestStale(req.CurrentEpoch, st.CurrentEpoch) {
		return "request epoch " + utoa(req.CurrentEpoch) + " < current epoch " + utoa(st.CurrentEpoch)
	}
	if alreadyVoted(st.LastVoteEpoch, st.CurrentEpoch) {
		return "already voted in epoch " + utoa(st.CurrentEpoch)
	}
	node := st.Nodes[from]
	if node == nil || node.IsMaster() {
		return "it is a master"
	}
	master := st.Nodes[node.Master]
	if master == nil {
		return "its master is unknown"
	}
	force := req.MFlags&gossip.MFlagForceAck != 0
	if master.Flags&gossip.FlagFail == 0 && !force {
		return "its master " + short(master.ID) + " is not FAIL"
	}
	if votedRecently(now, master.VotedTime, st.Cfg.NodeTimeout) {
		return "voted for a replica of " + short(master.ID) + " " + itoa(now-master.VotedTime) +
			" ms ago (wait " + itoa(2*st.Cfg.NodeTimeout) + " ms)"
	}
	for j := 0; j < slots.Count; j++ {
		if !req.Slots.Has(j) {
			continue
		}
		o := st.Owner[j]
		if o == "" {
			continue
		}
		on := st.Nodes[o]
		if on != nil && claimOutdated(on.ConfigEpoch, req.ConfigEpoch) {
			return "slot " + strconv.Itoa(j) + " has config epoch " + utoa(on.ConfigEpoch) +
				" > claim " + utoa(req.ConfigEpoch)
		}
	}
	return ""
}
