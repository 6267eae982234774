package node

import (
	"strconv"
	"unsafe"

	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/node/resp"
	"github.com/slotd/slotd/slots"
)

// Ctx is what a handler gets: the call's arguments, the reply writer and
// access to the keys the dispatcher has locked for it.
type Ctx struct {
	S    *Server
	C    *Client
	Cmd  *Command
	Args [][]byte
	W    *resp.Writer
	DB   *keyspace.DB
	// Now is the call's time in unix milliseconds; expiry is judged by it.
	Now int64

	// The slot of the command's only key, computed by the dispatcher, so
	// that handlers do not hash the key again.
	keyPtr  *byte
	keyLen  int
	keySlot int
	// For a command with several keys: their argument positions and
	// slots, as the dispatcher computed them to take the locks.
	keysPos   []int
	keysSlots []int
	keyHint   int // where Slot's search of keysPos starts

	// selfLock is set while a LockSelf command runs straight from the
	// dispatcher: it must lock the slots it visits itself.
	selfLock bool
	// master is set for the commands of a replica's master link.
	master bool
	// inExec is set while EXEC runs its queue.
	inExec bool

	// mods counts Modified calls (the dispatcher compares it around a
	// handler to know whether to propagate); propCustom is set when the
	// handler chose its own propagation (feed.go).
	mods       int
	propCustom bool

	// warmSink keeps warmKeys' reads from being optimized away.
	warmSink uint64
}

// warmKeys warms the keys Args[1], Args[1+step], ... (keyspace.DB.Warm)
// before a command with several keys looks them up one by one.
func (x *Ctx) warmKeys(step int) {
	var w uint64
	if len(x.keysPos) == (len(x.Args)-1+step-1)/step {
		// The dispatcher's slots of these very keys (positions 1,
		// 1+step, ...), each locked.
		for i, pos := range x.keysPos {
			if pos != 1+i*step {
				return
			}
			w += x.DB.Warm(x.keysSlots[i], x.Args[pos])
		}
	} else {
		for i := 1; i < len(x.Args); i += step {
			k := x.Args[i]
			w += x.DB.Warm(x.Slot(k), k)
		}
	}
	x.warmSink = w
}

// Slot returns the hash slot of key, reusing the dispatcher's computation
// when key is the command's key argument.
func (x *Ctx) Slot(key []byte) int {
	if len(key) > 0 {
		p := unsafe.SliceData(key)
		if p == x.keyPtr && len(key) == x.keyLen {
			return x.keySlot
		}
		// The same bytes as a key argument: the same slot. (A position
		// left from another command cannot mislead: the pointer and
		// length must match.) Handlers visit the keys in order, so the
		// search starts after the last key found.
		n := len(x.keysPos)
		start := x.keyHint
		if start >= n {
			start = 0
		}
		for j := 0; j < n; j++ {
			i := start + j
			if i >= n {
				i -= n
			}
			if pos := x.keysPos[i]; pos < len(x.Args) {
				if a := x.Args[pos]; unsafe.SliceData(a) == p && len(a) == len(key) {
					x.keyHint = i + 1
					return x.keysSlots[i]
				}
			}
		}
	}
	return slots.Of(key)
}

// LockSlot locks one slot for a LockSelf handler; it does nothing when the
// caller already holds every lock (inside EXEC).
func (x *Ctx) LockSlot(slot int) {
	if x.selfLock {
		x.S.ks.Lock(slot)
	}
}

// UnlockSlot undoes LockSlot.
func (x *Ctx) UnlockSlot(slot int) {
	if x.selfLock {
		x.S.ks.Unlock(slot)
	}
}

// Read looks key up for reading: expired keys are removed, hits and misses
// counted and the access clock updated.
func (x *Ctx) Read(key []byte) *keyspace.Entry {
	e := x.lookup(key)
	if e == nil {
		x.S.ks.KeyspaceMiss.AddAt(x.C.ID, 1)
		return nil
	}
	x.S.ks.KeyspaceHits.AddAt(x.C.ID, 1)
	x.S.touch(e)
	return e
}

// Write looks key up for writing: expired keys are removed, no stats.
func (x *Ctx) Write(key []byte) *keyspace.Entry {
	e := x.lookup(key)
	if e != nil {
		x.S.touch(e)
	}
	return e
}

// lookup finds key for Read and Write. A replica's master link sees keys
// whose time has passed: they stay until the master deletes them.
func (x *Ctx) lookup(key []byte) *keyspace.Entry {
	if x.master {
		return x.DB.Peek(x.Slot(key), key)
	}
	return x.DB.Lookup(x.Slot(key), key, x.Now)
}

// ReadKind looks key up for reading and checks its kind. It replies
// WRONGTYPE and returns ok=false when the key holds another kind.
func (x *Ctx) ReadKind(key []byte, k keyspace.Kind) (e *keyspace.Entry, ok bool) {
	e = x.Read(key)
	if e != nil && e.Kind != k {
		x.W.Error(ErrWrongType)
		return nil, false
	}
	return e, true
}

// WriteKind is ReadKind for writers.
func (x *Ctx) WriteKind(key []byte, k keyspace.Kind) (e *keyspace.Entry, ok bool) {
	e = x.Write(key)
	if e != nil && e.Kind != k {
		x.W.Error(ErrWrongType)
		return nil, false
	}
	return e, true
}

// timePassed reports whether the absolute time ms (unix ms) a command
// gives a key has passed, so that the command deletes the key (and
// propagates a DEL) rather than give it a TTL in the past. On a replica's
// master link it never has: the master sent that time while it was still
// ahead, and the replica, whose clock has moved on meanwhile, must hold
// the key, unreadable, until the master's DEL, as it holds every key the
// master holds. Deleting it there would drop it silently: if the replica
// is then promoted, the replicas that continue from it never get a DEL
// for it and keep it for good.
func (x *Ctx) timePassed(ms int64) bool { return !x.master && ms <= x.Now }

// Put stores e under key (replacing value and TTL; the key has no TTL
// after) and signals the change.
func (x *Ctx) Put(key []byte, e *keyspace.Entry) { x.PutWithExpire(key, e, 0) }

// PutWithExpire is Put with an absolute expiry time in unix ms (0: none).
func (x *Ctx) PutWithExpire(key []byte, e *keyspace.Entry, ms int64) {
	e.Access = x.S.newAccess()
	x.DB.SetWithExpire(x.Slot(key), key, e, ms)
	x.Modified(key)
}

// Del removes key and signals the change; it reports whether it existed.
func (x *Ctx) Del(key []byte) bool {
	if x.DB.Delete(x.Slot(key), key, x.Now) {
		x.Modified(key)
		return true
	}
	return false
}

// Expire returns key's expiry time in unix ms (0: none); e is its entry.
func (x *Ctx) Expire(key []byte, e *keyspace.Entry) int64 {
	if !e.HasTTL() {
		return 0
	}
	return x.DB.ExpireOf(x.Slot(key), key, e)
}

// SetExpire sets (ms > 0, absolute unix ms) or clears (ms == 0) a TTL.
func (x *Ctx) SetExpire(key []byte, e *keyspace.Entry, ms int64) {
	x.DB.SetExpire(x.Slot(key), key, e, ms)
}

// Modified records that key was written: it invalidates WATCH and counts
// towards the dirty counter. Every write must call it (Put and Del do).
func (x *Ctx) Modified(key []byte) {
	x.mods++
	x.S.dirty.AddAt(x.C.ID, 1)
	if x.S.ev.maxmem.Load() != 0 {
		// Re-charge values that grew or shrank in place, so that the
		// memory estimate eviction relies on stays current.
		x.DB.Recharge(x.Slot(key), key)
	}

	if x.S.watching.Load() > 0 {
		x.S.touchWatched(x.DB.ID, key)
	}
}

// Arg returns argument i as a string (allocates).
func (x *Ctx) Arg(i int) string { return string(x.Args[i]) }

// Int parses argument i as an integer, replying with Redis's error when it
// is not one.
func (x *Ctx) Int(i int) (int64, bool) {
	n, ok := ParseInt(x.Args[i])
	if !ok {
		x.W.Error(ErrNotInt)
	}
	return n, ok
}

// TimeoutMs reads argument i as a timeout in milliseconds (WAIT, CLIENT
// PAUSE, CLUSTER SETSLOT ... TIMEOUT), answering redis-server's errors when
// it is not an integer or negative.
func (x *Ctx) TimeoutMs(i int) (int64, bool) {
	ms, ok := ParseInt(x.Args[i])
	if !ok {
		x.W.Error("ERR timeout is not an integer or out of range")
		return 0, false
	}
	if ms < 0 {
		x.W.Error("ERR timeout is negative")
		return 0, false
	}
	return ms, true
}

// ParseInt parses b with redis-server's string2ll rules.
func ParseInt(b []byte) (int64, bool) { return resp.ParseInt(b) }

// FormatInt is strconv.AppendInt on a fresh slice.
func FormatInt(n int64) []byte { return strconv.AppendInt(nil, n, 10) }
