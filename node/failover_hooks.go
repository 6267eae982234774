package node

import (
	"time"
)

// FailoverHooks are the replication-side actions the cluster loop takes
// when package failover decides something about this node. They run on the
// cluster loop goroutine, so they must not block for long.
type FailoverHooks interface {
	// ReplOffset is this node's replication offset: a master's
	// master_repl_offset, a replica's processed offset. It travels in every
	// bus header and ranks replicas in an election.
	ReplOffset() int64
	// MasterLinkDownSince is the time (unix ms) a replica's link to its
	// master went down, 0 while it is up (and on a master). A replica whose
	// data is too old refuses to run (cluster-replica-validity-factor).
	MasterLinkDownSince() int64
	// Promote makes this replica a master that keeps its data: stop
	// replicating, take a new replication id (keeping the old one for
	// partial resyncs of the other replicas), accept writes. It is called
	// before the win is announced.
	Promote()
	// Follow points replication at a new master, with a partial resync
	// when possible. A master that becomes a replica drops its own writes.
	Follow(id string, ip string, port int)
	// PauseWrites holds clients' writes until the deadline (a manual
	// failover on this master) and returns the replication offset at which
	// writes stopped: the replica must reach it before it takes over.
	PauseWrites(until time.Time) int64
	// ResumeWrites ends PauseWrites. The routing is already published, so
	// writes held for a failover that happened meet MOVED.
	ResumeWrites()
}

// newFailoverHooks returns the hooks the cluster loop uses: replication's
// (repl_failover.go).
func newFailoverHooks(s *Server) FailoverHooks { return replFailoverHooks{s: s} }
