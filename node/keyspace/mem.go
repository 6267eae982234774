package keyspace

import "math"

// Memory accounting.
//
// UsedMemory is an estimate kept current on every write rather than a
// reading of the Go heap: the heap's live size is only known after a
// garbage collection, so it lags by up to a GC cycle (the heap may double
// with GOGC=100), and it cannot tell how much an eviction freed until the
// next cycle, which would make an eviction loop overshoot. A counter
// charged when a key is stored and refunded (by the exact amount charged,
// remembered in the entry) when it goes is exact about the keys' share,
// costs one uncontended atomic add per store and never drifts below zero.
// Collections that grow in place are re-charged by Recharge, which the
// server calls for written keys while a maxmemory limit is set.

// Per-key overhead in bytes besides the key and value bytes: the Entry
// (40 bytes) and the key's share of its slot table (16-byte records at
// 3/8 to 3/4 load, 21 to 43 bytes; about 40 with the size-class rounding,
// measured by TestHeapPerKey: 165 bytes a key for 16-byte keys and 64-byte
// values).
const entryOverhead = 40 + 40

// EstimateSize returns the bytes a key of keyLen bytes holding e is
// counted for.
func EstimateSize(keyLen int, e *Entry) int64 {
	n := int64(entryOverhead + keyLen)
	if e.Kind == KindString {
		return n + int64(cap(e.Bytes()))
	}
	if o := e.Obj(); o != nil {
		return n + int64(o.MemoryUsage())
	}
	return n
}

// chargeFor is what storing e costs: an entry that was charged before
// (one moved by RENAME or MOVE) keeps its charge, so that moving a large
// collection stays O(1) instead of re-measuring it.
func chargeFor(keyLen int, e *Entry) int64 {
	if e.charge != 0 {
		return int64(e.charge)
	}
	return EstimateSize(keyLen, e)
}

func (ks *Keyspace) charge(slot int, t *slotTable, e *Entry, size, prev int64) {
	if size > math.MaxInt32 {
		size = math.MaxInt32
	}
	e.charge = int32(size)
	if d := size - prev; d != 0 {
		t.bytes += d
		ks.mem[slot%memShards].Add(d)
	}
}

// UsedMemory returns the estimated bytes held by all keys.
func (ks *Keyspace) UsedMemory() int64 {
	var n int64
	for i := range ks.mem {
		n += ks.mem[i].Load()
	}
	return n
}

// Recharge re-estimates the size of key after an in-place change of its
// value. The caller holds the slot's lock.
func (db *DB) Recharge(slot int, key []byte) {
	e := db.rt(slot).get(key)
	if e == nil {
		return
	}
	db.ks.charge(slot, db.rt(slot), e, EstimateSize(len(key), e), int64(e.charge))
}

// Charge returns the bytes e is currently counted for.
func (e *Entry) Charge() int64 { return int64(e.charge) }
