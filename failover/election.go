package failover

import (
	"strconv"

	"github.com/slotd/slotd/gossip"
)

// electionTick runs a replica's side of an election: schedule it when the
// master is FAIL, start it when its time comes, give up when it times out.
func (m *Machine) electionTick(now int64, st *gossip.State) {
	me := st.Myself
	if m.authSent && me.Master != m.electionOf {
		// Our master changed under the election: another replica won it.
		m.lose(st, "another replica won: now following "+short(me.Master))
	}
	master := st.Nodes[me.Master]
	manual := m.mfEnd != 0 && m.mfCanStart
	if master == nil || master.NumSlots == 0 || (master.Flags&gossip.FlagFail == 0 && !manual) {
		m.cantReason = ""
		return
	}
	if me.Flags&gossip.FlagNoFailover != 0 && !manual {
		m.cant(me.ID, "nofailover: cluster-replica-no-failover is set")
		return
	}
	timeout := st.Cfg.NodeTimeout
	authTimeout := max(2*timeout, minAuthTimeout)
	retry := 2 * authTimeout
	if age := m.dataAge(now, timeout); !manual && m.Cfg.ValidityFactor > 0 &&
		age > m.Cfg.ReplPingPeriod+timeout*m.Cfg.ValidityFactor {
		m.cant(me.ID, "data too old: "+itoa(age)+" ms since the master link went down (limit "+
			itoa(m.Cfg.ReplPingPeriod+timeout*m.Cfg.ValidityFactor)+" ms)")
		return
	}
	m.cantReason = ""
	if now-m.authTime > retry {
		m.schedule(now, st, manual)
		if !manual {
			return
		}
	}
	if !m.authSent && !manual {
		// Siblings' offsets keep arriving while we wait: only ever move back.
		if r := m.rank(st); r > m.authRank {
			m.authTime += int64(r-m.authRank) * rankDelay
			m.event(EventElectionScheduled, me.ID, "rank changed to "+strconv.Itoa(r)+": election in "+itoa(m.authTime-now)+" ms")
			m.authRank = r
		}
		// Another shard failing meanwhile with a smaller master id goes first.
		if f := m.failedMasterRank(now, st); f > m.failedRank {
			m.authTime += int64(f-m.failedRank) * failedRankDelay
			m.event(EventElectionScheduled, me.ID, "failed-master rank changed to "+strconv.Itoa(f)+": election in "+itoa(m.authTime-now)+" ms")
			m.failedRank = f
		}
	}
	if now < m.authTime {
		return
	}
	if now-m.authTime > authTimeout {
		if m.authSent {
			m.lose(st, "timed out after "+itoa(authTimeout)+" ms with "+strconv.Itoa(len(m.votes))+
				" of "+strconv.Itoa(quorum(st))+" votes; retry in "+itoa(m.authTime+retry-now)+" ms")
		}
		return
	}
	if !m.authSent {
		outs, epoch := st.RequestVotes(now, m.mfEnd != 0)
		m.authEpoch = epoch
		m.authSent = true
		m.electionOf = me.Master
		clear(m.votes)
		m.Stats.ElectionsStarted++
		m.event(EventElectionStarted, me.ID, "epoch "+utoa(epoch)+", master "+short(me.Master)+
			", needs "+strconv.Itoa(quorum(st))+" of "+strconv.Itoa(slotMasters(st))+" votes")
		m.gossip(outs)
	}
}

// schedule sets the time of the next election, as Redis does when the
// previous one is older than the retry time.
func (m *Machine) schedule(now int64, st *gossip.State, manual bool) {
	me := st.Myself
	m.authSent = false
	m.electionOf = me.Master
	clear(m.votes)
	if manual {
		m.authTime, m.authRank, m.failedRank = now, 0, 0
		m.event(EventElectionScheduled, me.ID, "manual failover: election now (offset "+itoa(me.ReplOffset)+")")
		return
	}
	m.authRank = m.rank(st)
	m.failedRank = m.failedMasterRank(now, st)
	m.authTime = now + electionDelay + m.rand(electionJitter) +
		int64(m.authRank)*rankDelay + int64(m.failedRank)*failedRankDelay
	m.event(EventElectionScheduled, me.ID, "election in "+itoa(m.authTime-now)+" ms (rank "+strconv.Itoa(m.authRank)+
		", failed-master rank "+strconv.Itoa(m.failedRank)+", offset "+itoa(me.ReplOffset)+")")
	// Tell the siblings our final offset so they rank themselves the same way.
	m.gossip(st.BroadcastPong(now))
}

// dataAge is how old this replica's data is: the time since its master
// link went down, less one node timeout (the time FAIL detection takes).
func (m *Machine) dataAge(now, timeout int64) int64 {
	if m.linkDown == 0 {
		return 0
	}
	age := now - m.linkDown
	if age > timeout {
		age -= timeout
	}
	return age
}

// rank counts the healthy sibling replicas that are better candidates.
func (m *Machine) rank(st *gossip.State) int {
	me := st.Myself
	r := 0
	for _, n := range replicasOf(st, me.Master) {
		if n == me || n.Flags&(gossip.FlagNoFailover|gossip.FlagFail) != 0 {
			continue
		}
		if ranksBefore(n.ReplOffset, n.ID, me.ReplOffset, me.ID) {
			r++
		}
	}
	return r
}

// failedMasterRank counts the FAIL masters serving slots that elect before
// ours. A master failed for longer than the validity limit is left out: its
// replicas will not run.
func (m *Machine) failedMasterRank(now int64, st *gossip.State) int {
	mine := st.Myself.Master
	r := 0
	for _, id := range st.Order() {
		n := st.Nodes[id]
		if id == mine || !n.IsMaster() || n.Flags&gossip.FlagFail == 0 || n.NumSlots == 0 {
			continue
		}
		if m.Cfg.ValidityFactor > 0 && now-n.FailTime > st.Cfg.NodeTimeout*m.Cfg.ValidityFactor {
			continue
		}
		if failsBefore(id, mine) {
			r++
		}
	}
	return r
}

func (m *Machine) cant(id gossip.NodeID, why string) {
	if why == m.cantReason {
		return
	}
	m.cantReason = why
	m.event(EventCantFailover, id, why)
}

func (m *Machine) lose(st *gossip.State, why string) {
	m.authSent = false
	m.Stats.ElectionsLost++
	m.event(EventElectionLost, st.Myself.ID, "epoch "+utoa(m.authEpoch)+": "+why)
}

// onAuthAck counts a vote; a majority wins at once.
func (m *Machine) onAuthAck(now int64, st *gossip.State, from gossip.NodeID, msg *gossip.FailoverAuthAck) {
	me := st.Myself
	voter := st.Nodes[from]
	if voter == nil || !voter.IsMaster() || voter.NumSlots == 0 || !me.IsReplica() || !m.authSent ||
		me.Master != m.electionOf || !ackCounts(msg.CurrentEpoch, m.authEpoch) {
		return
	}
	if now-m.authTime > max(2*st.Cfg.NodeTimeout, minAuthTimeout) {
		return
	}
	// A late ack does not promote a replica whose reason to run is gone:
	// the master is back (not FAIL) and no manual failover is under way.
	master := st.Nodes[me.Master]
	if master == nil || master.Flags&gossip.FlagFail == 0 && !(m.mfEnd != 0 && m.mfCanStart) {
		return
	}
	m.votes[from] = true
	if len(m.votes) >= quorum(st) {
		m.win(now, st)
	}
}

// win makes this replica the master of its master's slots with the
// election epoch and announces it.
func (m *Machine) win(now int64, st *gossip.State) {
	me := st.Myself
	epoch := m.authEpoch
	m.Stats.ElectionsWon++
	m.event(EventElectionWon, me.ID, "epoch "+utoa(epoch)+" with "+strconv.Itoa(len(m.votes))+" of "+
		strconv.Itoa(slotMasters(st))+" votes: replacing "+short(me.Master))
	m.authSent = false
	m.authTime = 0
	m.resetManual(st)
	m.out = append(m.out, &Promote{Epoch: epoch})
	m.gossip(st.Promote(now, epoch))
}

func short(id gossip.NodeID) string {
	if len(id) > 8 {
		return string(id[:8])
	}
	return string(id)
}
