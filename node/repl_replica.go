package node

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/slotd/slotd/node/repl"
	"github.com/slotd/slotd/node/resp"
)

func zapString(k, v string) zap.Field { return zap.String(k, v) }

// masterLink is a replica's connection to its master.
type masterLink struct {
	conn net.Conn
	raw  *rawIO // reads conn's socket with raw system calls (nil: conn.Read)
	// deadline is when the read deadline last set runs out; fill moves it
	// only when it is more than a tenth of the timeout old, so that a busy
	// stream does not pay for a timer update on every read.
	deadline time.Time
	wmu      sync.Mutex // serialises writes (ACKs from the ticker and the reader)
	lastIO   atomic.Int64
	closed   atomic.Bool

	buf  []byte
	r, w int
}

func (l *masterLink) close() {
	if l.closed.CompareAndSwap(false, true) {
		l.conn.Close()
	}
}

func (l *masterLink) send(args ...string) error {
	b := appendCommand(nil, args...)
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_, err := l.conn.Write(b)
	return err
}

// fill reads more bytes into the buffer, within timeout.
func (l *masterLink) fill(timeout time.Duration) error {
	if l.r > 0 && l.r == l.w {
		l.r, l.w = 0, 0
	}
	if l.w == len(l.buf) {
		if l.r > 0 {
			copy(l.buf, l.buf[l.r:l.w])
			l.w -= l.r
			l.r = 0
		} else {
			nb := make([]byte, max(2*len(l.buf), 16*1024))
			copy(nb, l.buf[:l.w])
			l.buf = nb
		}
	}
	now := time.Now()
	if want := now.Add(timeout); want.Before(l.deadline) || want.Sub(l.deadline) > timeout/10 {
		l.conn.SetReadDeadline(want)
		l.deadline = want
	}
	var n int
	var err error
	if l.raw != nil {
		n, err = l.raw.Read(l.buf[l.w:])
	} else {
		n, err = l.conn.Read(l.buf[l.w:])
	}
	if n > 0 {
		l.w += n
		l.lastIO.Store(time.Now().UnixMilli())
	}
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// line reads one line without its CR LF.
func (l *masterLink) line(timeout time.Duration) (string, error) {
	for {
		if i := bytes.IndexByte(l.buf[l.r:l.w], '\n'); i >= 0 {
			s := string(bytes.TrimSuffix(l.buf[l.r:l.r+i], []byte{'\r'}))
			l.r += i + 1
			return s, nil
		}
		if l.w-l.r > 64*1024 {
			return "", errors.New("line too long from master")
		}
		if err := l.fill(timeout); err != nil {
			return "", err
		}
	}
}

// linkReader reads the RDB payload through the link's buffer.
type linkReader struct {
	l       *masterLink
	timeout time.Duration
	s       *Server
}

func (lr *linkReader) Read(p []byte) (int, error) {
	l := lr.l
	if l.r == l.w {
		if err := l.fill(lr.timeout); err != nil {
			return 0, err
		}
	}
	n := copy(p, l.buf[l.r:l.w])
	l.r += n
	lr.s.repl.syncRead.Add(int64(n))
	lr.s.repl.syncLast.Store(time.Now().UnixMilli())
	return n, nil
}

// eofMarkReader passes on a stream that ends with a 40-byte mark, holding
// the last 40 bytes back until it knows they are not the mark.
type eofMarkReader struct {
	src  io.Reader
	mark []byte
	buf  []byte // held bytes
	done bool
}

func (e *eofMarkReader) Read(p []byte) (int, error) {
	for {
		if e.done {
			return 0, io.EOF
		}
		if len(e.buf) > len(e.mark) {
			n := copy(p, e.buf[:len(e.buf)-len(e.mark)])
			e.buf = append(e.buf[:0], e.buf[n:]...)
			return n, nil
		}
		if len(e.buf) == len(e.mark) && bytes.Equal(e.buf, e.mark) {
			e.done = true
			return 0, io.EOF
		}
		var tmp [16 * 1024]byte
		n, err := e.src.Read(tmp[:])
		e.buf = append(e.buf, tmp[:n]...)
		if n == 0 && err != nil {
			return 0, err
		}
	}
}

// replicaLoop connects to the master and keeps the link up until another
// REPLICAOF (a newer gen) or the server's end.
func (s *Server) replicaLoop(gen uint64, host string, port int) {
	log := s.baseLog.With(zap.String("node", s.RunID[:8]), zap.String("component", "replication"))
	for retry := 0; ; retry++ {
		if !s.replCurrent(gen) {
			return
		}
		err := s.replicaSession(gen, host, port, log)
		if !s.replCurrent(gen) {
			return
		}
		wasUp := s.replState() == linkConnected
		s.replSetState(gen, linkConnect)
		if err != nil {
			log.Warn("replication link lost", zap.Error(err))
		}
		// A link that was up is retried at once (its backlog may be
		// short), then once a second.
		wait := time.Second
		if wasUp {
			wait, retry = 50*time.Millisecond, 0
		}
		select {
		case <-s.done:
			return
		case <-time.After(wait):
		}
	}
}

func (s *Server) replState() int {
	s.repl.mu.Lock()
	defer s.repl.mu.Unlock()
	return s.repl.state
}

func (s *Server) replCurrent(gen uint64) bool {
	s.repl.mu.Lock()
	defer s.repl.mu.Unlock()
	return s.repl.gen == gen
}

func (s *Server) replSetState(gen uint64, st int) bool {
	r := &s.repl
	r.mu.Lock()
	if r.gen != gen {
		r.mu.Unlock()
		return false
	}
	if r.state == linkConnected && st != linkConnected {
		r.downSince = time.Now()
	}
	r.state = st
	r.mu.Unlock()
	s.updateReplGate()
	return true
}

func (s *Server) replTimeout() time.Duration {
	return time.Duration(s.Cfg.Int("repl-timeout")) * time.Second
}

// replicaSession runs one connection to the master: handshake, sync and
// the stream, until the link breaks.
func (s *Server) replicaSession(gen uint64, host string, port int, log *zap.Logger) error {
	if !s.replSetState(gen, linkConnecting) {
		return nil
	}
	timeout := s.replTimeout()
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), timeout)
	if err != nil {
		return err
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetNoDelay(!s.Cfg.Bool("repl-disable-tcp-nodelay"))
	}
	l := &masterLink{conn: conn, raw: newRawIO(conn), buf: make([]byte, 64*1024)}
	l.lastIO.Store(time.Now().UnixMilli())
	defer l.close()
	r := &s.repl
	r.mu.Lock()
	if r.gen != gen {
		r.mu.Unlock()
		return nil
	}
	r.link = l
	r.state = linkHandshake
	r.mu.Unlock()

	// Handshake.
	if err := l.send("PING"); err != nil {
		return err
	}
	reply, err := l.line(timeout)
	if err != nil {
		return err
	}
	if strings.HasPrefix(reply, "-") && !strings.HasPrefix(reply, "-NOAUTH") && !strings.HasPrefix(reply, "-NOPERM") && !strings.HasPrefix(reply, "-ERR operation not permitted") {
		return fmt.Errorf("error reply to PING from master: %s", reply)
	}
	if pass := s.Cfg.Str("masterauth"); pass != "" {
		args := []string{"AUTH", pass}
		if u := s.Cfg.Str("masteruser"); u != "" {
			args = []string{"AUTH", u, pass}
		}
		if err := l.send(args...); err != nil {
			return err
		}
		if reply, err = l.line(timeout); err != nil {
			return err
		}
		if strings.HasPrefix(reply, "-") {
			return fmt.Errorf("unable to AUTH to MASTER: %s", reply)
		}
	}
	lport := s.Cfg.Int("replica-announce-port")
	if lport == 0 {
		lport = s.Cfg.Int("port")
	}
	if err := l.send("REPLCONF", "listening-port", strconv.FormatInt(lport, 10)); err != nil {
		return err
	}
	if _, err = l.line(timeout); err != nil {
		return err
	}
	if ip := s.Cfg.Str("replica-announce-ip"); ip != "" {
		if err := l.send("REPLCONF", "ip-address", ip); err != nil {
			return err
		}
		if _, err = l.line(timeout); err != nil {
			return err
		}
	}
	if err := l.send("REPLCONF", "capa", "eof", "capa", "psync2"); err != nil {
		return err
	}
	if _, err = l.line(timeout); err != nil {
		return err
	}
	r.mu.Lock()
	id, from := "?", int64(-1)
	if r.hasData {
		id, from = r.ids.ID, r.offset+1
	}
	r.mu.Unlock()
	if err := l.send("PSYNC", id, strconv.FormatInt(from, 10)); err != nil {
		return err
	}
	for {
		if reply, err = l.line(timeout); err != nil {
			return err
		}
		if reply != "" {
			break
		}
	}
	switch {
	case strings.HasPrefix(reply, "+FULLRESYNC"):
		f := strings.Fields(reply)
		if len(f) != 3 {
			return fmt.Errorf("bad FULLRESYNC reply: %q", reply)
		}
		off, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("bad FULLRESYNC reply: %q", reply)
		}
		log.Info("full resync from master", zap.String("replid", f[1]), zap.Int64("offset", off))
		if !s.replSetState(gen, linkSync) {
			return nil
		}
		if err := s.replFullSync(gen, l, f[1], off, log); err != nil {
			return err
		}
	case strings.HasPrefix(reply, "+CONTINUE"):
		f := strings.Fields(reply)
		r.mu.Lock()
		if len(f) == 2 && f[1] != r.ids.ID {
			// The master's history has a new id (it was promoted): ours
			// continues it, and our own replicas must follow.
			r.ids.ID2 = r.ids.ID
			r.ids.Second = r.offset + 1
			r.ids.ID = f[1]
		}
		off := r.offset
		if r.backlog == nil {
			// Keep the stream from here, for replicas of this node and
			// for after a promotion.
			r.backlog = repl.NewBacklog(int(s.Cfg.Int("repl-backlog-size")), off)
		}
		r.mu.Unlock()
		if len(f) == 2 {
			s.dropReplicas()
		}
		log.Info("partial resync from master", zap.Int64("offset", off))
	case strings.HasPrefix(reply, "-NOMASTERLINK"), strings.HasPrefix(reply, "-LOADING"):
		return fmt.Errorf("master not ready: %s", reply)
	default:
		return fmt.Errorf("unexpected reply to PSYNC: %q", reply)
	}
	if !s.replSetState(gen, linkConnected) {
		return nil
	}
	return s.replStream(gen, l, timeout)
}

// replFullSync reads the RDB payload into a fresh keyspace.
func (s *Server) replFullSync(gen uint64, l *masterLink, id string, off int64, log *zap.Logger) error {
	timeout := s.replTimeout()
	var hdr string
	var err error
	for {
		if hdr, err = l.line(timeout); err != nil {
			return err
		}
		if hdr != "" {
			break
		}
	}
	if !strings.HasPrefix(hdr, "$") {
		return fmt.Errorf("bad RDB payload header from master: %q", hdr)
	}
	r := &s.repl
	r.syncRead.Store(0)
	r.syncLast.Store(time.Now().UnixMilli())
	var src io.Reader = &linkReader{l: l, timeout: timeout, s: s}
	var mark *eofMarkReader
	if m, ok := strings.CutPrefix(hdr, "$EOF:"); ok {
		if len(m) != 40 {
			return fmt.Errorf("bad EOF mark from master: %q", hdr)
		}
		r.syncTotal.Store(-1)
		mark = &eofMarkReader{src: src, mark: []byte(m)}
		src = mark
	} else {
		n, err := strconv.ParseInt(hdr[1:], 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("bad RDB payload length from master: %q", hdr)
		}
		r.syncTotal.Store(n)
		src = io.LimitReader(src, n)
	}
	start := time.Now()
	r.mu.Lock()
	r.hasData = false
	r.mu.Unlock()
	keys, err := s.replLoad(src)
	if err != nil {
		return fmt.Errorf("loading the master's RDB: %w", err)
	}
	if mark != nil {
		// Consume the mark itself.
		if _, err := io.Copy(io.Discard, mark); err != nil {
			return err
		}
	} else if _, err := io.Copy(io.Discard, src); err != nil {
		return err
	}
	r.mu.Lock()
	if r.gen != gen {
		r.mu.Unlock()
		return nil
	}
	r.ids = repl.IDs{ID: id, ID2: zeroReplID, Second: -1}
	r.offset = off
	r.hasData = true
	r.backlog = repl.NewBacklog(int(s.Cfg.Int("repl-backlog-size")), off)
	r.mu.Unlock()
	log.Info("loaded the master's RDB", zap.Int("keys", keys), zap.Duration("took", time.Since(start)))
	// The master resends the slots it has open after the image.
	s.clearOpenSlotsForSync()
	// The AOF held the old data: it starts over from the new (aof.go).
	s.restartAOF()
	// Replicas of this node held the old data: they resynchronise.
	s.dropReplicas()
	// A master streaming diskless waits for this first ACK.
	return l.send("REPLCONF", "ACK", strconv.FormatInt(off, 10))
}

// replLoad empties the keyspace and loads an RDB stream into it, holding
// every slot lock meanwhile.
func (s *Server) replLoad(src io.Reader) (int, error) {
	ks := s.ks
	ks.LockAll()
	defer ks.UnlockAll()
	for i := 0; i < ks.NumDBs(); i++ {
		ks.DB(i).Flush()
	}
	res, err := s.loadRDB(src, loadOpts{held: true, keepExpired: true})
	return res.Loaded, err
}

// replStream applies the master's command stream until the link breaks.
func (s *Server) replStream(gen uint64, l *masterLink, timeout time.Duration) error {
	r := &s.repl
	mc := s.newClient(l.conn)
	mc.raw = nil
	mc.Flags |= ClientMaster
	mc.Auth = true
	mc.x.master = true
	mc.publish()
	s.mu.Lock()
	s.clients[mc.ID] = mc
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.clients, mc.ID)
		s.mu.Unlock()
		if mc.Flags&ClientMulti != 0 {
			s.discardMulti(mc)
		}
		s.unwatchAll(mc)
	}()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-s.done:
				return
			case <-t.C:
				r.mu.Lock()
				off := r.offset
				r.mu.Unlock()
				if l.send("REPLCONF", "ACK", strconv.FormatInt(off, 10)) != nil {
					return
				}
			}
		}
	}()
	var p resp.Parser
	p.MaxBulk = 1 << 40
	var pending []byte // bytes of an open MULTI, applied at its EXEC
	// flush records the bytes of complete commands as applied: the offset
	// moves past them and the backlog and this node's replicas get them.
	flush := func(b []byte) {
		if len(b) == 0 {
			return
		}
		if len(pending) > 0 {
			b = append(pending, b...)
			pending = pending[:0]
		}
		s.replApplied(gen, b)
	}
	for {
		// Everything read is applied in one batch, under one hold of
		// applyMu, and the offset moves once for the batch: the per-command
		// cost of a replica stays that of the command itself.
		if l.r < l.w {
			mc.setClock(time.Now())
			r.applyMu.Lock()
			if !s.replCurrent(gen) {
				// REPLICAOF changed the master: nothing more is applied.
				r.applyMu.Unlock()
				return nil
			}
			applied, done := l.r, l.r
			var fail error
			changed := false
			for first := true; l.r < l.w; first = false {
				if !first && !s.replCurrent(gen) {
					// The master changed while this batch ran (replicaOf
					// waited for it in vain): the rest is not applied.
					changed = true
					break
				}
				args, used, _, perr := p.Next(l.buf[l.r:l.w])
				if perr != nil {
					fail = fmt.Errorf("protocol error from master: %w", perr)
					break
				}
				if used == 0 {
					break
				}
				l.r += used
				if args != nil {
					mc.ackNow = false
					s.execute(mc, args)
					mc.out.B = mc.out.B[:0]
				}
				if mc.Flags&ClientMulti == 0 {
					done = l.r
				}
				if mc.ackNow {
					// REPLCONF GETACK: the answer counts every byte up to
					// and including it.
					flush(l.buf[applied:done])
					applied = done
					r.mu.Lock()
					off := r.offset
					r.mu.Unlock()
					if err := l.send("REPLCONF", "ACK", strconv.FormatInt(off, 10)); err != nil {
						fail = err
						break
					}
				}
				if mc.killed.Load() {
					fail = errors.New("master link killed")
					break
				}
			}
			flush(l.buf[applied:done])
			if done < l.r {
				pending = append(pending, l.buf[done:l.r]...)
			}
			r.applyMu.Unlock()
			if fail != nil {
				return fail
			}
			if changed {
				return nil
			}
		}
		if mc.killed.Load() || !s.replCurrent(gen) {
			return nil
		}
		if err := l.fill(timeout); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return errors.New("timeout on the link with the master")
			}
			return err
		}
	}
}

// replApplied records stream bytes a replica applied: its offset moves
// on, its backlog and its own replicas get the same bytes.
func (s *Server) replApplied(gen uint64, chunk []byte) {
	r := &s.repl
	r.mu.Lock()
	if r.gen == gen {
		r.appendStreamLocked(chunk, r.offset+int64(len(chunk)))
	}
	r.mu.Unlock()
}
