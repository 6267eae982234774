package node

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/slotd/slotd/node/repl"
)

// replicaLink is a replica attached to this node: its announced address,
// the stream waiting to be written to it and what it acknowledged.
type replicaLink struct {
	c    *Client
	ip   string
	port int
	// capaEOF: the replica reads an EOF-marked payload (diskless);
	// psync2: it understands +CONTINUE <new id>.
	capaEOF, psync2 bool

	state  atomic.Int32
	ackOff atomic.Int64
	ackMs  atomic.Int64  // unix ms of the last ACK
	acked  chan struct{} // closed by the first ACK

	// Guarded by replication.mu: the stream bytes not yet written, and
	// while a full sync runs, the offset its image stands at (bytes up to
	// it are in the image, later ones are queued).
	pending  []byte
	startOff int64
	wake     chan struct{}
	dead     bool
}

// Replica link states (INFO's state=).
const (
	rlWaitBgsave = iota // full sync: the image has not started
	rlSendBulk          // full sync: the image is being sent; the stream is queued
	rlOnline            // the stream flows
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
	ms := l.ackMs.Load()
	if ms == 0 {
		return 0
	}
	return (now.UnixMilli() - ms) / 1000
}

// push queues stream bytes [end-len(chunk), end) for the link; r.mu held.
func (l *replicaLink) push(chunk []byte, end int64) {
	switch l.state.Load() {
	case rlWaitBgsave:
		return
	case rlSendBulk:
		if skip := l.startOff - (end - int64(len(chunk))); skip > 0 {
			if skip >= int64(len(chunk)) {
				return
			}
			chunk = chunk[skip:]
		}
	}
	if l.dead {
		return
	}
	l.pending = append(l.pending, chunk...)
	if len(l.pending) > replicaBufferLimit {
		l.dead = true
		l.c.Kill()
	}
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// replicaBufferLimit bounds the stream queued for one replica (the
// replica class of client-output-buffer-limit, 256 MB by default).
const replicaBufferLimit = 256 << 20

// goodReplicasLocked counts the online replicas whose last ACK is at most
// min-replicas-max-lag seconds old; r.mu held.
func (s *Server) goodReplicasLocked(now time.Time) int64 {
	maxLag := s.Cfg.Int("min-replicas-max-lag")
	good := int64(0)
	for _, l := range s.repl.replicas {
		if l.state.Load() == rlOnline && l.lag(now) <= maxLag {
			good++
		}
	}
	return good
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

// appendStreamLocked adds stream bytes ending at offset end to the
// backlog and the replicas' queues; r.mu held.
func (r *replication) appendStreamLocked(chunk []byte, end int64) {
	r.offset = end
	if r.backlog != nil {
		r.backlog.Append(chunk)
	}
	for _, l := range r.replicas {
		l.push(chunk, end)
	}
}

// backlogSink is the feed's consumer on a master: the backlog and the
// replicas.
type backlogSink struct{ s *Server }

func (k backlogSink) feedWrite(chunk []byte, end int64) {
	r := &k.s.repl
	r.mu.Lock()
	if r.masterHost == "" {
		r.appendStreamLocked(chunk, end)
	}
	r.mu.Unlock()
}

// ensureBacklog creates the backlog on a master that has none and starts
// feeding it; a new backlog starts a new history, as no earlier one can be
// served from it.
func (s *Server) ensureBacklog() {
	r := &s.repl
	r.mu.Lock()
	if r.backlog != nil || r.masterHost != "" {
		r.mu.Unlock()
		return
	}
	r.ids = repl.IDs{ID: randomHex40(), ID2: zeroReplID, Second: -1}
	r.backlog = repl.NewBacklog(int(s.Cfg.Int("repl-backlog-size")), 0)
	r.mu.Unlock()
	s.attachBacklog()
}

// attachBacklog makes the feed deliver to the backlog, which continues at
// the feed's offset.
func (s *Server) attachBacklog() {
	r := &s.repl
	r.mu.Lock()
	if r.sinkOn {
		r.mu.Unlock()
		return
	}
	r.sinkOn = true
	r.mu.Unlock()
	// Bytes still pending in the feed (another sink's, the AOF's) belong
	// to the numbering before this point: deliver them first.
	s.feed.pump()
	r.mu.Lock()
	s.feed.setOffset(r.offset)
	r.mu.Unlock()
	off := s.feed.attach(backlogSink{s}, s.done)
	r.mu.Lock()
	if r.backlog != nil && r.backlog.Offset() != off {
		r.backlog.Reset(off)
	}
	r.offset = off
	r.mu.Unlock()
}

// detachBacklog stops feeding the backlog (the node became a replica: its
// backlog now takes its master's stream).
func (s *Server) detachBacklog() {
	r := &s.repl
	r.mu.Lock()
	on := r.sinkOn
	r.sinkOn = false
	r.mu.Unlock()
	if on {
		s.feed.detach(backlogSink{s})
	}
}

var pingCmd = []byte("*1\r\n$4\r\nPING\r\n")
var getackCmd = []byte("*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n")

// replCron runs once a second: PINGs in the stream, the count of good
// replicas for min-replicas-to-write, the backlog's time to live.
func (s *Server) replCron() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var tick int64
	for {
		select {
		case <-s.done:
			return
		case now := <-t.C:
			tick++
			r := &s.repl
			r.mu.Lock()
			master := r.masterHost == ""
			n := len(r.replicas)
			timeout := s.Cfg.Int("repl-timeout")
			for _, l := range r.replicas {
				if l.state.Load() == rlOnline && l.lag(now) > timeout {
					// Silent for longer than repl-timeout: let it reconnect.
					l.c.Kill()
				}
			}
			if n > 0 {
				r.backlogIdleSince = time.Time{}
			} else if r.backlog != nil && r.backlogIdleSince.IsZero() {
				r.backlogIdleSince = now
			}
			expire := false
			if ttl := s.Cfg.Int("repl-backlog-ttl"); master && n == 0 && r.backlog != nil && ttl > 0 &&
				now.Sub(r.backlogIdleSince) >= time.Duration(ttl)*time.Second {
				expire = true
			}
			r.mu.Unlock()
			s.updateReplGate()
			if master && n > 0 && s.feed.on.Load() && tick%max(s.Cfg.Int("repl-ping-replica-period"), 1) == 0 {
				s.feed.appendRaw(pingCmd)
			}
			if expire {
				s.detachBacklog()
				r.mu.Lock()
				r.backlog = nil
				// No history can be continued any more.
				r.ids = repl.IDs{ID: randomHex40(), ID2: zeroReplID, Second: -1}
				r.mu.Unlock()
			}
		}
	}
}

// replClientGone forgets a replica whose connection closed.
func (s *Server) replClientGone(c *Client) {
	r := &s.repl
	r.mu.Lock()
	if l := r.replicas[c.ID]; l != nil {
		delete(r.replicas, c.ID)
		l.dead = true
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
	r.mu.Unlock()
}

// replicaInfo returns the client's pending replica settings (REPLCONF
// before PSYNC).
func (c *Client) replicaInfo() *replicaLink {
	if c.repl == nil {
		c.repl = &replicaLink{c: c, wake: make(chan struct{}, 1), acked: make(chan struct{})}
		if host, _, err := net.SplitHostPort(c.Addr); err == nil {
			c.repl.ip = host
		}
	}
	return c.repl
}

func cmdReplconf(x *Ctx) {
	if len(x.Args)%2 == 0 {
		x.W.Error(ErrSyntax)
		return
	}
	c := x.C
	for i := 1; i < len(x.Args); i += 2 {
		opt := strings.ToLower(x.Arg(i))
		val := x.Args[i+1]
		switch opt {
		case "listening-port":
			p, ok := ParseInt(val)
			if !ok {
				x.W.Error(ErrNotInt)
				return
			}
			c.replicaInfo().port = int(p)
		case "ip-address":
			c.replicaInfo().ip = string(val)
		case "capa":
			switch strings.ToLower(string(val)) {
			case "eof":
				c.replicaInfo().capaEOF = true
			case "psync2":
				c.replicaInfo().psync2 = true
			}
		case "ack":
			// A replica's acknowledgement: never answered.
			if c.Flags&ClientReplica != 0 && c.repl != nil {
				if off, ok := ParseInt(val); ok {
					l := c.repl
					if off > l.ackOff.Load() {
						l.ackOff.Store(off)
					}
					if l.ackMs.Swap(time.Now().UnixMilli()) == 0 {
						close(l.acked)
					}
					if ch := x.S.repl.ackWake.Swap(nil); ch != nil {
						close(*ch)
					}
				}
			}
			return
		case "getack":
			if c.Flags&ClientMaster != 0 {
				c.ackNow = true
			}
			return
		case "rdb-only", "rdb-filter-only":
		default:
			x.W.Error("ERR Unrecognized REPLCONF option: " + sanitize(x.Arg(i), 128))
			return
		}
	}
	x.W.OK()
}

// cmdPsync turns the connection into a replica link: it answers
// +CONTINUE with the backlog, or +FULLRESYNC with an image of the data,
// then streams. SYNC is the old full-sync-only form.
func cmdPsync(x *Ctx) {
	s, c := x.S, x.C
	if c.Flags&ClientReplica != 0 {
		return
	}
	r := &s.repl
	r.mu.Lock()
	if r.masterHost != "" && r.state != linkConnected {
		r.mu.Unlock()
		x.W.Error("NOMASTERLINK Can't SYNC while not connected with my master")
		return
	}
	r.mu.Unlock()
	l := c.replicaInfo()
	if l.port == 0 {
		if _, p, err := net.SplitHostPort(c.Addr); err == nil {
			l.port, _ = strconv.Atoi(p)
		}
	}
	isSync := x.Cmd.Name == "sync"
	s.ensureBacklog()
	if !isSync {
		id := x.Arg(1)
		from, ok := ParseInt(x.Args[2])
		r.mu.Lock()
		if ok && repl.CanContinue(r.ids, r.backlog, id, from) {
			hdr := "+CONTINUE\r\n"
			if l.psync2 {
				hdr = "+CONTINUE " + r.ids.ID + "\r\n"
			}
			l.pending = append([]byte(hdr), r.backlog.AppendFrom(nil, from)...)
			l.state.Store(rlOnline)
			s.attachReplicaLocked(c, l)
			r.mu.Unlock()
			r.syncPartialOK.Add(1)
			s.replLog().Info("partial resync", zap.String("replica", net.JoinHostPort(l.ip, strconv.Itoa(l.port))), zap.Int64("from", from))
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.replicaWriter(l)
			}()
			return
		}
		r.mu.Unlock()
		if id != "?" {
			r.syncPartialErr.Add(1)
		}
	}
	r.syncFull.Add(1)
	r.mu.Lock()
	l.state.Store(rlWaitBgsave)
	s.attachReplicaLocked(c, l)
	r.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.fullSync(l, isSync); err != nil {
			s.replLog().Warn("full sync with replica failed", zap.Error(err))
			c.Kill()
			return
		}
		s.replicaWriter(l)
	}()
}

func (s *Server) attachReplicaLocked(c *Client, l *replicaLink) {
	c.Flags |= ClientReplica
	c.publish()
	s.repl.replicas[c.ID] = l
	s.repl.cronOnce.Do(func() {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.replCron()
		}()
	})
}

func (s *Server) replLog() *zap.Logger {
	return s.baseLog.With(zap.String("node", s.RunID[:8]), zap.String("component", "replication"))
}

// streamOffset returns the offset the data stands at: the feed's on a
// master, the applied stream's on a replica. Called under every slot lock.
func (s *Server) streamOffset() int64 {
	r := &s.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.masterHost != "" {
		return r.offset
	}
	return s.feed.offset()
}

// fullSync sends the replica an image of the data: +FULLRESYNC, then the
// RDB (streamed with an EOF mark, or from a file with its length).
func (s *Server) fullSync(l *replicaLink, isSync bool) error {
	r := &s.repl
	c := l.c
	diskless := s.Cfg.Bool("repl-diskless-sync") && l.capaEOF && !isSync
	if d := s.Cfg.Int("repl-diskless-sync-delay"); diskless && d > 0 {
		select {
		case <-s.done:
			return errors.New("shutting down")
		case <-time.After(time.Duration(d) * time.Second):
		}
	}
	var hdr []byte
	atStart := func() {
		off := s.streamOffset()
		r.mu.Lock()
		l.startOff = off
		l.state.Store(rlSendBulk)
		if !isSync {
			hdr = append(hdr, "+FULLRESYNC "+r.ids.ID+" "+strconv.FormatInt(off, 10)+"\r\n"...)
		}
		r.mu.Unlock()
	}
	// A replica applying its master's stream holds still while its image
	// starts, so that the offset matches the data.
	r.applyMu.Lock()
	unlocked := false
	unlockApply := func() {
		if !unlocked {
			unlocked = true
			r.applyMu.Unlock()
		}
	}
	defer unlockApply()
	start := func() { atStart(); unlockApply() }
	conn := c.conn
	timeout := s.replTimeout()
	if diskless {
		var m [20]byte
		rand.Read(m[:])
		mark := hex.EncodeToString(m[:])
		w := &prefixWriter{w: conn, timeout: timeout, prefix: func() []byte {
			return append(hdr, "$EOF:"+mark+"\r\n"...)
		}}
		if err := s.snapshotTo(w, start); err != nil {
			return err
		}
		conn.SetWriteDeadline(time.Now().Add(timeout))
		if _, err := conn.Write([]byte(mark)); err != nil {
			return err
		}
		// The replica starts taking the stream once it has loaded the
		// image, which its first ACK says.
		select {
		case <-l.acked:
		case <-time.After(timeout):
			return errors.New("no ACK from the replica after the transfer")
		case <-s.done:
			return errors.New("shutting down")
		}
	} else {
		dir := s.Cfg.Str("dir")
		if dir == "" {
			dir = "."
		}
		f, err := os.CreateTemp(dir, "temp-repl-*.rdb")
		if err != nil {
			return err
		}
		defer os.Remove(f.Name())
		defer f.Close()
		if err := s.snapshotTo(f, start); err != nil {
			return err
		}
		size, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		hdr = append(hdr, "$"+strconv.FormatInt(size, 10)+"\r\n"...)
		conn.SetWriteDeadline(time.Now().Add(timeout))
		if _, err := conn.Write(hdr); err != nil {
			return err
		}
		if _, err := io.Copy(&deadlineWriter{w: conn, timeout: timeout}, f); err != nil {
			return err
		}
	}
	conn.SetWriteDeadline(time.Time{})
	// The image carries no slot state: the replica gets the open slots
	// in the stream that follows it.
	s.resyncOpenSlots()
	r.mu.Lock()
	l.state.Store(rlOnline)
	r.mu.Unlock()
	s.replLog().Info("full sync sent", zap.String("replica", net.JoinHostPort(l.ip, strconv.Itoa(l.port))), zap.Bool("diskless", diskless))
	return nil
}

// prefixWriter writes prefix() before the first bytes.
type prefixWriter struct {
	w       net.Conn
	timeout time.Duration
	prefix  func() []byte
	started bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.w.SetWriteDeadline(time.Now().Add(p.timeout))
	if !p.started {
		p.started = true
		if _, err := p.w.Write(p.prefix()); err != nil {
			return 0, err
		}
	}
	return p.w.Write(b)
}

type deadlineWriter struct {
	w       net.Conn
	timeout time.Duration
}

func (d *deadlineWriter) Write(b []byte) (int, error) {
	d.w.SetWriteDeadline(time.Now().Add(d.timeout))
	return d.w.Write(b)
}

// snapshotTo writes an RDB image of the data to w while the node keeps
// serving; atStart runs at the image's point in time under every slot lock.
func (s *Server) snapshotTo(w io.Writer, atStart func()) error {
	return s.writeSnapshot(w, atStart)
}

// replicaWriter writes the queued stream to an online replica until its
// connection closes.
func (s *Server) replicaWriter(l *replicaLink) {
	r := &s.repl
	conn := l.c.conn
	// The stream is written with raw system calls (see rawIO), through an
	// rawIO of its own: the client's belongs to its reading goroutine.
	var w io.Writer = conn
	if raw := newRawIO(conn); raw != nil {
		w = raw
	}
	var deadline time.Time
	var buf []byte
	for {
		r.mu.Lock()
		buf, l.pending = l.pending, buf[:0]
		dead := l.dead
		r.mu.Unlock()
		if dead {
			return
		}
		if len(buf) > 0 {
			// The deadline moves only when a tenth of the timeout passed
			// since it was set, not on every write.
			timeout := s.replTimeout()
			if want := time.Now().Add(timeout); want.Before(deadline) || want.Sub(deadline) > timeout/10 {
				conn.SetWriteDeadline(want)
				deadline = want
			}
			n, err := w.Write(buf)
			s.netOutput.Add(int64(n))
			if err != nil {
				l.c.Kill()
				return
			}
			if cap(buf) > 4<<20 {
				buf = nil
			}
			continue
		}
		select {
		case <-l.wake:
		case <-s.done:
			return
		}
	}
}

// cmdWait blocks until numreplicas replicas acknowledged the stream up to
// now, or the timeout (ms, 0: forever) passes; it answers how many did.
func cmdWait(x *Ctx) {
	s := x.S
	n, ok := x.Int(1)
	if !ok {
		return
	}
	ms, ok := x.TimeoutMs(2)
	if !ok {
		return
	}
	r := &s.repl
	r.mu.Lock()
	if r.masterHost != "" {
		r.mu.Unlock()
		x.W.Error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	r.mu.Unlock()
	target := s.feed.offset()
	count := func() int64 {
		r.mu.Lock()
		defer r.mu.Unlock()
		k := int64(0)
		for _, l := range r.replicas {
			if l.state.Load() == rlOnline && l.ackOff.Load() >= target {
				k++
			}
		}
		return k
	}
	got := count()
	if got >= n || x.C.Flags&ClientMulti != 0 {
		x.W.Int(got)
		return
	}
	if s.feed.on.Load() {
		s.feed.appendRaw(getackCmd)
	}
	var deadline <-chan time.Time
	if ms > 0 {
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for got < n {
		select {
		case <-deadline:
			x.W.Int(count())
			return
		case <-s.done:
			x.W.Int(count())
			return
		case <-tick.C:
			if x.C.killed.Load() {
				x.W.Int(count())
				return
			}
			got = count()
		}
	}
	x.W.Int(got)
}
