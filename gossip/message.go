package gossip

import "github.com/slotd/slotd/slots"

// Type numbers a bus message kind; the numbers are part of the wire format.
type Type uint8

// Message types, numbered as Redis numbers its bus messages.
const (
	TypePing Type = iota
	TypePong
	TypeMeet
	TypeFail
	TypePublish
	TypeFailoverAuthRequest
	TypeFailoverAuthAck
	TypeUpdate
	TypeMFStart
	numTypes
)

var typeNames = [numTypes]string{"ping", "pong", "meet", "fail", "publish", "auth-req", "auth-ack", "update", "mfstart"}

func (t Type) String() string {
	if t < numTypes {
		return typeNames[t]
	}
	return "unknown"
}

// Manual failover flags carried in Header.MFlags.
const (
	// MFlagPaused: the sender is a master whose clients are paused for a manual failover.
	MFlagPaused uint8 = 1 << iota
	// MFlagForceAck: a failover auth request that masters grant although the master is not FAIL.
	MFlagForceAck

	mflagsAll = MFlagPaused | MFlagForceAck
)

// Header is the sender's view of itself; every message carries one, so any
// message refreshes what the receiver knows of the sender.
type Header struct {
	// Cluster names the cluster the sender belongs to; a receiver with a
	// different cluster name drops the message (see State.Step).
	Cluster      string
	Sender       NodeID
	CurrentEpoch uint64
	// ConfigEpoch is the sender's, or its master's when the sender is a replica.
	ConfigEpoch uint64
	Flags       Flags  // only the wire flags (myself, master, slave, ..., nofailover)
	Master      NodeID // the sender's master when it is a replica
	// Slots the sender serves, or its master's when the sender is a replica.
	Slots      slots.Bitmap
	ReplOffset int64
	IP         string
	Port       int
	CPort      int
	Hostname   string
	State      ClusterStatus
	MFlags     uint8
}

// Hdr returns the header, so that every message type satisfies Message.
func (h *Header) Hdr() *Header { return h }

// GossipEntry is what a ping or pong says about one other node.
type GossipEntry struct {
	ID           NodeID
	PingSent     int64 // ms, as the sender's clock counts
	PongReceived int64
	IP           string
	Port         int
	CPort        int
	Flags        Flags
}

// Message is one bus message: *Ping, *Pong, *Meet, *Fail, *Update, *Publish,
// *FailoverAuthRequest, *FailoverAuthAck or *MFStart.
type Message interface {
	Type() Type
	Hdr() *Header
}

// Ping asks for a Pong and spreads gossip.
type Ping struct {
	Header
	Gossip []GossipEntry
}

// Pong answers Ping and Meet; a node also broadcasts one to announce a new config.
type Pong struct {
	Header
	Gossip []GossipEntry
}

// Meet is a Ping that makes the receiver accept an unknown sender into its cluster.
type Meet struct {
	Header
	Gossip []GossipEntry
}

// Fail tells every node that ID is FAIL, so that they agree at once.
type Fail struct {
	Header
	ID NodeID
}

// Update tells a node that claims slots with a stale config epoch who owns them now.
type Update struct {
	Header
	ID          NodeID
	ConfigEpoch uint64
	Slots       slots.Bitmap
}

// Publish carries PUBLISH to the whole cluster.
type Publish struct {
	Header
	Channel []byte
	Message []byte
}

// FailoverAuthRequest is a replica asking the masters for their vote.
type FailoverAuthRequest struct{ Header }

// FailoverAuthAck is a master's vote.
type FailoverAuthAck struct{ Header }

// MFStart asks a master to pause its clients for a manual failover.
type MFStart struct{ Header }

// Type implements Message.
func (*Ping) Type() Type { return TypePing }

// Type implements Message.
func (*Pong) Type() Type { return TypePong }

// Type implements Message.
func (*Meet) Type() Type { return TypeMeet }

// Type implements Message.
func (*Fail) Type() Type { return TypeFail }

// Type implements Message.
func (*Update) Type() Type { return TypeUpdate }

// Type implements Message.
func (*Publish) Type() Type { return TypePublish }

// Type implements Message.
func (*FailoverAuthRequest) Type() Type { return TypeFailoverAuthRequest }

// Type implements Message.
func (*FailoverAuthAck) Type() Type { return TypeFailoverAuthAck }

// Type implements Message.
func (*MFStart) Type() Type { return TypeMFStart }

// gossipOf returns the gossip section of heartbeat messages.
func gossipOf(m Message) []GossipEntry {
	switch m := m.(type) {
	case *Ping:
		return m.Gossip
	case *Pong:
		return m.Gossip
	case *Meet:
		return m.Gossip
	}
	return nil
}
