package keyspace

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"unsafe"

	"github.com/slotd/slotd/node/resp"
)

// Set is the value of a set key. Like redis-server it starts as a sorted
// array of integers ("intset") while every member is a canonical integer
// and there are at most set-max-intset-entries of them, and turns into a
// hash table for good once either stops being true. Redis 7.0 has no
// listpack encoding for sets.
//
// The hash table form keeps members in a dense slice indexed by a map, so
// that a uniformly random member (SPOP, SRANDMEMBER) costs O(1) and a
// removal is a swap with the last element.
type Set struct {
	ints []int64 // intset form: ascending, used while idx is nil

	idx     map[string]int // hash table form: member -> position in members
	members []string
	bytes   int // sum of member lengths in the hash table form
	hint    int // members expected, for the hash table's first size
}

var _ Object = (*Set)(nil)

// NewSet returns an empty set in the intset form.
func NewSet() *Set { return &Set{} }

// NewSetSize returns an empty set in the intset form that expects n
// members: should it become a hash table, that is made for n.
func NewSetSize(n int) *Set { return &Set{hint: n} }

// IsIntset reports whether the set is in the intset form.
func (s *Set) IsIntset() bool { return s.idx == nil }

// Encoding implements Object.
func (s *Set) Encoding() string {
	if s.idx == nil {
		return "intset"
	}
	return "hashtable"
}

// Len implements Object.
func (s *Set) Len() int {
	if s.idx == nil {
		return len(s.ints)
	}
	return len(s.members)
}

// MemoryUsage implements Object. It follows redis-server's layout roughly:
// 8 bytes per integer in an intset; a dict entry, an sds header and the
// bytes of each member in a hash table.
func (s *Set) MemoryUsage() int {
	if s.idx == nil {
		return 16 + 8*len(s.ints)
	}
	n := len(s.members)
	buckets := 4
	for buckets < n {
		buckets *= 2
	}
	return 96 + 8*buckets + n*(24+8+1) + s.bytes
}

// Clone implements Object.
func (s *Set) Clone() Object {
	c := &Set{ints: slices.Clone(s.ints), bytes: s.bytes}
	if s.idx != nil {
		c.idx = make(map[string]int, len(s.members))
		c.members = slices.Clone(s.members)
		for i, m := range c.members {
			c.idx[m] = i
		}
	}
	return c
}

func (s *Set) searchInt(v int64) (int, bool) {
	return slices.BinarySearch(s.ints, v)
}

// Has reports whether m is a member.
func (s *Set) Has(m []byte) bool {
	if s.idx == nil {
		v, ok := resp.ParseInt(m)
		if !ok {
			return false
		}
		_, found := s.searchInt(v)
		return found
	}
	_, ok := s.idx[string(m)]
	return ok
}

// Add inserts m (copied) and reports whether it was new.
func (s *Set) Add(m []byte) bool {
	if s.idx == nil {
		if v, ok := resp.ParseInt(m); ok {
			i, found := s.searchInt(v)
			if found {
				return false
			}
			if len(s.ints)+1 <= CurrentLimits().SetMaxIntsetEntries {
				s.ints = slices.Insert(s.ints, i, v)
				return true
			}
		}
		s.toHashtable()
	}
	if _, ok := s.idx[string(m)]; ok {
		return false
	}
	k := string(m)
	s.idx[k] = len(s.members)
	s.members = append(s.members, k)
	s.bytes += len(k)
	return true
}

// AddString is Add for a member that is already an immutable string.
func (s *Set) AddString(m string) bool {
	if s.idx != nil {
		if _, ok := s.idx[m]; ok {
			return false
		}
		s.idx[m] = len(s.members)
		s.members = append(s.members, m)
		s.bytes += len(m)
		return true
	}
	return s.Add([]byte(m))
}

func (s *Set) toHashtable() {
	n := max(len(s.ints)+1, s.hint)
	s.idx = make(map[string]int, n)
	s.members = make([]string, 0, n)
	s.hint = 0
	for _, v := range s.ints {
		k := strconv.FormatInt(v, 10)
		s.idx[k] = len(s.members)
		s.members = append(s.members, k)
		s.bytes += len(k)
	}
	s.ints = nil
}

// Remove deletes m and reports whether it was a member.
func (s *Set) Remove(m []byte) bool {
	if s.idx == nil {
		v, ok := resp.ParseInt(m)
		if !ok {
			return false
		}
		i, found := s.searchInt(v)
		if found {
			s.ints = slices.Delete(s.ints, i, i+1)
		}
		return found
	}
	i, ok := s.idx[string(m)]
	if !ok {
		return false
	}
	s.RemoveAt(i)
	return true
}

// At returns the member at position i (0 <= i < Len()), using buf for the
// text of an integer. The result is read-only and valid until the next
// change; positions too are stable only until then.
func (s *Set) At(i int, buf []byte) []byte {
	if s.idx == nil {
		return strconv.AppendInt(buf[:0], s.ints[i], 10)
	}
	return bytesOf(s.members[i])
}

// StringAt is At for callers that keep the member.
func (s *Set) StringAt(i int) string {
	if s.idx == nil {
		return strconv.FormatInt(s.ints[i], 10)
	}
	return s.members[i]
}

// RemoveAt deletes the member at position i. In the hash table form the
// last member takes its place.
func (s *Set) RemoveAt(i int) {
	if s.idx == nil {
		s.ints = slices.Delete(s.ints, i, i+1)
		return
	}
	m := s.members[i]
	last := len(s.members) - 1
	if i != last {
		s.members[i] = s.members[last]
		s.idx[s.members[i]] = i
	}
	s.members[last] = ""
	s.members = s.members[:last]
	delete(s.idx, m)
	s.bytes -= len(m)
}

// RandomIndex returns a uniformly random position; the set must not be
// empty.
func (s *Set) RandomIndex() int { return rand.IntN(s.Len()) }

// Each calls fn for every member in the order SMEMBERS replies with
// (ascending for an intset) until fn returns false. The bytes passed to fn
// are read-only and valid only during the call. fn must not change the set.
func (s *Set) Each(fn func(m []byte) bool) {
	if s.idx == nil {
		var buf [24]byte
		for _, v := range s.ints {
			if !fn(strconv.AppendInt(buf[:0], v, 10)) {
				return
			}
		}
		return
	}
	for _, m := range s.members {
		if !fn(bytesOf(m)) {
			return
		}
	}
}

// Scan visits about count members starting at cursor and returns the
// cursor to continue from (0 when done). An intset is returned whole, like
// redis-server does for its compact encodings. The hash table is walked
// from its last position to its first so that swap-removals never hide a
// member that was present for the whole scan.
func (s *Set) Scan(cursor uint64, count int, fn func(m []byte)) uint64 {
	if s.idx == nil {
		s.Each(func(m []byte) bool { fn(m); return true })
		return 0
	}
	return scanDense(len(s.members), cursor, count, func(i int) { fn(bytesOf(s.members[i])) })
}

// scanDense visits up to count positions of a dense array of n, walking
// down: cursor 0 starts at the top, a cursor c > 0 continues at c-1, and
// the returned cursor is where the next call starts (0: done).
func scanDense(n int, cursor uint64, count int, visit func(i int)) uint64 {
	hi := n
	if cursor != 0 && cursor < uint64(n) {
		hi = int(cursor)
	}
	if count < 1 {
		count = 1
	}
	lo := hi - count
	if lo < 0 {
		lo = 0
	}
	for i := hi - 1; i >= lo; i-- {
		visit(i)
	}
	return uint64(lo)
}

// bytesOf views a member as bytes without copying; the view must never be
// written to.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
