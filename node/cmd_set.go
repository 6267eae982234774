package node

import (
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/slotd/slotd/node/keyspace"
)

func registerSets(t Table) {
	t.Add(&Command{Name: "sadd", Arity: -3, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"write", "set", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RW", "insert"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdSAdd})
	t.Add(&Command{Name: "srem", Arity: -3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"write", "set", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RW", "delete"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdSRem})
	t.Add(&Command{Name: "sismember", Arity: 3, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "set", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RO"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdSIsMember})
	t.Add(&Command{Name: "smismember", Arity: -3, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "set", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdSMIsMember})
	t.Add(&Command{Name: "scard", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "set", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RO"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdSCard})
	t.Add(&Command{Name: "smembers", Arity: 2, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "set", "slow"}, Tips: []string{"nondeterministic_output_order"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdSMembers})
	t.Add(&Command{Name: "spop", Arity: -2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"write", "set", "fast"}, Tips: []string{"nondeterministic_output"}, KeySpecs: []KeySpec{{Flags: []string{"RW", "access", "delete"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdSPop})
	t.Add(&Command{Name: "srandmember", Arity: -2, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "set", "slow"}, Tips: []string{"nondeterministic_output"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdSRandMember})
	t.Add(&Command{Name: "smove", Arity: 4, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 2, Step: 1, ACL: []string{"write", "set", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RW", "access", "delete"}, BeginIndex: 1, KeyStep: 1}, {Flags: []string{"RW", "insert"}, BeginIndex: 2, KeyStep: 1}}, Handler: cmdSMove})
	t.Add(&Command{Name: "sinter", Arity: -2, Flags: FlagReadonly, FirstKey: 1, LastKey: -1, Step: 1, ACL: []string{"read", "set", "slow"}, Tips: []string{"nondeterministic_output_order"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, RangeLast: -1, KeyStep: 1, Limit: 0}}, Handler: cmdSInter})
	t.Add(&Command{Name: "sintercard", Arity: -3, Flags: FlagReadonly, Keys: numKeysAt(1), ACL: []string{"read", "set", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyNum: true, KeyNumFirst: 1, KeyStep: 1}}, Handler: cmdSInterCard})
	t.Add(&Command{Name: "sinterstore", Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: -1, Step: 1, ACL: []string{"write", "set", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RW", "update"}, BeginIndex: 1, KeyStep: 1}, {Flags: []string{"RO", "access"}, BeginIndex: 2, RangeLast: -1, KeyStep: 1, Limit: 0}}, Handler: cmdSInterStore})
	t.Add(&Command{Name: "sunion", Arity: -2, Flags: FlagReadonly, FirstKey: 1, LastKey: -1, Step: 1, ACL: []string{"read", "set", "slow"}, Tips: []string{"nondeterministic_output_order"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, RangeLast: -1, KeyStep: 1, Limit: 0}}, Handler: cmdSUnion})
	t.Add(&Command{Name: "sunionstore", Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: -1, Step: 1, ACL: []string{"write", "set", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"OW", "update"}, BeginIndex: 1, KeyStep: 1}, {Flags: []string{"RO", "access"}, BeginIndex: 2, RangeLast: -1, KeyStep: 1, Limit: 0}}, Handler: cmdSUnionStore})
	t.Add(&Command{Name: "sdiff", Arity: -2, Flags: FlagReadonly, FirstKey: 1, LastKey: -1, Step: 1, ACL: []string{"read", "set", "slow"}, Tips: []string{"nondeterministic_output_order"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, RangeLast: -1, KeyStep: 1, Limit: 0}}, Handler: cmdSDiff})
	t.Add(&Command{Name: "sdiffstore", Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: -1, Step: 1, ACL: []string{"write", "set", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"OW", "update"}, BeginIndex: 1, KeyStep: 1}, {Flags: []string{"RO", "access"}, BeginIndex: 2, RangeLast: -1, KeyStep: 1, Limit: 0}}, Handler: cmdSDiffStore})
	t.Add(&Command{Name: "sscan", Arity: -3, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "set", "slow"}, Tips: []string{"nondeterministic_output"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdSScan})
}

// numKeysAt returns a Keys function for commands whose argument at idx is
// a key count followed by that many keys (SINTERCARD, ZUNION, ZMPOP...).
// Extra fixed keys (the destination of ZUNIONSTORE) are listed in pre. A
// malformed count yields no keys: the handler rejects the call before it
// touches any key.
func numKeysAt(idx int, pre ...int) func(args [][]byte) []int {
	return func(args [][]byte) []int {
		if idx >= len(args) {
			return nil
		}
		n, ok := ParseInt(args[idx])
		if !ok || n <= 0 || n > int64(len(args)-idx-1) {
			return nil
		}
		out := make([]int, 0, len(pre)+int(n))
		out = append(out, pre...)
		for i := 0; i < int(n); i++ {
			out = append(out, idx+1+i)
		}
		return out
	}
}

// Reply texts of the set and sorted set commands.
const (
	errNotPositive    = "ERR value is out of range, must be positive"
	errNumKeysZero    = "ERR numkeys should be greater than 0"
	errNumKeysTooMany = "ERR Number of keys can't be greater than number of args"
	errLimitNegative  = "ERR LIMIT can't be negative"
	errRandRange      = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
)

// readSet returns the set at key (nil if missing); ok is false after a
// WRONGTYPE reply.
func readSet(x *Ctx, key []byte) (*keyspace.Set, bool) {
	e, ok := x.ReadKind(key, keyspace.KindSet)
	if !ok || e == nil {
		return nil, ok
	}
	return e.Obj().(*keyspace.Set), true
}

func writeSet(x *Ctx, key []byte) (*keyspace.Entry, bool) {
	return x.WriteKind(key, keyspace.KindSet)
}

// storeSet makes s the value of key, or deletes key when s is empty.
func storeSet(x *Ctx, key []byte, s *keyspace.Set) {
	if s.Len() == 0 {
		x.Del(key)
		return
	}
	x.Put(key, keyspace.NewObject(s))
}

// replySet writes s as a set reply in SMEMBERS order.
func replySet(x *Ctx, s *keyspace.Set) {
	x.W.Set(s.Len())
	s.Each(func(m []byte) bool { x.W.Bulk(m); return true })
}

func cmdSAdd(x *Ctx) {
	key := x.Args[1]
	e, ok := writeSet(x, key)
	if !ok {
		return
	}
	var s *keyspace.Set
	if e == nil {
		s = keyspace.NewSet()
	} else {
		s = e.Obj().(*keyspace.Set)
	}
	var added int64
	for _, m := range x.Args[2:] {
		if s.Add(m) {
			added++
		}
	}
	if e == nil {
		x.Put(key, keyspace.NewObject(s))
	} else if added > 0 {
		x.Modified(key)
	}
	x.W.Int(added)
}

func cmdSRem(x *Ctx) {
	key := x.Args[1]
	e, ok := writeSet(x, key)
	if !ok {
		return
	}
	if e == nil {
		x.W.Int(0)
		return
	}
	s := e.Obj().(*keyspace.Set)
	var removed int64
	for _, m := range x.Args[2:] {
		if s.Remove(m) {
			removed++
			if s.Len() == 0 {
				break
			}
		}
	}
	if s.Len() == 0 {
		x.Del(key)
	} else if removed > 0 {
		x.Modified(key)
	}
	x.W.Int(removed)
}

func cmdSIsMember(x *Ctx) {
	s, ok := readSet(x, x.Args[1])
	if !ok {
		return
	}
	if s != nil && s.Has(x.Args[2]) {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
}

func cmdSMIsMember(x *Ctx) {
	s, ok := readSet(x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, m := range x.Args[2:] {
		if s != nil && s.Has(m) {
			x.W.Int(1)
		} else {
			x.W.Int(0)
		}
	}
}

func cmdSCard(x *Ctx) {
	s, ok := readSet(x, x.Args[1])
	if !ok {
		return
	}
	if s == nil {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(s.Len()))
}

func cmdSMembers(x *Ctx) {
	s, ok := readSet(x, x.Args[1])
	if !ok {
		return
	}
	if s == nil {
		x.W.Set(0)
		return
	}
	replySet(x, s)
}

func cmdSPop(x *Ctx) {
	if len(x.Args) > 3 {
		x.W.Error(ErrSyntax)
		return
	}
	key := x.Args[1]
	count := int64(-1)
	if len(x.Args) == 3 {
		n, ok := ParseInt(x.Args[2])
		if !ok || n < 0 {
			x.W.Error(errNotPositive)
			return
		}
		count = n
	}
	e, ok := writeSet(x, key)
	if !ok {
		return
	}
	if e == nil {
		if count < 0 {
			x.W.Null()
		} else {
			x.W.Set(0)
		}
		return
	}
	s := e.Obj().(*keyspace.Set)
	var buf [24]byte
	// The members popped at random are propagated as SREM (the whole set
	// as DEL), so that a replay removes the same ones.
	feedOn := x.S.feed.on.Load()
	if count < 0 {
		i := s.RandomIndex()
		m := s.At(i, buf[:])
		x.W.Bulk(m)
		x.Propagate(sremArg, key, m)
		s.RemoveAt(i)
	} else {
		if count == 0 {
			x.W.Set(0)
			return
		}
		if count >= int64(s.Len()) {
			replySet(x, s)
			x.Del(key)
			x.Propagate(delArg, key)
			return
		}
		x.W.Set(int(count))
		var prop [][]byte
		for ; count > 0; count-- {
			i := s.RandomIndex()
			m := s.At(i, buf[:])
			x.W.Bulk(m)
			if feedOn {
				if len(prop) == 0 {
					prop = append(prop, sremArg, key)
				}
				prop = append(prop, append([]byte(nil), m...))
				if len(prop) == 2+spopBatch {
					x.Propagate(prop...)
					prop = prop[:0]
				}
			}
			s.RemoveAt(i)
		}
		if len(prop) > 0 {
			x.Propagate(prop...)
		}
		x.NoPropagate()
	}
	if s.Len() == 0 {
		x.Del(key)
	} else {
		x.Modified(key)
	}
}

var sremArg = []byte("SREM")

// spopBatch is how many members one propagated SREM removes, as in
// redis-server: a large SPOP becomes several SREMs inside MULTI/EXEC.
const spopBatch = 1024

func cmdSRandMember(x *Ctx) {
	if len(x.Args) > 3 {
		x.W.Error(ErrSyntax)
		return
	}
	if len(x.Args) == 2 {
		s, ok := readSet(x, x.Args[1])
		if !ok {
			return
		}
		if s == nil {
			x.W.Null()
			return
		}
		var buf [24]byte
		x.W.Bulk(s.At(s.RandomIndex(), buf[:]))
		return
	}
	n, ok := x.Int(2)
	if !ok {
		return
	}
	if n == -1<<63 {
		x.W.Error(errRandRange)
		return
	}
	s, ok := readSet(x, x.Args[1])
	if !ok {
		return
	}
	if s == nil || n == 0 {
		x.W.Array(0)
		return
	}
	var buf [24]byte
	size := s.Len()
	switch {
	case n < 0:
		x.W.Array(int(-n))
		for ; n < 0; n++ {
			x.W.Bulk(s.At(s.RandomIndex(), buf[:]))
		}
	case n >= int64(size):
		x.W.Array(size)
		s.Each(func(m []byte) bool { x.W.Bulk(m); return true })
	default:
		// Distinct members: a partial Fisher-Yates shuffle of positions.
		idx := make([]int, size)
		for i := range idx {
			idx[i] = i
		}
		x.W.Array(int(n))
		for i := 0; i < int(n); i++ {
			j := i + rand.IntN(size-i)
			idx[i], idx[j] = idx[j], idx[i]
			x.W.Bulk(s.At(idx[i], buf[:]))
		}
	}
}

func cmdSMove(x *Ctx) {
	src, dst, m := x.Args[1], x.Args[2], x.Args[3]
	se, ok := writeSet(x, src)
	if !ok {
		return
	}
	if se == nil {
		x.W.Int(0)
		return
	}
	de, ok := writeSet(x, dst)
	if !ok {
		return
	}
	s := se.Obj().(*keyspace.Set)
	if se == de {
		if s.Has(m) {
			x.W.Int(1)
		} else {
			x.W.Int(0)
		}
		return
	}
	if !s.Remove(m) {
		x.W.Int(0)
		return
	}
	if s.Len() == 0 {
		x.Del(src)
	} else {
		x.Modified(src)
	}
	if de == nil {
		d := keyspace.NewSet()
		d.Add(m)
		x.Put(dst, keyspace.NewObject(d))
	} else {
		de.Obj().(*keyspace.Set).Add(m)
		x.Modified(dst)
	}
	x.W.Int(1)
}

// readSets looks up every key (missing ones are nil); ok is false after a
// WRONGTYPE reply. Like redis-server it checks every key's type before
// computing anything.
func readSets(x *Ctx, keys [][]byte, write bool) ([]*keyspace.Set, bool) {
	sets := make([]*keyspace.Set, len(keys))
	for i, k := range keys {
		var e *keyspace.Entry
		var ok bool
		if write {
			e, ok = writeSet(x, k)
		} else {
			e, ok = x.ReadKind(k, keyspace.KindSet)
		}
		if !ok {
			return nil, false
		}
		if e != nil {
			sets[i] = e.Obj().(*keyspace.Set)
		}
	}
	return sets, true
}

// interSets calls fn for each member of the intersection of sets (nil
// entries are empty sets) until fn returns false.
func interSets(sets []*keyspace.Set, fn func(m []byte) bool) {
	for _, s := range sets {
		if s == nil {
			return
		}
	}
	sets = slices.Clone(sets)
	slices.SortFunc(sets, func(a, b *keyspace.Set) int { return a.Len() - b.Len() })
	sets[0].Each(func(m []byte) bool {
		for _, o := range sets[1:] {
			if !o.Has(m) {
				return true
			}
		}
		return fn(m)
	})
}

func cmdSInter(x *Ctx) {
	sets, ok := readSets(x, x.Args[1:], false)
	if !ok {
		return
	}
	// The count is known only at the end: reply into a buffer-free shape by
	// writing members first and the header in front of them afterwards.
	start := x.W.Len()
	n := 0
	interSets(sets, func(m []byte) bool { x.W.Bulk(m); n++; return true })
	body := append([]byte(nil), x.W.B[start:]...)
	x.W.Truncate(start)
	x.W.Set(n)
	x.W.Raw(body)
}

func cmdSInterCard(x *Ctx) {
	n, ok := ParseInt(x.Args[1])
	if !ok || n <= 0 {
		x.W.Error(errNumKeysZero)
		return
	}
	if n > int64(len(x.Args)-2) {
		x.W.Error(errNumKeysTooMany)
		return
	}
	keys := x.Args[2 : 2+n]
	limit, ok := parseCardLimit(x, 2+int(n))
	if !ok {
		return
	}
	sets, ok := readSets(x, keys, false)
	if !ok {
		return
	}
	var count int64
	interSets(sets, func([]byte) bool {
		count++
		return limit == 0 || count < limit
	})
	x.W.Int(count)
}

func cmdSInterStore(x *Ctx) {
	sets, ok := readSets(x, x.Args[2:], false)
	if !ok {
		return
	}
	res := keyspace.NewSet()
	interSets(sets, func(m []byte) bool { res.Add(m); return true })
	storeSet(x, x.Args[1], res)
	x.W.Int(int64(res.Len()))
}

// unionDiff computes the union (diff false) or the difference of the first
// set minus the others.
func unionDiff(sets []*keyspace.Set, diff bool) *keyspace.Set {
	res := keyspace.NewSet()
	if !diff {
		for _, s := range sets {
			if s != nil {
				s.Each(func(m []byte) bool { res.Add(m); return true })
			}
		}
		return res
	}
	if sets[0] == nil {
		return res
	}
	sets[0].Each(func(m []byte) bool {
		for _, o := range sets[1:] {
			if o != nil && o.Has(m) {
				return true
			}
		}
		res.Add(m)
		return true
	})
	return res
}

func cmdSUnion(x *Ctx) { setOp(x, false) }
func cmdSDiff(x *Ctx)  { setOp(x, true) }

func setOp(x *Ctx, diff bool) {
	sets, ok := readSets(x, x.Args[1:], false)
	if !ok {
		return
	}
	replySet(x, unionDiff(sets, diff))
}

func cmdSUnionStore(x *Ctx) { setOpStore(x, false) }
func cmdSDiffStore(x *Ctx)  { setOpStore(x, true) }

func setOpStore(x *Ctx, diff bool) {
	sets, ok := readSets(x, x.Args[2:], false)
	if !ok {
		return
	}
	res := unionDiff(sets, diff)
	storeSet(x, x.Args[1], res)
	x.W.Int(int64(res.Len()))
}

// scanArgs are the options of SSCAN/ZSCAN (and HSCAN).
type scanArgs struct {
	cursor  uint64
	count   int
	pattern []byte // nil: no MATCH
}

// parseScan parses "cursor [MATCH pattern] [COUNT count]" starting at
// args[2]; it replies and returns ok=false on error.
func parseScan(x *Ctx) (sa scanArgs, ok bool) {
	sa.count = 10
	if sa.cursor, ok = parseScanCursor(x.Args[2]); !ok {
		x.W.Error(errInvalidCursor)
		return sa, false
	}
	for i := 3; i < len(x.Args); i += 2 {
		if i+1 >= len(x.Args) {
			x.W.Error(ErrSyntax)
			return sa, false
		}
		switch {
		case equalFold(x.Args[i], "count"):
			n, ok := x.Int(i + 1)
			if !ok {
				return sa, false
			}
			if n < 1 {
				x.W.Error(ErrSyntax)
				return sa, false
			}
			sa.count = int(min(n, 1<<30))
		case equalFold(x.Args[i], "match"):
			sa.pattern = x.Args[i+1]
			if len(sa.pattern) == 1 && sa.pattern[0] == '*' {
				sa.pattern = nil
			}
		default:
			x.W.Error(ErrSyntax)
			return sa, false
		}
	}
	return sa, true
}

// replyScan writes a SCAN-style reply: the next cursor and the items,
// which are written by body and counted by n.
func replyScan(x *Ctx, cursor uint64, n int, body []byte) {
	x.W.Array(2)
	var tmp [24]byte
	x.W.Bulk(strconv.AppendUint(tmp[:0], cursor, 10))
	x.W.Array(n)
	x.W.Raw(body)
}

func cmdSScan(x *Ctx) {
	sa, ok := parseScan(x)
	if !ok {
		return
	}
	s, ok := readSet(x, x.Args[1])
	if !ok {
		return
	}
	if s == nil {
		replyScan(x, 0, 0, nil)
		return
	}
	var body []byte
	n := 0
	next := s.Scan(sa.cursor, sa.count, func(m []byte) {
		if sa.pattern != nil && !scanMatch(sa.pattern, m) {
			return
		}
		body = appendBulk(body, m)
		n++
	})
	replyScan(x, next, n, body)
}

func appendBulk(b, v []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(v)), 10)
	b = append(b, '\r', '\n')
	b = append(b, v...)
	return append(b, '\r', '\n')
}

// equalFold reports whether b equals the lower-case ASCII word s, ignoring
// case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// parseCardLimit reads the options of SINTERCARD and ZINTERCARD after the
// keys: only LIMIT <n>, n >= 0 (0 means no limit). It replies and returns
// ok=false on a bad option.
func parseCardLimit(x *Ctx, from int) (limit int64, ok bool) {
	for i := from; i < len(x.Args); i++ {
		if equalFold(x.Args[i], "limit") && i+1 < len(x.Args) {
			l, ok := ParseInt(x.Args[i+1])
			if !ok || l < 0 {
				x.W.Error(errLimitNegative)
				return 0, false
			}
			limit = l
			i++
			continue
		}
		x.W.Error(ErrSyntax)
		return 0, false
	}
	return limit, true
}
