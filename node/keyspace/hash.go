package keyspace

// Hash is a hash value. Like redis-server it has two encodings:
//
//   - listpack: a dense slice of pairs in insertion order, searched
//     linearly. HGETALL, HKEYS, HSCAN... answer in that order, exactly as
//     redis-server's listpack does (an update keeps the field's place; a
//     delete closes the gap).
//   - hashtable: the same slice, now with holes, plus an index from field
//     to slot. Deleted slots are reused by later inserts, so live pairs
//     never move and a slot number works as an HSCAN cursor; when fewer
//     than a quarter of the slots are live the slice is compacted.
//
// A hash converts once, on a write that makes it exceed
// hash-max-listpack-entries or that stores a field or value longer than
// hash-max-listpack-value, and never converts back.
type Hash struct {
	pairs []hashPair
	index map[string]int // nil while listpack-encoded
	free  []int          // dead slots of a hashtable, reused LIFO
	live  int
	bytes int // sum of field and value lengths
}

type hashPair struct {
	field, value string
	dead         bool
}

// NewHash returns an empty listpack-encoded hash.
func NewHash() *Hash { return &Hash{} }

// NewHashSize returns an empty hash with room for n fields, already a
// hashtable when n exceeds hash-max-listpack-entries (as it will be once
// they are set).
func NewHashSize(n int) *Hash {
	h := &Hash{pairs: make([]hashPair, 0, n)}
	if n > CurrentLimits().HashMaxListpackEntries {
		h.index = make(map[string]int, n)
	}
	return h
}

// Encoding returns "listpack" or "hashtable".
func (h *Hash) Encoding() string {
	if h.index == nil {
		return "listpack"
	}
	return "hashtable"
}

// IsListpack reports whether the hash still keeps redis-server's listpack
// order.
func (h *Hash) IsListpack() bool { return h.index == nil }

// Len returns the number of fields.
func (h *Hash) Len() int { return h.live }

// MemoryUsage estimates the bytes held: the pair slots, the strings and,
// for a hashtable, the index entries.
func (h *Hash) MemoryUsage() int {
	n := 48 + 40*cap(h.pairs) + h.bytes + 8*h.live
	if h.index != nil {
		n += 40*h.live + 8*cap(h.free)
	}
	return n
}

// Clone returns an independent copy with the same encoding and order.
func (h *Hash) Clone() Object {
	c := &Hash{live: h.live, bytes: h.bytes}
	if h.index == nil {
		c.pairs = append([]hashPair(nil), h.pairs...)
		return c
	}
	c.pairs = make([]hashPair, 0, h.live)
	c.index = make(map[string]int, h.live)
	for _, p := range h.pairs {
		if !p.dead {
			c.index[p.field] = len(c.pairs)
			c.pairs = append(c.pairs, p)
		}
	}
	return c
}

func (h *Hash) find(field []byte) int {
	if h.index != nil {
		if i, ok := h.index[string(field)]; ok {
			return i
		}
		return -1
	}
	for i := range h.pairs {
		if h.pairs[i].field == string(field) {
			return i
		}
	}
	return -1
}

// Get returns the value of field.
func (h *Hash) Get(field []byte) (string, bool) {
	if i := h.find(field); i >= 0 {
		return h.pairs[i].value, true
	}
	return "", false
}

// Has reports whether field exists.
func (h *Hash) Has(field []byte) bool { return h.find(field) >= 0 }

// Set stores value under field (copying both) and reports whether the
// field is new. It converts the hash to a hashtable when the limits in
// force are exceeded.
func (h *Hash) Set(field, value []byte) (created bool) {
	return h.SetString(field, string(value))
}

// SetString is Set for a value the caller already owns as a string.
func (h *Hash) SetString(field []byte, value string) (created bool) {
	if h.index == nil {
		lim := CurrentLimits()
		if len(field) > lim.HashMaxListpackValue || len(value) > lim.HashMaxListpackValue {
			h.convert()
		}
	}
	if i := h.find(field); i >= 0 {
		p := &h.pairs[i]
		h.bytes += len(value) - len(p.value)
		p.value = value
		return false
	}
	h.add(string(field), value)
	return true
}

// SetOwned is SetString for a field the caller already owns as a string.
func (h *Hash) SetOwned(field, value string) (created bool) {
	if h.index == nil {
		lim := CurrentLimits()
		if len(field) > lim.HashMaxListpackValue || len(value) > lim.HashMaxListpackValue {
			h.convert()
		}
	}
	if i := h.find(bytesOf(field)); i >= 0 {
		p := &h.pairs[i]
		h.bytes += len(value) - len(p.value)
		p.value = value
		return false
	}
	h.add(field, value)
	return true
}

// add appends a new pair, converting to a hashtable past the limits.
func (h *Hash) add(f, value string) {
	p := hashPair{field: f, value: value}
	h.live++
	h.bytes += len(f) + len(p.value)
	if h.index == nil {
		h.pairs = append(h.pairs, p)
		if h.live > CurrentLimits().HashMaxListpackEntries {
			h.convert()
		}
		return
	}
	var slot int
	if n := len(h.free); n > 0 {
		slot = h.free[n-1]
		h.free = h.free[:n-1]
		h.pairs[slot] = p
	} else {
		slot = len(h.pairs)
		h.pairs = append(h.pairs, p)
	}
	h.index[f] = slot
}

// convert switches to the hashtable encoding.
func (h *Hash) convert() {
	h.index = make(map[string]int, len(h.pairs))
	for i, p := range h.pairs {
		h.index[p.field] = i
	}
}

// Delete removes field and reports whether it existed.
func (h *Hash) Delete(field []byte) bool {
	i := h.find(field)
	if i < 0 {
		return false
	}
	p := h.pairs[i]
	h.live--
	h.bytes -= len(p.field) + len(p.value)
	if h.index == nil {
		copy(h.pairs[i:], h.pairs[i+1:])
		h.pairs[len(h.pairs)-1] = hashPair{}
		h.pairs = h.pairs[:len(h.pairs)-1]
		return true
	}
	delete(h.index, p.field)
	if i == len(h.pairs)-1 {
		h.pairs[i] = hashPair{}
		h.pairs = h.pairs[:i]
	} else {
		h.pairs[i] = hashPair{dead: true}
		h.free = append(h.free, i)
	}
	if len(h.pairs) > 64 && h.live < len(h.pairs)/4 {
		h.compact()
	}
	return true
}

// compact squeezes out dead slots. It moves pairs, so an HSCAN running
// across it may miss or repeat fields; it only happens after most of a
// large hash was deleted.
func (h *Hash) compact() {
	np := make([]hashPair, 0, h.live+h.live/2)
	for _, p := range h.pairs {
		if !p.dead {
			h.index[p.field] = len(np)
			np = append(np, p)
		}
	}
	h.pairs = np
	h.free = nil
}

// Each calls fn for every pair (listpack order for a listpack hash) until
// fn returns false.
func (h *Hash) Each(fn func(field, value string) bool) {
	for i := range h.pairs {
		p := &h.pairs[i]
		if !p.dead && !fn(p.field, p.value) {
			return
		}
	}
}

// Scan calls fn for live pairs from slot cursor on until it has seen
// count of them, and returns the cursor to resume from (0 when done).
// A hashtable's slots never move except in compact, so pairs present for a
// whole scan are all visited.
func (h *Hash) Scan(cursor uint64, count int, fn func(field, value string)) uint64 {
	seen := 0
	for i := cursor; i < uint64(len(h.pairs)); i++ {
		p := &h.pairs[i]
		if p.dead {
			continue
		}
		if seen == count {
			return i
		}
		fn(p.field, p.value)
		seen++
	}
	return 0
}

// Slots returns the number of slots, live or dead; RandomSlot's bound.
func (h *Hash) Slots() int { return len(h.pairs) }

// Slot returns the pair at slot i and whether it is live.
func (h *Hash) Slot(i int) (field, value string, ok bool) {
	p := &h.pairs[i]
	return p.field, p.value, !p.dead
}

// Random returns a uniformly chosen pair of a non-empty hash, drawing slot
// numbers from intn (like rand.IntN) until one is live; at least a quarter
// are, so few draws are needed.
func (h *Hash) Random(intn func(int) int) (field, value string) {
	for {
		p := &h.pairs[intn(len(h.pairs))]
		if !p.dead {
			return p.field, p.value
		}
	}
}

var _ Object = (*Hash)(nil)
