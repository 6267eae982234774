package node

import (
	"strconv"
	"time"

	"github.com/slotd/slotd/slots"
)

// Route is an immutable snapshot of who serves each hash slot, as the
// dispatcher needs it to answer MOVED, ASK, TRYAGAIN, CROSSSLOT and
// CLUSTERDOWN. The cluster layer builds a new Route whenever its view
// changes and installs it with Server.SetRoute; the command path only loads
// a pointer. A nil Route means cluster mode is off.
type Route struct {
	// OK is cluster_state:ok.
	OK bool
	// AllowReadsWhenDown is cluster-allow-reads-when-down.
	AllowReadsWhenDown bool
	// Owner holds, per slot, an index into Nodes, or -1 when unassigned.
	Owner [slots.Count]int16
	// Nodes are the slot owners and migration peers, with the endpoint
	// ("host:port") that redirections name.
	Nodes []RouteNode
	// Myself is this node's index in Nodes (-1 when it owns nothing and is
	// no one's replica); MyMaster is its master's index when it is a
	// replica, else -1.
	Myself, MyMaster int16
	// Migrating and Importing map open slots of this node to the index of
	// the target or source node.
	Migrating map[int]int16
	Importing map[int]int16
}

// RouteNode is one node as redirections name it.
type RouteNode struct {
	ID       string
	Endpoint string // "ip:port" as MOVED and ASK print it
}

// NewRoute returns a route with every slot unassigned.
func NewRoute() *Route {
	r := &Route{Myself: -1, MyMaster: -1}
	for i := range r.Owner {
		r.Owner[i] = -1
	}
	return r
}

// SetRoute installs a new routing snapshot (nil turns routing off).
func (s *Server) SetRoute(r *Route) { s.route.Store(r) }

// Redirection texts, as redis-server words them.
const (
	ErrCrossSlot    = "CROSSSLOT Keys in request don't hash to the same slot"
	ErrTryAgain     = "TRYAGAIN Multiple keys request during rehashing of slot"
	ErrClusterDown  = "CLUSTERDOWN The cluster is down"
	ErrClusterDownR = "CLUSTERDOWN The cluster is down and only accepts read commands"
	ErrUnbound      = "CLUSTERDOWN Hash slot not served"
)

// local reports whether a single-key command on slot is served here with no
// further checks: the cluster is up, the slot is this node's and not open.
func (r *Route) local(slot int) bool {
	if !r.OK || r.Owner[slot] != r.Myself || r.Myself < 0 {
		return false
	}
	if r.Migrating != nil {
		if _, ok := r.Migrating[slot]; ok {
			return false
		}
	}
	if r.Importing != nil {
		if _, ok := r.Importing[slot]; ok {
			return false
		}
	}
	return true
}

// routed reports whether a command goes through the routing check: those
// with keys (or movable keys) and EXEC, as in redis-server.
func routed(cmd *Command) bool {
	return cmd.FirstKey > 0 || cmd.Keys != nil || cmd.Name == "exec"
}

// routeCheck decides whether this node may run the calls (one command, or
// the queue of an EXEC). It returns "" to run them here, or the error to
// reply. locked says whether the caller holds the slot locks of the keys;
// when it does not, key existence in open slots is checked under the lock.
func (s *Server) routeCheck(r *Route, c *Client, calls []queued, locked bool) string {
	slot := -1
	var first []byte
	multipleKeys := false
	migrating, importing := false, false
	existing, missing := 0, 0
	write := false
	for _, q := range calls {
		if q.cmd.Flags&FlagWrite != 0 {
			write = true
		}
		c.keyPos = q.cmd.keyPositions(q.args, c.keyPos[:0])
		for _, p := range c.keyPos {
			key := q.args[p]
			ks := slots.Of(key)
			if first == nil {
				first, slot = key, ks
				owner := r.Owner[slot]
				if owner < 0 {
					return ErrUnbound
				}
				if _, ok := r.Migrating[slot]; ok && owner == r.Myself {
					migrating = true
				} else if _, ok := r.Importing[slot]; ok {
					importing = true
				}
			} else if string(first) != string(key) {
				if ks != slot {
					return ErrCrossSlot
				}
				multipleKeys = true
			}
			if migrating || importing {
				if s.keyExists(ks, key, locked) {
					existing++
				} else {
					missing++
				}
			}
		}
	}
	if slot < 0 {
		return ""
	}
	if !r.OK {
		if !r.AllowReadsWhenDown {
			return ErrClusterDown
		}
		if write {
			return ErrClusterDownR
		}
	}
	// MIGRATE runs here whatever its keys while the slot is open
	// (migrating or importing), so that keys can be moved freely between
	// the nodes involved (redis-cli --cluster fix relies on it).
	if (migrating || importing) && len(calls) == 1 && calls[0].cmd.Name == "migrate" {
		return ""
	}
	if migrating && missing > 0 {
		if existing > 0 {
			return ErrTryAgain
		}
		return "ASK " + itoa(slot) + " " + r.Nodes[r.Migrating[slot]].Endpoint
	}
	if importing && (c.Flags&ClientAsking != 0 || calls[0].cmd.Flags&FlagAsking != 0) {
		if multipleKeys && missing > 0 {
			return ErrTryAgain
		}
		return ""
	}
	owner := r.Owner[slot]
	if c.Flags&ClientReadonly != 0 && !write && r.MyMaster >= 0 && owner == r.MyMaster {
		return ""
	}
	if owner != r.Myself {
		return "MOVED " + itoa(slot) + " " + r.Nodes[owner].Endpoint
	}
	return ""
}

// keyExists reports whether key is present in db 0 (cluster mode has one
// database), taking the slot's lock when the caller does not hold it.
func (s *Server) keyExists(slot int, key []byte, locked bool) bool {
	if !locked {
		s.ks.Lock(slot)
		defer s.ks.Unlock(slot)
	}
	return s.ks.DB(0).Lookup(slot, key, time.Now().UnixMilli()) != nil
}

func itoa[T ~int | ~int64](n T) string { return strconv.FormatInt(int64(n), 10) }
