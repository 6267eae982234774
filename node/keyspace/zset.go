package keyspace

import (
	"math"
	"math/rand/v2"
)

// zMaxLevel bounds the skiplist height; with p = 1/4 it is enough for 2^64
// elements.
const zMaxLevel = 32

// ZNode is one member of a sorted set. Member and Score are read-only for
// callers: change a score with ZSet.SetScore.
type ZNode struct {
	Member string
	Score  float64
	back   *ZNode
	pos    int // index in ZSet.all
	lv     []zLevel
}

type zLevel struct {
	next *ZNode
	span int // number of level-0 steps this link jumps over
}

// Next returns the following member in (score, member) order, or nil.
func (n *ZNode) Next() *ZNode { return n.lv[0].next }

// Prev returns the preceding member, or nil.
func (n *ZNode) Prev() *ZNode { return n.back }

// ZSet is the value of a sorted set key: a skiplist whose links count the
// elements they jump over (so rank and index lookups are O(log n)), a map
// from member to node for O(1) scores, and a dense array of nodes for O(1)
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

// NewZSet returns an empty sorted set.
func NewZSet() *ZSet {
	return &ZSet{
		head:  &ZNode{lv: make([]zLevel, zMaxLevel)},
		level: 1,
		dict:  make(map[string]*ZNode),
	}
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
func (z *ZSet) Get(m []byte) *ZNode { return z.dict[string(m)] }

// Score returns the score of m.
func (z *ZSet) Score(m []byte) (float64, bool) {
	n := z.dict[string(m)]
	if n == nil {
		return 0, false
	}
	return n.Score, true
}

// First returns the lowest member, or nil.
func (z *ZSet) First() *ZNode { return z.head.lv[0].next }

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
	if n := z.dict[string(m)]; n != nil {
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
	lvl := randomLevel()
	n := newZNode(m, lvl)
	z.linkLevel(n, z.canon(score), len(z.all), lvl)
	n.pos = len(z.all)
	z.all = append(z.all, n)
	z.dict[m] = n
	z.bytes += len(m)
	return n
}

// link puts n into the skiplist, which holds length other nodes, at score
// with a fresh height.
func (z *ZSet) link(n *ZNode, score float64, length int) {
	z.linkLevel(n, score, length, randomLevel())
}

// newZNode allocates a node together with room for lvl levels, so that a
// walk through the list touches one object per node, not two. The levels
// come first: for the common one- and two-level nodes, level 0, the member
// and the score then share a cache line.
func newZNode(m string, lvl int) *ZNode {
	switch {
	case lvl <= 1:
		p := &struct {
			a [1]zLevel
			n ZNode
		}{}
		p.n.Member, p.n.lv = m, p.a[:0]
		return &p.n
	case lvl <= 2:
		p := &struct {
			a [2]zLevel
			n ZNode
		}{}
		p.n.Member, p.n.lv = m, p.a[:0]
		return &p.n
	case lvl <= 4:
		p := &struct {
			a [4]zLevel
			n ZNode
		}{}
		p.n.Member, p.n.lv = m, p.a[:0]
		return &p.n
	}
	return &ZNode{Member: m}
}

// linkLevel is link with a given height.
func (z *ZSet) linkLevel(n *ZNode, score float64, length int, lvl int) {
	var update [zMaxLevel]*ZNode
	var rank [zMaxLevel]int
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		if i < z.level-1 {
			rank[i] = rank[i+1]
		}
		for x.lv[i].next != nil && zLess(x.lv[i].next, score, n.Member) {
			rank[i] += x.lv[i].span
			x = x.lv[i].next
		}
		update[i] = x
	}
	if lvl > z.level {
		for i := z.level; i < lvl; i++ {
			rank[i] = 0
			update[i] = z.head
			z.head.lv[i].span = length
		}
		z.level = lvl
	}
	n.Score = score
	if cap(n.lv) >= lvl {
		n.lv = n.lv[:lvl]
	} else {
		n.lv = make([]zLevel, lvl)
	}
	for i := 0; i < lvl; i++ {
		n.lv[i].next = update[i].lv[i].next
		update[i].lv[i].next = n
		n.lv[i].span = update[i].lv[i].span - (rank[0] - rank[i])
		update[i].lv[i].span = rank[0] - rank[i] + 1
	}
	for i := lvl; i < z.level; i++ {
		update[i].lv[i].span++
	}
	if update[0] != z.head {
		n.back = update[0]
	} else {
		n.back = nil
	}
	if n.lv[0].next != nil {
		n.lv[0].next.back = n
	} else {
		z.tail = n
	}
}

// unlink takes n out of the skiplist only.
func (z *ZSet) unlink(n *ZNode) {
	var update [zMaxLevel]*ZNode
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		for x.lv[i].next != nil && x.lv[i].next != n && zLess(x.lv[i].next, n.Score, n.Member) {
			x = x.lv[i].next
		}
		update[i] = x
	}
	for i := 0; i < z.level; i++ {
		if update[i].lv[i].next == n {
			update[i].lv[i].span += n.lv[i].span - 1
			update[i].lv[i].next = n.lv[i].next
		} else {
			update[i].lv[i].span--
		}
	}
	if n.lv[0].next != nil {
		n.lv[0].next.back = n.back
	} else {
		z.tail = n.back
	}
	for z.level > 1 && z.head.lv[z.level-1].next == nil {
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
	prev, next := n.back, n.lv[0].next
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
	n := z.dict[string(m)]
	if n == nil {
		return false
	}
	z.RemoveNode(n)
	return true
}

// RemoveNode deletes n.
func (z *ZSet) RemoveNode(n *ZNode) {
	z.unlink(n)
	delete(z.dict, n.Member)
	last := len(z.all) - 1
	if n.pos != last {
		z.all[n.pos] = z.all[last]
		z.all[n.pos].pos = n.pos
	}
	z.all[last] = nil
	z.all = z.all[:last]
	z.bytes -= len(n.Member)
	n.lv = nil
	n.back = nil
}

// Rank returns the 0-based position of n in ascending order.
func (z *ZSet) Rank(n *ZNode) int {
	rank := 0
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		for x.lv[i].next != nil && (x.lv[i].next == n || zLess(x.lv[i].next, n.Score, n.Member)) {
			rank += x.lv[i].span
			x = x.lv[i].next
		}
		if x == n {
			return rank - 1
		}
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
	for i := z.level - 1; i >= 0; i-- {
		for x.lv[i].next != nil && traversed+x.lv[i].span <= target {
			traversed += x.lv[i].span
			x = x.lv[i].next
		}
		if traversed == target {
			return x
		}
	}
	return nil
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
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		for x.lv[i].next != nil && !r.aboveMin(x.lv[i].next.Score) {
			x = x.lv[i].next
		}
	}
	x = x.lv[0].next
	if x == nil || !r.belowMax(x.Score) {
		return nil
	}
	return x
}

// LastInScore returns the highest member whose score is in r, or nil.
func (z *ZSet) LastInScore(r *ScoreRange) *ZNode {
	if r.Empty() {
		return nil
	}
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		for x.lv[i].next != nil && r.belowMax(x.lv[i].next.Score) {
			x = x.lv[i].next
		}
	}
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
		if z.tail == nil || !r.aboveMin(z.tail.Member) || !r.belowMax(z.head.lv[0].next.Member) {
			return nil
		}
		for x := z.head.lv[0].next; x != nil; x = x.lv[0].next {
			if r.aboveMin(x.Member) {
				if r.belowMax(x.Member) {
					return x
				}
				return nil
			}
		}
		return nil
	}
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		for x.lv[i].next != nil && !r.aboveMin(x.lv[i].next.Member) {
			x = x.lv[i].next
		}
	}
	x = x.lv[0].next
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
		if z.tail == nil || !r.aboveMin(z.tail.Member) || !r.belowMax(z.head.lv[0].next.Member) {
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
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		for x.lv[i].next != nil && r.belowMax(x.lv[i].next.Member) {
			x = x.lv[i].next
		}
	}
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
