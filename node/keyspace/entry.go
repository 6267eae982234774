package keyspace

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

// Entry is one key's value and metadata. Str holds a string value; Obj holds
// the collection for the other kinds (*List, *Hash, *Set, *ZSet).
type Entry struct {
	Kind Kind
	// Raw marks a string that redis-server would hold "raw" whatever its
	// length (after APPEND or SETRANGE), for OBJECT ENCODING.
	Raw bool
	// NoInt marks a string that redis-server would not hold int-encoded
	// even if it reads as an integer (the result of INCRBYFLOAT).
	NoInt bool
	// Access is the LRU clock (seconds, 24 bits used) or, under an LFU
	// policy, the LFU counter and decay time, as redis-server keeps them.
	Access uint32
	// Expire is the absolute expiry time in unix milliseconds; 0 is none.
	Expire int64
	Str    []byte
	Obj    any

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
