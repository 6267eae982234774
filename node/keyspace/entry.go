package keyspace

import "unsafe"

// Kind is the type of a value, as TYPE reports it.
type Kind uint8

// Value kinds.
const (
	KindString Kind = iota
	KindList
	KindHash
	KindSet
	KindZSet
)

// String returns the name TYPE prints.
func (k Kind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindList:
		return "list"
	case KindHash:
		return "hash"
	case KindSet:
		return "set"
	case KindZSet:
		return "zset"
	}
	return "none"
}

// Entry is one key's value, metadata and name. A string's bytes are read
// with Bytes and replaced with SetBytes; the collection of the other kinds
// (*List, *Hash, *Set, *ZSet) is reached through Obj and SetObj.
//
// An Entry is 40 bytes (TestEntrySize): one untyped pointer serves both
// the string's bytes (with 32-bit length and capacity beside it) and the
// collection (its type given by Kind), and the expiry time lives in the
// slot's expires map (as redis-server keeps a separate expires dict),
// flagged here so that a lookup of a key without a TTL reads nothing else.
// The key's bytes are reached from the entry, so that the slot table's
// records hold only a hash and the entry; NewStringKey puts the key and a
// short value in the entry's own allocation, so that a lookup hit reads
// one allocation.
type Entry struct {
	Kind Kind
	// Raw marks a string that redis-server would hold "raw" whatever its
	// length (after APPEND or SETRANGE), for OBJECT ENCODING.
	Raw bool
	// NoInt marks a string that redis-server would not hold int-encoded
	// even if it reads as an integer (the result of INCRBYFLOAT).
	NoInt bool
	// ttl is set while the key has an entry in its slot's expires map. It
	// is owned by the DB, like charge.
	ttl bool
	// Access is the LRU clock (seconds, 24 bits used) or, under an LFU
	// policy, the LFU counter and decay time, as redis-server keeps them.
	Access uint32

	// ptr is the string's first byte (n bytes used of c) or the collection.
	ptr  unsafe.Pointer
	n, c uint32

	// charge is the bytes the entry was counted for in
	// Keyspace.UsedMemory, owned by the DB that holds the entry: an entry
	// lives in one table at a time (delete it before storing it under
	// another key).
	charge int32

	// kn and kp are the key the entry is stored under (kn bytes at kp),
	// set by the DB when it stores the entry. The bytes are never written
	// once set: a key string handed out (ForEachInSlot, RandomInSlot)
	// stays valid after the entry changes or goes.
	kn uint32
	kp *byte
}

// MaxString is the longest string value an Entry holds (its length and
// capacity are 32-bit); proto-max-bulk-len cannot exceed it.
const MaxString = 1<<32 - 1

// embedMaxValue and embedMaxKey are the longest value and key that share
// the entry's allocation.
const (
	embedMaxValue = 96
	embedMaxKey   = 120
)

// NewString returns a string entry that owns a copy of v. A value of up
// to 96 bytes shares the entry's allocation (as redis-server embeds short
// strings in their object): reading the value then costs no cache miss
// beyond the entry's. The capacity is the rest of the allocation's size
// class, so an overwrite of about the same size stays in place.
func NewString(v []byte) *Entry { return NewStringKey(nil, v) }

// NewStringKey is NewString for an entry that is to be stored under key:
// the key's bytes (up to 120) go in the entry's allocation too, after the
// value's room, so that storing the entry copies nothing and a lookup of
// the key reads one allocation.
func NewStringKey(key, v []byte) *Entry {
	var e *Entry
	var buf []byte
	switch {
	case len(v) <= embedMaxValue && len(key) <= embedMaxKey:
		e, buf = newEmbedded(len(v) + len(key))
	case len(key) <= embedMaxKey:
		e, buf = newEmbedded(len(key))
		e.setKey(buf[len(buf)-len(key):], key)
		e.Kind = KindString
		e.SetBytes(append([]byte(nil), v...))
		return e
	default:
		return WrapString(append([]byte(nil), v...))
	}
	vc := len(buf) - len(key)
	e.setKey(buf[vc:], key)
	e.Kind = KindString
	e.SetBytes(append(buf[:0:vc], v...))
	return e
}

// setKey copies key into dst (the entry's own room for it) and makes it
// the entry's key.
func (e *Entry) setKey(dst, key []byte) {
	if len(key) == 0 {
		return
	}
	copy(dst, key)
	e.kp, e.kn = unsafe.SliceData(dst), uint32(len(key))
}

// newEmbedded allocates an entry followed by at least n bytes, the whole
// filling one allocation size class; it returns the entry and the bytes.
func newEmbedded(n int) (*Entry, []byte) {
	switch {
	case n <= 8:
		b := new(entryBuf8)
		return &b.e, b.buf[:]
	case n <= 24:
		b := new(entryBuf24)
		return &b.e, b.buf[:]
	case n <= 40:
		b := new(entryBuf40)
		return &b.e, b.buf[:]
	case n <= 56:
		b := new(entryBuf56)
		return &b.e, b.buf[:]
	case n <= 72:
		b := new(entryBuf72)
		return &b.e, b.buf[:]
	case n <= 88:
		b := new(entryBuf88)
		return &b.e, b.buf[:]
	case n <= 104:
		b := new(entryBuf104)
		return &b.e, b.buf[:]
	case n <= 120:
		b := new(entryBuf120)
		return &b.e, b.buf[:]
	case n <= 136:
		b := new(entryBuf136)
		return &b.e, b.buf[:]
	case n <= 152:
		b := new(entryBuf152)
		return &b.e, b.buf[:]
	case n <= 184:
		b := new(entryBuf184)
		return &b.e, b.buf[:]
	default:
		b := new(entryBuf216)
		return &b.e, b.buf[:]
	}
}

// Entries with bytes (value and key) in the same allocation; each fills a
// size class (48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224 and 256
// bytes with the 40-byte entry).
type (
	entryBuf8 struct {
		e   Entry
		buf [8]byte
	}
	entryBuf24 struct {
		e   Entry
		buf [24]byte
	}
	entryBuf40 struct {
		e   Entry
		buf [40]byte
	}
	entryBuf56 struct {
		e   Entry
		buf [56]byte
	}
	entryBuf72 struct {
		e   Entry
		buf [72]byte
	}
	entryBuf88 struct {
		e   Entry
		buf [88]byte
	}
	entryBuf104 struct {
		e   Entry
		buf [104]byte
	}
	entryBuf120 struct {
		e   Entry
		buf [120]byte
	}
	entryBuf136 struct {
		e   Entry
		buf [136]byte
	}
	entryBuf152 struct {
		e   Entry
		buf [152]byte
	}
	entryBuf184 struct {
		e   Entry
		buf [184]byte
	}
	entryBuf216 struct {
		e   Entry
		buf [216]byte
	}
)

// key returns the key the entry is stored under (valid while stored; the
// string stays valid afterwards).
func (e *Entry) key() string { return unsafe.String(e.kp, e.kn) }

// keyIs reports whether the entry's key is k.
func (e *Entry) keyIs(k []byte) bool {
	return int(e.kn) == len(k) && unsafe.String(e.kp, e.kn) == string(k)
}

// giveKey makes key the entry's key, copying it unless the entry holds it
// already (NewStringKey, or a move between databases).
func (e *Entry) giveKey(key []byte) {
	if e.keyIs(key) {
		return
	}
	s := string(key)
	e.kp, e.kn = unsafe.StringData(s), uint32(len(s))
}

// WrapString returns a string entry holding b itself, which the caller
// hands over.
func WrapString(b []byte) *Entry {
	e := &Entry{Kind: KindString}
	e.SetBytes(b)
	return e
}

// Bytes returns a string entry's value (nil for other kinds). Writing
// into it changes the value in place; growing it needs SetBytes.
func (e *Entry) Bytes() []byte {
	if e.Kind != KindString {
		return nil
	}
	return unsafe.Slice((*byte)(e.ptr), e.c)[:e.n]
}

// SetBytes makes b (owned from now on by the entry) a string entry's
// value. It panics beyond MaxString bytes of capacity.
func (e *Entry) SetBytes(b []byte) {
	if uint64(cap(b)) > MaxString {
		panic("keyspace: string value over 4 GiB")
	}
	e.ptr = unsafe.Pointer(unsafe.SliceData(b))
	e.n, e.c = uint32(len(b)), uint32(cap(b))
}

// NewObject returns an entry holding collection o, of the kind o is.
func NewObject(o Object) *Entry {
	e := &Entry{}
	e.SetObj(o)
	return e
}

// Obj returns the entry's collection, or nil for a string.
func (e *Entry) Obj() Object {
	if e.ptr == nil {
		return nil
	}
	switch e.Kind {
	case KindList:
		return (*List)(e.ptr)
	case KindHash:
		return (*Hash)(e.ptr)
	case KindSet:
		return (*Set)(e.ptr)
	case KindZSet:
		return (*ZSet)(e.ptr)
	}
	return nil
}

// SetObj stores collection o in the entry and sets Kind to match.
func (e *Entry) SetObj(o Object) {
	switch v := o.(type) {
	case *List:
		e.Kind, e.ptr = KindList, unsafe.Pointer(v)
	case *Hash:
		e.Kind, e.ptr = KindHash, unsafe.Pointer(v)
	case *Set:
		e.Kind, e.ptr = KindSet, unsafe.Pointer(v)
	case *ZSet:
		e.Kind, e.ptr = KindZSet, unsafe.Pointer(v)
	default:
		panic("keyspace: SetObj of an unknown collection type")
	}
	e.n, e.c = 0, 0
}

// HasTTL reports whether the key has an expiry time (see DB.ExpireOf).
func (e *Entry) HasTTL() bool { return e.ttl }
