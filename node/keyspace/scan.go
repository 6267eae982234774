package keyspace

// Slots keep no key order (it would cost 16 bytes per key plus slack), so
// iteration state never points inside a slot: SCAN resumes at slot
// boundaries (node's cmdScan, over ForEachInSlot) and random picks take the
// first key at or after a random record of the slot's table.

// RandomInSlot returns a key of the slot, or "" and nil when the slot is
// empty. The pick is the first key at or after a random record: every key
// can come out, but not with exactly equal odds (a key that follows free
// records is likelier), much as redis-server's pick of a random bucket then
// a random chain element is not exactly uniform. The caller holds the
// slot's lock.
func (db *DB) RandomInSlot(slot int) (string, *Entry) {
	t := db.rt(slot)
	if t.n == 0 {
		return "", nil
	}
	e := t.random()
	return e.key(), e
}

// RandomVolatileInSlot returns a key with a TTL from the slot, or "" and
// nil: the first of the slot's volatile keys in an iteration of its expires
// map, which Go starts at a random place (as redis-server samples its
// expires dict). The caller holds the slot's lock.
func (db *DB) RandomVolatileInSlot(slot int) (string, *Entry) {
	t := db.rt(slot)
	for e := range t.expires {
		return e.key(), e
	}
	return "", nil
}

// VolatileLen returns the number of keys with a TTL in one slot. The
// caller holds the slot's lock.
func (db *DB) VolatileLen(slot int) int { return len(db.rt(slot).expires) }
