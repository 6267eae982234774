package gossip

import (
	"strconv"

	"github.com/slotd/slotd/slots"
)

// Timing constants of the protocol, in milliseconds (Redis's values).
const (
	// DefaultNodeTimeout is cluster-node-timeout's default.
	DefaultNodeTimeout = 15000
	// TickInterval is how often the caller should call Tick.
	TickInterval = 100
	// ForgetBan is how long FORGET keeps a node out of our view.
	ForgetBan = 60000
	// randomPingInterval: once per second a random node gets a ping.
	randomPingInterval = 1000
	// randomPingCandidates: the random ping goes to the stalest of this many picks.
	randomPingCandidates = 5
	// failReportValidityMult: failure reports expire after this many node timeouts.
	failReportValidityMult = 2
	// failUndoTimeMult: a slot-owning master stays FAIL this many node
	// timeouts before reachability alone clears it (nobody failed it over).
	failUndoTimeMult = 2
	// writableDelay: a master waits this long after start before it says ok.
	writableDelay  = 2000
	minRejoinDelay = 500
	maxRejoinDelay = 5000
	// handshakeResend: a handshake ping or meet is repeated this often until
	// answered, so that a MEET survives lost packets.
	handshakeResend = 1000
	// meetTimeoutMult: a handshake started by CLUSTER MEET lives this many
	// handshake timeouts.
	meetTimeoutMult = 3
)

// Config holds the settings of one node's state machine.
type Config struct {
	// NodeTimeout is cluster-node-timeout in ms.
	NodeTimeout int64
	// RequireFullCoverage is cluster-require-full-coverage.
	RequireFullCoverage bool
	// ClusterName must match on every message; messages of another cluster
	// are dropped and counted.
	ClusterName string
	// Rand is the only source of randomness (temporary ids, gossip picks).
	Rand Rand
}

// Stats count bus messages by type, as CLUSTER INFO reports them.
type Stats struct {
	Sent     [numTypes]uint64
	Received [numTypes]uint64
	// Rejected counts messages of another cluster.
	Rejected uint64
}

// State is one node's view of the cluster. It is not safe for concurrent
// use: the node's loop owns it and calls Step, Tick and the commands.
type State struct {
	Cfg Config
	// Myself is this node; it is also in Nodes.
	Myself        *Node
	Nodes         map[NodeID]*Node
	CurrentEpoch  uint64
	LastVoteEpoch uint64
	// Owner is the master serving each slot, "" when unassigned. It always
	// agrees with the owners' Slots bitmaps.
	Owner [slots.Count]NodeID
	// Migrating and Importing are this node's open slots.
	Migrating map[int]NodeID
	Importing map[int]NodeID
	Status    ClusterStatus
	Stats     Stats
	// MFlags go into every header this node sends; package failover sets
	// MFlagPaused while this master holds writes for a manual failover.
	MFlags uint8

	order        []NodeID         // Nodes in insertion order: deterministic iteration
	banned       map[NodeID]int64 // FORGET: id -> until
	dirty        bool             // config changed since the last Persist
	synced       [2]uint64        // current and own config epoch at the last synced Persist, +1
	out          []Output
	now          int64
	running      bool
	started      int64 // first call after NewState or Restart
	minorityTime int64 // last time we could not reach a majority of masters
	lastRandom   int64 // last random ping
	lastPing     map[NodeID]int64
	// senderEpochRose is set while a message is stepped: its header
	// carried a newer config epoch than the sender's slot claim we hold
	// (Node.ClaimEpoch).
	senderEpochRose bool
}

// NewState makes the state of a fresh node: a master with no slots that
// knows only itself. port and cport are its client and bus ports.
func NewState(cfg Config, id NodeID, ip string, port, cport int) *State {
	s := newEmpty(cfg)
	me := &Node{ID: id, IP: ip, Port: port, CPort: cport, Flags: FlagMyself | FlagMaster, Connected: true}
	s.addNode(me)
	s.Myself = me
	return s
}

func newEmpty(cfg Config) *State {
	if cfg.NodeTimeout <= 0 {
		cfg.NodeTimeout = DefaultNodeTimeout
	}
	return &State{
		Cfg:       cfg,
		Nodes:     make(map[NodeID]*Node),
		Migrating: make(map[int]NodeID),
		Importing: make(map[int]NodeID),
		banned:    make(map[NodeID]int64),
		lastPing:  make(map[NodeID]int64),
	}
}

// Order returns the known node ids in a stable order (insertion order).
func (s *State) Order() []NodeID { return s.order }

// SetReplOffset records this node's replication offset for the next headers.
func (s *State) SetReplOffset(off int64) { s.Myself.ReplOffset = off }

func (s *State) addNode(n *Node) {
	s.Nodes[n.ID] = n
	s.order = append(s.order, n.ID)
}

func (s *State) delNode(n *Node) {
	for sl := range n.Slots {
		if n.Slots[sl] == 0 {
			continue
		}
		for j := sl * 8; j < sl*8+8; j++ {
			if n.Slots.Has(j) {
				s.Owner[j] = ""
			}
		}
	}
	n.Slots = slots.Bitmap{}
	n.NumSlots = 0
	delete(s.Nodes, n.ID)
	for i, id := range s.order {
		if id == n.ID {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
	delete(s.lastPing, n.ID)
	for _, o := range s.Nodes {
		delete(o.FailReports, n.ID)
	}
	s.dirty = true
}

func (s *State) renameNode(n *Node, id NodeID) {
	old := n.ID
	delete(s.Nodes, old)
	n.ID = id
	s.Nodes[id] = n
	for i, x := range s.order {
		if x == old {
			s.order[i] = id
		}
	}
	if t, ok := s.lastPing[old]; ok {
		delete(s.lastPing, old)
		s.lastPing[id] = t
	}
	s.dirty = true
}

func (s *State) assignSlot(j int, n *Node) {
	if o := s.Owner[j]; o != "" {
		if on := s.Nodes[o]; on != nil {
			on.delSlot(j)
		}
	}
	s.Owner[j] = n.ID
	n.addSlot(j)
	s.dirty = true
}

func (s *State) unassignSlot(j int) {
	if o := s.Owner[j]; o != "" {
		if on := s.Nodes[o]; on != nil {
			on.delSlot(j)
		}
	}
	s.Owner[j] = ""
	s.dirty = true
}

// emit appends an output; a send that follows a config change is preceded
// by a Persist, so the change is on disk before anyone hears of it.
func (s *State) emit(o Output) {
	switch o.(type) {
	case *Send, *Broadcast:
		if s.dirty {
			s.out = append(s.out, s.persist())
			s.dirty = false
		}
	}
	s.out = append(s.out, o)
}

// Unsaved is for a command that saves the config before it replies,
// outside the Persist outputs: it returns nil when nothing changed since
// the last Persist, or the Persist to carry out now.
func (s *State) Unsaved() *Persist {
	if !s.dirty {
		return nil
	}
	s.dirty = false
	return s.persist()
}

// Saved is Unsaved for a write the caller makes anyway: it reports whether
// the write must be synced.
func (s *State) Saved() bool {
	s.dirty = false
	return s.persist().Sync
}

// persist makes a Persist, synced when an epoch changed since the last
// synced one (or none was synced yet).
func (s *State) persist() *Persist {
	now := [2]uint64{s.CurrentEpoch + 1, s.Myself.ConfigEpoch + 1}
	if now == s.synced {
		return &Persist{}
	}
	s.synced = now
	return &Persist{Sync: true}
}

func (s *State) event(k EventKind, id NodeID, detail string) {
	s.out = append(s.out, &Event{Kind: k, Node: id, Detail: detail})
}

// flush ends a call: a pending config change gets its Persist.
func (s *State) flush() []Output {
	if s.dirty {
		s.out = append(s.out, s.persist())
		s.dirty = false
	}
	o := s.out
	s.out = nil
	return o
}

func (s *State) begin(now int64) {
	s.now = now
	if !s.running {
		s.running = true
		s.started = now
	}
}

// myMaster is the master whose slots this node serves or replicates.
func (s *State) myMaster() *Node {
	if s.Myself.IsReplica() {
		return s.Nodes[s.Myself.Master]
	}
	return s.Myself
}

func (s *State) header() Header {
	me := s.Myself
	h := Header{
		Cluster:      s.Cfg.ClusterName,
		Sender:       me.ID,
		CurrentEpoch: s.CurrentEpoch,
		ConfigEpoch:  me.ConfigEpoch,
		Flags:        me.Flags & flagsWire,
		Master:       me.Master,
		ReplOffset:   me.ReplOffset,
		IP:           me.IP,
		Port:         me.Port,
		CPort:        me.CPort,
		Hostname:     me.Hostname,
		State:        s.Status,
		MFlags:       s.MFlags,
	}
	if m := s.myMaster(); m != nil {
		h.ConfigEpoch = m.ConfigEpoch
		h.Slots = m.Slots
	}
	return h
}

// mastersWithSlots counts the masters that serve slots: the quorum base.
func (s *State) mastersWithSlots() int {
	n := 0
	for _, id := range s.order {
		if x := s.Nodes[id]; x.IsMaster() && x.NumSlots > 0 {
			n++
		}
	}
	return n
}

func (s *State) rand(n int) int {
	return int(s.Cfg.Rand.Uint64() % uint64(n))
}

func (s *State) isBanned(id NodeID) bool {
	until, ok := s.banned[id]
	return ok && s.now < until
}

// handshakeTo finds a handshake in progress with the given bus address.
func (s *State) handshakeTo(ip string, cport int) *Node {
	for _, id := range s.order {
		if n := s.Nodes[id]; n.InHandshake() && n.IP == ip && n.CPort == cport {
			return n
		}
	}
	return nil
}

func (s *State) startHandshake(ip string, port, cport int, meet bool) *Node {
	if n := s.handshakeTo(ip, cport); n != nil {
		if meet {
			n.Flags |= FlagMeet
		}
		return n
	}
	n := &Node{ID: RandomID(s.Cfg.Rand), IP: ip, Port: port, CPort: cport, Flags: FlagHandshake, Created: s.now}
	if meet {
		n.Flags |= FlagMeet
	}
	s.addNode(n)
	return n
}

// gossipFor picks what a heartbeat to target says about other nodes: a few
// random healthy ones (a tenth of the cluster, at least three) and every
// node we think is PFAIL, so failure reports spread fast.
func (s *State) gossipFor(target NodeID) []GossipEntry {
	fresh := len(s.order) - 2
	wanted := max(3, len(s.order)/10)
	wanted = min(wanted, fresh)
	var g []GossipEntry
	add := func(n *Node) {
		for i := range g {
			if g[i].ID == n.ID {
				return
			}
		}
		g = append(g, GossipEntry{ID: n.ID, PingSent: n.PingSent, PongReceived: n.PongReceived,
			IP: n.IP, Port: n.Port, CPort: n.CPort, Flags: n.Flags & flagsWire})
	}
	for tries := wanted * 3; tries > 0 && len(g) < wanted; tries-- {
		n := s.Nodes[s.order[s.rand(len(s.order))]]
		if n == s.Myself || n.ID == target || n.Flags&(FlagHandshake|FlagNoAddr|FlagPFail) != 0 ||
			(!n.Connected && n.NumSlots == 0) {
			continue
		}
		add(n)
	}
	for _, id := range s.order {
		if n := s.Nodes[id]; n.Flags&FlagPFail != 0 && n.ID != target {
			add(n)
		}
	}
	return g
}

// ping sends a heartbeat of type t (ping, pong or meet) to n.
func (s *State) ping(n *Node, t Type) {
	h := s.header()
	g := s.gossipFor(n.ID)
	var m Message
	switch t {
	case TypePing:
		m = &Ping{Header: h, Gossip: g}
	case TypeMeet:
		m = &Meet{Header: h, Gossip: g}
	default:
		m = &Pong{Header: h, Gossip: g}
	}
	if t != TypePong {
		// Like Redis, a MEET does not start the ping clock: CLUSTER NODES
		// shows a handshake in progress as "0 0".
		if n.PingSent == 0 && t == TypePing {
			n.PingSent = s.now
		}
		s.lastPing[n.ID] = s.now
	}
	s.Stats.Sent[t]++
	s.emit(&Send{To: n.ID, Addr: n.Addr(), Msg: m})
}

func (s *State) peers() []Peer {
	var p []Peer
	for _, id := range s.order {
		n := s.Nodes[id]
		if n == s.Myself || n.Flags&(FlagHandshake|FlagNoAddr) != 0 {
			continue
		}
		p = append(p, Peer{ID: n.ID, Addr: n.Addr()})
	}
	return p
}

func (s *State) broadcast(m Message) {
	to := s.peers()
	s.Stats.Sent[m.Type()] += uint64(len(to))
	s.emit(&Broadcast{Msg: m, To: to})
}

// broadcastPong announces a new config to every node at once.
func (s *State) broadcastPong() {
	s.broadcast(&Pong{Header: s.header()})
}

// Tick advances timers: pings, PFAIL detection, handshake and ban expiry,
// cluster state. Call it every TickInterval ms.
func (s *State) Tick(now int64) []Output {
	s.begin(now)
	timeout := s.Cfg.NodeTimeout
	hsTimeout := max(timeout, 1000)
	for id, until := range s.banned {
		if now >= until {
			delete(s.banned, id)
		}
	}
	// Iterate over a copy: handshake expiry deletes from the order.
	ids := append([]NodeID(nil), s.order...)
	for _, id := range ids {
		n := s.Nodes[id]
		if n == nil || n == s.Myself || n.Flags&FlagNoAddr != 0 {
			continue
		}
		if n.InHandshake() {
			limit := hsTimeout
			if n.Flags&FlagMeet != 0 {
				// An administrator asked for this one: try harder.
				limit *= meetTimeoutMult
			}
			if now-n.Created > limit {
				s.event(EventNodeRemoved, n.ID, "handshake timeout")
				s.delNode(n)
				continue
			}
			if last, ok := s.lastPing[n.ID]; !ok || now-last >= handshakeResend {
				if n.Flags&FlagMeet != 0 {
					s.ping(n, TypeMeet)
				} else {
					s.ping(n, TypePing)
				}
			}
			continue
		}
		t := TypePing
		if n.Flags&FlagMeet != 0 {
			t = TypeMeet
		}
		if n.PingSent == 0 && now-n.PongReceived > timeout/2 {
			s.ping(n, t)
		} else if n.PingSent != 0 && now-s.lastPing[n.ID] > timeout/2 {
			// Redis drops and reopens the link here; the new link pings again.
			n.Connected = false
			s.ping(n, t)
		}
		// A node is PFAIL once neither we nor anyone gossiping to us has
		// heard from it for the node timeout. Redis also waits until our
		// own last ping is that old, which adds up to half a node timeout;
		// but a live node's last pong is never older than half a timeout
		// (we ping it then, unless others report fresher pongs), so
		// silence alone is as safe and comes sooner.
		heard := lastHeard(n)
		if heard == 0 {
			if n.PingSent == 0 {
				continue
			}
			heard = n.PingSent
		}
		delay := now - heard
		if delay > timeout && n.Flags&(FlagPFail|FlagFail) == 0 {
			n.Flags |= FlagPFail
			s.event(EventPFail, n.ID, "no reply for "+strconv.FormatInt(delay, 10)+" ms")
			s.markFailingIfNeeded(n)
			s.spreadReport(n)
		}
	}
	if now-s.lastRandom >= randomPingInterval {
		s.lastRandom = now
		s.randomPing()
	}
	s.updateState()
	return s.flush()
}

// randomPing pings the node with the oldest pong among a few random picks,
// so that every node is heard of now and then even in a quiet cluster.
func (s *State) randomPing() {
	var best *Node
	for i := 0; i < randomPingCandidates && len(s.order) > 1; i++ {
		n := s.Nodes[s.order[s.rand(len(s.order))]]
		if n == s.Myself || n.PingSent != 0 || n.Flags&(FlagHandshake|FlagNoAddr) != 0 {
			continue
		}
		if best == nil || n.PongReceived < best.PongReceived {
			best = n
		}
	}
	if best != nil {
		s.ping(best, TypePing)
	}
}

// spreadReport tells the other slot-owning masters at once that n is PFAIL
// here (every heartbeat gossips the PFAIL nodes), instead of waiting for the
// next scheduled pings: only their reports count toward FAIL, and FAIL is
// what lets a replica of n start its election.
func (s *State) spreadReport(n *Node) {
	me := s.Myself
	if !me.IsMaster() || me.NumSlots == 0 || n.Flags&FlagFail != 0 {
		return
	}
	for _, id := range s.order {
		o := s.Nodes[id]
		if o == me || o == n || !o.IsMaster() || o.NumSlots == 0 || o.Failing() ||
			o.Flags&(FlagHandshake|FlagNoAddr) != 0 {
			continue
		}
		s.ping(o, TypePing)
	}
}

// validReports counts the unexpired failure reports about n from
// slot-owning masters, dropping expired ones.
func (s *State) validReports(n *Node) int {
	c := 0
	for id, t := range n.FailReports {
		if s.now-t > s.Cfg.NodeTimeout*failReportValidityMult {
			delete(n.FailReports, id)
			continue
		}
		if r := s.Nodes[id]; r != nil && r.IsMaster() && r.NumSlots > 0 {
			c++
		}
	}
	return c
}

// markFailingIfNeeded turns PFAIL into FAIL once a majority of the
// slot-owning masters (this node included when it is one) agree, and tells
// everyone.
func (s *State) markFailingIfNeeded(n *Node) {
	if n.Flags&FlagPFail == 0 || n.Flags&FlagFail != 0 {
		return
	}
	quorum := s.mastersWithSlots()/2 + 1
	failures := s.validReports(n)
	if s.Myself.IsMaster() && s.Myself.NumSlots > 0 {
		failures++
	}
	if failures < quorum {
		return
	}
	n.Flags = n.Flags&^FlagPFail | FlagFail
	n.FailTime = s.now
	s.dirty = true
	s.event(EventFail, n.ID, strconv.Itoa(failures)+" of "+strconv.Itoa(quorum*2-1)+" masters agree")
	s.broadcast(&Fail{Header: s.header(), ID: n.ID})
}

// clearFailureIfNeeded lifts FAIL from a node that answers again: a replica
// or a master without slots at once; a master with slots only after a
// while, when clearly nobody is failing it over.
func (s *State) clearFailureIfNeeded(n *Node) {
	if n.Flags&FlagFail == 0 {
		return
	}
	if n.IsReplica() || n.NumSlots == 0 ||
		s.now-n.FailTime > s.Cfg.NodeTimeout*failUndoTimeMult {
		n.Flags &^= FlagFail
		s.dirty = true
		s.event(EventFailCleared, n.ID, "reachable again")
	}
}

// silent reports a node we have heard nothing from for longer than the
// node timeout, whether or not a ping to it is pending yet. A master that
// cannot hear a majority stops serving at once: the majority needs that
// long and more (PFAIL, FAIL agreement, the election delay) to replace it,
// so the minority stops taking writes before its slots move. (Redis waits
// for PFAIL, which may come half a node timeout later.)
func (s *State) silent(n *Node) bool {
	h := lastHeard(n)
	return h != 0 && s.now-h > s.Cfg.NodeTimeout
}

// lastHeard is the last sign of life of n: a message from it, or a pong
// from it that we or another node received (gossip).
func lastHeard(n *Node) int64 { return max(n.DataReceived, n.PongReceived) }

// updateState computes cluster_state.
func (s *State) updateState() {
	me := s.Myself
	if me.IsMaster() && s.Status == ClusterFail && s.now-s.started < writableDelay {
		return
	}
	next := ClusterOK
	size, reachable, covered := 0, 0, 0
	for _, id := range s.order {
		n := s.Nodes[id]
		if !n.IsMaster() || n.NumSlots == 0 {
			continue
		}
		size++
		if n.Flags&FlagFail == 0 {
			covered += n.NumSlots
		}
		if n == me || !n.Failing() && !s.silent(n) {
			reachable++
		}
	}
	if s.Cfg.RequireFullCoverage && covered < slots.Count {
		next = ClusterFail
	}
	if reachable < size/2+1 {
		next = ClusterFail
		s.minorityTime = s.now
	}
	if next == s.Status {
		return
	}
	rejoin := min(max(s.Cfg.NodeTimeout, minRejoinDelay), maxRejoinDelay)
	if next == ClusterOK && me.IsMaster() && s.minorityTime != 0 && s.now-s.minorityTime < rejoin {
		return
	}
	s.Status = next
	s.event(EventStateChanged, me.ID, next.String())
}

// Step processes one message. from is the node the transport received it
// as coming from, or "" when it does not know; the header's Sender is
// authoritative, and from only helps complete a handshake.
func (s *State) Step(now int64, from NodeID, m Message) []Output {
	s.begin(now)
	h := m.Hdr()
	t := m.Type()
	if h.Cluster != s.Cfg.ClusterName {
		s.Stats.Rejected++
		s.event(EventRejected, h.Sender, "cluster "+strconv.Quote(h.Cluster))
		return s.flush()
	}
	if t < numTypes {
		s.Stats.Received[t]++
	}
	if h.Sender == s.Myself.ID {
		return s.flush()
	}
	sender := s.Nodes[h.Sender]
	if sender != nil && sender.InHandshake() {
		sender = nil
	}
	if sender == nil && t == TypePong {
		sender = s.completeHandshake(from, h)
	}
	if sender != nil {
		sender.DataReceived = now
		if ce := adoptEpoch(s.CurrentEpoch, h.CurrentEpoch); ce != s.CurrentEpoch {
			s.CurrentEpoch = ce
			s.dirty = true
		}
		s.senderEpochRose = h.ConfigEpoch > sender.ClaimEpoch
		if h.ConfigEpoch > sender.ConfigEpoch && h.Flags&FlagMaster != 0 {
			sender.ConfigEpoch = h.ConfigEpoch
			s.dirty = true
		}
		sender.ReplOffset = h.ReplOffset
		sender.MFlags = h.MFlags
	}
	heartbeat := t == TypePing || t == TypePong || t == TypeMeet
	if t == TypeMeet && sender == nil && !s.isBanned(h.Sender) && ValidID(string(h.Sender)) && h.IP != "" {
		// A MEET from a stranger: it joins our view at once. Redis starts a
		// second handshake here instead; our header already carries the id
		// and address, and a lost pong of that second handshake could leave
		// this node never knowing the node that met it.
		sender = s.acceptMeet(h)
	}
	if t == TypePong && sender != nil {
		if hs := s.handshakeTo(h.IP, h.CPort); hs != nil {
			// A MEET to a node we already know: its pong ends the handshake.
			s.delNode(hs)
		}
		sender.PongReceived = now
		sender.PingSent = 0
		sender.Connected = true
		if sender.Flags&FlagPFail != 0 {
			sender.Flags &^= FlagPFail
			s.event(EventPFailCleared, sender.ID, "pong")
		} else {
			s.clearFailureIfNeeded(sender)
		}
	}
	if sender != nil {
		s.updateSender(sender, h, heartbeat)
		switch m := m.(type) {
		case *Ping, *Pong, *Meet:
			s.processGossip(sender, gossipOf(m))
		case *Fail:
			s.onFail(m)
		case *Update:
			s.onUpdate(m)
		case *Publish:
			s.emit(&Deliver{Channel: m.Channel, Message: m.Message})
		case *FailoverAuthRequest, *FailoverAuthAck, *MFStart:
			s.emit(&Forward{From: sender.ID, Msg: m})
		}
	}
	if t == TypePing || t == TypeMeet {
		// Reply last, so the pong carries everything this message changed.
		s.pongTo(h)
	}
	s.updateState()
	return s.flush()
}

func (s *State) pongTo(h *Header) {
	m := &Pong{Header: s.header()}
	m.Gossip = s.gossipFor(h.Sender)
	s.Stats.Sent[TypePong]++
	s.emit(&Send{To: h.Sender, Addr: Addr{h.IP, h.CPort}, Msg: m})
}

func (s *State) acceptMeet(h *Header) *Node {
	for hs := s.handshakeTo(h.IP, h.CPort); hs != nil; hs = s.handshakeTo(h.IP, h.CPort) {
		s.delNode(hs)
	}
	n := &Node{ID: h.Sender, IP: h.IP, Port: h.Port, CPort: h.CPort, Created: s.now, DataReceived: s.now,
		Flags: h.Flags & (FlagMaster | FlagSlave | FlagNoFailover), Connected: true}
	s.addNode(n)
	s.dirty = true
	s.event(EventNodeAdded, n.ID, n.IP+":"+strconv.Itoa(n.Port)+"@"+strconv.Itoa(n.CPort)+" (meet)")
	return n
}

// completeHandshake gives a handshake node the real id its pong revealed.
func (s *State) completeHandshake(from NodeID, h *Header) *Node {
	var n *Node
	if f := s.Nodes[from]; f != nil && f.InHandshake() {
		n = f
	} else {
		n = s.handshakeTo(h.IP, h.CPort)
	}
	if n == nil {
		return nil
	}
	if s.isBanned(h.Sender) || !ValidID(string(h.Sender)) {
		s.delNode(n)
		return nil
	}
	s.renameNode(n, h.Sender)
	n.Flags &^= FlagHandshake | FlagMeet
	n.Flags |= h.Flags & (FlagMaster | FlagSlave | FlagNoFailover)
	n.Connected = true
	s.event(EventNodeAdded, n.ID, n.IP+":"+strconv.Itoa(n.Port)+"@"+strconv.Itoa(n.CPort))
	return n
}

// updateSender applies what a header says about its sender: address, role,
// slots, and the checks that need both views (stale claims, collisions).
func (s *State) updateSender(n *Node, h *Header, heartbeat bool) {
	if h.IP != "" && (n.IP != h.IP || n.Port != h.Port || n.CPort != h.CPort) {
		n.IP, n.Port, n.CPort = h.IP, h.Port, h.CPort
		n.Flags &^= FlagNoAddr
		s.dirty = true
	}
	if n.Hostname != h.Hostname {
		n.Hostname = h.Hostname
	}
	if nf := h.Flags & FlagNoFailover; n.Flags&FlagNoFailover != nf {
		n.Flags = n.Flags&^FlagNoFailover | nf
		s.dirty = true
	}
	switch {
	case h.Flags&FlagMaster != 0:
		if !n.IsMaster() {
			if m := s.Nodes[n.Master]; m != nil && (m.Failing() || s.takesOpenSlotOf(m, h)) {
				// A replica promoted in place of its failed master, or
				// of a live one that hands over (manual failover).
				s.followOpenSlots(m.ID, n.ID)
			}
			n.Flags = n.Flags&^FlagSlave | FlagMaster
			n.Master = ""
			s.dirty = true
		}
	case h.Flags&FlagSlave != 0:
		if n.IsMaster() && h.Master != "" {
			// A master that follows the replica promoted in its place.
			s.followOpenSlots(n.ID, h.Master)
		}
		if n.IsMaster() {
			// A master turned replica: its slots are free until someone
			// with a valid epoch claims them.
			for j := 0; j < slots.Count && n.NumSlots > 0; j++ {
				if n.Slots.Has(j) {
					s.unassignSlot(j)
				}
			}
			n.Flags = n.Flags&^FlagMaster | FlagSlave
			s.dirty = true
		}
		if n.Master != h.Master {
			n.Master = h.Master
			s.dirty = true
		}
	}
	if !heartbeat || !n.IsMaster() {
		return
	}
	n.ClaimEpoch = max(n.ClaimEpoch, h.ConfigEpoch)
	if n.Slots != h.Slots {
		// Only a claim with a newer config epoch than we knew may free
		// slots our view gives the sender: a heartbeat sent before the
		// sender took a slot by SETSLOT NODE (and overtaken by it) must not
		// unassign what this node was just told it owns.
		if s.senderEpochRose {
			s.dropUnclaimed(n, &h.Slots)
		}
		s.updateSlotsConfigWith(n, h.ConfigEpoch, &h.Slots)
		// Any slot it still claims whose owner has a newer epoch is a stale
		// claim: tell the sender who owns it (one UPDATE per message).
		for j := 0; j < slots.Count; j++ {
			if !h.Slots.Has(j) {
				continue
			}
			o := s.Owner[j]
			if o == "" || o == n.ID {
				continue
			}
			on := s.Nodes[o]
			if on != nil && staleClaim(on.ConfigEpoch, h.ConfigEpoch) {
				s.emit(&Send{To: n.ID, Addr: n.Addr(), Msg: &Update{Header: s.header(), ID: on.ID, ConfigEpoch: on.ConfigEpoch, Slots: on.Slots}})
				s.Stats.Sent[TypeUpdate]++
				break
			}
		}
	}
	me := s.Myself
	if me.IsMaster() && mustResolveCollision(me.ID, n.ID, me.ConfigEpoch, h.ConfigEpoch) && s.takeEpoch() {
		me.ConfigEpoch = s.CurrentEpoch
		s.dirty = true
		s.event(EventEpochCollision, n.ID, "took config epoch "+strconv.FormatUint(me.ConfigEpoch, 10))
	}
}

// takesOpenSlotOf reports whether a replica of m that now says it is a
// master claims, under a newer config epoch than m's, a slot this node is
// importing from m: it took m's place in a failover, m still alive. Its
// claim must win that slot now. Waiting for m's own heartbeat as a replica
// would free the slot first (a master turned replica loses its slots), and
// the cluster would be down for want of it until the heir's next ping.
func (s *State) takesOpenSlotOf(m *Node, h *Header) bool {
	if h.ConfigEpoch <= m.ConfigEpoch {
		return false
	}
	for j, from := range s.Importing {
		if from == m.ID && h.Slots.Has(j) {
			return true
		}
	}
	return false
}

// dropUnclaimed frees the slots our view gives to master n that its own
// heartbeat no longer claims. Without it a node that restarts with an old
// view keeps n as the owner of slots n lost long ago, now under n's newer
// config epoch, so the real owner's (older) claim never wins them back and
// no UPDATE corrects it (found by failover's random schedules).
func (s *State) dropUnclaimed(n *Node, claimed *slots.Bitmap) {
	for j := 0; j < slots.Count && n.NumSlots > 0; j++ {
		if n.Slots[j>>3] == 0 {
			j += 7 - j&7
			continue
		}
		if n.Slots.Has(j) && !claimed.Has(j) {
			s.unassignSlot(j)
		}
	}
}

// updateSlotsConfigWith applies a master's claim on slots: every claimed
// slot whose owner has an older config epoch moves to the claimant.
func (s *State) updateSlotsConfigWith(n *Node, epoch uint64, claimed *slots.Bitmap) {
	me := s.Myself
	cur := s.myMaster()
	var lost slots.Bitmap
	nlost, fromCur := 0, false
	for j := 0; j < slots.Count; j++ {
		if claimed[j>>3] == 0 {
			j += 7 - j&7
			continue
		}
		if !claimed.Has(j) {
			continue
		}
		o := s.Owner[j]
		if o == n.ID {
			continue
		}
		if from, ok := s.Importing[j]; ok && from != n.ID {
			// An importing slot is moved by SETSLOT, never by gossip;
			// but the master that took over from the source in its
			// shard (followOpenSlots) takes its slots, this one too.
			continue
		}
		on := s.Nodes[o]
		var oe uint64
		if on != nil {
			oe = on.ConfigEpoch
		}
		if !claimWins(on != nil, oe, epoch) {
			continue
		}
		if cur != nil && o == cur.ID {
			fromCur = true
		}
		if o == me.ID {
			lost.Set(j)
			nlost++
		}
		s.assignSlot(j, n)
	}
	if fromCur && cur.NumSlots == 0 && cur != n {
		// Our master (or we) lost every slot to n: n is the shard's master now.
		s.event(EventRoleChanged, n.ID, "following the new owner of our slots")
		me.Flags = me.Flags&^FlagMaster | FlagSlave
		me.Master = n.ID
		s.dirty = true
		if nlost > 0 {
			s.emit(&SlotsLost{Slots: lost})
		}
		s.emit(&RoleChanged{Master: n.ID})
		return
	}
	if nlost > 0 {
		s.event(EventSlotsTaken, n.ID, strconv.Itoa(nlost)+" of our slots")
		s.emit(&SlotsLost{Slots: lost})
	}
}

func (s *State) processGossip(sender *Node, g []GossipEntry) {
	for i := range g {
		e := &g[i]
		n := s.Nodes[e.ID]
		if n == nil {
			if e.Flags&FlagNoAddr == 0 && ValidID(string(e.ID)) && !s.isBanned(e.ID) && e.IP != "" {
				s.startHandshake(e.IP, e.Port, e.CPort, false)
			}
			continue
		}
		if n.InHandshake() {
			continue
		}
		if n != s.Myself && sender.IsMaster() {
			if e.Flags&(FlagPFail|FlagFail) != 0 {
				if n.FailReports == nil {
					n.FailReports = make(map[NodeID]int64)
				}
				n.FailReports[sender.ID] = s.now
				s.markFailingIfNeeded(n)
			} else {
				delete(n.FailReports, sender.ID)
			}
		}
		if n == s.Myself {
			continue
		}
		if e.Flags&(FlagPFail|FlagFail) == 0 && n.PingSent == 0 && s.validReports(n) == 0 {
			n.PongReceived = newerPong(n.PongReceived, e.PongReceived, s.now)
		}
		if n.Failing() && e.Flags&(FlagPFail|FlagFail|FlagNoAddr) == 0 && e.IP != "" &&
			(n.IP != e.IP || n.Port != e.Port || n.CPort != e.CPort) {
			// It may have restarted elsewhere: try the address others reach it at.
			n.IP, n.Port, n.CPort = e.IP, e.Port, e.CPort
			n.Connected = false
			n.PingSent = 0
			s.dirty = true
		}
	}
}

func (s *State) onFail(m *Fail) {
	n := s.Nodes[m.ID]
	if n == nil || n == s.Myself || n.Flags&FlagFail != 0 {
		return
	}
	n.Flags = n.Flags&^FlagPFail | FlagFail
	n.FailTime = s.now
	s.dirty = true
	s.event(EventFail, n.ID, "FAIL message from "+string(m.Sender))
}

func (s *State) onUpdate(m *Update) {
	n := s.Nodes[m.ID]
	if n == nil || n.ConfigEpoch >= m.ConfigEpoch {
		return
	}
	if n.IsReplica() {
		n.Flags = n.Flags&^FlagSlave | FlagMaster
		n.Master = ""
	}
	n.ConfigEpoch = m.ConfigEpoch
	s.dirty = true
	s.updateSlotsConfigWith(n, m.ConfigEpoch, &m.Slots)
}
