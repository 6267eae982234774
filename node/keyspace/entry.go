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

// Entry is one key's value and metadata. A string's bytes are read with
// Bytes and replaced with SetBytes; the collection of the other kinds
// (*List, *Hash, *Set, *ZSet) is reached through Obj and SetObj.
//
// An Entry is 32 bytes, its allocation size class (TestEntrySize; a plain
// []byte plus an interface would make it 64): one untyped pointer serves
// both the string's bytes (with 32-bit length and capacity beside it) and
// the collection (its type given by Kind), and the expiry time lives in the
// slot's expires map (as redis-server keeps a separate expires dict),
// flagged here so that a lookup of a key without a TTL stays one map
// access.
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
}

// MaxString is the longest string value an Entry holds (its length and
// capacity are 32-bit); proto-max-bulk-len cannot exceed it.
const MaxString = 1<<32 - 1

// NewString returns a string entry that owns a copy of v. A value of up
// to 96 bytes shares the entry's allocation (as redis-server embeds short
// strings in their object): reading the value then costs no cache miss
// beyond the entry's. The capacity is the rest of the allocation's size
// class, so an overwrite of about the same size stays in place.
func NewString(v []byte) *Entry {
	var e *Entry
	var buf []byte
	switch n := len(v); {
	case n <= 16:
		b := new(entryBuf16)
		e, buf = &b.e, b.buf[:]
	case n <= 32:
		b := new(entryBuf32)
		e, buf = &b.e, b.buf[:]
	case n <= 48:
		b := new(entryBuf48)
		e, buf = &b.e, b.buf[:]
	case n <= 64:
		b := new(entryBuf64)
		e, buf = &b.e, b.buf[:]
	case n <= 96:
		b := new(entryBuf96)
		e, buf = &b.e, b.buf[:]
	default:
		return WrapString(append([]byte(nil), v...))
	}
	e.Kind = KindString
	e.SetBytes(append(buf[:0], v...))
	return e
}

// Entries with their string value in the same allocation; each fills a
// size class (48, 64, 80, 96 and 128 bytes).
type (
	entryBuf16 struct {
		e   Entry
		buf [16]byte
	}
	entryBuf32 struct {
		e   Entry
		buf [32]byte
	}
	entryBuf48 struct {
		e   Entry
		buf [48]byte
	}
	entryBuf64 struct {
		e   Entry
		buf [64]byte
	}
	entryBuf96 struct {
		e   Entry
		buf [96]byte
	}
)

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
