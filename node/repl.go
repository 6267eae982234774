package node

import (
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/node/repl"
)

// Link states of a replica, as ROLE names them.
const (
	linkNone       = iota // not a replica
	linkConnect           // waiting to connect
	linkConnecting        // TCP connect in progress
	linkHandshake         // PING, AUTH, REPLCONF, PSYNC
	linkSync              // receiving the RDB payload
	linkConnected         // applying the stream
)

var linkStateNames = [...]string{"none", "connect", "connecting", "handshake", "sync", "connected"}

// Write refusals the dispatcher checks (Server.replGate).
const (
	gateReadOnly    = 1 << iota // a replica with replica-read-only yes
	gateStale                   // link down and replica-serve-stale-data no
	gateMinReplicas             // fewer good replicas than min-replicas-to-write
)

const zeroReplID = "0000000000000000000000000000000000000000"

// replication is a node's replication state. mu guards the identity, the
// offset, the backlog and the link fields; the counters are atomic.
type replication struct {
	mu  sync.Mutex
	ids repl.IDs
	// offset is master_repl_offset: bytes of stream produced (a master) or
	// applied (a replica).
	offset  int64
	backlog *repl.Backlog
	// backlogIdleSince is when the last replica left (repl-backlog-ttl).
	backlogIdleSince time.Time

	// Replica side: masterHost is "" on a master.
	masterHost string
	masterPort int
	gen        uint64 // bumped by every REPLICAOF; a link of another gen stops
	state      int
	link       *masterLink
	downSince  time.Time
	since      time.Time // when this node started replicating its master
	// hasData says the keyspace holds the history of ids.ID up to offset,
	// so that a PSYNC may continue it.
	hasData bool

	syncTotal atomic.Int64
	syncRead  atomic.Int64
	syncLast  atomic.Int64 // unix ms of the last transfer read

	// applyMu is held by a replica while it applies one command of its
	// master's stream and moves its offset, so that an image taken for a
	// replica of its own stands at a known offset, and so that a change of
	// master (replicaOf) falls between two commands.
	applyMu sync.Mutex

	// Master side: the attached replicas; sinkOn says the backlog takes
	// the feed; cronOnce starts replCron.
	replicas map[int64]*replicaLink
	sinkOn   bool
	cronOnce sync.Once
	// ackWake is closed at the next ACK of any replica, when someone
	// waits for one (ackSignal).
	ackWake atomic.Pointer[chan struct{}]

	syncFull       atomic.Int64
	syncPartialOK  atomic.Int64
	syncPartialErr atomic.Int64
}

func (s *Server) initRepl() {
	r := &s.repl
	r.ids = repl.IDs{ID: randomHex40(), ID2: zeroReplID, Second: -1}
	r.replicas = map[int64]*replicaLink{}
	s.Cfg.OnChange(func(string) { s.applyReplConfig() })
}

// applyReplConfig reacts to the replication directives: the gate and the
// backlog size.
func (s *Server) applyReplConfig() {
	r := &s.repl
	r.mu.Lock()
	if r.backlog != nil {
		r.backlog.Resize(int(s.Cfg.Int("repl-backlog-size")))
	}
	r.mu.Unlock()
	s.updateReplGate()
}

// updateReplGate recomputes the refusals the dispatcher applies.
func (s *Server) updateReplGate() {
	r := &s.repl
	r.mu.Lock()
	var g uint32
	if r.masterHost != "" {
		if s.Cfg.Bool("replica-read-only") {
			g |= gateReadOnly
		}
		if r.state != linkConnected && !s.Cfg.Bool("replica-serve-stale-data") {
			g |= gateStale
		}
	} else if n := s.Cfg.Int("min-replicas-to-write"); n > 0 && s.Cfg.Int("min-replicas-max-lag") > 0 && s.goodReplicasLocked(time.Now()) < n {
		g |= gateMinReplicas
	}
	r.mu.Unlock()
	s.replGate.Store(g)
}

// replRefusal returns the error that refuses cmd under the gate g, or "".
func (s *Server) replRefusal(c *Client, cmd *Command, g uint32) string {
	write := cmd.Flags&FlagWrite != 0
	if !write && cmd.Name == "exec" {
		for _, q := range c.Multi {
			if q.cmd.Flags&FlagWrite != 0 {
				write = true
				break
			}
		}
	}
	if g&gateMinReplicas != 0 && write {
		return "NOREPLICAS Not enough good replicas to write."
	}
	// In a cluster, writes to keys are redirected to the master instead.
	if g&gateReadOnly != 0 && write && !(s.route.Load() != nil && routed(cmd)) {
		return "READONLY You can't write against a read only replica."
	}
	if g&gateStale != 0 && cmd.Flags&FlagStale == 0 {
		return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	}
	return ""
}

// ReplOffset returns master_repl_offset.
func (s *Server) ReplOffset() int64 {
	s.repl.mu.Lock()
	defer s.repl.mu.Unlock()
	return s.repl.offset
}

// ReplIDs returns the node's replication ids.
func (s *Server) ReplIDs() repl.IDs {
	s.repl.mu.Lock()
	defer s.repl.mu.Unlock()
	return s.repl.ids
}

// shiftReplIDLocked starts a new history that continues the current one:
// replicas of the old id may continue up to the current offset.
func (r *replication) shiftReplIDLocked() {
	r.ids.ID2 = r.ids.ID
	r.ids.Second = r.offset + 1
	r.ids.ID = randomHex40()
}

// replicaOf makes the node a replica of host:port, or a master when host
// is "". It reports false when it was already replicating that master.
func (s *Server) replicaOf(host string, port int) bool {
	r := &s.repl
	defer r.holdApply()()
	r.mu.Lock()
	if host != "" && r.masterHost == host && r.masterPort == port {
		r.mu.Unlock()
		return false
	}
	if host != "" && r.masterHost == "" {
		// A master becoming a replica: refuse writes first, then let the
		// backlog take the last of its own stream, so that the offset it
		// asks its new master to continue from covers every write it made.
		r.mu.Unlock()
		if s.Cfg.Bool("replica-read-only") {
			s.replGate.Store(s.replGate.Load() | gateReadOnly)
		}
		s.detachBacklog()
		r.mu.Lock()
	}
	r.gen++
	gen := r.gen
	if l := r.link; l != nil {
		l.close()
		r.link = nil
	}
	wasReplica := r.masterHost != ""
	if host == "" {
		r.masterHost, r.masterPort, r.state = "", 0, linkNone
		if wasReplica {
			// A promoted replica keeps its data and offset under a new id;
			// the replicas of its old master may continue from it.
			r.shiftReplIDLocked()
			s.Log.Info("replication: now a master")
		}
		hasBacklog := r.backlog != nil
		r.mu.Unlock()
		// The backlog takes the feed before keys may expire here: the
		// DEL of every key this node now expires reaches its replicas.
		if hasBacklog {
			s.attachBacklog()
		}
		s.replicaMode.Store(false)
		s.ks.KeepExpired.Store(false)
		s.updateReplGate()
		return true
	}
	if !wasReplica {
		// A master's own history is what it asks to continue.
		r.hasData = true
	}
	r.masterHost, r.masterPort, r.state = host, port, linkConnect
	r.downSince = time.Time{}
	r.since = time.Now()
	s.replicaMode.Store(true)
	s.ks.KeepExpired.Store(true)
	r.mu.Unlock()
	// The backlog now takes the master's stream; replicas of this node
	// resynchronise against its new history.
	s.detachBacklog()
	s.dropReplicas()
	s.updateReplGate()
	s.Log.Info("replication: replicating", zapString("master", net.JoinHostPort(host, strconv.Itoa(port))))
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.replicaLoop(gen, host, port)
	}()
	return true
}

// holdApply waits until the master link is between two commands and keeps
// it there until the returned function runs. A command the link applies
// while the master changes would otherwise be in the data but not in the
// offset: a promoted node would lack it in the history its replicas
// continue, and a node that follows another master would apply it twice
// (it asks to continue from before it). The wait is bounded: a command
// that cannot finish meanwhile (it waits for the slot locks of the caller's
// transaction, or for a CLIENT PAUSE) runs after the change: a promoted
// node propagates it as its own write, a node that follows another master
// may apply it twice.
func (r *replication) holdApply() (release func()) {
	deadline := time.Now().Add(time.Second)
	for !r.applyMu.TryLock() {
		if time.Now().After(deadline) {
			return func() {}
		}
		time.Sleep(50 * time.Microsecond)
	}
	return r.applyMu.Unlock
}

// startReplicaOfConfig starts replicating the master named by the
// replicaof directive, if any.
func (s *Server) startReplicaOfConfig() {
	v := s.Cfg.Str("replicaof")
	host, ps, ok := strings.Cut(v, " ")
	if !ok || s.clusterEnabled() {
		return
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return
	}
	s.replicaOf(host, port)
}

func registerRepl(t Table) {
	t.Add(metaCommand("replicaof", cmdReplicaOf))
	t.Add(metaCommand("slaveof", cmdReplicaOf))
	t.Add(metaCommand("role", cmdRole))
	t.Add(metaCommand("replconf", cmdReplconf))
	t.Add(metaCommand("psync", cmdPsync))
	t.Add(metaCommand("sync", cmdPsync))
	t.Add(metaCommand("wait", cmdWait))
}

func cmdReplicaOf(x *Ctx) {
	if x.S.clusterEnabled() {
		x.W.Error("ERR REPLICAOF not allowed in cluster mode.")
		return
	}
	if strings.EqualFold(x.Arg(1), "no") && strings.EqualFold(x.Arg(2), "one") {
		x.S.replicaOf("", 0)
		x.W.OK()
		return
	}
	if x.C.Flags&ClientReplica != 0 {
		x.W.Error("ERR Command is not valid when client is a replica.")
		return
	}
	port, ok := ParseInt(x.Args[2])
	if !ok || port < 0 || port > 65535 {
		x.W.Error("ERR Invalid master port")
		return
	}
	if !x.S.replicaOf(x.Arg(1), int(port)) {
		x.W.Simple("OK Already connected to specified master")
		return
	}
	x.W.OK()
}

func cmdRole(x *Ctx) {
	s := x.S
	r := &s.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.masterHost != "" {
		x.W.Array(5)
		x.W.BulkString("slave")
		x.W.BulkString(r.masterHost)
		x.W.Int(int64(r.masterPort))
		x.W.BulkString(linkStateNames[r.state])
		if r.state == linkConnected {
			x.W.Int(r.offset)
		} else {
			x.W.Int(-1)
		}
		return
	}
	x.W.Array(3)
	x.W.BulkString("master")
	x.W.Int(r.offset)
	links := r.sortedReplicas()
	x.W.Array(len(links))
	for _, l := range links {
		x.W.Array(3)
		x.W.BulkString(l.ip)
		x.W.BulkString(strconv.Itoa(l.port))
		x.W.BulkString(strconv.FormatInt(l.ackOff.Load(), 10))
	}
}

// infoReplication writes INFO's replication section, field for field as
// redis-server 7.0 does.
func (s *Server) infoReplication(w infoWriter) {
	r := &s.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.masterHost != "" {
		w.kv("role", "slave")
		w.kv("master_host", r.masterHost)
		w.kv("master_port", r.masterPort)
		up := r.state == linkConnected
		w.kv("master_link_status", map[bool]string{true: "up", false: "down"}[up])
		lastIO := int64(-1)
		if r.link != nil && r.state >= linkSync {
			lastIO = (now.UnixMilli() - r.link.lastIO.Load()) / 1000
		}
		w.kv("master_last_io_seconds_ago", lastIO)
		w.kv("master_sync_in_progress", b2i(r.state == linkSync))
		w.kv("slave_read_repl_offset", r.offset)
		w.kv("slave_repl_offset", r.offset)
		if r.state == linkSync {
			total, read := r.syncTotal.Load(), r.syncRead.Load()
			w.kv("master_sync_total_bytes", total)
			w.kv("master_sync_read_bytes", read)
			left, perc := int64(-1), 0.0
			if total > 0 {
				left = total - read
				perc = float64(read) * 100 / float64(total)
			}
			w.kv("master_sync_left_bytes", left)
			w.kv("master_sync_perc", strconv.FormatFloat(perc, 'f', 2, 64))
			w.kv("master_sync_last_io_seconds_ago", (now.UnixMilli()-r.syncLast.Load())/1000)
		}
		if !up {
			d := int64(-1)
			if !r.downSince.IsZero() {
				d = int64(now.Sub(r.downSince) / time.Second)
			}
			w.kv("master_link_down_since_seconds", d)
		}
		w.kv("slave_priority", s.Cfg.Int("replica-priority"))
		w.kv("slave_read_only", b2i(s.Cfg.Bool("replica-read-only")))
		w.kv("replica_announced", b2i(s.Cfg.Bool("replica-announced")))
	} else {
		w.kv("role", "master")
	}
	links := r.sortedReplicas()
	w.kv("connected_slaves", len(links))
	if s.Cfg.Int("min-replicas-to-write") > 0 && s.Cfg.Int("min-replicas-max-lag") > 0 {
		w.kv("min_slaves_good_slaves", s.goodReplicasLocked(now))
	}
	for i, l := range links {
		w.kv("slave"+strconv.Itoa(i), "ip="+l.ip+",port="+strconv.Itoa(l.port)+",state="+l.stateName()+
			",offset="+strconv.FormatInt(l.ackOff.Load(), 10)+",lag="+strconv.FormatInt(l.lag(now), 10))
	}
	w.kv("master_failover_state", "no-failover")
	w.kv("master_replid", r.ids.ID)
	w.kv("master_replid2", r.ids.ID2)
	w.kv("master_repl_offset", r.offset)
	w.kv("second_repl_offset", r.ids.Second)
	if b := r.backlog; b != nil {
		w.kv("repl_backlog_active", 1)
		w.kv("repl_backlog_size", b.Size())
		w.kv("repl_backlog_first_byte_offset", b.First())
		w.kv("repl_backlog_histlen", b.Histlen())
	} else {
		w.kv("repl_backlog_active", 0)
		w.kv("repl_backlog_size", s.Cfg.Int("repl-backlog-size"))
		w.kv("repl_backlog_first_byte_offset", 0)
		w.kv("repl_backlog_histlen", 0)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// stopRepl closes the master link at shutdown (s.mu is held).
func (s *Server) stopRepl() {
	r := &s.repl
	r.mu.Lock()
	r.gen++
	if r.link != nil {
		r.link.close()
	}
	r.mu.Unlock()
}

// replMaster returns the master this node replicates ("" when a master).
func (s *Server) replMaster() (string, int) {
	s.repl.mu.Lock()
	defer s.repl.mu.Unlock()
	return s.repl.masterHost, s.repl.masterPort
}

// syncReplication makes replication follow the cluster's view of this
// node: a replica replicates its master's address, a master (after a
// promotion) replicates nobody. Runs on the cluster loop.
func (cn *clusterNode) syncReplication() {
	st, s := cn.st, cn.s
	me := st.Myself
	host, port := s.replMaster()
	switch {
	case me.IsReplica() && me.Master != "":
		m := st.Nodes[me.Master]
		if m == nil || m.IP == "" || m.Port == 0 {
			return
		}
		if host != m.IP || port != m.Port {
			s.replicaOf(m.IP, m.Port)
		}
	case me.IsMaster() && host != "":
		s.replicaOf("", 0)
	}
}
