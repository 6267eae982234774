package failover

import (
	"strconv"

	"github.com/slotd/slotd/gossip"
)

// Timing constants, in milliseconds (Redis's values).
const (
	// electionDelay is the fixed part of the delay before an election: time
	// for the FAIL message to reach every master.
	electionDelay = 500
	// electionJitter is the random part (0..electionJitter-1).
	electionJitter = 500
	// rankDelay is added per replica ranked before this one.
	rankDelay = 1000
	// failedRankDelay is added per failed master with a smaller id.
	failedRankDelay = 500
	// minAuthTimeout bounds the election timeout from below.
	minAuthTimeout = 2000
	// ManualTimeout is how long a manual failover may take.
	ManualTimeout = 5000
	// manualPauseMult: the master holds writes this many manual timeouts.
	manualPauseMult = 2
	// migrationDelay: a master must stay orphaned this long before a replica moves to it.
	migrationDelay = 5000
)

// Config holds the settings of the machine; the node fills it from its
// directives and may change the fields between calls (CONFIG SET).
type Config struct {
	// ValidityFactor is cluster-replica-validity-factor; 0 lets a replica
	// run however old its data.
	ValidityFactor int64
	// ReplPingPeriod is repl-ping-replica-period in ms.
	ReplPingPeriod int64
	// MigrationBarrier is cluster-migration-barrier.
	MigrationBarrier int
	// AllowReplicaMigration is cluster-allow-replica-migration.
	AllowReplicaMigration bool
	// Rand is the only randomness (the election jitter). Seed it to replay.
	Rand gossip.Rand
}

// DefaultConfig returns Redis's defaults with the given random source.
func DefaultConfig(r gossip.Rand) Config {
	return Config{ValidityFactor: 10, ReplPingPeriod: 10_000, MigrationBarrier: 1, AllowReplicaMigration: true, Rand: r}
}

// Output is one thing the caller must do, in order: any gossip.Output, or
// *Event, *Promote, *PauseWrites, *ResumeWrites.
type Output any

// EventKind says what an Event reports.
type EventKind uint8

// The events of elections, votes, manual failovers and migrations.
const (
	EventElectionScheduled EventKind = iota // a replica of a FAIL master set its election time
	EventElectionStarted                    // it took a new epoch and asked for votes
	EventElectionWon                        // it got a majority and is master now
	EventElectionLost                       // the election timed out (Detail: votes got and needed)
	EventCantFailover                       // a replica of a FAIL master will not run (Detail: why)
	EventVoteGranted                        // this master voted for Node
	EventVoteRefused                        // this master refused Node its vote (Detail: why)
	EventManualStarted                      // CLUSTER FAILOVER accepted (Detail: mode)
	EventManualPaused                       // master: writes paused for Node's manual failover
	EventManualReady                        // replica: caught up with the paused master
	EventManualAborted                      // the manual failover timed out or was overtaken
	EventTakeover                           // TAKEOVER: slots taken without a vote
	EventReplicaMigrated                    // this replica moved to an orphaned master
)

var eventNames = [...]string{"election-scheduled", "election-started", "election-won", "election-lost",
	"cant-failover", "vote-granted", "vote-refused", "manual-failover-started", "manual-failover-paused",
	"manual-failover-ready", "manual-failover-aborted", "takeover", "replica-migrated"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "unknown"
}

// Event is a log record: what happened, the node it is about and why.
type Event struct {
	Kind   EventKind
	Node   gossip.NodeID
	Detail string
}

// Promote tells the caller that this replica is master now: stop
// replicating, keep the data, take a new replication id, accept writes.
// The announcement follows it in the same output list.
type Promote struct{ Epoch uint64 }

// PauseWrites asks a master to hold clients' writes until Until (ms, the
// clock of now) for Replica's manual failover, then to call
// Machine.WritesPaused with its replication offset.
type PauseWrites struct {
	Until   int64
	Replica gossip.NodeID
}

// ResumeWrites ends a PauseWrites: publish the routing, then let writes run.
type ResumeWrites struct{}

// Stats count what this node did, for logs and tests.
type Stats struct {
	ElectionsStarted, ElectionsWon, ElectionsLost uint64
	VotesGranted, VotesRefused                    uint64
	ManualFailovers, ReplicaMigrations            uint64
}

// Machine is one node's failover state. Like gossip.State it is owned by
// the node's loop goroutine.
type Machine struct {
	Cfg   Config
	Stats Stats

	// linkDown is when the replica's link to its master went down (0 = up).
	linkDown int64

	// The election (replica side), as Redis's failover_auth_* fields.
	authTime   int64 // time of the previous or next election
	authSent   bool
	authRank   int
	failedRank int
	authEpoch  uint64
	votes      map[gossip.NodeID]bool
	lostLogged bool
	cantReason string
	electionOf gossip.NodeID // the master the election replaces

	// The manual failover. On the replica: mfEnd, mfCanStart; on the master:
	// mfEnd, mfReplica, mfPaused.
	mfEnd      int64
	mfCanStart bool
	mfReplica  gossip.NodeID
	mfMode     Mode

	// Replica migration: masters that had replicas (or were promoted from
	// replica), and since when each has been orphaned.
	migrateTo map[gossip.NodeID]bool
	wasSlave  map[gossip.NodeID]bool
	orphaned  map[gossip.NodeID]int64

	out []Output
}

// New makes a machine with cfg.
func New(cfg Config) *Machine {
	return &Machine{Cfg: cfg, votes: map[gossip.NodeID]bool{}, migrateTo: map[gossip.NodeID]bool{},
		wasSlave: map[gossip.NodeID]bool{}, orphaned: map[gossip.NodeID]int64{}}
}

// SetMasterLinkDown records when this replica's link to its master went
// down; 0 means the link is up (data age 0).
func (m *Machine) SetMasterLinkDown(since int64) { m.linkDown = since }

// InManualFailover reports whether a manual failover is in progress here.
func (m *Machine) InManualFailover() bool { return m.mfEnd != 0 }

func (m *Machine) event(k EventKind, id gossip.NodeID, detail string) {
	m.out = append(m.out, &Event{Kind: k, Node: id, Detail: detail})
}

func (m *Machine) gossip(outs []gossip.Output) {
	for _, o := range outs {
		m.out = append(m.out, o)
	}
}

func (m *Machine) flush() []Output {
	o := m.out
	m.out = nil
	return o
}

func (m *Machine) rand(n int) int64 {
	if m.Cfg.Rand == nil {
		return 0
	}
	return int64(m.Cfg.Rand.Uint64() % uint64(n))
}

// Tick advances the timers: the election of a replica of a FAIL master, a
// manual failover's progress and timeout, replica migration.
func (m *Machine) Tick(now int64, st *gossip.State) []Output {
	m.observe(st)
	m.manualTick(now, st, true)
	if st.Myself.IsReplica() {
		m.electionTick(now, st)
		m.migrationTick(now, st)
	}
	return m.flush()
}

// Progress moves a manual failover on between ticks: call it after gossip
// Steps while InManualFailover reports true, so that the replica starts
// its election as soon as it has caught up and the old master resumes
// writes (now redirected) as soon as it follows the winner, instead of at
// the next tick. It does nothing else, so it is cheap.
func (m *Machine) Progress(now int64, st *gossip.State) []Output {
	if m.mfEnd == 0 {
		return m.flush()
	}
	m.manualTick(now, st, false)
	if st.Myself.IsReplica() {
		m.electionTick(now, st)
	}
	return m.flush()
}

// Step handles a failover message gossip forwarded (its header has already
// been applied to st).
func (m *Machine) Step(now int64, st *gossip.State, f *gossip.Forward) []Output {
	switch msg := f.Msg.(type) {
	case *gossip.FailoverAuthRequest:
		m.onAuthRequest(now, st, f.From, msg)
	case *gossip.FailoverAuthAck:
		m.onAuthAck(now, st, f.From, msg)
	case *gossip.MFStart:
		m.onMFStart(now, st, f.From)
	}
	return m.flush()
}

// slotMasters counts the masters serving slots: the election's voters.
func slotMasters(st *gossip.State) int {
	n := 0
	for _, id := range st.Order() {
		if x := st.Nodes[id]; x.IsMaster() && x.NumSlots > 0 {
			n++
		}
	}
	return n
}

// quorum is the votes an election needs.
func quorum(st *gossip.State) int { return slotMasters(st)/2 + 1 }

// replicasOf lists the known replicas of master, in the state's order.
func replicasOf(st *gossip.State, master gossip.NodeID) []*gossip.Node {
	var r []*gossip.Node
	for _, id := range st.Order() {
		if n := st.Nodes[id]; n.IsReplica() && n.Master == master && !n.InHandshake() {
			r = append(r, n)
		}
	}
	return r
}

// healthyReplicas counts the replicas of master that are neither PFAIL nor FAIL.
func healthyReplicas(st *gossip.State, master gossip.NodeID) int {
	c := 0
	for _, r := range replicasOf(st, master) {
		if !r.Failing() {
			c++
		}
	}
	return c
}

func itoa(v int64) string  { return strconv.FormatInt(v, 10) }
func utoa(v uint64) string { return strconv.FormatUint(v, 10) }
