package node

import "time"

// replFailoverHooks carry out failover's decisions with replication. They
// implement the FailoverHooks interface of the cluster loop (newFailoverHooks
// returns them once both are merged).
type replFailoverHooks struct{ s *Server }

// ReplOffset is master_repl_offset: produced on a master, applied on a
// replica.
func (h replFailoverHooks) ReplOffset() int64 { return h.s.ReplOffset() }

// MasterLinkDownSince is when a replica's link went down (unix ms), or when
// it started replicating if the link never came up; 0 while the link is up
// and on a master.
func (h replFailoverHooks) MasterLinkDownSince() int64 {
	r := &h.s.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.masterHost == "" || r.state == linkConnected {
		return 0
	}
	if !r.downSince.IsZero() {
		return r.downSince.UnixMilli()
	}
	return r.since.UnixMilli()
}

// Promote makes this replica a master with its data: a new replication id,
// the old one kept as replid2 so that the other replicas continue.
func (h replFailoverHooks) Promote() { h.s.replicaOf("", 0) }

// Follow replicates the new master; a partial resync when the histories
// allow it, else a full one, which drops what this node wrote on its own.
func (h replFailoverHooks) Follow(id, ip string, port int) { h.s.replicaOf(ip, port) }

// PauseWrites holds clients' writes until the deadline and returns the
// offset the replica must reach.
func (h replFailoverHooks) PauseWrites(until time.Time) int64 {
	h.s.pauseClients(pauseWrite, until)
	h.s.waitPausedWrites()
	return h.s.feed.offset()
}

// ResumeWrites ends PauseWrites.
func (h replFailoverHooks) ResumeWrites() { h.s.unpauseClients() }
