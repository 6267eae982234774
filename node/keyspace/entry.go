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

// Entry is one key's value and metadata. Str holds a string value; the
// collection of the other kinds (*List, *Hash, *Set, *ZSet) is reached
// through Obj and SetObj.
//
// An Entry is 48 bytes, its allocation size class (TestEntrySize): the
// collection pointer is stored untyped, its type given by Kind, and the
// expiry time lives in the slot's expires map (as redis-server keeps a
// separate expires dict), flagged here so that a lookup of a key without a
// TTL stays one map access.
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
	Str    []byte
	obj    unsafe.Pointer

	// charge is the bytes the entry was counted for in
	// Keyspace.UsedMemory, owned by the DB that holds the entry: an entry
	// lives in one table at a time (delete it before storing it under
	// another key).
	charge int32
}

// NewString returns a string entry that owns a copy of v.
func NewString(v []byte) *Entry {
	return &Entry{Kind: KindString, Str: append([]byte(nil), v...)}
}

// NewObject returns an entry holding collection o, of the kind o is.
func NewObject(o Object) *Entry {
	e := &Entry{}
	e.SetObj(o)
	return e
}

// Obj returns the entry's collection, or nil for a string.
func (e *Entry) Obj() Object {
	if e.obj == nil {
		return nil
	}
	switch e.Kind {
	case KindList:
		return (*List)(e.obj)
	case KindHash:
		return (*Hash)(e.obj)
	case KindSet:
		return (*Set)(e.obj)
	case KindZSet:
		return (*ZSet)(e.obj)
	}
	return nil
}

// SetObj stores collection o in the entry and sets Kind to match.
func (e *Entry) SetObj(o Object) {
	switch v := o.(type) {
	case *List:
		e.Kind, e.obj = KindList, unsafe.Pointer(v)
	case *Hash:
		e.Kind, e.obj = KindHash, unsafe.Pointer(v)
	case *Set:
		e.Kind, e.obj = KindSet, unsafe.Pointer(v)
	case *ZSet:
		e.Kind, e.obj = KindZSet, unsafe.Pointer(v)
	default:
		panic("keyspace: SetObj of an unknown collection type")
	}
}

// HasTTL reports whether the key has an expiry time (see DB.ExpireOf).
func (e *Entry) HasTTL() bool { return e.ttl }
