package keyspace

import "math/rand/v2"

// ScanSlot visits up to max keys of one slot, walking its key order
// downwards from position from-1 (from <= 0 or beyond the end means "the
// whole slot"), and returns where the next call continues: 0 once the slot
// is done. Because a removal only moves the last key into the hole, a key
// not yet visited is always below the returned position, so a scan that
// continues from it visits every key present throughout at least once.
// fn sees expired keys too and must not add or remove keys. The caller
// holds the slot's lock.
func (db *DB) ScanSlot(slot, from, max int, fn func(key string, e *Entry)) int {
	t := db.rt(slot)
	if from <= 0 || from > len(t.order) {
		from = len(t.order)
	}
	i := from
	for ; i > 0 && max > 0; max-- {
		i--
		k := t.order[i]
		fn(k, t.keys[k])
	}
	return i
}

// RandomInSlot returns a key of the slot chosen uniformly, or "" and nil
// when the slot is empty. The caller holds the slot's lock.
func (db *DB) RandomInSlot(slot int) (string, *Entry) {
	t := db.rt(slot)
	if len(t.order) == 0 {
		return "", nil
	}
	k := t.order[rand.IntN(len(t.order))]
	return k, t.keys[k]
}

// RandomVolatileInSlot returns a key with a TTL from the slot, or "" and
// nil. Map iteration starts at a random place, which serves as the random
// pick among volatile keys (as redis-server samples its expires dict). The
// caller holds the slot's lock.
func (db *DB) RandomVolatileInSlot(slot int) (string, *Entry) {
	for k, e := range db.rt(slot).expires {
		return k, e
	}
	return "", nil
}

// VolatileLen returns the number of keys with a TTL in one slot. The
// caller holds the slot's lock.
func (db *DB) VolatileLen(slot int) int { return len(db.rt(slot).expires) }
