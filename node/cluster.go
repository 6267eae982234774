package node

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/slotd/slotd/failover"
	"github.com/slotd/slotd/gossip"
	"github.com/slotd/slotd/node/bus"
	"github.com/slotd/slotd/slots"
)

// clusterTick is how often the cluster loop calls the state machine's Tick.
const clusterTick = 100 * time.Millisecond

// clusterNode runs this node's part of the cluster: one goroutine (loop)
// owns the gossip state machine and feeds it bus frames, ticks and client
// commands; it carries out the outputs (sends, config writes, key drops)
// and publishes a routing snapshot for the command path after each step.
type clusterNode struct {
	s    *Server
	log  *zap.Logger
	st   *gossip.State
	bus  *bus.Bus
	file string
	lock *os.File

	// fo is the failover machine riding on st (same goroutine); hooks
	// carry out its replication-side decisions (cluster_failover.go).
	fo    *failover.Machine
	hooks FailoverHooks
	// mfTimer paces manualPollC (loop goroutine only).
	mfTimer *time.Timer

	frames chan []byte
	cmds   chan func()
	done   chan struct{}
	wg     sync.WaitGroup
	start  time.Time

	badFrames atomic.Int64
	// lastSig is the signature of the view the current Route was built
	// from (loop goroutine only).
	lastSig uint64
	// now is the time of the Step or Tick being carried out (loop only).
	now int64
	// info is CLUSTER INFO's text, rebuilt with the routing snapshot so
	// that INFO does not wait for the loop.
	info atomic.Pointer[string]
}

// startCluster loads or creates the cluster config, opens the bus and
// starts the loop. Called by Listen when cluster-enabled is yes.
func (s *Server) startCluster() error {
	cn := &clusterNode{
		s:      s,
		frames: make(chan []byte, 1024),
		cmds:   make(chan func()),
		done:   make(chan struct{}),
		start:  time.Now(),
	}
	// A relative path is relative to the working directory, which the dir
	// directive has already changed to, as in redis-server.
	file := s.Cfg.Str("cluster-config-file")
	cn.file = file
	if err := cn.lockConfig(); err != nil {
		return err
	}
	port := int(s.Cfg.Int("port"))
	cport := int(s.Cfg.Int("cluster-port"))
	if cport == 0 {
		cport = port + 10000
	}
	gcfg := gossip.Config{
		NodeTimeout:         s.Cfg.Int("cluster-node-timeout"),
		RequireFullCoverage: s.Cfg.Bool("cluster-require-full-coverage"),
		Rand:                rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid()))),
	}
	ip := s.announceIP()
	aport, acport := port, cport
	if p := int(s.Cfg.Int("cluster-announce-port")); p != 0 {
		aport = p
	}
	if p := int(s.Cfg.Int("cluster-announce-bus-port")); p != 0 {
		acport = p
	}
	now := time.Now().UnixMilli()
	data, err := os.ReadFile(file)
	switch {
	case err == nil && len(strings.TrimSpace(string(data))) > 0:
		st, perr := gossip.ParseNodesConf(data)
		if perr != nil {
			cn.unlock()
			return fmt.Errorf("Unrecoverable error: corrupted cluster config file %q: %v", file, perr)
		}
		st.Cfg = gcfg
		st.Myself.IP, st.Myself.Port, st.Myself.CPort = ip, aport, acport
		st.Restart(now)
		cn.st = st
	case err == nil || errors.Is(err, os.ErrNotExist):
		cn.st = gossip.NewState(gcfg, gossip.RandomID(gcfg.Rand), ip, aport, acport)
		if err := cn.persist(cn.st.Saved()); err != nil {
			cn.unlock()
			return err
		}
	default:
		cn.unlock()
		return fmt.Errorf("cannot read the cluster config file %q: %w", file, err)
	}
	cn.st.Myself.Hostname = s.Cfg.Str("cluster-announce-hostname")
	// In cluster mode every log line names the cluster node id.
	cn.log = s.baseLog.With(zap.String("node", string(cn.st.Myself.ID)), zap.String("component", "cluster"))
	s.Log = s.baseLog.With(zap.String("node", string(cn.st.Myself.ID)), zap.String("component", "server"))
	bindAddr := "0.0.0.0"
	if b := s.firstBindIP(); b != "" {
		bindAddr = b
	}
	cn.bus, err = bus.Open(bus.Config{
		Name:          string(cn.st.Myself.ID),
		BindAddr:      bindAddr,
		Port:          cport,
		AdvertiseAddr: ip,
		AdvertisePort: cport,
		Secret:        s.Cfg.Str("cluster-bus-secret"),
		OnFrame:       cn.onFrame,
		Logger:        cn.log,
	})
	if err != nil {
		cn.unlock()
		return err
	}
	cn.startFailover()
	s.cl = cn
	s.Cfg.OnChange(cn.configChanged)
	cn.publish()
	cn.wg.Add(1)
	go func() {
		defer cn.wg.Done()
		cn.loop()
	}()
	cn.log.Info("cluster node started", zap.String("id", string(cn.st.Myself.ID)), zap.String("config", file), zap.Int("bus_port", cport))
	return nil
}

// configChanged applies CONFIG SET of the directives the state machine
// reads (routing reads cluster-allow-reads-when-down at each publish).
func (cn *clusterNode) configChanged(name string) {
	if cn.failoverConfigChanged(name) {
		return
	}
	switch name {
	case "cluster-require-full-coverage", "cluster-node-timeout", "cluster-allow-reads-when-down", "cluster-preferred-endpoint-type":
	default:
		return
	}
	full := cn.s.Cfg.Bool("cluster-require-full-coverage")
	timeout := cn.s.Cfg.Int("cluster-node-timeout")
	go cn.do(func() {
		cn.st.Cfg.RequireFullCoverage = full
		if timeout > 0 {
			cn.st.Cfg.NodeTimeout = timeout
		}
	})
}

// announceIP is the address this node tells others to reach it at:
// cluster-announce-ip, else the first concrete bind address, else the
// first non-loopback interface address, else 127.0.0.1.
func (s *Server) announceIP() string {
	if ip := s.Cfg.Str("cluster-announce-ip"); ip != "" {
		return ip
	}
	if ip := s.firstBindIP(); ip != "" {
		return ip
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				return n.IP.String()
			}
		}
	}
	return "127.0.0.1"
}

// firstBindIP returns the first bind address that is a concrete IP.
func (s *Server) firstBindIP() string {
	for _, b := range splitFields(s.Cfg.Str("bind")) {
		b = strings.TrimPrefix(b, "-")
		if ip := net.ParseIP(b); ip != nil && !ip.IsUnspecified() {
			return ip.String()
		}
	}
	return ""
}

// lockConfig takes an exclusive lock on the config file so that two nodes
// cannot share it.
func (cn *clusterNode) lockConfig() error {
	f, err := os.OpenFile(cn.file, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("cannot open the cluster config file %q: %w", cn.file, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return fmt.Errorf("Sorry, the cluster configuration file %s is already used by a different Redis Cluster node. Please make sure that different nodes use different cluster configuration files.", cn.file)
	}
	cn.lock = f
	return nil
}

func (cn *clusterNode) unlock() {
	if cn.lock != nil {
		cn.lock.Close()
		cn.lock = nil
	}
}

// rewrite overwrites the config file in place, as redis-server writes
// nodes.conf when it does not fsync: two system calls instead of a new
// file, a rename and two directory operations. New content shorter than
// the file is padded with newlines (blank lines, which the parser skips)
// before the file is truncated, so that a process killed between the two
// calls leaves a valid file. Used only for writes that need no fsync.
func (cn *clusterNode) rewrite(data []byte) error {
	fi, err := cn.lock.Stat()
	if err != nil {
		return err
	}
	n := len(data)
	for int64(len(data)) < fi.Size() {
		data = append(data, '\n')
	}
	if _, err := cn.lock.WriteAt(data, 0); err != nil {
		return err
	}
	if int64(n) < fi.Size() {
		return cn.lock.Truncate(int64(n))
	}
	return nil
}

// persist writes the config atomically: a temporary file, fsync, rename,
// and an fsync of the directory (the fsyncs only when sync is set). The
// lock is on the inode that the rename replaces, so it is taken again on
// the new file.
func (cn *clusterNode) persist(sync bool) error {
	data := gossip.FormatNodesConf(cn.st)
	if !sync && cn.lock != nil {
		return cn.rewrite(data)
	}
	tmp := cn.file + ".tmp-" + strconv.Itoa(os.Getpid())
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, cn.file); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(filepath.Dir(cn.file)); sync && err == nil {
		d.Sync()
		d.Close()
	} else if err == nil {
		d.Close()
	}
	old := cn.lock
	cn.lock = f
	if old != nil {
		old.Close()
	}
	return nil
}

func (cn *clusterNode) onFrame(frame []byte) {
	f := append([]byte(nil), frame...)
	select {
	case cn.frames <- f:
	default:
		// The loop is behind: drop, the protocol resends.
		cn.badFrames.Add(1)
	}
}

func (cn *clusterNode) loop() {
	t := time.NewTicker(clusterTick)
	defer t.Stop()
	for {
		select {
		case <-cn.done:
			return
		case f := <-cn.frames:
			for len(f) > 0 {
				m, rest, err := gossip.ParseMessage(f)
				if err != nil {
					cn.badFrames.Add(1)
					break
				}
				cn.now = time.Now().UnixMilli()
				cn.apply(cn.st.Step(cn.now, m.Hdr().Sender, m))
				f = rest
			}
			cn.failoverProgress()
			cn.publishIfChanged()
		case <-t.C:
			cn.now = time.Now().UnixMilli()
			cn.st.SetReplOffset(cn.hooks.ReplOffset())
			cn.syncReplication()
			cn.apply(cn.st.Tick(cn.now))
			cn.failoverTick(cn.now)
			cn.publishIfChanged()
			info := cn.infoText()
			cn.info.Store(&info)
		case fn := <-cn.cmds:
			fn()
		case <-cn.manualPollC():
			cn.manualPollFired()
		}
	}
}

// publishIfChanged republishes the routing snapshot when the view that
// routing depends on changed: most bus messages change nothing, and a
// rebuild walks all 16384 slots.
func (cn *clusterNode) publishIfChanged() {
	if sig := cn.signature(); sig != cn.lastSig {
		cn.publish()
	}
}

// signature summarises what a Route is built from: the cluster state, the
// epochs, every node's address, flags, master and slot count, and the open
// slots. A change of slot owners always changes a config epoch or a count.
func (cn *clusterNode) signature() uint64 {
	st := cn.st
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	put(uint64(st.Status))
	put(st.CurrentEpoch)
	for _, id := range st.Order() {
		n := st.Nodes[id]
		if n == nil {
			continue
		}
		h.Write([]byte(n.ID))
		h.Write([]byte(n.IP))
		h.Write([]byte(n.Master))
		h.Write([]byte(n.Hostname))
		put(uint64(n.Port))
		put(uint64(n.Flags))
		put(n.ConfigEpoch)
		put(uint64(n.NumSlots))
	}
	// Open slots are summed, so that map order does not matter.
	var open uint64
	for slot, id := range st.Migrating {
		open += openSlotHash(slot, id)
	}
	for slot, id := range st.Importing {
		open += openSlotHash(slot|1<<20, id)
	}
	put(open)
	return h.Sum64()
}

func openSlotHash(slot int, id gossip.NodeID) uint64 {
	h := fnv.New64a()
	h.Write([]byte{byte(slot), byte(slot >> 8), byte(slot >> 16)})
	h.Write([]byte(id))
	return h.Sum64()
}

// do runs fn on the loop goroutine and waits for it. The routing snapshot
// is republished before do returns, so that a client that got the reply of
// a CLUSTER command (SETSLOT IMPORTING, say) and tells another node about it
// cannot have that node's next request (a RESTORE-ASKING) routed by the
// old snapshot.
func (cn *clusterNode) do(fn func()) {
	done := make(chan struct{})
	select {
	case cn.cmds <- func() { fn(); cn.publish(); close(done) }:
		<-done
	case <-cn.done:
	}
}

// apply carries out the state machine's outputs in order.
func (cn *clusterNode) apply(outs []gossip.Output) {
	for _, o := range outs {
		switch o := o.(type) {
		case *gossip.Send:
			cn.send(o.Addr, gossip.Encode(o.Msg))
		case *gossip.Broadcast:
			frame := gossip.Encode(o.Msg)
			for _, p := range o.To {
				cn.send(p.Addr, frame)
			}
		case *gossip.Persist:
			if err := cn.persist(o.Sync); err != nil {
				cn.log.Error("cannot write the cluster config", zap.Error(err))
			}
		case *gossip.Event:
			cn.log.Info("cluster event", zap.String("event", o.Kind.String()), zap.String("about", string(o.Node)), zap.String("detail", o.Detail))
		case *gossip.SlotsLost:
			// Redirect first, then drop: once the keys start going,
			// clients must already be sent to the new owner, not told
			// that a key is missing.
			cn.publish()
			cn.dropSlots(o.Slots)
		case *gossip.RoleChanged:
			cn.log.Info("role changed", zap.String("master", string(o.Master)))
			cn.follow(o.Master)
			cn.syncReplication()
		case *gossip.Forward:
			cn.applyFailover(cn.now, cn.fo.Step(cn.now, cn.st, o))
		}
	}
}

// send hands a frame to the bus. Frames that need TCP go out on their own
// goroutine so that an unreachable peer cannot stall the loop.
func (cn *clusterNode) send(a gossip.Addr, frame []byte) {
	addr := net.JoinHostPort(a.IP, strconv.Itoa(a.CPort))
	if len(frame) > 1200 {
		go cn.bus.Send(addr, frame, true)
		return
	}
	cn.bus.Send(addr, frame, false)
}

// dropSlots deletes the keys of slots this node no longer serves. It runs
// off the loop: it takes slot locks, which a transaction waiting on a
// CLUSTER command may hold.
func (cn *clusterNode) dropSlots(bm slots.Bitmap) {
	ks := cn.s.ks
	go func() {
		for slot := 0; slot < slots.Count; slot++ {
			if !bm.Has(slot) {
				continue
			}
			if cn.s.replicaMode.Load() {
				// The node became a replica: its data is now its
				// master's, which replication brings in; dropping here
				// could delete keys it already received.
				return
			}
			ks.Lock(slot)
			n := ks.DB(0).FlushSlot(slot)
			ks.Unlock(slot)
			if n > 0 {
				cn.log.Info("dropped keys of a lost slot", zap.Int("slot", slot), zap.Int("keys", n))
			}
		}
	}()
}

// publish installs the routing snapshot and the CLUSTER INFO text for the
// state as it is now.
func (cn *clusterNode) publish() {
	st := cn.st
	r := NewRoute()
	r.OK = st.Status == gossip.ClusterOK
	r.AllowReadsWhenDown = cn.s.Cfg.Bool("cluster-allow-reads-when-down")
	index := map[gossip.NodeID]int16{}
	add := func(id gossip.NodeID) int16 {
		if i, ok := index[id]; ok {
			return i
		}
		n := st.Nodes[id]
		ep := "?:0"
		if n != nil {
			ep = cn.endpoint(n) + ":" + strconv.Itoa(n.Port)
		}
		i := int16(len(r.Nodes))
		r.Nodes = append(r.Nodes, RouteNode{ID: string(id), Endpoint: ep})
		index[id] = i
		return i
	}
	r.Myself = add(st.Myself.ID)
	if st.Myself.IsReplica() && st.Myself.Master != "" {
		r.MyMaster = add(st.Myself.Master)
	}
	// Owners come in long runs of slots: look a node up once per run.
	var runID gossip.NodeID
	var runIdx int16
	for slot, id := range st.Owner {
		if id == "" {
			continue
		}
		if id != runID || runID == "" {
			runID, runIdx = id, add(id)
		}
		r.Owner[slot] = runIdx
	}
	// A replica keeps its master's open slots (cluster_slotrepl.go) but
	// routes as any replica until it is promoted.
	open := st.Myself.IsMaster()
	if open && len(st.Migrating) > 0 {
		r.Migrating = map[int]int16{}
		for slot, id := range st.Migrating {
			r.Migrating[slot] = add(id)
		}
	}
	if open && len(st.Importing) > 0 {
		r.Importing = map[int]int16{}
		for slot, id := range st.Importing {
			r.Importing[slot] = add(id)
		}
	}
	cn.s.SetRoute(r)
	cn.lastSig = cn.signature()
	info := cn.infoText()
	cn.info.Store(&info)
}

// endpoint is the host that redirections and CLUSTER SLOTS name for n,
// per cluster-preferred-endpoint-type.
func (cn *clusterNode) endpoint(n *gossip.Node) string {
	switch cn.s.Cfg.Str("cluster-preferred-endpoint-type") {
	case "hostname":
		if n.Hostname != "" {
			return n.Hostname
		}
		return "?"
	case "unknown-endpoint":
		return "?"
	}
	return n.IP
}

func (cn *clusterNode) close() {
	select {
	case <-cn.done:
		return
	default:
	}
	close(cn.done)
	cn.wg.Wait()
	cn.bus.Close()
	cn.unlock()
}

// infoText is CLUSTER INFO's reply.
func (cn *clusterNode) infoText() string {
	st := cn.st
	assigned, pfail, fail := 0, 0, 0
	// Owner always agrees with the owners' slot counts: count by node.
	for _, n := range st.Nodes {
		if n.NumSlots == 0 {
			continue
		}
		assigned += n.NumSlots
		if n.Flags&gossip.FlagFail != 0 {
			fail += n.NumSlots
		} else if n.Flags&gossip.FlagPFail != 0 {
			pfail += n.NumSlots
		}
	}
	size := 0
	for _, n := range st.Nodes {
		if n.IsMaster() && n.NumSlots > 0 {
			size++
		}
	}
	myEpoch := st.Myself.ConfigEpoch
	if st.Myself.IsReplica() {
		if m := st.Nodes[st.Myself.Master]; m != nil {
			myEpoch = m.ConfigEpoch
		}
	}
	var b strings.Builder
	kv := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) }
	kv("cluster_state", st.Status.String())
	kv("cluster_slots_assigned", assigned)
	kv("cluster_slots_ok", assigned-pfail-fail)
	kv("cluster_slots_pfail", pfail)
	kv("cluster_slots_fail", fail)
	kv("cluster_known_nodes", len(st.Nodes))
	kv("cluster_size", size)
	kv("cluster_current_epoch", st.CurrentEpoch)
	kv("cluster_my_epoch", myEpoch)
	var sent, recv uint64
	for t := gossip.TypePing; t <= gossip.TypeMFStart; t++ {
		if n := st.Stats.Sent[t]; n > 0 {
			kv("cluster_stats_messages_"+t.String()+"_sent", n)
			sent += n
		}
	}
	kv("cluster_stats_messages_sent", sent)
	for t := gossip.TypePing; t <= gossip.TypeMFStart; t++ {
		if n := st.Stats.Received[t]; n > 0 {
			kv("cluster_stats_messages_"+t.String()+"_received", n)
			recv += n
		}
	}
	kv("cluster_stats_messages_received", recv)
	kv("total_cluster_links_buffer_limit_exceeded", 0)
	// slotd's own: what the bus cost, in bytes of frames, and the frames
	// dropped as malformed or from another cluster.
	if cn.bus != nil {
		bs := cn.bus.Stats()
		kv("cluster_stats_bus_bytes_sent", bs.BytesOut)
		kv("cluster_stats_bus_bytes_received", bs.BytesIn)
	}
	kv("cluster_stats_bus_frames_rejected", cn.badFrames.Load()+int64(st.Stats.Rejected))
	return b.String()
}
