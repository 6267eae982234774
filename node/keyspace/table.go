package keyspace

import (
	"hash/maphash"
	"math/rand/v2"
	"unsafe"
)

// slotTable is one slot's keys: an open-addressing hash table (linear
// probing, backward-shift deletion, no tombstones) of (hash, *Entry)
// records. The key bytes live in the entry (for keys written by SET and
// the like, in the entry's own allocation, next to a short value), so a
// hit costs the record's cache line and the entry's, where a Go map
// costs its header, its group, the key string and then the entry.
//
// There is no per-key order or position: SCAN resumes at slot boundaries
// and random picks start at a random record (see scan.go).
type slotTable struct {
	// recs is the record array (mask+1 records, a power of two, at least
	// minRecs), nil while the slot is empty.
	recs unsafe.Pointer
	mask uint32
	n    uint32 // keys held
	// expires holds the expiry time (unix ms) of the entries that have
	// one; their entries have ttl set.
	expires map[*Entry]int64
	bytes   int64 // sum of the entries' charges
}

// rec is one record: the key's full hash (so that a probe rarely reads an
// entry that is not the key's) and the entry, nil for a free record.
type rec struct {
	h uint64
	e *Entry
}

const (
	minRecs = 4 // one cache line of records
	// A table grows when it would be more than 3/4 full and shrinks when
	// less than 1/10 full.
	maxLoadNum, maxLoadDen = 3, 4
)

var hashSeed = maphash.MakeSeed()

func hashKey(k []byte) uint64       { return maphash.Bytes(hashSeed, k) }
func hashKeyString(k string) uint64 { return maphash.String(hashSeed, k) }

func (t *slotTable) rec(i uint32) *rec {
	return (*rec)(unsafe.Add(t.recs, uintptr(i)*unsafe.Sizeof(rec{})))
}

// find returns the entry holding key (whose hash is h) and its record's
// index, or nil and the index of the free record where the key would go.
// The table must not be empty.
func (t *slotTable) find(key []byte, h uint64) (uint32, *Entry) {
	mask := t.mask
	i := uint32(h) & mask
	for {
		r := t.rec(i)
		if r.e == nil {
			return i, nil
		}
		if r.h == h && r.e.keyIs(key) {
			return i, r.e
		}
		i = (i + 1) & mask
	}
}

// get returns the entry holding key, or nil.
func (t *slotTable) get(key []byte) *Entry {
	if t.n == 0 {
		return nil
	}
	_, e := t.find(key, hashKey(key))
	return e
}

// recsFor returns the record count a table of n keys gets.
func recsFor(n int) uint32 {
	c := uint32(minRecs)
	for uint64(n)*maxLoadDen > uint64(c)*maxLoadNum {
		c <<= 1
	}
	return c
}

// resize moves the records into an array of c records.
func (t *slotTable) resize(c uint32) {
	old, oldCap := t.recs, t.mask+1
	arr := make([]rec, c)
	t.recs = unsafe.Pointer(unsafe.SliceData(arr))
	t.mask = c - 1
	if old == nil {
		return
	}
	for _, r := range unsafe.Slice((*rec)(old), oldCap) {
		if r.e != nil {
			i := uint32(r.h) & t.mask
			for t.rec(i).e != nil {
				i = (i + 1) & t.mask
			}
			*t.rec(i) = r
		}
	}
}

// insert adds a record for a key known to be absent; i is the free index
// find returned for it (unused when the table must grow first).
func (t *slotTable) insert(i uint32, h uint64, e *Entry) {
	if t.recs == nil || uint64(t.n+1)*maxLoadDen > uint64(t.mask+1)*maxLoadNum {
		t.resize(recsFor(int(t.n) + 1))
		i = uint32(h) & t.mask
		for t.rec(i).e != nil {
			i = (i + 1) & t.mask
		}
	}
	*t.rec(i) = rec{h: h, e: e}
	t.n++
}

// removeAt deletes record i, shifting back the records of the probe run
// after it so that no search stops early at the hole.
func (t *slotTable) removeAt(i uint32) {
	mask := t.mask
	j := i
	for {
		j = (j + 1) & mask
		r := t.rec(j)
		if r.e == nil {
			break
		}
		// r may fill the hole at i unless its home lies after i (in
		// probe order) and at or before j.
		if (j-uint32(r.h))&mask >= (j-i)&mask {
			*t.rec(i) = *r
			i = j
		}
	}
	*t.rec(i) = rec{}
	t.n--
	switch {
	case t.n == 0:
		// An emptied slot gives its array back, so that a slot that
		// held many keys once does not keep their space.
		t.recs, t.mask = nil, 0
	case t.mask+1 > minRecs && uint64(t.n)*10 < uint64(t.mask+1):
		t.resize(recsFor(int(t.n)))
	}
}

// indexOf returns the record index of e, which the table holds.
func (t *slotTable) indexOf(e *Entry) uint32 {
	i := uint32(hashKeyString(e.key())) & t.mask
	for t.rec(i).e != e {
		i = (i + 1) & t.mask
	}
	return i
}

// each calls fn for every entry until fn returns false.
func (t *slotTable) each(fn func(e *Entry) bool) {
	if t.recs == nil {
		return
	}
	for _, r := range unsafe.Slice((*rec)(t.recs), t.mask+1) {
		if r.e != nil && !fn(r.e) {
			return
		}
	}
}

// random returns an entry of a non-empty table: the first one at or after
// a random record.
func (t *slotTable) random() *Entry {
	i := rand.Uint32() & t.mask
	for {
		if e := t.rec(i).e; e != nil {
			return e
		}
		i = (i + 1) & t.mask
	}
}
