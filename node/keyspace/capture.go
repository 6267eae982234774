package keyspace

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/slotd/slotd/slots"
)

// Capture is a point-in-time copy of the keyspace in progress, taken slot
// by slot without stopping the node (Go has no fork to give a snapshot
// copy-on-write pages).
//
// While a capture is active every slot starts out pending. Whoever locks a
// pending slot through Lock, LockSlots or LockAll gets it only after the
// capture's callback has run on it under that lock and the slot was marked
// done: the callback copies (encodes) what the slot holds, which is still
// what it held when the capture began, since no one changed it without the
// lock. The owner of the capture walks the slots with LockQuiet, which does
// not run callbacks, and copies the pending slots itself.
//
// Cost when no capture runs: one atomic load per lock acquisition.
type Capture struct {
	// pending[s] is read and written only under slot s's lock.
	pending [slots.Count]bool
	fn      func(slot int)
}

// captureSet is the immutable list of active captures behind
// Keyspace.captures.
type captureSet struct {
	list []*Capture
}

var capMu sync.Mutex // serializes changes of every keyspace's capture set

// StartCapture begins a capture: every slot is pending, and fn will be
// called, under the slot's lock, by the first locker of a pending slot
// other than the capture's owner. The caller holds every slot lock (LockAll
// or LockAllQuiet), so the capture's point in time is that moment; fn must
// not take slot locks.
func (ks *Keyspace) StartCapture(fn func(slot int)) *Capture {
	c := &Capture{fn: fn}
	for i := range c.pending {
		c.pending[i] = true
	}
	capMu.Lock()
	var list []*Capture
	if cur := ks.captures.Load(); cur != nil {
		list = slices.Clone(cur.list)
	}
	ks.captures.Store(&captureSet{list: append(list, c)})
	capMu.Unlock()
	return c
}

// EndCapture deactivates c; slots still pending are no longer captured.
func (ks *Keyspace) EndCapture(c *Capture) {
	capMu.Lock()
	defer capMu.Unlock()
	cur := ks.captures.Load()
	if cur == nil {
		return
	}
	list := slices.DeleteFunc(slices.Clone(cur.list), func(x *Capture) bool { return x == c })
	if len(list) == 0 {
		ks.captures.Store(nil)
		return
	}
	ks.captures.Store(&captureSet{list: list})
}

// Captures reports how many captures are active.
func (ks *Keyspace) Captures() int {
	if cur := ks.captures.Load(); cur != nil {
		return len(cur.list)
	}
	return 0
}

// Pending reports whether slot is still to be copied. The caller holds the
// slot's lock.
func (c *Capture) Pending(slot int) bool { return c.pending[slot] }

// Done marks slot as copied. The caller holds the slot's lock.
func (c *Capture) Done(slot int) { c.pending[slot] = false }

// captureSlot runs the callbacks of the active captures for which slot is
// pending. The caller holds the slot's lock.
func captureSlot(set *captureSet, slot int) {
	for _, c := range set.list {
		if c.pending[slot] {
			c.fn(slot)
			c.pending[slot] = false
		}
	}
}

// captureOne is Lock's slow path, kept out of line so that Lock inlines.
func (ks *Keyspace) captureOne(slot int) {
	if set := ks.captures.Load(); set != nil {
		captureSlot(set, slot)
	}
}

// capturesHolder is embedded in Keyspace.
type capturesHolder struct {
	captures atomic.Pointer[captureSet]
}

// LockQuiet locks one slot without running capture callbacks, for the
// owner of a capture (and code that only reads, such as starting one).
func (ks *Keyspace) LockQuiet(slot int) { ks.locks[slot].Lock() }

// LockAllQuiet is LockAll without capture callbacks: the caller must not
// change the keyspace while it holds the locks (starting a capture is what
// it is for). UnlockAll undoes it.
func (ks *Keyspace) LockAllQuiet() {
	for i := range ks.locks {
		ks.locks[i].Lock()
	}
}
