package gossip

import "github.com/slotd/slotd/slots"

// Output is one thing the caller must do after Step, Tick or a command, in
// the order given: *Send, *Broadcast, *Persist, *Event, *SlotsLost,
// *RoleChanged, *Deliver or *Forward.
type Output interface{ isOutput() }

// Peer names a node and where its bus listens.
type Peer struct {
	ID   NodeID
	Addr Addr
}

// Send asks the transport to send Msg to one node. To may be a handshake
// node's temporary id or the id a message came from; the transport uses Addr.
type Send struct {
	To   NodeID
	Addr Addr
	Msg  Message
}

// Broadcast asks the transport to send Msg to every peer in To (all known
// nodes with an address, except this one and nodes in handshake).
type Broadcast struct {
	Msg Message
	To  []Peer
}

// Persist asks the caller to write the cluster config (FormatNodesConf of the
// state as it is now) before carrying out any later output. Writing a newer
// state than the one that asked is fine.
//
// Sync asks for the write to be made durable (fsync) first: it is set when
// the current epoch or this node's config epoch changed since the last
// synced write, as redis-server fsyncs nodes.conf only then. Other changes
// (open-slot marks, ownership learned or handed over without an epoch bump)
// are written but not synced: after a power loss they are learnt again from
// peers whose epochs win, and fsyncing each SETSLOT would make slot
// migration several times slower than redis-server's.
type Persist struct{ Sync bool }

// EventKind says what an Event reports.
type EventKind uint8

// Events worth a log line (and, for some, an INFO counter).
const (
	EventNodeAdded        EventKind = iota // handshake completed: a new node joined our view
	EventNodeRemoved                       // handshake timed out, or FORGET
	EventPFail                             // we marked the node PFAIL
	EventPFailCleared                      // the node answered again
	EventFail                              // the node is FAIL (by our quorum or a FAIL message)
	EventFailCleared                       // the node is reachable again and its FAIL flag is gone
	EventEpochCollision                    // we took a new config epoch to break a tie
	EventSlotsTaken                        // a claim with a newer config epoch took slots from another owner
	EventStateChanged                      // cluster_state changed (Detail: ok or fail)
	EventRejected                          // a message of another cluster was dropped
	EventRoleChanged                       // this node became a replica (or changed master)
	EventOpenSlotFollowed                  // an open slot now names the master that took over from its peer
	EventEpochExhausted                    // currentEpoch is MaxEpoch: no new epoch can be taken
)

var eventNames = [...]string{"node-added", "node-removed", "pfail", "pfail-cleared", "fail", "fail-cleared",
	"epoch-collision", "slots-taken", "state-changed", "rejected", "role-changed",
	"open-slot-followed", "epoch-exhausted"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "unknown"
}

// Event is a log record: the node it is about and a short detail.
type Event struct {
	Kind   EventKind
	Node   NodeID
	Detail string
}

// SlotsLost lists slots this node owned and no longer owns because a claim
// with a newer config epoch won them. The caller drops their keys.
type SlotsLost struct{ Slots slots.Bitmap }

// RoleChanged tells the caller that this node is now a replica of Master
// (it lost all its slots to it, or its master lost them to Master).
type RoleChanged struct{ Master NodeID }

// Deliver hands a PUBLISH from another node to local subscribers.
type Deliver struct{ Channel, Message []byte }

// Forward carries a message this package does not act on (failover auth
// request/ack, MFStart) to the failover state machine.
type Forward struct {
	From NodeID
	Msg  Message
}

func (*Send) isOutput()        {}
func (*Broadcast) isOutput()   {}
func (*Persist) isOutput()     {}
func (*Event) isOutput()       {}
func (*SlotsLost) isOutput()   {}
func (*RoleChanged) isOutput() {}
func (*Deliver) isOutput()     {}
func (*Forward) isOutput()     {}
