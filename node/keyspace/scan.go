package keyspace

// Slots keep no key order (it would cost 16 bytes per key plus slack), so
// iteration state never points inside a slot: SCAN resumes at slot
// boundaries (node's cmdScan, over ForEachInSlot) and random picks take the
// first key of Go's map iteration, which starts at a random place.

// RandomInSlot returns a key of the slot, or "" and nil when the slot is
// empty. The pick is the first key of a map iteration, which Go starts at a
// random group and offset: every key can come out, but not with exactly
// equal odds (a key that follows free map slots is likelier), much as
// redis-server's pick of a random bucket then a random chain element is not
// exactly uniform. The caller holds the slot's lock.
func (db *DB) RandomInSlot(slot int) (string, *Entry) {
	for k, e := range db.rt(slot).keys {
		return k, e
	}
	return "", nil
}

// RandomVolatileInSlot returns a key with a TTL from the slot, or "" and
// nil, picked like RandomInSlot among the slot's volatile keys (as
// redis-server samples its expires dict). The caller holds the slot's lock.
func (db *DB) RandomVolatileInSlot(slot int) (string, *Entry) {
	t := db.rt(slot)
	for k := range t.expires {
		return k, t.keys[k]
	}
	return "", nil
}

// VolatileLen returns the number of keys with a TTL in one slot. The
// caller holds the slot's lock.
func (db *DB) VolatileLen(slot int) int { return len(db.rt(slot).expires) }
