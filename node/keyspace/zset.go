package keyspace

import (
	"math"
	"math/rand/v2"
	"unsafe"
)

// zMaxLevel bounds the skiplist height; with p = 1/4 it is enough for 2^64
// elements.
const zMaxLevel = 32

// ZNode is one member of a sorted set. Member and Score are read-only for
// callers: change a score with ZSet.SetScore.
//
// A hop along the skiplist reads a link and then the Score of the node it
// leads to, so the layout keeps both close: the level-0 link is the first
// field, next to Score, and the links of levels 1..h-1 follow the node in
// the same allocation at a fixed offset (see newZNode and up), without a
// slice header to load first. Level 0's span is always 1 and is not stored.
type ZNode struct {
	next   *ZNode
	Score  float64
	Member string
	back   *ZNode
	pos    uint32 // index in ZSet.all, low bits
	posHi  uint16 // and high bits: 48 in all, no larger node
	h      uint8  // number of levels, 1..zMaxLevel (0: not made by newZNode)
}

// zLevel is a link of level 1 or higher.
type zLevel struct {
	next *ZNode
	span int // number of level-0 steps this link jumps over
}

const (
	zNodeSize  = unsafe.Sizeof(ZNode{})
	zLevelSize = unsafe.Sizeof(zLevel{})
)

// up returns n's link at level i, 1 <= i < n.h. The links sit right after
// the node in the allocation newZNode made, so the address stays inside it
// (as checkptr requires) for every valid i.
func (n *ZNode) up(i int) *zLevel {
	return (*zLevel)(unsafe.Add(unsafe.Pointer(n), zNodeSize+uintptr(i-1)*zLevelSize))
}

func (n *ZNode) index() int { return int(n.pos) | int(n.posHi)<<32 }

func (n *ZNode) setIndex(i int) { n.pos, n.posHi = uint32(i), uint16(i>>32) }

// Next returns the following member in (score, member) order, or nil.
func (n *ZNode) Next() *ZNode { return n.next }

// Prev returns the preceding member, or nil.
func (n *ZNode) Prev() *ZNode { return n.back }

// ZSet is the value of a sorted set key: a skiplist whose links count the
// elements they jump over (so rank and index lookups are O(log n)), a map
// from member to node for O(1) scores (from zDictMin members on; a smaller
// set compares members one by one), and a dense array of nodes for O(1)
// random members and a SCAN that survives removals.
//
// redis-server stores small sorted sets as a listpack; the structure here is
// the same for every size and only the name OBJECT ENCODING prints follows
// Redis's rules: "listpack" while there are at most zset-max-listpack-entries
// members none longer than zset-max-listpack-value bytes, then "skiplist"
// for good (a stored result gets the encoding its final contents call for).
type ZSet struct {
	head  *ZNode
	tail  *ZNode
	level int
	dict  map[string]*ZNode
	all   []*ZNode
	bytes int
	big   bool
}

var _ Object = (*ZSet)(nil)

// zHeadLevels is the height a new set's head starts with; the head is
// replaced by a taller one when a node needs more levels (growHead). Most
// sets are small, and a head of zMaxLevel links would be their largest
// allocation.
const zHeadLevels = 4

// zDictMin is the size from which a set indexes its members in a map;
// below it a member is found by comparing it with each (a small set is
// one allocation less, and about as fast to search).
const zDictMin = 16

// NewZSet returns an empty sorted set.
func NewZSet() *ZSet {
	return &ZSet{
		head:  newZNode("", zHeadLevels),
		level: 1,
	}
}

// NewZSetSize returns an empty sorted set with room for n members.
func NewZSetSize(n int) *ZSet {
	z := NewZSet()
	z.all = make([]*ZNode, 0, n)
	if n >= zDictMin {
		z.dict = make(map[string]*ZNode, n)
	}
	return z
}

// lookup returns the node of member m, or nil.
func (z *ZSet) lookup(m string) *ZNode {
	if z.dict != nil {
		return z.dict[m]
	}
	for _, n := range z.all {
		if n.Member == m {
			return n
		}
	}
	return nil
}

// growHead replaces the head by one of at least h levels.
func (z *ZSet) growHead(h int) {
	old := z.head
	c := zHeadLevels
	for c < h {
		c *= 2
	}
	nh := newZNode("", c)
	nh.next = old.next
	for i := 1; i < int(old.h); i++ {
		*nh.up(i) = *old.up(i)
	}
	z.head = nh
}

// Encoding implements Object.
func (z *ZSet) Encoding() string {
	if z.big {
		return "skiplist"
	}
	return "listpack"
}

// IsListpack reports whether redis-server would hold the set as a listpack.
func (z *ZSet) IsListpack() bool { return !z.big }

// Len implements Object.
func (z *ZSet) Len() int { return len(z.all) }

// MemoryUsage implements Object: a listpack costs about the member bytes
// plus a few bytes per entry; a skiplist adds a node, its levels and a dict
// entry per member.
func (z *ZSet) MemoryUsage() int {
	n := len(z.all)
	if !z.big {
		return 16 + 7 + n*(2+9) + z.bytes
	}
	buckets := 4
	for buckets < n {
		buckets *= 2
	}
	return 96 + 8*buckets + zMaxLevel*16 + n*(24+32+16+8+9) + z.bytes
}

// Clone implements Object.
func (z *ZSet) Clone() Object {
	c := NewZSet()
	for n := z.First(); n != nil; n = n.Next() {
		c.Insert(n.Member, n.Score)
	}
	c.big = z.big
	return c
}

// Get returns the node of member m, or nil.
func (z *ZSet) Get(m []byte) *ZNode { return z.lookup(string(m)) }

// Score returns the score of m.
func (z *ZSet) Score(m []byte) (float64, bool) {
	n := z.lookup(string(m))
	if n == nil {
		return 0, false
	}
	return n.Score, true
}

// First returns the lowest member, or nil.
func (z *ZSet) First() *ZNode { return z.head.next }

// Last returns the highest member, or nil.
func (z *ZSet) Last() *ZNode { return z.tail }

func zLess(a *ZNode, score float64, member string) bool {
	return a.Score < score || (a.Score == score && a.Member < member)
}

func randomLevel() int {
	l := 1
	for l < zMaxLevel && rand.Uint32()&0xffff < 0xffff/4 {
		l++
	}
	return l
}

// Add sets the score of m (copied if new) and reports whether m is new.
func (z *ZSet) Add(m []byte, score float64) (added bool) {
	if n := z.lookup(string(m)); n != nil {
		z.SetScore(n, score)
		return false
	}
	z.Insert(string(m), score)
	return true
}

// Insert adds member m, which must not be present, and returns its node.
func (z *ZSet) Insert(m string, score float64) *ZNode {
	l := CurrentLimits()
	if !z.big && (len(z.all)+1 > l.ZSetMaxListpackEntries || len(m) > l.ZSetMaxListpackValue) {
		z.big = true
	}
	n := newZNode(m, randomLevel())
	z.link(n, z.canon(score), len(z.all))
	n.setIndex(len(z.all))
	z.all = append(z.all, n)
	if z.dict != nil {
		z.dict[m] = n
	} else if len(z.all) >= zDictMin {
		z.dict = make(map[string]*ZNode, len(z.all))
		for _, x := range z.all {
			z.dict[x.Member] = x
		}
	}
	z.bytes += len(m)
	return n
}

// Allocation classes of newZNode: a node and the links of its levels 1..k-1.
type (
	zNode2 struct {
		n  ZNode
		up [1]zLevel
	}
	zNode4 struct {
		n  ZNode
		up [3]zLevel
	}
	zNode8 struct {
		n  ZNode
		up [7]zLevel
	}
	zNode16 struct {
		n  ZNode
		up [15]zLevel
	}
	zNode32 struct {
		n  ZNode
		up [zMaxLevel - 1]zLevel
	}
)

// newZNode allocates a node of h levels together with its links, in the
// smallest class that holds them; a node keeps its height for life.
func newZNode(m string, h int) *ZNode {
	var n *ZNode
	switch {
	case h <= 1:
		n = &ZNode{}
	case h <= 2:
		n = &new(zNode2).n
	case h <= 4:
		n = &new(zNode4).n
	case h <= 8:
		n = &new(zNode8).n
	case h <= 16:
		n = &new(zNode16).n
	default:
		n = &new(zNode32).n
	}
	n.Member, n.h = m, uint8(h)
	return n
}

// link puts n into the skiplist, which holds length other nodes, at score.
// The search keeps, per level, the last link before n's place and the rank
// reached there; level 0 needs only the node, since its span is always 1.
func (z *ZSet) link(n *ZNode, score float64, length int) {
	var update [zMaxLevel]*zLevel
	var rank [zMaxLevel]int
	h := int(n.h)
	if h > int(z.head.h) {
		z.growHead(h)
	}
	x := z.head
	r := 0
	for i := z.level - 1; i >= 1; i-- {
		l := x.up(i)
		for l.next != nil && zLess(l.next, score, n.Member) {
			r += l.span
			x = l.next
			l = x.up(i)
		}
		rank[i] = r
		update[i] = l
	}
	for x.next != nil && zLess(x.next, score, n.Member) {
		r++
		x = x.next
	}
	if h > z.level {
		for i := z.level; i < h; i++ {
			update[i] = z.head.up(i)
			update[i].span = length
			rank[i] = 0
		}
		z.level = h
	}
	n.Score = score
	n.next = x.next
	x.next = n
	for i := 1; i < h; i++ {
		u, l := update[i], n.up(i)
		l.next = u.next
		u.next = n
		l.span = u.span - (r - rank[i])
		u.span = r - rank[i] + 1
	}
	for i := h; i < z.level; i++ {
		update[i].span++
	}
	if x != z.head {
		n.back = x
	} else {
		n.back = nil
	}
	if n.next != nil {
		n.next.back = n
	} else {
		z.tail = n
	}
}

// unlink takes n out of the skiplist only. Its level-0 predecessor is
// n.back, so only levels 1 and up are searched.
func (z *ZSet) unlink(n *ZNode) {
	x := z.head
	for i := z.level - 1; i >= 1; i-- {
		l := x.up(i)
		for l.next != nil && zLess(l.next, n.Score, n.Member) {
			x = l.next
			l = x.up(i)
		}
		if l.next == n {
			nl := n.up(i)
			l.span += nl.span - 1
			l.next = nl.next
		} else {
			l.span--
		}
	}
	prev := n.back
	if prev == nil {
		prev = z.head
	}
	prev.next = n.next
	if n.next != nil {
		n.next.back = n.back
	} else {
		z.tail = n.back
	}
	for z.level > 1 && z.head.up(z.level-1).next == nil {
		z.level--
	}
}

// canon returns the score as the encoding keeps it: a listpack stores
// scores as text, which turns -0 into 0; a skiplist keeps the double.
func (z *ZSet) canon(score float64) float64 {
	if !z.big && score == 0 {
		return 0
	}
	return score
}

// SetScore changes the score of n, moving it only when its order changes.
func (z *ZSet) SetScore(n *ZNode, score float64) {
	score = z.canon(score)
	if score == n.Score && math.Signbit(score) == math.Signbit(n.Score) {
		return
	}
	prev, next := n.back, n.next
	if (prev == nil || zLess(prev, score, n.Member)) &&
		(next == nil || !zLess(next, score, n.Member)) {
		n.Score = score
		return
	}
	z.unlink(n)
	z.link(n, score, len(z.all)-1)
}

// Remove deletes member m and reports whether it was present.
func (z *ZSet) Remove(m []byte) bool {
	n := z.lookup(string(m))
	if n == nil {
		return false
	}
	z.RemoveNode(n)
	return true
}

// RemoveNode deletes n. Its Member and Score stay readable.
func (z *ZSet) RemoveNode(n *ZNode) {
	z.unlink(n)
	if z.dict != nil {
		delete(z.dict, n.Member)
	}
	last := len(z.all) - 1
	if i := n.index(); i != last {
		z.all[i] = z.all[last]
		z.all[i].setIndex(i)
	}
	z.all[last] = nil
	z.all = z.all[:last]
	z.bytes -= len(n.Member)
	n.next = nil
	n.back = nil
}

// Rank returns the 0-based position of n in ascending order.
func (z *ZSet) Rank(n *ZNode) int {
	rank := 0
	x := z.head
	for i := z.level - 1; i >= 1; i-- {
		l := x.up(i)
		for l.next != nil && (l.next == n || zLess(l.next, n.Score, n.Member)) {
			rank += l.span
			x = l.next
			if x == n {
				return rank - 1
			}
			l = x.up(i)
		}
	}
	for x != n && x.next != nil {
		rank++
		x = x.next
	}
	return rank - 1
}

// ByRank returns the node at 0-based position r, or nil.
func (z *ZSet) ByRank(r int) *ZNode {
	if r < 0 || r >= len(z.all) {
		return nil
	}
	target := r + 1
	traversed := 0
	x := z.head
	for i := z.level - 1; i >= 1; i-- {
		l := x.up(i)
		for l.next != nil && traversed+l.span <= target {
			traversed += l.span
			x = l.next
			l = x.up(i)
		}
		if traversed == target {
			return x
		}
	}
	for ; traversed < target && x != nil; traversed++ {
		x = x.next
	}
	return x
}

// Random returns a uniformly random member; the set must not be empty.
func (z *ZSet) Random() *ZNode { return z.all[rand.IntN(len(z.all))] }

// ScoreRange is a score interval; Ex marks an open end ("(" in commands).
type ScoreRange struct {
	Min, Max     float64
	MinEx, MaxEx bool
}

func (r *ScoreRange) aboveMin(s float64) bool {
	if r.MinEx {
		return s > r.Min
	}
	return s >= r.Min
}

func (r *ScoreRange) belowMax(s float64) bool {
	if r.MaxEx {
		return s < r.Max
	}
	return s <= r.Max
}

// Empty reports whether no score can fall in r.
func (r *ScoreRange) Empty() bool {
	return r.Min > r.Max || (r.Min == r.Max && (r.MinEx || r.MaxEx)) || math.IsNaN(r.Min) || math.IsNaN(r.Max)
}

// Contains reports whether s is in r.
func (r *ScoreRange) Contains(s float64) bool { return r.aboveMin(s) && r.belowMax(s) }

// FirstInScore returns the lowest member whose score is in r, or nil.
func (z *ZSet) FirstInScore(r *ScoreRange) *ZNode {
	if r.Empty() {
		return nil
	}
	x, _ := z.lastWhere(func(n *ZNode) bool { return !r.aboveMin(n.Score) })
	x = x.next
	if x == nil || !r.belowMax(x.Score) {
		return nil
	}
	return x
}

// lastWhere returns the last node for which in holds, or the head when it
// holds for none, and the number of nodes up to it; in must hold for a
// prefix of the set and fail after it.
func (z *ZSet) lastWhere(in func(*ZNode) bool) (*ZNode, int) {
	x := z.head
	rank := 0
	for i := z.level - 1; i >= 1; i-- {
		l := x.up(i)
		for l.next != nil && in(l.next) {
			rank += l.span
			x = l.next
			l = x.up(i)
		}
	}
	for x.next != nil && in(x.next) {
		rank++
		x = x.next
	}
	return x, rank
}

// ZSpan is the run of members a range selects, in set order: the first and
// last node and their 0-based ranks. First and Last are nil when the range
// selects nothing.
type ZSpan struct {
	First, Last         *ZNode
	FirstRank, LastRank int
}

// Len returns the number of members in s.
func (s ZSpan) Len() int {
	if s.First == nil || s.Last == nil {
		return 0
	}
	return max(s.LastRank-s.FirstRank+1, 0)
}

// ScoreSpan returns the members whose score is in r, found with two
// descents that count ranks on the way (no separate Rank lookups).
func (z *ZSet) ScoreSpan(r *ScoreRange) ZSpan {
	if r.Empty() {
		return ZSpan{}
	}
	a, ra := z.lastWhere(func(n *ZNode) bool { return !r.aboveMin(n.Score) })
	if a.next == nil || !r.belowMax(a.next.Score) {
		return ZSpan{}
	}
	b, rb := z.lastWhere(func(n *ZNode) bool { return r.belowMax(n.Score) })
	return ZSpan{First: a.next, FirstRank: ra, Last: b, LastRank: rb - 1}
}

// LexSpan returns the members inside r; see FirstInLex for sets whose
// scores differ.
func (z *ZSet) LexSpan(r *LexRange) ZSpan {
	if r.Empty() {
		return ZSpan{}
	}
	if !z.big {
		// At most zset-max-listpack-entries members: ranking them is cheap.
		f, l := z.FirstInLex(r), z.LastInLex(r)
		if f == nil || l == nil {
			return ZSpan{}
		}
		return ZSpan{First: f, FirstRank: z.Rank(f), Last: l, LastRank: z.Rank(l)}
	}
	a, ra := z.lastWhere(func(n *ZNode) bool { return !r.aboveMin(n.Member) })
	if a.next == nil || !r.belowMax(a.next.Member) {
		return ZSpan{}
	}
	b, rb := z.lastWhere(func(n *ZNode) bool { return r.belowMax(n.Member) })
	return ZSpan{First: a.next, FirstRank: ra, Last: b, LastRank: rb - 1}
}

// LastInScore returns the highest member whose score is in r, or nil.
func (z *ZSet) LastInScore(r *ScoreRange) *ZNode {
	if r.Empty() {
		return nil
	}
	x, _ := z.lastWhere(func(n *ZNode) bool { return r.belowMax(n.Score) })
	if x == z.head || !r.aboveMin(x.Score) {
		return nil
	}
	return x
}

// LexBound is one end of a lexicographic range: Inf is -1 for "-", +1 for
// "+", and 0 for a value that Ex marks as exclusive ("(") or not ("[").
type LexBound struct {
	Inf   int8
	Value string
	Ex    bool
}

// LexRange is a range of members, meaningful when all scores are equal.
type LexRange struct{ Min, Max LexBound }

func (r *LexRange) aboveMin(m string) bool {
	switch r.Min.Inf {
	case -1:
		return true
	case 1:
		return false
	}
	if r.Min.Ex {
		return m > r.Min.Value
	}
	return m >= r.Min.Value
}

func (r *LexRange) belowMax(m string) bool {
	switch r.Max.Inf {
	case 1:
		return true
	case -1:
		return false
	}
	if r.Max.Ex {
		return m < r.Max.Value
	}
	return m <= r.Max.Value
}

// Empty reports whether no member can fall in r.
func (r *LexRange) Empty() bool {
	if r.Min.Inf == 1 || r.Max.Inf == -1 {
		return true
	}
	if r.Min.Inf == 0 && r.Max.Inf == 0 {
		return r.Min.Value > r.Max.Value || (r.Min.Value == r.Max.Value && (r.Min.Ex || r.Max.Ex))
	}
	return false
}

// Contains reports whether m is in r.
func (r *LexRange) Contains(m string) bool { return r.aboveMin(m) && r.belowMax(m) }

// FirstInLex returns the first member (in set order) inside r, or nil.
//
// Lex ranges are defined only when all scores are equal. For other sets the
// answer depends on how the search walks the set; a small set is walked
// from one end like redis-server walks a listpack, so that replies match
// it exactly and do not depend on the skiplist's random levels.
func (z *ZSet) FirstInLex(r *LexRange) *ZNode {
	if r.Empty() {
		return nil
	}
	if !z.big {
		if z.tail == nil || !r.aboveMin(z.tail.Member) || !r.belowMax(z.head.next.Member) {
			return nil
		}
		for x := z.head.next; x != nil; x = x.next {
			if r.aboveMin(x.Member) {
				if r.belowMax(x.Member) {
					return x
				}
				return nil
			}
		}
		return nil
	}
	x, _ := z.lastWhere(func(n *ZNode) bool { return !r.aboveMin(n.Member) })
	x = x.next
	if x == nil || !r.belowMax(x.Member) {
		return nil
	}
	return x
}

// LastInLex returns the last member (in set order) inside r, or nil. See
// FirstInLex for sets whose scores differ.
func (z *ZSet) LastInLex(r *LexRange) *ZNode {
	if r.Empty() {
		return nil
	}
	if !z.big {
		if z.tail == nil || !r.aboveMin(z.tail.Member) || !r.belowMax(z.head.next.Member) {
			return nil
		}
		for x := z.tail; x != nil; x = x.back {
			if r.belowMax(x.Member) {
				if r.aboveMin(x.Member) {
					return x
				}
				return nil
			}
		}
		return nil
	}
	x, _ := z.lastWhere(func(n *ZNode) bool { return r.belowMax(n.Member) })
	if x == z.head || !r.aboveMin(x.Member) {
		return nil
	}
	return x
}

// Normalize gives a freshly built set the encoding redis-server would pick
// for its contents (used for the destinations of ZUNIONSTORE and friends,
// which Redis converts back to a listpack when they fit).
func (z *ZSet) Normalize() {
	l := CurrentLimits()
	z.big = len(z.all) > l.ZSetMaxListpackEntries
	if !z.big {
		for _, n := range z.all {
			if len(n.Member) > l.ZSetMaxListpackValue {
				z.big = true
				break
			}
		}
	}
	if !z.big {
		for _, n := range z.all {
			n.Score = z.canon(n.Score)
		}
	}
}

// Scan visits about count members from cursor and returns the cursor to
// continue from (0 when done). A listpack-encoded set is returned whole in
// order, as redis-server does.
func (z *ZSet) Scan(cursor uint64, count int, fn func(n *ZNode)) uint64 {
	if !z.big {
		for n := z.First(); n != nil; n = n.Next() {
			fn(n)
		}
		return 0
	}
	return scanDense(len(z.all), cursor, count, func(i int) { fn(z.all[i]) })
}
