package node

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

// feed is the ordered stream of the writes this node executes, in RESP, as
// redis-server propagates them to its append-only file and its replicas:
// a SELECT whenever the database changes, each write command as it should
// be replayed (handlers rewrite the non-deterministic ones with
// Ctx.Propagate), a DEL for every key removed by expiry or eviction, and
// MULTI ... EXEC around a command or transaction that propagates more than
// one command.
//
// Order. A command's propagation is appended while the command still holds
// its slot locks, so two commands that touch the same slot appear in the
// order they ran; commands on different slots commute, so their relative
// order does not matter to a replay.
//
// Offsets. Every byte appended advances the offset by one; it starts at 0
// with the process (replication sets it to the offset it continues from)
// and is master_repl_offset.
//
// Consumers are sinks, attached with attach. One pump goroutine hands them
// the appended bytes in order, in chunks; a sink must copy what it keeps
// and should not block for long (a slow sink delays the others). When no
// sink is attached the feed is off and the command path pays one atomic
// load for it.
type feed struct {
	on atomic.Bool

	mu  sync.Mutex
	buf []byte // appended and not yet pumped
	off int64  // offset after the last appended byte
	db  int    // database the stream is in; -1 before the first SELECT

	kick chan struct{} // a pump is due (buffered, capacity 1)

	sinkMu sync.Mutex // held while pumping: sinks get chunks one at a time, in order
	sinks  []feedSink
	pumpOn bool
	spare  []byte
	pumped atomic.Int64 // offset delivered to every sink
}

// feedSink receives the feed. write gets the bytes in [end-len(chunk), end)
// of the stream; chunk is reused after write returns.
type feedSink interface {
	feedWrite(chunk []byte, end int64)
}

func newFeed() *feed {
	return &feed{db: -1, kick: make(chan struct{}, 1)}
}

// attach adds a sink and switches the feed on. The sink receives every byte
// appended after attach returns; off reports the offset it starts from.
// done is closed by the server when it shuts down and ends the pump.
func (f *feed) attach(k feedSink, done <-chan struct{}) (off int64) {
	f.sinkMu.Lock()
	defer f.sinkMu.Unlock()
	// Deliver what is pending to the sinks already there, so that the new
	// one starts at a chunk boundary.
	f.pumpLocked()
	f.mu.Lock()
	off = f.off
	f.sinks = append(f.sinks, k)
	f.on.Store(true)
	f.mu.Unlock()
	if !f.pumpOn {
		f.pumpOn = true
		go f.run(done)
	}
	return off
}

// detach removes a sink; the feed goes off with the last one.
func (f *feed) detach(k feedSink) {
	f.sinkMu.Lock()
	defer f.sinkMu.Unlock()
	f.pumpLocked()
	for i, x := range f.sinks {
		if x == k {
			f.sinks = append(f.sinks[:i], f.sinks[i+1:]...)
			break
		}
	}
	if len(f.sinks) == 0 {
		f.mu.Lock()
		f.on.Store(false)
		f.buf = f.buf[:0]
		f.mu.Unlock()
	}
}

// offset returns the offset after the last appended byte.
func (f *feed) offset() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.off
}

// setOffset makes the stream continue from off (a replica that starts
// feeding its own sinks with its master's offsets). Nothing may be pending.
func (f *feed) setOffset(off int64) {
	f.mu.Lock()
	f.off = off
	f.db = -1
	// Nothing is pending: every sink has what there is.
	f.pumped.Store(off)
	f.mu.Unlock()
}

// resetDB forgets the stream's database, so that the next append starts
// with a SELECT (after a sink joins mid-stream, for instance).
func (f *feed) resetDB() {
	f.mu.Lock()
	f.db = -1
	f.mu.Unlock()
}

func (f *feed) run(done <-chan struct{}) {
	for {
		select {
		case <-done:
			f.sinkMu.Lock()
			f.pumpLocked()
			f.sinkMu.Unlock()
			return
		case <-f.kick:
		}
		// Let the connections that are ready run first, so that one
		// delivery carries what they all wrote, as redis-server writes to
		// its replicas once per event loop round: far fewer writes and
		// wake-ups on both ends of a replication link under load.
		runtime.Gosched()
		f.sinkMu.Lock()
		f.pumpLocked()
		f.sinkMu.Unlock()
	}
}

// pump delivers what is pending to the sinks now, on the caller's
// goroutine (a caller that must know its bytes reached the sinks).
func (f *feed) pump() {
	f.sinkMu.Lock()
	f.pumpLocked()
	f.sinkMu.Unlock()
}

func (f *feed) pumpLocked() {
	f.mu.Lock()
	chunk := f.buf
	end := f.off
	f.buf = f.spare[:0]
	f.mu.Unlock()
	if len(chunk) > 0 {
		for _, k := range f.sinks {
			k.feedWrite(chunk, end)
		}
	}
	f.pumped.Store(end)
	if cap(chunk) <= 1<<20 {
		f.spare = chunk[:0]
	} else {
		f.spare = nil
	}
}

// appendBlock appends a block of commands encoded by a propBuf, all run in
// database db (the block itself SELECTs if a command in it changed the
// database, and leaves the stream in database last).
// It returns the offset after the block.
func (f *feed) appendBlock(db, last int, block []byte) int64 {
	f.mu.Lock()
	was := len(f.buf)
	n := len(f.buf)
	if f.db != db {
		f.buf = appendSelect(f.buf, db)
	}
	f.buf = append(f.buf, block...)
	f.db = last
	f.off += int64(len(f.buf) - n)
	end := f.off
	f.mu.Unlock()
	if was == 0 {
		select {
		case f.kick <- struct{}{}:
		default:
		}
	}
	return end
}

// appendCommand appends one command run in database db.
func (f *feed) appendCommand(db int, args ...[]byte) {
	f.mu.Lock()
	was := len(f.buf)
	if f.db != db {
		f.buf = appendSelect(f.buf, db)
		f.db = db
	}
	f.buf = appendCommand(f.buf, args...)
	f.off += int64(len(f.buf) - was)
	f.mu.Unlock()
	if was == 0 {
		select {
		case f.kick <- struct{}{}:
		default:
		}
	}
}

// appendRaw appends bytes that are not tied to a database (a replication
// PING, for instance).
func (f *feed) appendRaw(b []byte) {
	f.mu.Lock()
	was := len(f.buf)
	f.buf = append(f.buf, b...)
	f.off += int64(len(b))
	f.mu.Unlock()
	if was == 0 {
		select {
		case f.kick <- struct{}{}:
		default:
		}
	}
}

func appendSelect(b []byte, db int) []byte {
	var tmp [20]byte
	n := strconv.AppendInt(tmp[:0], int64(db), 10)
	return appendCommand(b, []byte("SELECT"), n)
}

// appendCommand encodes args as a RESP multibulk.
func appendCommand[T string | []byte](b []byte, args ...T) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// propBuf collects what one top-level call (a command, or EXEC with its
// queue) propagates, so that it reaches the feed as one block.
type propBuf struct {
	b     []byte
	n     int // commands in b
	first int // database of the first command
	last  int // database of the last command
}

func (p *propBuf) reset() { p.b, p.n = p.b[:0], 0 }

func (p *propBuf) add(db int, args [][]byte) {
	if p.n == 0 {
		p.first = db
	} else if db != p.last {
		p.b = appendSelect(p.b, db)
	}
	p.last = db
	p.b = appendCommand(p.b, args...)
	p.n++
}

var (
	multiArgs = [][]byte{[]byte("MULTI")}
	execArgs  = [][]byte{[]byte("EXEC")}
)

// flush appends the collected block to f, inside MULTI/EXEC when it holds
// more than one command, and empties p. It returns the feed offset after
// the block, 0 when there was nothing to append.
func (p *propBuf) flush(f *feed) (end int64) {
	switch {
	case p.n == 0:
		return 0
	case p.n == 1:
		end = f.appendBlock(p.first, p.last, p.b)
	default:
		var block []byte
		block = appendCommand(block, multiArgs...)
		block = append(block, p.b...)
		block = appendCommand(block, execArgs...)
		end = f.appendBlock(p.first, p.last, block)
	}
	p.reset()
	return end
}

// Propagate replaces what the running command propagates (by default its
// own arguments, when it wrote something) with args; a handler may call it
// several times to propagate several commands, and with no call after a
// write its arguments are propagated as they came. Use it for commands
// whose replay must not depend on the time or on chance (relative TTLs,
// random pops, float increments).
func (x *Ctx) Propagate(args ...[]byte) {
	x.propCustom = true
	if x.S.feed.on.Load() {
		x.C.prop.add(x.DB.ID, args)
	}
}

// NoPropagate marks the running command as propagating nothing, although
// it called Modified.
func (x *Ctx) NoPropagate() { x.propCustom = true }

// propagateCall adds the command just run by x to the client's block: its
// custom propagation, or its arguments when it modified a key.
func (x *Ctx) propagateCall(mods int) {
	if !x.propCustom && x.mods != mods {
		x.C.prop.add(x.DB.ID, x.Args)
	}
	x.propCustom = false
}

// propagateExpired is the keyspace's OnExpire hook: a key removed because
// its TTL passed is deleted on replicas and in the AOF too.
func (s *Server) propagateExpired(db, slot int, key string) {
	if s.feed.on.Load() {
		s.feed.appendCommand(db, delArg, []byte(key))
	}
}

var delArg = []byte("DEL")

// withSinks runs fn once everything appended so far has been delivered,
// with no delivery running, so that fn may switch a sink's output at an
// exact point of the stream (the AOF's move to a new file).
func (f *feed) withSinks(fn func()) {
	f.sinkMu.Lock()
	defer f.sinkMu.Unlock()
	f.pumpLocked()
	fn()
}
