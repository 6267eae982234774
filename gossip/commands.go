package gossip

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/slotd/slotd/slots"
)

// Command errors carry redis-server's exact reply text, so the CLUSTER
// command handlers can write err.Error() as the error reply.
var (
	// ErrForgetMyself: CLUSTER FORGET of this node's own id.
	ErrForgetMyself = errors.New("ERR I tried hard but I can't forget myself...")
	// ErrForgetMaster: CLUSTER FORGET of this replica's master.
	ErrForgetMaster = errors.New("ERR Can't forget my master!")
	// ErrEpochOthers: SET-CONFIG-EPOCH when other nodes are known.
	ErrEpochOthers = errors.New("ERR The user can assign a config epoch only when the node does not know any other node.")
	// ErrEpochSet: SET-CONFIG-EPOCH when the config epoch is already non-zero.
	ErrEpochSet = errors.New("ERR Node config epoch is already non-zero")
	// ErrNotMaster: SETSLOT NODE naming a replica.
	ErrNotMaster = errors.New("ERR Target node is not a master")
)

// SlotError is a per-slot command error (busy, unassigned, duplicate).
type SlotError struct {
	Slot int
	What string
}

func (e *SlotError) Error() string {
	switch e.What {
	case "busy":
		return "ERR Slot " + strconv.Itoa(e.Slot) + " is already busy"
	case "unassigned":
		return "ERR Slot " + strconv.Itoa(e.Slot) + " is already unassigned"
	default:
		return "ERR Slot " + strconv.Itoa(e.Slot) + " specified multiple times"
	}
}

// UnknownNodeError names a node id the state does not know. Redis words this
// differently per command, so the handler picks the text; Error gives
// FORGET's.
type UnknownNodeError struct{ ID string }

func (e *UnknownNodeError) Error() string { return "ERR Unknown node " + e.ID }

// Meet starts a handshake with the node at ip:port, bus port cport, and
// sends it a MEET at once (repeated each second until it answers or the
// handshake times out).
func (s *State) Meet(now int64, ip string, port, cport int) []Output {
	s.begin(now)
	n := s.startHandshake(ip, port, cport, true)
	s.ping(n, TypeMeet)
	return s.flush()
}

// AddSlots assigns the slots to this node (CLUSTER ADDSLOTS); nothing
// changes when any slot is busy or repeated.
func (s *State) AddSlots(now int64, list []int) ([]Output, error) {
	s.begin(now)
	var seen slots.Bitmap
	for _, j := range list {
		if s.Owner[j] != "" {
			return nil, &SlotError{j, "busy"}
		}
		if seen.Has(j) {
			return nil, &SlotError{j, "dup"}
		}
		seen.Set(j)
	}
	for _, j := range list {
		delete(s.Importing, j)
		s.assignSlot(j, s.Myself)
	}
	s.updateState()
	return s.flush(), nil
}

// DelSlots unassigns the slots (CLUSTER DELSLOTS), whoever owns them.
func (s *State) DelSlots(now int64, list []int) ([]Output, error) {
	s.begin(now)
	var seen slots.Bitmap
	for _, j := range list {
		if s.Owner[j] == "" {
			return nil, &SlotError{j, "unassigned"}
		}
		if seen.Has(j) {
			return nil, &SlotError{j, "dup"}
		}
		seen.Set(j)
	}
	for _, j := range list {
		delete(s.Importing, j)
		delete(s.Migrating, j)
		s.unassignSlot(j)
	}
	s.updateState()
	return s.flush(), nil
}

// SetSlotNode is CLUSTER SETSLOT <slot> NODE <id>. The caller checks the
// key-related rules (a slot we still hold keys for cannot be given away).
// Taking an importing slot closes the migration: this node bumps its config
// epoch without consensus and announces it.
func (s *State) SetSlotNode(now int64, slot int, id NodeID) ([]Output, error) {
	s.begin(now)
	n := s.Nodes[id]
	if n == nil {
		return nil, &UnknownNodeError{string(id)}
	}
	if n.IsReplica() {
		return nil, ErrNotMaster
	}
	delete(s.Migrating, slot)
	wasMine := s.Owner[slot] == s.Myself.ID
	s.assignSlot(slot, n)
	if wasMine && n != s.Myself {
		var lost slots.Bitmap
		lost.Set(slot)
		s.emit(&SlotsLost{Slots: lost})
	}
	if _, ok := s.Importing[slot]; ok && n == s.Myself {
		delete(s.Importing, slot)
		if s.bumpEpoch() {
			s.broadcastPong()
		}
	}
	s.updateState()
	return s.flush(), nil
}

// SetSlotMigrating marks slot as migrating to id (CLUSTER SETSLOT MIGRATING).
func (s *State) SetSlotMigrating(slot int, id NodeID) {
	s.Migrating[slot] = id
	s.dirty = true
}

// SetSlotImporting marks slot as importing from id (CLUSTER SETSLOT IMPORTING).
func (s *State) SetSlotImporting(slot int, id NodeID) {
	s.Importing[slot] = id
	s.dirty = true
}

// SetSlotStable clears slot's migrating and importing marks.
func (s *State) SetSlotStable(slot int) {
	delete(s.Migrating, slot)
	delete(s.Importing, slot)
	s.dirty = true
}

// followOpenSlots points this node's open slots that name from at to: to
// is the master that took over from from in its shard (a failover), and a
// migration under way with from goes on with to, as the promoted replica
// kept the slot open too (the master's SETSLOT reaches its replicas).
func (s *State) followOpenSlots(from, to NodeID) {
	if from == to || to == s.Myself.ID || from == s.Myself.ID {
		return
	}
	for j, id := range s.Migrating {
		if id == from {
			s.Migrating[j] = to
			s.dirty = true
			s.event(EventOpenSlotFollowed, to, "slot "+strconv.Itoa(j)+" migrating, was "+string(from))
		}
	}
	for j, id := range s.Importing {
		if id == from {
			s.Importing[j] = to
			s.dirty = true
			s.event(EventOpenSlotFollowed, to, "slot "+strconv.Itoa(j)+" importing, was "+string(from))
		}
	}
}

// Forget removes a node and keeps it out of our view for ForgetBan ms, long
// enough for FORGET to reach every node before gossip brings it back.
func (s *State) Forget(now int64, id NodeID) ([]Output, error) {
	s.begin(now)
	n := s.Nodes[id]
	switch {
	case n == nil:
		return nil, &UnknownNodeError{string(id)}
	case n == s.Myself:
		return nil, ErrForgetMyself
	case s.Myself.IsReplica() && s.Myself.Master == id:
		return nil, ErrForgetMaster
	}
	s.banned[id] = now + ForgetBan
	s.delNode(n)
	s.event(EventNodeRemoved, id, "forget")
	s.updateState()
	return s.flush(), nil
}

// SetConfigEpoch is CLUSTER SET-CONFIG-EPOCH, for a fresh node only.
func (s *State) SetConfigEpoch(now int64, epoch uint64) ([]Output, error) {
	s.begin(now)
	if len(s.Nodes) > 1 {
		return nil, ErrEpochOthers
	}
	if s.Myself.ConfigEpoch != 0 {
		return nil, ErrEpochSet
	}
	s.Myself.ConfigEpoch = epoch
	s.CurrentEpoch = adoptEpoch(s.CurrentEpoch, epoch)
	s.dirty = true
	return s.flush(), nil
}

// maxEpoch is the largest epoch this node has seen anywhere.
func (s *State) maxEpoch() uint64 {
	m := s.CurrentEpoch
	for _, n := range s.Nodes {
		m = max(m, n.ConfigEpoch)
	}
	return m
}

// takeEpoch raises currentEpoch by one, unless it is MaxEpoch already:
// past it this node's frames would be refused by every peer.
func (s *State) takeEpoch() bool {
	if s.CurrentEpoch >= MaxEpoch {
		s.event(EventEpochExhausted, s.Myself.ID, "currentEpoch is at its maximum")
		return false
	}
	s.CurrentEpoch++
	return true
}

// bumpEpoch takes a new config epoch without asking anyone, unless this
// node already holds the largest one (and it is not zero).
func (s *State) bumpEpoch() bool {
	me := s.Myself
	if me.ConfigEpoch != 0 && me.ConfigEpoch == s.maxEpoch() || !s.takeEpoch() {
		return false
	}
	me.ConfigEpoch = s.CurrentEpoch
	s.dirty = true
	return true
}

// BumpEpoch is CLUSTER BUMPEPOCH: it reports whether the epoch changed
// (BUMPED or STILL) and this node's config epoch.
func (s *State) BumpEpoch(now int64) ([]Output, bool, uint64) {
	s.begin(now)
	b := s.bumpEpoch()
	return s.flush(), b, s.Myself.ConfigEpoch
}

// Replicate makes this node a replica of id (CLUSTER REPLICATE). The caller
// checks Redis's preconditions (keys, slots) first.
func (s *State) Replicate(now int64, id NodeID) ([]Output, error) {
	s.begin(now)
	n := s.Nodes[id]
	if n == nil {
		return nil, &UnknownNodeError{string(id)}
	}
	me := s.Myself
	if n == me {
		return nil, errors.New("ERR Can't replicate myself")
	}
	if n.IsReplica() {
		return nil, errors.New("ERR I can only replicate a master, not a replica.")
	}
	for j := 0; j < slots.Count && me.NumSlots > 0; j++ {
		if me.Slots.Has(j) {
			s.unassignSlot(j)
		}
	}
	clear(s.Migrating)
	clear(s.Importing)
	me.Flags = me.Flags&^FlagMaster | FlagSlave
	me.Master = id
	s.dirty = true
	s.emit(&RoleChanged{Master: id})
	s.updateState()
	return s.flush(), nil
}

// Reset is CLUSTER RESET: forget every other node, drop all slots and open
// slots, become a master; hard also zeroes the epochs and takes a new id.
func (s *State) Reset(now int64, hard bool) []Output {
	s.begin(now)
	me := s.Myself
	lost := me.Slots
	for _, id := range append([]NodeID(nil), s.order...) {
		if n := s.Nodes[id]; n != me {
			s.delNode(n)
		}
	}
	for j := range s.Owner {
		if s.Owner[j] != "" {
			s.unassignSlot(j)
		}
	}
	clear(s.Migrating)
	clear(s.Importing)
	clear(s.banned)
	me.Flags = me.Flags&^FlagSlave | FlagMaster
	me.Master = ""
	me.FailReports = nil
	if hard {
		s.CurrentEpoch, s.LastVoteEpoch = 0, 0
		me.ConfigEpoch = 0
		s.renameNode(me, RandomID(s.Cfg.Rand))
	}
	s.dirty = true
	if lost.Count() > 0 {
		s.emit(&SlotsLost{Slots: lost})
	}
	s.updateState()
	return s.flush()
}

// Publish spreads a PUBLISH to every node.
func (s *State) Publish(now int64, channel, message []byte) []Output {
	s.begin(now)
	s.broadcast(&Publish{Header: s.header(), Channel: channel, Message: message})
	return s.flush()
}

// String summarises the state for test failures.
func (s *State) String() string {
	return fmt.Sprintf("%s epoch=%d nodes=%d state=%s", s.Myself.ID[:8], s.CurrentEpoch, len(s.Nodes), s.Status)
}

// Header returns this node's current message header, for messages other
// packages build (failover auth requests and acks).
func (s *State) Header() Header { return s.header() }

// SendMessage asks for m to be sent to the known node id (failover's
// auth acks); it reports false when id is unknown or has no address.
func (s *State) SendMessage(now int64, id NodeID, m Message) ([]Output, bool) {
	s.begin(now)
	n := s.Nodes[id]
	if n == nil || n.Flags&(FlagNoAddr|FlagHandshake) != 0 {
		return nil, false
	}
	s.Stats.Sent[m.Type()]++
	s.emit(&Send{To: id, Addr: n.Addr(), Msg: m})
	return s.flush(), true
}

// BroadcastMessage sends m to every known node (failover auth requests).
func (s *State) BroadcastMessage(now int64, m Message) []Output {
	s.begin(now)
	s.broadcast(m)
	return s.flush()
}

// Promote makes this replica the master of its master's slots with the
// given config epoch (won in an election, or taken by TAKEOVER), persists
// and announces it to every node at once.
func (s *State) Promote(now int64, epoch uint64) []Output {
	s.begin(now)
	me := s.Myself
	old := s.Nodes[me.Master]
	if old != nil {
		for j := 0; j < slots.Count && old.NumSlots > 0; j++ {
			if old.Slots.Has(j) {
				s.assignSlot(j, me)
			}
		}
	}
	me.Flags = me.Flags&^FlagSlave | FlagMaster
	me.Master = ""
	me.ConfigEpoch = epoch
	s.CurrentEpoch = adoptEpoch(s.CurrentEpoch, epoch)
	s.dirty = true
	s.broadcastPong()
	s.updateState()
	return s.flush()
}

// RequestVotes starts an election (package failover decides when): it
// takes a new currentEpoch, persists it, and asks every node for its vote
// with a failover-auth-request whose header carries the slots and config
// epoch of this replica's master. force sets MFlagForceAck, which masters
// honour although the master is not FAIL (manual failover). It returns the
// election epoch.
func (s *State) RequestVotes(now int64, force bool) ([]Output, uint64) {
	s.begin(now)
	if !s.takeEpoch() {
		return s.flush(), s.CurrentEpoch
	}
	s.dirty = true
	h := s.header()
	if force {
		h.MFlags |= MFlagForceAck
	}
	s.broadcast(&FailoverAuthRequest{Header: h})
	return s.flush(), s.CurrentEpoch
}

// GrantVote records this master's vote for replica, a replica of master, in
// the current epoch (LastVoteEpoch, the master's VotedTime), persists it and
// only then sends the failover-auth-ack. The caller (package failover) has
// checked that the vote may be given.
func (s *State) GrantVote(now int64, replica, master NodeID) ([]Output, bool) {
	s.begin(now)
	r := s.Nodes[replica]
	if r == nil || r.Flags&(FlagNoAddr|FlagHandshake) != 0 {
		return nil, false
	}
	s.LastVoteEpoch = s.CurrentEpoch
	if m := s.Nodes[master]; m != nil {
		m.VotedTime = now
	}
	s.dirty = true
	s.Stats.Sent[TypeFailoverAuthAck]++
	s.emit(&Send{To: r.ID, Addr: r.Addr(), Msg: &FailoverAuthAck{Header: s.header()}})
	return s.flush(), true
}

// SetNoFailover sets or clears this node's nofailover flag
// (cluster-replica-no-failover); it travels in every header.
func (s *State) SetNoFailover(now int64, on bool) []Output {
	s.begin(now)
	me := s.Myself
	if on == (me.Flags&FlagNoFailover != 0) {
		return s.flush()
	}
	if on {
		me.Flags |= FlagNoFailover
	} else {
		me.Flags &^= FlagNoFailover
	}
	s.dirty = true
	return s.flush()
}

// PingNode sends a ping to one known node now (a master paused for a
// manual failover tells its replica the offset to reach at once).
func (s *State) PingNode(now int64, id NodeID) []Output {
	s.begin(now)
	n := s.Nodes[id]
	if n == nil || n == s.Myself || n.Flags&(FlagNoAddr|FlagHandshake) != 0 {
		return s.flush()
	}
	s.ping(n, TypePing)
	return s.flush()
}

// BroadcastPong sends a pong with this node's header to every known node
// (a replica about to run an election publishes its replication offset so
// its siblings compute the same ranks).
func (s *State) BroadcastPong(now int64) []Output {
	s.begin(now)
	s.broadcastPong()
	return s.flush()
}
