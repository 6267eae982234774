package keyspace

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/slotd/slotd/slots"
)

// Keyspace is all databases of a node plus the slot locks that guard them.
type Keyspace struct {
	// locks holds each slot's lock and, on the same cache line, the
	// slot's table of one database (database 0 at first; SWAPDB moves
	// the array as a whole), so that a command on that database takes
	// the lock and reaches its key's records with one cache miss fewer.
	locks slotLines
	dbs   []*DB
	// captures holds the point-in-time captures in progress (capture.go);
	// nil when there are none, which is what lockers check.
	capturesHolder

	// KeepExpired is set on replicas: lookups report expired keys as
	// missing without deleting them, since only the master's explicit
	// deletes may remove keys (the master link reads them with Peek).
	KeepExpired atomic.Bool

	// Stats, read by INFO.
	ExpiredKeys  atomic.Int64
	EvictedKeys  atomic.Int64
	KeyspaceHits Counter
	KeyspaceMiss Counter

	// OnExpire, when set, is called for every key removed because its TTL
	// passed (on lookup, on delete or by the active cycle), with the slot's
	// lock held, so that the removal can be propagated as a DEL before
	// anything else touches the slot. Set it before the keyspace is shared.
	OnExpire func(db, slot int, key string)

	// mem counts the estimated bytes held by keys (see UsedMemory), split
	// in padded shards by slot so that writers on different slots do not
	// contend on one cache line.
	mem [memShards]paddedInt64
}

const memShards = 32

type paddedInt64 struct {
	atomic.Int64
	_ [56]byte
}

// slotLine is one slot's lock and a table, filling a cache line so that
// neighbouring slots do not share one.
type slotLine struct {
	sync.Mutex
	t slotTable
	// pad is never written: LockSlots reads it to fetch the lock's line.
	pad [64 - unsafe.Sizeof(sync.Mutex{}) - unsafe.Sizeof(slotTable{})]byte
}

// slotLines is the tables of one database, one per slot, in lines that
// may hold the slot's lock too (Keyspace.locks) or leave it unused.
type slotLines [slots.Count]slotLine

// New returns a keyspace with n empty databases.
func New(n int) *Keyspace {
	ks := &Keyspace{dbs: make([]*DB, n)}
	for i := range ks.dbs {
		ks.dbs[i] = newDB(ks, i)
	}
	ks.dbs[0].tables.Store(&ks.locks)
	return ks
}

// DB returns database i; the caller checks the bound.
func (ks *Keyspace) DB(i int) *DB { return ks.dbs[i] }

// NumDBs returns the number of databases.
func (ks *Keyspace) NumDBs() int { return len(ks.dbs) }

// Lock locks one slot. When a capture is active and the slot is pending,
// the slot is copied before Lock returns (capture.go).
func (ks *Keyspace) Lock(slot int) {
	ks.locks[slot].Lock()
	if ks.captures.Load() != nil {
		ks.captureOne(slot)
	}
}

// Unlock unlocks one slot.
func (ks *Keyspace) Unlock(slot int) { ks.locks[slot].Unlock() }

// LockSlots locks the given slots, which must be sorted and free of
// duplicates.
func (ks *Keyspace) LockSlots(ss []int) {
	// Plain reads of the locks' lines first: they overlap, where each
	// lock's atomic swap waits for the one before it.
	var w byte
	for _, s := range ss {
		w |= ks.locks[s].pad[0]
	}
	if w != 0 {
		panic("keyspace: lock padding written")
	}
	for _, s := range ss {
		ks.locks[s].Lock()
	}
	if set := ks.captures.Load(); set != nil {
		for _, s := range ss {
			captureSlot(set, s)
		}
	}
}

// UnlockSlots undoes LockSlots.
func (ks *Keyspace) UnlockSlots(ss []int) {
	for i := len(ss) - 1; i >= 0; i-- {
		ks.locks[ss[i]].Unlock()
	}
}

// LockAll locks every slot, for commands that see the whole keyspace.
func (ks *Keyspace) LockAll() {
	for i := range ks.locks {
		ks.locks[i].Lock()
	}
	if set := ks.captures.Load(); set != nil {
		for i := range ks.locks {
			captureSlot(set, i)
		}
	}
}

// UnlockAll undoes LockAll.
func (ks *Keyspace) UnlockAll() {
	for i := len(ks.locks) - 1; i >= 0; i-- {
		ks.locks[i].Unlock()
	}
}

// SwapDBs exchanges the contents of databases a and b. The caller holds
// LockAll.
func (ks *Keyspace) SwapDBs(a, b int) {
	da, db := ks.dbs[a], ks.dbs[b]
	ta, tb := da.tables.Load(), db.tables.Load()
	da.tables.Store(tb)
	db.tables.Store(ta)
	for i := range da.nonEmpty {
		wa, wb := da.nonEmpty[i].Load(), db.nonEmpty[i].Load()
		da.nonEmpty[i].Store(wb)
		db.nonEmpty[i].Store(wa)
	}
	na, nb := da.count.Load(), db.count.Load()
	da.count.Store(nb)
	db.count.Store(na)
	va, vb := da.volatile.Load(), db.volatile.Load()
	da.volatile.Store(vb)
	db.volatile.Store(va)
}

// DB is one numbered database.
type DB struct {
	ks *Keyspace
	ID int
	// tables holds one table per slot. Database 0 starts with the
	// tables that share the lock array's lines. Another database that
	// was never written points at the shared, read-only emptyTables and
	// gets its own array (16384 lines, 1 MB) on its first write, so that
	// the 15 databases most deployments never use cost nothing.
	tables   atomic.Pointer[slotLines]
	count    atomic.Int64
	volatile atomic.Int64
	// expireCursor is where the active expire cycle resumes.
	expireCursor int
	// nonEmpty has bit s set while slot s holds keys. It is written under
	// the slot's lock and read without locks, so that SCAN, RANDOMKEY and
	// eviction skip empty slots 64 at a time.
	nonEmpty [slots.Count / 64]atomic.Uint64
	// loadKeys and loadExpires are the map sizes Reserve asked for: Load
	// makes a slot's maps that size when it first needs them.
	loadKeys, loadExpires int
}

// emptyTables is what a database that was never written reads. It is
// never written: writers go through DB.wt, which gives the database its own
// tables first.
var emptyTables slotLines

func newDB(ks *Keyspace, id int) *DB {
	db := &DB{ks: ks, ID: id}
	db.tables.Store(&emptyTables)
	return db
}

// rt returns a slot's table for reading (possibly the shared empty one).
func (db *DB) rt(slot int) *slotTable { return &db.tables.Load()[slot].t }

// wt returns a slot's table for writing, allocating the database's tables
// on its first write. Writers of different slots run concurrently under
// different slot locks, so the first of them installs the array with a
// compare-and-swap and the others use the winner's.
func (db *DB) wt(slot int) *slotTable {
	p := db.tables.Load()
	if p == &emptyTables {
		p = db.allocTables()
	}
	return &p[slot].t
}

func (db *DB) allocTables() *slotLines {
	n := new(slotLines)
	if db.tables.CompareAndSwap(&emptyTables, n) {
		return n
	}
	return db.tables.Load()
}

// Len returns the number of keys (expired keys not yet reclaimed count).
func (db *DB) Len() int64 { return db.count.Load() }

// Volatile returns the number of keys with a TTL.
func (db *DB) Volatile() int64 { return db.volatile.Load() }

// SlotLen returns the number of keys in one slot.
func (db *DB) SlotLen(slot int) int { return int(db.rt(slot).n) }

// Peek returns the entry for key without expiry checks or stats.
func (db *DB) Peek(slot int, key []byte) *Entry {
	return db.rt(slot).get(key)
}

// Lookup returns the live entry for key, deleting it first when it has
// expired at now (unix ms). It returns nil when there is no such key.
func (db *DB) Lookup(slot int, key []byte, now int64) *Entry {
	t := db.rt(slot)
	if t.n == 0 {
		return nil
	}
	i, e := t.find(key, hashKey(key))
	if e == nil {
		return nil
	}
	if e.ttl && t.expires[e] <= now {
		if db.ks.KeepExpired.Load() {
			// A replica: the key reads as missing but stays until its
			// master's DEL arrives.
			return nil
		}
		db.removeAt(slot, t, i, e)
		db.expired(slot, e.key())
		return nil
	}
	return e
}

// expired counts a key removed because its TTL passed and reports it to
// OnExpire.
func (db *DB) expired(slot int, key string) {
	db.ks.ExpiredKeys.Add(1)
	if db.ks.OnExpire != nil {
		db.ks.OnExpire(db.ID, slot, key)
	}
}

// ExpireOf returns the expiry time (unix ms) of key, whose entry is e, or
// 0 when it has none. The caller holds the slot's lock.
func (db *DB) ExpireOf(slot int, key []byte, e *Entry) int64 {
	if !e.ttl {
		return 0
	}
	return db.rt(slot).expires[e]
}

// ExpireOfKey is ExpireOf for a key met while iterating the slot.
func (db *DB) ExpireOfKey(slot int, key string, e *Entry) int64 {
	if !e.ttl {
		return 0
	}
	return db.rt(slot).expires[e]
}

// Expired reports whether key, whose entry is e (as met while iterating
// the slot), has expired at now.
func (db *DB) Expired(slot int, key string, e *Entry, now int64) bool {
	return e.ttl && db.rt(slot).expires[e] <= now
}

// Set stores e under key, replacing any previous value and TTL; the key
// has no TTL afterwards.
func (db *DB) Set(slot int, key []byte, e *Entry) { db.SetWithExpire(slot, key, e, 0) }

// SetWithExpire stores e under key with expiry time ms (unix ms; 0 for
// none), replacing any previous value and TTL. e must not be held by
// another key (delete it first when moving it).
func (db *DB) SetWithExpire(slot int, key []byte, e *Entry, ms int64) {
	t := db.wt(slot)
	h := hashKey(key)
	var i uint32
	var old *Entry
	if t.recs != nil {
		i, old = t.find(key, h)
	}
	if old != nil && old == e {
		db.SetExpire(slot, key, e, ms)
		return
	}
	e.giveKey(key)
	e.ttl = false
	if old != nil {
		db.ks.charge(slot, t, e, chargeFor(len(key), e), int64(old.charge))
		t.rec(i).e = e
		if old.ttl {
			if ms == 0 {
				db.dropExpire(t, old)
				return
			}
			old.ttl = false
			delete(t.expires, old)
			t.expires[e] = ms
			e.ttl = true
			return
		}
		if ms != 0 {
			db.addExpire(t, e, ms)
		}
		return
	}
	t.insert(i, h, e)
	if t.n == 1 {
		db.nonEmpty[slot>>6].Or(1 << (slot & 63))
	}
	db.ks.charge(slot, t, e, chargeFor(len(key), e), 0)
	db.count.Add(1)
	if ms != 0 {
		db.addExpire(t, e, ms)
	}
}

// addExpire gives a key without a TTL one.
func (db *DB) addExpire(t *slotTable, e *Entry, ms int64) {
	if t.expires == nil {
		t.expires = make(map[*Entry]int64)
	}
	t.expires[e] = ms
	e.ttl = true
	db.volatile.Add(1)
}

// SetExpire sets or clears (when ms is 0) the expiry of key, an existing
// entry e.
func (db *DB) SetExpire(slot int, key []byte, e *Entry, ms int64) {
	t := db.rt(slot)
	switch {
	case ms == 0:
		if e.ttl {
			db.dropExpire(t, e)
		}
	case e.ttl:
		t.expires[e] = ms
	default:
		db.addExpire(t, e, ms)
	}
}

// Delete removes key and reports whether it existed (expired keys count as
// absent but are removed too).
func (db *DB) Delete(slot int, key []byte, now int64) bool {
	t := db.rt(slot)
	if t.n == 0 {
		return false
	}
	i, e := t.find(key, hashKey(key))
	if e == nil {
		return false
	}
	expired := e.ttl && t.expires[e] <= now
	db.removeAt(slot, t, i, e)
	if expired {
		db.expired(slot, e.key())
		return false
	}
	return true
}

// removeAt removes e, held by record i of slot's table t.
func (db *DB) removeAt(slot int, t *slotTable, i uint32, e *Entry) {
	t.removeAt(i)
	if t.n == 0 {
		db.nonEmpty[slot>>6].And(^uint64(1 << (slot & 63)))
	}
	t.bytes -= int64(e.charge)
	db.ks.mem[slot%memShards].Add(-int64(e.charge))
	db.count.Add(-1)
	if e.ttl {
		db.dropExpire(t, e)
	}
}

func (db *DB) dropExpire(t *slotTable, e *Entry) {
	e.ttl = false
	delete(t.expires, e)
	if len(t.expires) == 0 {
		t.expires = nil
	}
	db.volatile.Add(-1)
}

// ForEachInSlot calls fn for every key of one slot, expired or not, until
// fn returns false. fn must not add or remove keys.
func (db *DB) ForEachInSlot(slot int, fn func(key string, e *Entry) bool) {
	db.rt(slot).each(func(e *Entry) bool { return fn(e.key(), e) })
}

// FlushSlot removes every key of one slot and returns how many there were.
func (db *DB) FlushSlot(slot int) int {
	t := db.rt(slot)
	n := int(t.n)
	if n == 0 {
		return 0
	}
	db.ks.mem[slot%memShards].Add(-t.bytes)
	db.count.Add(int64(-n))
	db.volatile.Add(int64(-len(t.expires)))
	t.recs, t.mask, t.n = nil, 0, 0
	t.expires = nil
	t.bytes = 0
	db.nonEmpty[slot>>6].And(^uint64(1 << (slot & 63)))
	return n
}

// Flush removes every key. The caller holds LockAll.
func (db *DB) Flush() {
	// The values are left to the garbage collector. Each slot keeps its
	// byte total, so the memory count is fixed in O(slots), not O(keys).
	var freed [memShards]int64
	for s := db.NextNonEmpty(0, false); s >= 0; s = db.NextNonEmpty(s+1, false) {
		freed[s%memShards] += db.rt(s).bytes
	}
	// Dropping the whole array returns the database to its never-written
	// state; the next write allocates fresh tables. The array in the lock
	// lines stays and is cleared.
	if p := db.tables.Load(); p == &db.ks.locks {
		for i := range p {
			p[i].t = slotTable{}
		}
	} else {
		db.tables.Store(&emptyTables)
	}
	for i, f := range freed {
		if f != 0 {
			db.ks.mem[i].Add(-f)
		}
	}
	for i := range db.nonEmpty {
		db.nonEmpty[i].Store(0)
	}
	db.count.Store(0)
	db.volatile.Store(0)
}

// RandomSlot picks a slot that held keys a moment ago, or -1 when the
// database is empty; rng may be nil for the global source. It takes no lock: the caller locks the slot and
// checks that it still holds keys. Slots are weighted equally whatever
// their key counts, as redis-server's random bucket choice is in spirit.
func (db *DB) RandomSlot(rng *rand.Rand) int {
	if db.count.Load() == 0 {
		return -1
	}
	var start int
	if rng != nil {
		start = rng.IntN(slots.Count)
	} else {
		start = rand.IntN(slots.Count)
	}
	return db.NextNonEmpty(start, true)
}

// NextNonEmpty returns the first slot at or after from that holds keys
// (per the lock-free bitmap), or -1. With wrap it continues from slot 0.
func (db *DB) NextNonEmpty(from int, wrap bool) int {
	if from >= slots.Count {
		if !wrap {
			return -1
		}
		from = 0
	}
	w := from >> 6
	bits := db.nonEmpty[w].Load() &^ (1<<(from&63) - 1)
	for n := 0; n <= len(db.nonEmpty); n++ {
		if bits != 0 {
			return w<<6 + trailingZeros(bits)
		}
		w++
		if w == len(db.nonEmpty) {
			if !wrap {
				return -1
			}
			w = 0
		}
		bits = db.nonEmpty[w].Load()
	}
	return -1
}

// ExpireSample looks at up to n keys with a TTL in one slot, deletes those
// that have expired at now, and returns how many it looked at and deleted.
// The caller holds the slot's lock, possibly taken with LockQuiet: a slot
// that is pending for a capture is copied before its first deletion, so
// that sampling alone copies nothing.
func (db *DB) ExpireSample(slot int, n int, now int64) (seen, expired int) {
	t := db.rt(slot)
	for e, ms := range t.expires {
		if seen >= n {
			break
		}
		seen++
		if ms <= now {
			if expired == 0 {
				// The caller may hold the lock quietly: copy the slot
				// for active captures before the first change.
				db.ks.captureOne(slot)
			}
			db.removeAt(slot, t, t.indexOf(e), e)
			db.expired(slot, e.key())
			expired++
		}
	}
	return seen, expired
}

// HasVolatile reports whether a slot holds keys with a TTL.
func (db *DB) HasVolatile(slot int) bool { return len(db.rt(slot).expires) > 0 }

// NextExpireSlot returns the next slot for the active expire cycle to visit.
// Only the cron goroutine calls it.
func (db *DB) NextExpireSlot() int {
	s := db.expireCursor
	db.expireCursor = (s + 1) % slots.Count
	return s
}

func trailingZeros(x uint64) int { return bits.TrailingZeros64(x) }

// SlotHasKeys reports whether a slot holds keys, without its lock (from the
// lock-free bitmap; an expired key not yet reclaimed counts).
func (db *DB) SlotHasKeys(slot int) bool {
	return db.nonEmpty[slot>>6].Load()&(1<<(slot&63)) != 0
}

// Reserve sizes the tables of every slot for about keys keys and expires
// keys with a TTL spread evenly over the slots (the counts an RDB file
// announces), so that loading does not grow each map step by step. The
// maps are made by Load, as each slot gets its first key (on the goroutine
// that inserts, rather than all at once before anything can be inserted).
// The caller holds every slot lock or is alone (loading at start).
func (db *DB) Reserve(keys, expires uint64) {
	per := func(n uint64) int {
		avg := float64(n) / slots.Count
		// Keys fall into slots at random: leave room for the spread
		// (about three standard deviations) so that few maps still grow.
		n = uint64(avg + 3*math.Sqrt(avg) + 1)
		if n < 8 {
			// Small maps are cheap to grow; not worth the memory up front.
			return 0
		}
		return int(n)
	}
	db.loadKeys, db.loadExpires = per(keys), per(expires)
}

// Load adds a key read from a file: SetWithExpire for a key that should
// not exist yet, taking k as the entry's key without a copy. It reports
// false when the key existed; its old value is then replaced without the
// memory count being fixed, and the caller is to abandon the keyspace (a
// load with duplicate keys fails).
func (db *DB) Load(slot int, k string, e *Entry, ms int64) bool {
	t := db.wt(slot)
	kb := unsafe.Slice(unsafe.StringData(k), len(k))
	h := hashKey(kb)
	var i uint32
	var old *Entry
	if t.recs == nil && db.loadKeys > 0 {
		t.resize(recsFor(db.loadKeys))
	}
	if t.recs != nil {
		i, old = t.find(kb, h)
	}
	e.kp, e.kn = unsafe.StringData(k), uint32(len(k))
	e.ttl = false
	if old != nil {
		t.rec(i).e = e
		return false
	}
	t.insert(i, h, e)
	if t.n == 1 {
		db.nonEmpty[slot>>6].Or(1 << (slot & 63))
	}
	db.ks.charge(slot, t, e, chargeFor(len(k), e), 0)
	db.count.Add(1)
	if ms != 0 {
		if t.expires == nil && db.loadExpires > 0 {
			t.expires = make(map[*Entry]int64, db.loadExpires)
		}
		db.addExpire(t, e, ms)
	}
	return true
}

// Warm reads, without using them, the record and the entry a lookup of key
// would read first, and returns a value made from them that the caller
// stores somewhere so that the reads are not optimized away. A command
// with several keys (MSET, MGET) warms them all before looking them up:
// the reads of different keys do not depend on each other, so the
// processor overlaps their cache misses, where the lookups, separated by
// writes and atomic counters, would take them one after the other. The
// caller holds the slot's lock.
func (db *DB) Warm(slot int, key []byte) uint64 {
	t := db.rt(slot)
	if t.recs == nil {
		return 0
	}
	r := t.rec(uint32(hashKey(key)) & t.mask)
	if r.e == nil {
		return r.h
	}
	return r.h + uint64(r.e.kn)
}
