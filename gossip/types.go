package gossip

import (
	"encoding/hex"
	"strings"

	"github.com/slotd/slotd/slots"
)

// IDLen is the length of a node id: 40 lowercase hex characters (160 random bits).
const IDLen = 40

// NodeID names a cluster node. It is created once from random bits and kept
// for the life of the node's config file. The empty NodeID means "no node".
type NodeID string

// ValidID reports whether s has the form of a node id. Redis accepts upper
// and lower case hex in commands; ids on the bus and in nodes.conf are
// lowercase, so only lowercase is valid here and callers lower-case input.
func ValidID(s string) bool {
	if len(s) != IDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// RandomID makes a node id from the caller's random source, so that tests
// replay the same ids from the same seed.
func RandomID(r Rand) NodeID {
	var b [IDLen / 2]byte
	for i := 0; i < len(b); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return NodeID(hex.EncodeToString(b[:]))
}

// Rand is the only source of randomness the state machine uses (a
// math/rand/v2 *Rand satisfies it). Seed it to replay a schedule.
type Rand interface {
	Uint64() uint64
}

// Flags are a node's role and health bits as CLUSTER NODES prints them.
type Flags uint16

// The node flags. Their order is the order CLUSTER NODES prints them in.
const (
	FlagMyself Flags = 1 << iota
	FlagMaster
	FlagSlave
	FlagPFail
	FlagFail
	FlagHandshake
	FlagNoAddr
	FlagNoFailover
	// FlagMeet marks a handshake node we were told to MEET: it is sent MEET
	// instead of PING until it answers. It is never printed or persisted.
	FlagMeet

	// flagsWire are the flags that travel on the bus and in nodes.conf.
	flagsWire = FlagMyself | FlagMaster | FlagSlave | FlagPFail | FlagFail | FlagHandshake | FlagNoAddr | FlagNoFailover
)

var flagNames = []struct {
	f    Flags
	name string
}{
	{FlagMyself, "myself"},
	{FlagMaster, "master"},
	{FlagSlave, "slave"},
	{FlagPFail, "fail?"},
	{FlagFail, "fail"},
	{FlagHandshake, "handshake"},
	{FlagNoAddr, "noaddr"},
	{FlagNoFailover, "nofailover"},
}

// String renders the flags as CLUSTER NODES does: names joined by commas,
// "noflags" when none is set.
func (f Flags) String() string {
	var b strings.Builder
	for _, fn := range flagNames {
		if f&fn.f != 0 {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(fn.name)
		}
	}
	if b.Len() == 0 {
		return "noflags"
	}
	return b.String()
}

// parseFlags is the inverse of Flags.String.
func parseFlags(s string) (Flags, bool) {
	if s == "noflags" {
		return 0, true
	}
	var f Flags
	for _, part := range strings.Split(s, ",") {
		found := false
		for _, fn := range flagNames {
			if part == fn.name {
				f |= fn.f
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
	return f, true
}

// Addr is where a node's cluster bus listens. The transport sends to it; the
// state machine never dials anything itself.
type Addr struct {
	IP    string
	CPort int
}

// Node is one node as this node sees it. Times are milliseconds on the clock
// the caller passes to Step and Tick (0 = never).
type Node struct {
	ID       NodeID
	IP       string
	Port     int // client port
	CPort    int // cluster bus port
	Hostname string
	Flags    Flags
	Master   NodeID // for replicas: the master's id

	PingSent     int64 // time of the oldest ping still unanswered, 0 if none
	PongReceived int64 // time of the last pong
	DataReceived int64 // time of the last message of any kind
	ConfigEpoch  uint64
	// ClaimEpoch is the config epoch of the node's own slot claim that
	// our view of its slots reflects: the epoch of its last heartbeat we
	// applied (or of nodes.conf). Other messages raise ConfigEpoch but
	// not this, so a heartbeat that drops slots under a newer epoch is
	// still recognised as newer than the claim we hold.
	ClaimEpoch uint64
	Connected  bool // CLUSTER NODES link-state: connected or disconnected
	Slots      slots.Bitmap
	NumSlots   int
	ReplOffset int64
	// FailReports holds, per reporting master, when it last said this node
	// was PFAIL or FAIL. Reports older than 2 x node timeout are ignored.
	FailReports map[NodeID]int64
	FailTime    int64 // when this node was marked FAIL
	Created     int64 // when the node entered our table (handshake timeout)
	VotedTime   int64 // last time we voted for a replica of this master (failover)
	// MFlags are the manual-failover flags of the node's last message
	// (MFlagPaused: a master paused for its replica's manual failover).
	MFlags uint8
}

// IsMaster reports the master flag.
func (n *Node) IsMaster() bool { return n.Flags&FlagMaster != 0 }

// IsReplica reports the slave flag.
func (n *Node) IsReplica() bool { return n.Flags&FlagSlave != 0 }

// Failing reports PFAIL or FAIL.
func (n *Node) Failing() bool { return n.Flags&(FlagPFail|FlagFail) != 0 }

// InHandshake reports whether the node's real id is still unknown.
func (n *Node) InHandshake() bool { return n.Flags&FlagHandshake != 0 }

// Addr is the node's bus address.
func (n *Node) Addr() Addr { return Addr{n.IP, n.CPort} }

func (n *Node) addSlot(s int) bool {
	if n.Slots.Has(s) {
		return false
	}
	n.Slots.Set(s)
	n.NumSlots++
	return true
}

func (n *Node) delSlot(s int) bool {
	if !n.Slots.Has(s) {
		return false
	}
	n.Slots.Clear(s)
	n.NumSlots--
	return true
}

// ClusterStatus is cluster_state in CLUSTER INFO.
type ClusterStatus uint8

// The two cluster states.
const (
	ClusterFail ClusterStatus = iota
	ClusterOK
)

func (c ClusterStatus) String() string {
	if c == ClusterOK {
		return "ok"
	}
	return "fail"
}
