package failover

import (
	"errors"

	"github.com/slotd/slotd/gossip"
)

// Mode is the form of CLUSTER FAILOVER.
type Mode uint8

// The three forms.
const (
	// ModeDefault: the master pauses writes, the replica catches up, then an
	// election that masters grant although the master is not FAIL.
	ModeDefault Mode = iota
	// ModeForce: the election without the catch-up (the master may be down).
	ModeForce
	// ModeTakeover: no election: a new epoch and the slots, at once.
	ModeTakeover
)

var modeNames = [...]string{"default", "force", "takeover"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "unknown"
}

// CLUSTER FAILOVER errors, with redis-server's reply texts.
var (
	// ErrNotReplica: CLUSTER FAILOVER sent to a master.
	ErrNotReplica = errors.New("ERR You should send CLUSTER FAILOVER to a replica")
	// ErrMasterUnknown: this replica's master is not in its view.
	ErrMasterUnknown = errors.New("ERR I'm a replica but my master is unknown to me")
	// ErrMasterDown: the default form needs a reachable, non-FAIL master.
	ErrMasterDown = errors.New("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE")
)

// Manual is CLUSTER FAILOVER [FORCE|TAKEOVER] on this node.
func (m *Machine) Manual(now int64, st *gossip.State, mode Mode) ([]Output, error) {
	me := st.Myself
	if me.IsMaster() {
		return nil, ErrNotReplica
	}
	master := st.Nodes[me.Master]
	if master == nil {
		return nil, ErrMasterUnknown
	}
	if mode == ModeDefault && (master.Flags&gossip.FlagFail != 0 || !master.Connected) {
		return nil, ErrMasterDown
	}
	m.resetManual(st)
	m.mfEnd = now + ManualTimeout
	m.mfMode = mode
	// A manual failover runs its own election now, whatever the retry
	// timer of an earlier automatic one says.
	m.authTime = 0
	m.authSent = false
	m.Stats.ManualFailovers++
	m.event(EventManualStarted, me.ID, mode.String()+" failover of "+short(master.ID))
	switch mode {
	case ModeTakeover:
		var maxConfig uint64
		for _, n := range st.Nodes {
			maxConfig = max(maxConfig, n.ConfigEpoch)
		}
		epoch := nextEpoch(st.CurrentEpoch, maxConfig)
		m.event(EventTakeover, me.ID, "took epoch "+utoa(epoch)+" and the slots of "+short(master.ID)+" without a vote")
		m.resetManual(st)
		m.out = append(m.out, &Promote{Epoch: epoch})
		m.gossip(st.Promote(now, epoch))
	case ModeForce:
		m.mfCanStart = true
	default:
		h := st.Header()
		outs, _ := st.SendMessage(now, master.ID, &gossip.MFStart{Header: h})
		m.gossip(outs)
	}
	return m.flush(), nil
}

// onMFStart is the master's side: a replica of ours asked for a manual
// failover, so writes stop and the replica learns where they stopped.
func (m *Machine) onMFStart(now int64, st *gossip.State, from gossip.NodeID) {
	me := st.Myself
	r := st.Nodes[from]
	if r == nil || !me.IsMaster() || r.Master != me.ID {
		return
	}
	m.resetManual(st)
	m.mfEnd = now + ManualTimeout
	m.mfReplica = from
	m.event(EventManualPaused, from, "writes paused for its manual failover")
	m.out = append(m.out, &PauseWrites{Until: now + ManualTimeout*manualPauseMult, Replica: from})
}

// WritesPaused is the caller's answer to PauseWrites: writes stopped at
// offset. The paused flag and the offset go out to the replica at once and
// with every ping until the failover ends.
func (m *Machine) WritesPaused(now int64, st *gossip.State, offset int64) []Output {
	if m.mfEnd == 0 || m.mfReplica == "" || !st.Myself.IsMaster() {
		return m.flush()
	}
	st.SetReplOffset(offset)
	st.MFlags |= gossip.MFlagPaused
	m.gossip(st.PingNode(now, m.mfReplica))
	return m.flush()
}

// manualTick moves a manual failover on: the replica notices it caught up;
// the master keeps its replica informed (on ticks); both give up after the
// timeout; a master that became a replica resumes writes.
func (m *Machine) manualTick(now int64, st *gossip.State, tick bool) {
	if m.mfEnd == 0 {
		return
	}
	me := st.Myself
	if now > m.mfEnd {
		m.event(EventManualAborted, me.ID, "manual failover timed out")
		m.resetManual(st)
		return
	}
	if m.mfReplica != "" {
		if !me.IsMaster() {
			// Done: the replica won and we follow it.
			m.resetManual(st)
			return
		}
		if tick && st.MFlags&gossip.MFlagPaused != 0 {
			m.gossip(st.PingNode(now, m.mfReplica))
		}
		return
	}
	if !me.IsReplica() || m.mfCanStart {
		return
	}
	master := st.Nodes[me.Master]
	if master != nil && master.MFlags&gossip.MFlagPaused != 0 && me.ReplOffset >= master.ReplOffset {
		m.mfCanStart = true
		m.event(EventManualReady, me.ID, "reached the paused master's offset "+itoa(master.ReplOffset))
	}
}

// resetManual ends any manual failover; a paused master resumes writes.
func (m *Machine) resetManual(st *gossip.State) {
	if m.mfReplica != "" && st.MFlags&gossip.MFlagPaused != 0 {
		m.out = append(m.out, &ResumeWrites{})
	}
	st.MFlags &^= gossip.MFlagPaused
	m.mfEnd = 0
	m.mfCanStart = false
	m.mfReplica = ""
	m.mfMode = ModeDefault
}
