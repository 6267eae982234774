// Package failover owns replica elections, manual failover and replica
// migration. It is a pure state machine that rides on a gossip.State: it
// opens no sockets, starts no goroutines, reads no clock and draws
// randomness only from Config.Rand.
//
// # What the caller does
//
// The node's bus loop owns one gossip.State and one Machine and, on the
// same goroutine:
//
//   - after every gossip Tick calls Machine.Tick(now, st) (election timers,
//     manual failover progress and timeout, replica migration);
//   - hands every gossip.Forward output (failover-auth-request/ack, mfstart)
//     to Machine.Step(now, st, f);
//   - while InManualFailover reports true, calls Machine.Progress after
//     gossip Steps, so a manual failover does not wait for ticks;
//   - feeds this node's replication offset with st.SetReplOffset and, on a
//     replica, when its link to the master went down with SetMasterLinkDown
//     (0 when up), so that a replica with too old data does not run;
//   - carries out the returned Outputs in order. An Output is either a
//     gossip.Output (send, broadcast, persist, event, role changed ...),
//     carried out exactly as gossip's own, or one of this package's:
//     *Event (a log line with the node id), *Promote (stop replicating,
//     keep the data, take a new replication id, accept writes: done before
//     the announcement that follows it), *PauseWrites (hold clients' writes
//     until the deadline, then call Machine.WritesPaused with the offset at
//     which writes stopped), *ResumeWrites (publish the routing first, then
//     let writes through: they must meet the new owner's MOVED).
//
// Following a new master is gossip's RoleChanged: the caller points
// replication at that master (partial resync when possible).
//
// # Automatic failover
//
// A replica whose master is FAIL and serves slots schedules an election
// 500 ms + rand(0..500) ms + rank x 1000 ms + failed-rank x 500 ms ahead,
// where rank counts the healthy sibling replicas (nofailover ones aside)
// that have a larger replication offset, or the same offset and a smaller
// node id, and failed-rank counts the FAIL masters serving slots whose id is
// smaller than our master's (Valkey 8.1's failed-primary rank: shards that
// fail together elect one after another instead of splitting the votes).
// Both ranks are computed again while the replica waits and may only push
// the election back.
// It refuses to run when its data is older than
// repl-ping-replica-period + node-timeout x cluster-replica-validity-factor
// (counted from when the master link went down, less one node timeout),
// and when it has the nofailover flag. When the time comes it takes a new
// currentEpoch and asks for votes; a majority of the slot-owning masters
// makes it master with the election epoch as config epoch, announced at
// once by a pong to every node. An election that gets no majority within
// max(2 x node-timeout, 2000) ms is lost; the next is scheduled after twice
// that.
//
// A master votes (see vote.go, rules in order.go) at most once per epoch,
// only for a replica whose master is FAIL (or that asks with the force-ack
// flag of a manual failover), not twice for replicas of the same master
// within 2 x node-timeout, and not when one of the claimed slots has an
// owner with a larger config epoch than the claim.
//
// # Manual failover
//
// Machine.Manual implements CLUSTER FAILOVER [FORCE|TAKEOVER] with
// redis-server's error texts. The default sends MFSTART to the master,
// which pauses writes for twice the manual failover timeout (5 s) and
// sends pings flagged paused with its offset; once the replica's offset
// reaches it, the replica runs an election at once whose request carries
// force-ack. FORCE skips the catch-up; TAKEOVER takes a new epoch and the
// slots without a vote.
//
// # Replica migration
//
// With cluster-allow-replica-migration, a replica of a master with the most
// healthy replicas, more than cluster-migration-barrier of them, and the
// smallest id among them, moves to a master that serves slots, has no
// healthy replica and used to have one (or was promoted from replica),
// once that master has been orphaned for 5 s.
//
// # Where slotd differs from Redis
//
//   - rank ties (equal offsets) are broken by node id, so two replicas
//     never share a rank; replicas already FAIL are not counted;
//   - the failed-master rank above (Redis has none);
//   - a won election resets the retry timer, so a node elected once can be
//     elected again at once after it became a replica again;
//   - a manual failover whose replica has caught up asks for votes at
//     once instead of at the next tick, and acks are counted as they
//     arrive;
//   - a late ack does not promote a replica whose master is no longer FAIL
//     and that has no manual failover under way.
package failover
