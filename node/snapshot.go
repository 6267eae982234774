package node

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/node/rdb"
	"github.com/slotd/slotd/slots"
)

// A snapshot is a point-in-time RDB image of the keyspace being written
// while the node keeps serving (see docs/design.md, "Snapshots without
// fork"). It starts under every slot lock: the databases that hold keys and
// their counts are noted and a keyspace.Capture marks every slot pending.
// The writer then goes database by database, slot by slot, locking each
// slot quietly and encoding it straight from the tables while it is still
// pending. A client that locks a pending slot first (to write it, or to
// read it: a read may expire keys) makes the capture callback encode the
// slot's remaining databases into buffers before it gets the lock; the
// writer later writes those buffers in their place. Each slot is thus
// written as it was at the start, whoever encoded it.
type snapshot struct {
	s    *Server
	capt *keyspace.Capture // nil when the writer holds every lock throughout
	opt  rdb.Options
	// policy decides whether LRU idle times or LFU counters are written,
	// as redis-server does under such a maxmemory-policy.
	policy evictPolicy

	dbs    []int       // databases that held keys at the start, ascending
	counts [][2]uint64 // their key and expiry counts at the start
	total  int64

	// next[s] is the index in dbs of the first database of slot s not
	// yet encoded (by the writer or the capture callback). bufs holds, per
	// (database index, slot), what the callback encoded early. Both are
	// read and written only under slot s's lock.
	next []int32
	bufs [][]byte

	buffered  atomic.Int64 // bytes in bufs now
	peak      atomic.Int64 // most bytes in bufs at once
	processed atomic.Int64 // keys written so far
	cancelled atomic.Bool

	ctime   int64
	usedMem int64
	aofBase bool
	// dirty is the change counter at the start: a successful save
	// subtracts it.
	dirty int64
}

// errSnapshotCancelled is returned by a snapshot stopped by cancel
// (FLUSHALL, SHUTDOWN and DEBUG RELOAD stop a BGSAVE).
var errSnapshotCancelled = errors.New("snapshot cancelled")

// beginSnapshot notes the start of a snapshot. The caller holds every slot
// lock. With capture false the caller keeps holding them until the
// snapshot is written (SAVE inside a transaction, FLUSHALL, DEBUG RELOAD).
func (s *Server) beginSnapshot(capture bool) *snapshot {
	// Values staged by SLOTD.MIGRATE STAGE are not in it (cmdChunkCommit).
	s.chunks.snapGen.Add(1)
	sn := &snapshot{
		s:       s,
		policy:  s.policy(),
		ctime:   time.Now().Unix(),
		usedMem: s.ks.UsedMemory(),
		dirty:   s.dirty.Load(),
	}
	sn.opt.NoCompression = !s.Cfg.Bool("rdbcompression")
	sn.opt.NoChecksum = !s.Cfg.Bool("rdbchecksum")
	for i := 0; i < s.ks.NumDBs(); i++ {
		db := s.ks.DB(i)
		if n := db.Len(); n > 0 {
			sn.dbs = append(sn.dbs, i)
			sn.counts = append(sn.counts, [2]uint64{uint64(n), uint64(db.Volatile())})
			sn.total += n
		}
	}
	if capture && len(sn.dbs) > 0 {
		sn.next = make([]int32, slots.Count)
		sn.bufs = make([][]byte, len(sn.dbs)*slots.Count)
		sn.capt = s.ks.StartCapture(sn.captureSlot)
	}
	return sn
}

// end releases the capture. The buffers are left to the garbage
// collector with the snapshot: a locker that loaded the capture list just
// before EndCapture may still be filling one under its slot lock.
func (sn *snapshot) end() {
	if sn.capt != nil {
		sn.s.ks.EndCapture(sn.capt)
	}
}

// cancel makes the writer stop at its next slot.
func (sn *snapshot) cancel() { sn.cancelled.Store(true) }

// captureSlot is the capture callback: it runs under slot's lock, in the
// goroutine of whoever locked the slot first, and encodes the databases of
// the slot that the writer has not reached yet.
func (sn *snapshot) captureSlot(slot int) {
	for i := int(sn.next[slot]); i < len(sn.dbs); i++ {
		b := sn.encodeSlot(sn.s.ks.DB(sn.dbs[i]), slot, nil)
		if len(b) > 0 {
			sn.bufs[i*slots.Count+slot] = b
			if n := sn.buffered.Add(int64(len(b))); n > sn.peak.Load() {
				sn.peak.Store(n) // racy max: a statistic only
			}
		}
	}
	sn.next[slot] = int32(len(sn.dbs))
}

// encodeSlot appends the RDB records of one slot of db to dst. The caller
// holds the slot's lock.
func (sn *snapshot) encodeSlot(db *keyspace.DB, slot int, dst []byte) []byte {
	if db.SlotLen(slot) == 0 {
		return dst
	}
	lru, lfu := sn.policy == policyAllKeysLRU || sn.policy == policyVolatileLRU, sn.policy.lfu()
	db.ForEachInSlot(slot, func(k string, e *keyspace.Entry) bool {
		r := rdb.Record{Key: unsafe.Slice(unsafe.StringData(k), len(k)), Entry: e, Expire: db.ExpireOfKey(slot, k, e)}
		switch {
		case lru:
			r.Idle, r.HasIdle = sn.s.idleSeconds(e), true
		case lfu:
			r.Freq, r.HasFreq = uint8(sn.s.lfuDecayed(e)), true
		}
		dst = rdb.AppendRecord(dst, &r, sn.opt)
		return true
	})
	return dst
}

// write streams the image to w: header, then each database's slots in
// order, then the trailer. held says the caller holds every slot lock
// (then nothing is captured and no lock is taken).
func (sn *snapshot) write(w io.Writer, held bool) error {
	s := sn.s
	wr := rdb.NewWriter(w, sn.opt)
	info := rdb.Info{RedisVer: Version, CTime: sn.ctime, UsedMem: sn.usedMem, AOFBase: sn.aofBase}
	if err := wr.Header(info); err != nil {
		return err
	}
	var scratch []byte
	for i, d := range sn.dbs {
		db := s.ks.DB(d)
		if err := wr.SelectDB(d, sn.counts[i][0], sn.counts[i][1]); err != nil {
			return err
		}
		last := i == len(sn.dbs)-1
		for slot := 0; slot < slots.Count; slot++ {
			if sn.cancelled.Load() {
				return errSnapshotCancelled
			}
			var b []byte
			if held || sn.capt == nil {
				scratch = sn.encodeSlot(db, slot, scratch[:0])
				b = scratch
			} else {
				s.ks.LockQuiet(slot)
				if int(sn.next[slot]) == i {
					scratch = sn.encodeSlot(db, slot, scratch[:0])
					b = scratch
					sn.next[slot] = int32(i + 1)
					if last {
						sn.capt.Done(slot)
					}
				} else {
					b = sn.bufs[i*slots.Count+slot]
					sn.bufs[i*slots.Count+slot] = nil
					sn.buffered.Add(-int64(len(b)))
				}
				s.ks.Unlock(slot)
			}
			if !held && slot&15 == 15 {
				// With one Go proc (io-threads 1) the writer shares it
				// with the clients: let them in between slots rather than
				// when the scheduler preempts (10 ms).
				runtime.Gosched()
			}
			if len(b) == 0 {
				continue
			}
			if err := wr.Records(b); err != nil {
				return err
			}
		}
		sn.processed.Add(int64(sn.counts[i][0]))
	}
	return wr.Close()
}

// snapshotProcs gives running snapshot writers a Go proc of their own, as
// redis-server's fork child gets a core of its own: with io-threads 1 the
// writer would otherwise take turns with the clients on one proc, and both
// would slow down. The extra proc is returned when the last writer ends.
var snapshotProcs struct {
	sync.Mutex
	active int
	saved  int
}

func addSnapshotProc() {
	snapshotProcs.Lock()
	defer snapshotProcs.Unlock()
	if snapshotProcs.active == 0 {
		n := runtime.GOMAXPROCS(0)
		snapshotProcs.saved = n
		if n < runtime.NumCPU() {
			runtime.GOMAXPROCS(n + 1)
		}
	}
	snapshotProcs.active++
}

func dropSnapshotProc() {
	snapshotProcs.Lock()
	defer snapshotProcs.Unlock()
	snapshotProcs.active--
	if snapshotProcs.active == 0 && runtime.GOMAXPROCS(0) == snapshotProcs.saved+1 {
		runtime.GOMAXPROCS(snapshotProcs.saved)
	}
}

// writeSnapshot streams a point-in-time RDB image of the keyspace to w (a
// file or a socket) while the node keeps serving. atStart, when not nil,
// runs at the image's point in time, while every slot lock is held, so
// that a caller can note what goes with the image (a replication offset,
// the switch to a new AOF file); it must not take slot locks. Several
// snapshots may run at once.
func (s *Server) writeSnapshot(w io.Writer, atStart func()) error {
	return s.writeImage(w, atStart, false)
}

// writeImage is writeSnapshot; aofBase marks the image as an AOF base
// (the aof-base auxiliary field), as redis-server does.
func (s *Server) writeImage(w io.Writer, atStart func(), aofBase bool) error {
	s.ks.LockAllQuiet()
	sn := s.beginSnapshot(true)
	sn.aofBase = aofBase
	if atStart != nil {
		atStart()
	}
	s.ks.UnlockAll()
	defer sn.end()
	addSnapshotProc()
	defer dropSnapshotProc()
	return sn.write(w, false)
}

// loadOpts tune loadRDB.
type loadOpts struct {
	// held says the caller holds every slot lock.
	held bool
	// keepExpired loads keys whose time has passed (a replica, an AOF
	// preamble) instead of dropping them as a master does.
	keepExpired bool
	// aux, when set, gets each auxiliary field (repl-id, repl-offset...).
	aux func(key, value string)
	// ownGC says the caller has set GOGC for the load (loadDataAtStart);
	// otherwise loadRDB raises it to loadGCPercent meanwhile.
	ownGC bool
}

// loadResult counts what loadRDB did.
type loadResult struct {
	Loaded, Expired int
}

// loadRDBFrom loads an RDB stream (a dump.rdb, an AOF base file, a
// replication payload) into the keyspace, which should not hold its keys
// already: a key that exists is an error, as in redis-server. Keys already
// expired are dropped unless the node is a replica. It returns the number
// of keys loaded.
func (s *Server) loadRDBFrom(r io.Reader) (keys int, err error) {
	res, err := s.loadRDB(r, loadOpts{keepExpired: s.Role() != "master"})
	return res.Loaded, err
}

// loadGCPercent is GOGC while an RDB loads: little of what loading
// allocates is garbage, so the heap may grow far between collections.
const loadGCPercent = 1000

// errDuplicateKey reports a key met twice while loading.
var errDuplicateKey = errors.New("duplicated key")

// loadRec is one key on its way from the reader to the keyspace: first
// still encoded, its name and value bytes in its batch's buffer, then
// decoded.
type loadRec struct {
	db               int
	t                byte
	keyOff, keyLen   int
	bodyOff, bodyLen int
	off              int64 // the body's offset in the stream, for errors
	expire, idle     int64
	freq             uint8
	hasIdle, hasFreq bool
	// Set by the decoder; e is nil for a key not to insert (an empty
	// collection, or a key already expired).
	slot int
	key  string
	e    *keyspace.Entry
}

// loadBatch is a run of keys the reader hands a decoder at a time.
type loadBatch struct {
	recs    []loadRec
	buf     []byte
	decoded chan struct{} // closed once recs are decoded
	// err is the first decoding error, at recs[errAt]; the keys before it
	// are inserted.
	err     error
	errAt   int
	expired int
}

// loadRDB loads an RDB stream in a pipeline. The calling goroutine reads
// the stream and cuts it into batches of keys without decoding them;
// decoders build the values of a batch at a time, in parallel; the calling
// goroutine puts the decoded batches into the keyspace in stream order, so
// that the outcome (and the first error) is that of reading the keys one
// by one. It decodes a batch itself when the decoders are all busy, rather
// than wait for them: a goroutine that waits on another wakes late when
// every proc is taken (or the machine is loaded), and the pipeline would
// stall with it.
func (s *Server) loadRDB(r io.Reader, o loadOpts) (loadResult, error) {
	var res loadResult
	now := time.Now().UnixMilli()
	lfu := s.policy().lfu()
	lru := s.policy() == policyAllKeysLRU || s.policy() == policyVolatileLRU

	const (
		batchKeys  = 1024
		batchBytes = 256 << 10
		// maxPending bounds the batches read and not yet inserted: enough
		// that a decoder descheduled for a while (on a loaded machine)
		// does not stop the reader.
		maxPending = 32
	)
	decoders := max(1, runtime.GOMAXPROCS(0)-1)
	work := make(chan *loadBatch, decoders)
	var firstErr atomic.Pointer[error]
	fail := func(err error) { firstErr.CompareAndSwap(nil, &err) }

	var dwg sync.WaitGroup
	for range decoders {
		dwg.Add(1)
		go func() {
			defer dwg.Done()
			var d rdb.Decoder
			for b := range work {
				if firstErr.Load() == nil {
					s.decodeBatch(&d, b, now, o.keepExpired, lfu, lru)
				}
				close(b.decoded)
			}
		}()
	}

	var (
		pending []*loadBatch // dispatched, not inserted, in stream order
		free    []*loadBatch
		d       rdb.Decoder
	)
	newBatch := func() *loadBatch {
		if n := len(free); n > 0 {
			b := free[n-1]
			free = free[:n-1]
			return b
		}
		return &loadBatch{recs: make([]loadRec, 0, batchKeys), buf: make([]byte, 0, batchBytes+4096)}
	}
	insert := func(b *loadBatch) {
		if firstErr.Load() == nil {
			n := len(b.recs)
			if b.err != nil {
				n = b.errAt
			}
			for i := range b.recs[:n] {
				it := &b.recs[i]
				if it.e == nil {
					continue
				}
				db := s.ks.DB(it.db)
				if !o.held {
					s.ks.Lock(it.slot)
				}
				ok := db.Load(it.slot, it.key, it.e, it.expire)
				if !o.held {
					s.ks.Unlock(it.slot)
				}
				if !ok {
					fail(fmt.Errorf("rdb: at offset %d: %w %q in database %d", it.off, errDuplicateKey, it.key, it.db))
					break
				}
				res.Loaded++
			}
			res.Expired += b.expired
			if b.err != nil {
				fail(b.err)
			}
		}
		clear(b.recs)
		b.recs, b.buf, b.err, b.errAt, b.expired, b.decoded = b.recs[:0], b.buf[:0], nil, 0, 0, nil
		free = append(free, b)
	}
	// insertDecoded inserts the pending batches at the head that are
	// decoded; with wait, it waits for the first one, decoding batches the
	// decoders have not taken yet meanwhile.
	insertDecoded := func(wait bool) {
		for len(pending) > 0 {
			b := pending[0]
			if wait {
			waiting:
				for {
					select {
					case <-b.decoded:
						break waiting
					case w := <-work:
						if firstErr.Load() == nil {
							s.decodeBatch(&d, w, now, o.keepExpired, lfu, lru)
						}
						close(w.decoded)
					}
				}
				wait = false
			} else {
				select {
				case <-b.decoded:
				default:
					return
				}
			}
			pending[0] = nil
			pending = pending[1:]
			insert(b)
		}
	}
	cur := newBatch()
	dispatch := func() {
		if len(cur.recs) == 0 {
			return
		}
		b := cur
		b.decoded = make(chan struct{})
		select {
		case work <- b:
		default:
			if firstErr.Load() == nil {
				s.decodeBatch(&d, b, now, o.keepExpired, lfu, lru)
			}
			close(b.decoded)
		}
		pending = append(pending, b)
		insertDecoded(false)
		for len(pending) > maxPending {
			insertDecoded(true)
		}
		cur = newBatch()
	}
	drain := func() {
		dispatch()
		for len(pending) > 0 {
			insertDecoded(true)
		}
	}
	h := rdb.Handler{
		Raw: func(rec *rdb.Record, t byte, body []byte, off int64) error {
			if p := firstErr.Load(); p != nil {
				return *p
			}
			if rec.DB < 0 || rec.DB >= s.ks.NumDBs() {
				return fmt.Errorf("database %d out of range (databases is %d)", rec.DB, s.ks.NumDBs())
			}
			b := cur
			b.recs = append(b.recs, loadRec{
				db: rec.DB, t: t, off: off,
				keyOff: len(b.buf), keyLen: len(rec.Key),
				bodyOff: len(b.buf) + len(rec.Key), bodyLen: len(body),
				expire: rec.Expire, idle: rec.Idle, freq: rec.Freq, hasIdle: rec.HasIdle, hasFreq: rec.HasFreq,
			})
			b.buf = append(append(b.buf, rec.Key...), body...)
			if len(b.recs) == batchKeys || len(b.buf) >= batchBytes {
				dispatch()
			}
			return nil
		},
	}
	h.ResizeDB = func(d int, keys, expires uint64) error {
		// Size the slot maps of a database being filled from empty for the
		// counts announced, rather than growing them key by key. The keys
		// read so far go in first.
		if d < 0 || d >= s.ks.NumDBs() || keys > 1<<32 {
			return nil
		}
		drain()
		if !o.held {
			s.ks.LockAll()
			defer s.ks.UnlockAll()
		}
		if db := s.ks.DB(d); db.Len() == 0 {
			db.Reserve(keys, expires)
		}
		return nil
	}
	if o.aux != nil {
		h.Aux = func(k, v []byte) error {
			o.aux(string(k), string(v))
			return nil
		}
	}
	// Loading allocates mostly what it keeps: collecting while the heap
	// grows from nothing would mark the same keys again and again.
	if !o.ownGC {
		defer debug.SetGCPercent(debug.SetGCPercent(loadGCPercent))
	}
	err := rdb.NewReader(r).Run(h)
	drain()
	close(work)
	dwg.Wait()
	if p := firstErr.Load(); p != nil {
		// An error met decoding or inserting a key comes before anything
		// the reader found later; the reader stopped on it otherwise.
		err = *p
	}
	return res, err
}

// decodeBatch builds the values of b's keys.
func (s *Server) decodeBatch(d *rdb.Decoder, b *loadBatch, now int64, keepExpired, lfu, lru bool) {
	// The names of a batch's keys share allocations (see keyspace.Arena).
	keys := keyspace.NewArena(len(b.buf) / 2)
	for i := range b.recs {
		it := &b.recs[i]
		key := b.buf[it.keyOff : it.keyOff+it.keyLen]
		e, pos, err := d.Decode(it.t, b.buf[it.bodyOff:it.bodyOff+it.bodyLen])
		if err == rdb.ErrEmptyKey {
			continue
		}
		if err != nil {
			b.err = fmt.Errorf("rdb: at offset %d: key %q: %w", it.off+int64(pos), key, err)
			b.errAt = i
			return
		}
		if it.expire != 0 && it.expire < now && !keepExpired {
			b.expired++
			continue
		}
		switch {
		case lfu && it.hasFreq:
			e.Access = lfuMinutes()<<8 | uint32(it.freq)
		case lru && it.hasIdle:
			clock := s.lruClock()
			e.Access = (clock - uint32(min(it.idle, lruMask))) & lruMask
		default:
			e.Access = s.newAccess()
		}
		it.e, it.key, it.slot = e, keys.Str(key), slots.Of(key)
	}
}
