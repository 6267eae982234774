package node

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/node/resp"
)

func registerZSets(t Table) {
	t.Add(&Command{Name: "zadd", Arity: -4, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"write", "sortedset", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RW", "update"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZAdd})
	t.Add(&Command{Name: "zrem", Arity: -3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"write", "sortedset", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RW", "delete"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZRem})
	t.Add(&Command{Name: "zcard", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RO"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZCard})
	t.Add(&Command{Name: "zcount", Arity: 4, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZCount})
	t.Add(&Command{Name: "zlexcount", Arity: 4, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZLexCount})
	t.Add(&Command{Name: "zscore", Arity: 3, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZScore})
	t.Add(&Command{Name: "zmscore", Arity: -3, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZMScore})
	t.Add(&Command{Name: "zincrby", Arity: 4, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"write", "sortedset", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RW", "access", "update"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZIncrBy})
	t.Add(&Command{Name: "zrank", Arity: 3, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZRank})
	t.Add(&Command{Name: "zrevrank", Arity: 3, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZRevRank})
	t.Add(&Command{Name: "zrange", Arity: -4, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZRange})
	t.Add(&Command{Name: "zrangestore", Arity: -5, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 2, Step: 1, ACL: []string{"write", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"OW", "update"}, BeginIndex: 1, KeyStep: 1}, {Flags: []string{"RO", "access"}, BeginIndex: 2, KeyStep: 1}}, Handler: cmdZRangeStore})
	t.Add(&Command{Name: "zrevrange", Arity: -4, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZRevRange})
	t.Add(&Command{Name: "zrangebyscore", Arity: -4, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZRangeByScore})
	t.Add(&Command{Name: "zrevrangebyscore", Arity: -4, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZRevRangeByScore})
	t.Add(&Command{Name: "zrangebylex", Arity: -4, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZRangeByLex})
	t.Add(&Command{Name: "zrevrangebylex", Arity: -4, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZRevRangeByLex})
	t.Add(&Command{Name: "zremrangebyrank", Arity: 4, Flags: FlagWrite, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"write", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RW", "delete"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZRemRangeByRank})
	t.Add(&Command{Name: "zremrangebyscore", Arity: 4, Flags: FlagWrite, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"write", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RW", "delete"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZRemRangeByScore})
	t.Add(&Command{Name: "zremrangebylex", Arity: 4, Flags: FlagWrite, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"write", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RW", "delete"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZRemRangeByLex})
	t.Add(&Command{Name: "zpopmin", Arity: -2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"write", "sortedset", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RW", "access", "delete"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZPopMin})
	t.Add(&Command{Name: "zpopmax", Arity: -2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"write", "sortedset", "fast"}, KeySpecs: []KeySpec{{Flags: []string{"RW", "access", "delete"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZPopMax})
	t.Add(&Command{Name: "zmpop", Arity: -4, Flags: FlagWrite, Keys: numKeysAt(1), ACL: []string{"write", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RW", "access", "delete"}, BeginIndex: 1, KeyNum: true, KeyNumFirst: 1, KeyStep: 1}}, Handler: cmdZMPop})
	t.Add(&Command{Name: "zrandmember", Arity: -2, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "slow"}, Tips: []string{"nondeterministic_output"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZRandMember})
	t.Add(&Command{Name: "zunion", Arity: -3, Flags: FlagReadonly, Keys: numKeysAt(1), ACL: []string{"read", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyNum: true, KeyNumFirst: 1, KeyStep: 1}}, Handler: cmdZUnion})
	t.Add(&Command{Name: "zinter", Arity: -3, Flags: FlagReadonly, Keys: numKeysAt(1), ACL: []string{"read", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyNum: true, KeyNumFirst: 1, KeyStep: 1}}, Handler: cmdZInter})
	t.Add(&Command{Name: "zdiff", Arity: -3, Flags: FlagReadonly, Keys: numKeysAt(1), ACL: []string{"read", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyNum: true, KeyNumFirst: 1, KeyStep: 1}}, Handler: cmdZDiff})
	t.Add(&Command{Name: "zunionstore", Arity: -4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Keys: numKeysAt(2, 1), ACL: []string{"write", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"OW", "update"}, BeginIndex: 1, KeyStep: 1}, {Flags: []string{"RO", "access"}, BeginIndex: 2, KeyNum: true, KeyNumFirst: 1, KeyStep: 1}}, Handler: cmdZUnionStore})
	t.Add(&Command{Name: "zinterstore", Arity: -4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Keys: numKeysAt(2, 1), ACL: []string{"write", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"OW", "update"}, BeginIndex: 1, KeyStep: 1}, {Flags: []string{"RO", "access"}, BeginIndex: 2, KeyNum: true, KeyNumFirst: 1, KeyStep: 1}}, Handler: cmdZInterStore})
	t.Add(&Command{Name: "zdiffstore", Arity: -4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Keys: numKeysAt(2, 1), ACL: []string{"write", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"OW", "update"}, BeginIndex: 1, KeyStep: 1}, {Flags: []string{"RO", "access"}, BeginIndex: 2, KeyNum: true, KeyNumFirst: 1, KeyStep: 1}}, Handler: cmdZDiffStore})
	t.Add(&Command{Name: "zintercard", Arity: -3, Flags: FlagReadonly, Keys: numKeysAt(1), ACL: []string{"read", "sortedset", "slow"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyNum: true, KeyNumFirst: 1, KeyStep: 1}}, Handler: cmdZInterCard})
	t.Add(&Command{Name: "zscan", Arity: -3, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "sortedset", "slow"}, Tips: []string{"nondeterministic_output"}, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, BeginIndex: 1, KeyStep: 1}}, Handler: cmdZScan})
}

// Reply texts of the sorted set commands.
const (
	errZAddXXNX      = "ERR XX and NX options at the same time are not compatible"
	errZAddGTLTNX    = "ERR GT, LT, and/or NX options at the same time are not compatible"
	errZAddIncrPairs = "ERR INCR option supports a single increment-element pair"
	errScoreNaN      = "ERR resulting score is not a number (NaN)"
	errMinMaxFloat   = "ERR min or max is not a float"
	errMinMaxLex     = "ERR min or max not valid string range item"
	errLimitBy       = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	errScoresLex     = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
	errWeightFloat   = "ERR weight value is not a float"
)

// parseFloatC parses b like C's strtod over the whole string: Go's
// ParseFloat plus hexadecimal numbers without a binary exponent. It reports
// underflow (a non-zero number that rounds to zero) and overflow.
func parseFloatC(b []byte) (f float64, rangeErr, ok bool) {
	s := string(b)
	if len(s) == 0 || strings.IndexByte(s, '_') >= 0 {
		return 0, false, false
	}
	t := strings.TrimLeft(s, "+-")
	if len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && !strings.ContainsAny(t, "pP") {
		s += "p0"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange {
			return f, true, true
		}
		return 0, false, false
	}
	if f == 0 && strings.ContainsAny(mantissa(t), "123456789abcdefABCDEF") {
		return 0, true, true
	}
	return f, false, true
}

// mantissa cuts the exponent off a number's text.
func mantissa(t string) string {
	if len(t) > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		if i := strings.IndexAny(t, "pP"); i >= 0 {
			return t[2:i]
		}
		return t[2:]
	}
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		return t[:i]
	}
	return t
}

// parseScore parses a score or increment as redis-server does for ZADD,
// ZINCRBY and WEIGHTS: no spaces, no NaN, no overflow or underflow.
func parseScore(b []byte) (float64, bool) {
	if len(b) == 0 || isSpace(b[0]) {
		return 0, false
	}
	f, rangeErr, ok := parseFloatC(b)
	if !ok || rangeErr || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// parseRangeFloat parses one end of a score range: strtod rules, so
// leading spaces are skipped, an empty string is 0 and out-of-range values
// saturate; NaN is refused.
func parseRangeFloat(b []byte) (float64, bool) {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, true
	}
	f, _, ok := parseFloatC(b)
	if !ok || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func parseScoreRange(min, max []byte) (r keyspace.ScoreRange, ok bool) {
	if len(min) > 0 && min[0] == '(' {
		r.MinEx, min = true, min[1:]
	}
	if len(max) > 0 && max[0] == '(' {
		r.MaxEx, max = true, max[1:]
	}
	var ok1, ok2 bool
	r.Min, ok1 = parseRangeFloat(min)
	r.Max, ok2 = parseRangeFloat(max)
	return r, ok1 && ok2
}

func parseLexBound(b []byte) (lb keyspace.LexBound, ok bool) {
	switch {
	case len(b) == 1 && b[0] == '-':
		lb.Inf = -1
	case len(b) == 1 && b[0] == '+':
		lb.Inf = 1
	case len(b) > 0 && (b[0] == '(' || b[0] == '['):
		lb.Ex = b[0] == '('
		lb.Value = string(b[1:])
	default:
		return lb, false
	}
	return lb, true
}

func parseLexRange(min, max []byte) (r keyspace.LexRange, ok bool) {
	var ok1, ok2 bool
	r.Min, ok1 = parseLexBound(min)
	r.Max, ok2 = parseLexBound(max)
	return r, ok1 && ok2
}

// readZSet returns the sorted set at key (nil if missing); ok is false
// after a WRONGTYPE reply.
func readZSet(x *Ctx, key []byte) (*keyspace.ZSet, bool) {
	e, ok := x.ReadKind(key, keyspace.KindZSet)
	if !ok || e == nil {
		return nil, ok
	}
	return e.Obj().(*keyspace.ZSet), true
}

func writeZSet(x *Ctx, key []byte) (*keyspace.ZSet, bool) {
	e, ok := x.WriteKind(key, keyspace.KindZSet)
	if !ok || e == nil {
		return nil, ok
	}
	return e.Obj().(*keyspace.ZSet), true
}

// storeZSet makes z (freshly built) the value of key with the encoding its
// contents call for, or deletes key when z is empty.
func storeZSet(x *Ctx, key []byte, z *keyspace.ZSet) {
	if z.Len() == 0 {
		x.Del(key)
		return
	}
	z.Normalize()
	x.Put(key, keyspace.NewObject(z))
}

// afterZRemove deletes key when z became empty and signals the change.
func afterZRemove(x *Ctx, key []byte, z *keyspace.ZSet, removed int) {
	if z.Len() == 0 {
		x.Del(key)
	} else if removed > 0 {
		x.Modified(key)
	}
}

// Flags of ZADD.
const (
	zaddNX = 1 << iota
	zaddXX
	zaddGT
	zaddLT
	zaddCH
	zaddIncr
)

func cmdZAdd(x *Ctx) {
	args := x.Args
	flags := 0
	i := 2
options:
	for ; i < len(args); i++ {
		switch {
		case equalFold(args[i], "nx"):
			flags |= zaddNX
		case equalFold(args[i], "xx"):
			flags |= zaddXX
		case equalFold(args[i], "gt"):
			flags |= zaddGT
		case equalFold(args[i], "lt"):
			flags |= zaddLT
		case equalFold(args[i], "ch"):
			flags |= zaddCH
		case equalFold(args[i], "incr"):
			flags |= zaddIncr
		default:
			break options
		}
	}
	rest := len(args) - i
	if rest == 0 || rest%2 != 0 {
		x.W.Error(ErrSyntax)
		return
	}
	if flags&zaddNX != 0 && flags&zaddXX != 0 {
		x.W.Error(errZAddXXNX)
		return
	}
	if (flags&zaddNX != 0 && flags&(zaddGT|zaddLT) != 0) || flags&(zaddGT|zaddLT) == zaddGT|zaddLT {
		x.W.Error(errZAddGTLTNX)
		return
	}
	if flags&zaddIncr != 0 && rest > 2 {
		x.W.Error(errZAddIncrPairs)
		return
	}
	var scoreBuf [16]float64
	scores := scoreBuf[:0]
	for j := i; j < len(args); j += 2 {
		f, ok := parseScore(args[j])
		if !ok {
			x.W.Error(ErrNotFloat)
			return
		}
		scores = append(scores, f)
	}
	zadd(x, flags, scores, args[i:])
}

// zadd applies ZADD (and ZINCRBY) once the arguments are checked: pairs
// holds score, member, ... and scores the parsed scores.
func zadd(x *Ctx, flags int, scores []float64, pairs [][]byte) {
	key := x.Args[1]
	incr := flags&zaddIncr != 0
	z, ok := writeZSet(x, key)
	if !ok {
		return
	}
	created := false
	if z == nil {
		if flags&zaddXX != 0 {
			if incr {
				x.W.Null()
			} else {
				x.W.Int(0)
			}
			return
		}
		z = keyspace.NewZSet()
		created = true
	}
	added, updated := 0, 0
	var result float64
	skipped := false
	for k, score := range scores {
		m := pairs[2*k+1]
		n := z.Get(m)
		if n == nil {
			if flags&zaddXX != 0 {
				skipped = true
				continue
			}
			z.Insert(string(m), score)
			added++
			result = score
			continue
		}
		if flags&zaddNX != 0 {
			skipped = true
			continue
		}
		cur := n.Score
		if incr {
			score += cur
			if math.IsNaN(score) {
				x.W.Error(errScoreNaN)
				return
			}
		}
		if (flags&zaddGT != 0 && score <= cur) || (flags&zaddLT != 0 && score >= cur) {
			skipped = true
			continue
		}
		result = score
		if score != cur {
			z.SetScore(n, score)
			updated++
		}
	}
	if created && z.Len() > 0 {
		x.Put(key, keyspace.NewObject(z))
	} else if added+updated > 0 {
		x.Modified(key)
	}
	switch {
	case incr && skipped:
		x.W.Null()
	case incr:
		if n := z.Get(pairs[1]); n != nil {
			result = n.Score
		}
		x.W.Double(result)
	case flags&zaddCH != 0:
		x.W.Int(int64(added + updated))
	default:
		x.W.Int(int64(added))
	}
}

func cmdZIncrBy(x *Ctx) {
	f, ok := parseScore(x.Args[2])
	if !ok {
		x.W.Error(ErrNotFloat)
		return
	}
	zadd(x, zaddIncr, []float64{f}, x.Args[2:4])
}

func cmdZRem(x *Ctx) {
	key := x.Args[1]
	z, ok := writeZSet(x, key)
	if !ok {
		return
	}
	if z == nil {
		x.W.Int(0)
		return
	}
	removed := 0
	for _, m := range x.Args[2:] {
		if z.Remove(m) {
			removed++
		}
	}
	afterZRemove(x, key, z, removed)
	x.W.Int(int64(removed))
}

func cmdZCard(x *Ctx) {
	z, ok := readZSet(x, x.Args[1])
	if !ok {
		return
	}
	if z == nil {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(z.Len()))
}

func cmdZScore(x *Ctx) {
	z, ok := readZSet(x, x.Args[1])
	if !ok {
		return
	}
	if z == nil {
		x.W.Null()
		return
	}
	if s, found := z.Score(x.Args[2]); found {
		x.W.Double(s)
	} else {
		x.W.Null()
	}
}

func cmdZMScore(x *Ctx) {
	z, ok := readZSet(x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, m := range x.Args[2:] {
		if z == nil {
			x.W.Null()
		} else if s, found := z.Score(m); found {
			x.W.Double(s)
		} else {
			x.W.Null()
		}
	}
}

func cmdZRank(x *Ctx)    { zrank(x, false) }
func cmdZRevRank(x *Ctx) { zrank(x, true) }

func zrank(x *Ctx, rev bool) {
	z, ok := readZSet(x, x.Args[1])
	if !ok {
		return
	}
	var n *keyspace.ZNode
	if z != nil {
		n = z.Get(x.Args[2])
	}
	if n == nil {
		x.W.Null()
		return
	}
	r := z.Rank(n)
	if rev {
		r = z.Len() - 1 - r
	}
	x.W.Int(int64(r))
}

func cmdZCount(x *Ctx) {
	r, ok := parseScoreRange(x.Args[2], x.Args[3])
	if !ok {
		x.W.Error(errMinMaxFloat)
		return
	}
	z, ok := readZSet(x, x.Args[1])
	if !ok {
		return
	}
	if z == nil {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(z.ScoreSpan(&r).Len()))
}

func cmdZLexCount(x *Ctx) {
	r, ok := parseLexRange(x.Args[2], x.Args[3])
	if !ok {
		x.W.Error(errMinMaxLex)
		return
	}
	z, ok := readZSet(x, x.Args[1])
	if !ok {
		return
	}
	if z == nil {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(z.LexSpan(&r).Len()))
}

// Kinds of ZRANGE.
const (
	byRank = iota
	byScore
	byLex
)

// zrangeSpec is a parsed ZRANGE-family request.
type zrangeSpec struct {
	by         int
	rev        bool
	withScores bool
	offset     int64
	limit      int64 // negative: no limit
	min, max   []byte
}

// zrangeParse parses ZRANGE's options from args[from:]; fixed says which
// legacy command is parsed (its kind and direction are given, and only
// WITHSCORES and LIMIT are accepted).
func zrangeParse(x *Ctx, sp *zrangeSpec, from int, legacy bool) bool {
	args := x.Args
	sp.limit = -1
	haveLimit := false
	for i := from; i < len(args); i++ {
		switch {
		case equalFold(args[i], "withscores"):
			sp.withScores = true
		case equalFold(args[i], "limit") && i+2 < len(args):
			off, ok := x.Int(i + 1)
			if !ok {
				return false
			}
			cnt, ok := x.Int(i + 2)
			if !ok {
				return false
			}
			sp.offset, sp.limit, haveLimit = off, cnt, true
			i += 2
		case !legacy && equalFold(args[i], "byscore") && sp.by == byRank:
			sp.by = byScore
		case !legacy && equalFold(args[i], "bylex") && sp.by == byRank:
			sp.by = byLex
		case !legacy && equalFold(args[i], "rev") && !sp.rev:
			sp.rev = true
		default:
			x.W.Error(ErrSyntax)
			return false
		}
	}
	if haveLimit && sp.by == byRank {
		x.W.Error(errLimitBy)
		return false
	}
	if sp.withScores && sp.by == byLex {
		x.W.Error(errScoresLex)
		return false
	}
	return true
}

// zrangeCollect finds the members a ZRANGE request selects and calls emit
// with their count and then each node in reply order. It replies with the
// parse errors of the range itself; ok is false then.
func zrangeCollect(x *Ctx, z *keyspace.ZSet, sp *zrangeSpec, count func(n int), emit func(n *keyspace.ZNode)) bool {
	min, max := sp.min, sp.max
	if sp.rev && sp.by != byRank {
		min, max = max, min
	}
	// span's ranks come from the searches that find its ends, so the count
	// and the first node to emit cost no further descents.
	var span keyspace.ZSpan
	switch sp.by {
	case byRank:
		start, ok1 := ParseInt(min)
		stop, ok2 := ParseInt(max)
		if !ok1 || !ok2 {
			x.W.Error(ErrNotInt)
			return false
		}
		if z == nil {
			count(0)
			return true
		}
		n := int64(z.Len())
		if start < 0 {
			start += n
		}
		if stop < 0 {
			stop += n
		}
		if start < 0 {
			start = 0
		}
		if start > stop || start >= n {
			count(0)
			return true
		}
		if stop >= n {
			stop = n - 1
		}
		if sp.rev {
			span.FirstRank, span.LastRank = int(n-1-stop), int(n-1-start)
			span.Last = z.ByRank(span.LastRank)
			span.First = span.Last // only the end the walk starts from is needed
		} else {
			span.FirstRank, span.LastRank = int(start), int(stop)
			span.First = z.ByRank(span.FirstRank)
			span.Last = span.First
		}
	case byScore:
		r, ok := parseScoreRange(min, max)
		if !ok {
			x.W.Error(errMinMaxFloat)
			return false
		}
		if z != nil {
			span = z.ScoreSpan(&r)
		}
	case byLex:
		r, ok := parseLexRange(min, max)
		if !ok {
			x.W.Error(errMinMaxLex)
			return false
		}
		if z != nil {
			span = z.LexSpan(&r)
		}
	}
	total := span.Len()
	if total == 0 || sp.offset < 0 || (sp.by != byRank && sp.offset >= int64(total)) {
		count(0)
		return true
	}
	skip := int(sp.offset)
	n := total - skip
	if sp.limit >= 0 && int64(n) > sp.limit {
		n = int(sp.limit)
	}
	count(n)
	if n == 0 {
		return true
	}
	node := span.First
	switch {
	case sp.rev && skip == 0:
		node = span.Last
	case sp.rev:
		node = z.ByRank(span.LastRank - skip)
	case skip > 0:
		node = z.ByRank(span.FirstRank + skip)
	}
	for ; n > 0 && node != nil; n-- {
		emit(node)
		if sp.rev {
			node = node.Prev()
		} else {
			node = node.Next()
		}
	}
	return true
}

// replyZNodes helpers: the header of a list of n members (with scores: n
// pairs, flat in RESP2 and nested in RESP3) and one member.
func zReplyHeader(x *Ctx, n int, withScores bool) {
	if withScores && x.W.Proto == 2 {
		x.W.Array(2 * n)
	} else {
		x.W.Array(n)
	}
}

func zReplyItem(x *Ctx, n *keyspace.ZNode, withScores bool) {
	if withScores {
		if x.W.Proto == 3 {
			x.W.Array(2)
		}
		x.W.BulkString(n.Member)
		x.W.Double(n.Score)
		return
	}
	x.W.BulkString(n.Member)
}

// zrangeReply runs a parsed read-only ZRANGE request.
func zrangeReply(x *Ctx, sp *zrangeSpec) {
	// Argument errors come before the key lookup, as in redis-server.
	z, ok := readZSetQuiet(x, sp)
	if !ok {
		return
	}
	zrangeCollect(x, z, sp,
		func(n int) { zReplyHeader(x, n, sp.withScores) },
		func(n *keyspace.ZNode) { zReplyItem(x, n, sp.withScores) })
}

// readZSetQuiet validates the range arguments first (replying with their
// error) and then looks the key up.
func readZSetQuiet(x *Ctx, sp *zrangeSpec) (*keyspace.ZSet, bool) {
	if !zrangeArgsValid(x, sp) {
		return nil, false
	}
	return readZSet(x, x.Args[1])
}

func zrangeArgsValid(x *Ctx, sp *zrangeSpec) bool {
	switch sp.by {
	case byRank:
		_, ok1 := ParseInt(sp.min)
		_, ok2 := ParseInt(sp.max)
		if !ok1 || !ok2 {
			x.W.Error(ErrNotInt)
			return false
		}
	case byScore:
		if _, ok := parseScoreRange(sp.min, sp.max); !ok {
			x.W.Error(errMinMaxFloat)
			return false
		}
	case byLex:
		if _, ok := parseLexRange(sp.min, sp.max); !ok {
			x.W.Error(errMinMaxLex)
			return false
		}
	}
	return true
}

func cmdZRange(x *Ctx) {
	sp := zrangeSpec{min: x.Args[2], max: x.Args[3]}
	if !zrangeParse(x, &sp, 4, false) {
		return
	}
	zrangeReply(x, &sp)
}

func cmdZRangeStore(x *Ctx) {
	sp := zrangeSpec{min: x.Args[3], max: x.Args[4]}
	if !zrangeParse(x, &sp, 5, false) {
		return
	}
	if sp.withScores {
		x.W.Error(ErrSyntax)
		return
	}
	if !zrangeArgsValid(x, &sp) {
		return
	}
	src, ok := readZSet(x, x.Args[2])
	if !ok {
		return
	}
	dst := keyspace.NewZSet()
	zrangeCollect(x, src, &sp, func(int) {}, func(n *keyspace.ZNode) { dst.Insert(n.Member, n.Score) })
	storeZSet(x, x.Args[1], dst)
	x.W.Int(int64(dst.Len()))
}

func legacyRange(x *Ctx, by int, rev bool) {
	sp := zrangeSpec{by: by, rev: rev, min: x.Args[2], max: x.Args[3]}
	if !zrangeParse(x, &sp, 4, true) {
		return
	}
	zrangeReply(x, &sp)
}

func cmdZRevRange(x *Ctx) { legacyRange(x, byRank, true) }

func cmdZRangeByScore(x *Ctx)    { legacyRange(x, byScore, false) }
func cmdZRevRangeByScore(x *Ctx) { legacyRange(x, byScore, true) }
func cmdZRangeByLex(x *Ctx)      { legacyRange(x, byLex, false) }
func cmdZRevRangeByLex(x *Ctx)   { legacyRange(x, byLex, true) }

func cmdZRemRangeByRank(x *Ctx)  { zremRange(x, byRank) }
func cmdZRemRangeByScore(x *Ctx) { zremRange(x, byScore) }
func cmdZRemRangeByLex(x *Ctx)   { zremRange(x, byLex) }

func zremRange(x *Ctx, by int) {
	sp := zrangeSpec{by: by, limit: -1, min: x.Args[2], max: x.Args[3]}
	if !zrangeArgsValid(x, &sp) {
		return
	}
	key := x.Args[1]
	z, ok := writeZSet(x, key)
	if !ok {
		return
	}
	if z == nil {
		x.W.Int(0)
		return
	}
	var doomed []*keyspace.ZNode
	zrangeCollect(x, z, &sp, func(n int) { doomed = make([]*keyspace.ZNode, 0, n) },
		func(n *keyspace.ZNode) { doomed = append(doomed, n) })
	for _, n := range doomed {
		z.RemoveNode(n)
	}
	afterZRemove(x, key, z, len(doomed))
	x.W.Int(int64(len(doomed)))
}

func cmdZPopMin(x *Ctx) { zpop(x, false) }
func cmdZPopMax(x *Ctx) { zpop(x, true) }

func zpop(x *Ctx, max bool) {
	if len(x.Args) > 3 {
		x.W.Error(ErrSyntax)
		return
	}
	count := int64(-1)
	if len(x.Args) == 3 {
		n, ok := ParseInt(x.Args[2])
		if !ok || n < 0 {
			x.W.Error(errNotPositive)
			return
		}
		count = n
	}
	key := x.Args[1]
	z, ok := writeZSet(x, key)
	if !ok {
		return
	}
	if z == nil || count == 0 {
		x.W.Array(0)
		return
	}
	if count < 0 {
		// Without a count the reply is one flat pair in both protocols.
		n := zpopOne(z, max)
		x.W.Array(2)
		x.W.BulkString(n.Member)
		x.W.Double(n.Score)
	} else {
		n := int(min(count, int64(z.Len())))
		zReplyHeader(x, n, true)
		for ; n > 0; n-- {
			zReplyItem(x, zpopOne(z, max), true)
		}
	}
	afterZRemove(x, key, z, 1)
}

func zpopOne(z *keyspace.ZSet, max bool) *keyspace.ZNode {
	n := z.First()
	if max {
		n = z.Last()
	}
	member, score := n.Member, n.Score
	z.RemoveNode(n)
	return &keyspace.ZNode{Member: member, Score: score}
}

func cmdZMPop(x *Ctx) {
	args := x.Args
	numKeys, ok := ParseInt(args[1])
	if !ok || numKeys <= 0 {
		x.W.Error(errNumKeysZero)
		return
	}
	where := 2 + numKeys
	if where >= int64(len(args)) {
		x.W.Error(ErrSyntax)
		return
	}
	var popMax bool
	switch {
	case equalFold(args[where], "min"):
	case equalFold(args[where], "max"):
		popMax = true
	default:
		x.W.Error(ErrSyntax)
		return
	}
	count := int64(1)
	haveCount := false
	for i := int(where) + 1; i < len(args); i++ {
		if equalFold(args[i], "count") && i+1 < len(args) && !haveCount {
			n, ok := ParseInt(args[i+1])
			if !ok || n <= 0 {
				x.W.Error(errCountPositive)
				return
			}
			count, haveCount = n, true
			i++
			continue
		}
		x.W.Error(ErrSyntax)
		return
	}
	for _, key := range args[2:where] {
		z, ok := writeZSet(x, key)
		if !ok {
			return
		}
		if z == nil {
			continue
		}
		n := int(min(count, int64(z.Len())))
		// Propagated as ZPOPMIN/ZPOPMAX with the number popped.
		pop := zpopminArg
		if popMax {
			pop = zpopmaxArg
		}
		x.Propagate(pop, key, FormatInt(int64(n)))
		x.W.Array(2)
		x.W.Bulk(key)
		x.W.Array(n)
		for ; n > 0; n-- {
			p := zpopOne(z, popMax)
			x.W.Array(2)
			x.W.BulkString(p.Member)
			x.W.Double(p.Score)
		}
		afterZRemove(x, key, z, 1)
		return
	}
	x.W.NullArray()
}

var (
	zpopminArg = []byte("ZPOPMIN")
	zpopmaxArg = []byte("ZPOPMAX")
)

func cmdZRandMember(x *Ctx) {
	args := x.Args
	if len(args) > 4 || (len(args) == 4 && !equalFold(args[3], "withscores")) {
		x.W.Error(ErrSyntax)
		return
	}
	if len(args) == 2 {
		z, ok := readZSet(x, args[1])
		if !ok {
			return
		}
		if z == nil {
			x.W.Null()
			return
		}
		x.W.BulkString(z.Random().Member)
		return
	}
	withScores := len(args) == 4
	n, ok := x.Int(2)
	if !ok {
		return
	}
	if n == math.MinInt64 {
		x.W.Error(errRandRange)
		return
	}
	if withScores && (n < -math.MaxInt64/2 || n > math.MaxInt64/2) {
		x.W.Error(errOutOfRange)
		return
	}
	z, ok := readZSet(x, args[1])
	if !ok {
		return
	}
	if z == nil || n == 0 {
		x.W.Array(0)
		return
	}
	size := z.Len()
	switch {
	case n < 0:
		zReplyHeader(x, int(-n), withScores)
		for ; n < 0; n++ {
			zReplyItem(x, z.Random(), withScores)
		}
	case n >= int64(size):
		// The whole set, highest first as redis-server walks a listpack.
		zReplyHeader(x, size, withScores)
		for node := z.Last(); node != nil; node = node.Prev() {
			zReplyItem(x, node, withScores)
		}
	default:
		// Distinct members: a partial shuffle of ranks.
		idx := make([]int, size)
		for i := range idx {
			idx[i] = i
		}
		zReplyHeader(x, int(n), withScores)
		for i := 0; i < int(n); i++ {
			j := i + rand.IntN(size-i)
			idx[i], idx[j] = idx[j], idx[i]
			zReplyItem(x, z.ByRank(idx[i]), withScores)
		}
	}
}

func cmdZScan(x *Ctx) {
	sa, ok := parseScan(x)
	if !ok {
		return
	}
	z, ok := readZSet(x, x.Args[1])
	if !ok {
		return
	}
	if z == nil {
		replyScan(x, 0, 0, nil)
		return
	}
	var body []byte
	var tmp [32]byte
	n := 0
	next := z.Scan(sa.cursor, sa.count, func(node *keyspace.ZNode) {
		m := bytesOfString(node.Member)
		if sa.pattern != nil && !scanMatch(sa.pattern, m) {
			return
		}
		body = appendBulk(body, m)
		body = appendBulk(body, appendScore(tmp[:0], node.Score))
		n += 2
	})
	replyScan(x, next, n, body)
}

// appendScore formats a score as ZSCAN prints it (the same as a RESP2
// double).
func appendScore(b []byte, f float64) []byte { return resp.AppendDouble(b, f) }

// bytesOfString views s as bytes without copying; they must not be written.
func bytesOfString(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// zsrc is one input of ZUNION/ZINTER/ZDIFF: a sorted set or a plain set
// (whose members score 1).
type zsrc struct {
	z      *keyspace.ZSet
	s      *keyspace.Set
	weight float64
}

func (src *zsrc) len() int {
	switch {
	case src.z != nil:
		return src.z.Len()
	case src.s != nil:
		return src.s.Len()
	}
	return 0
}

func (src *zsrc) each(fn func(m []byte, score float64) bool) {
	switch {
	case src.z != nil:
		for n := src.z.First(); n != nil; n = n.Next() {
			if !fn(bytesOfString(n.Member), n.Score) {
				return
			}
		}
	case src.s != nil:
		src.s.Each(func(m []byte) bool { return fn(m, 1) })
	}
}

func (src *zsrc) score(m []byte) (float64, bool) {
	switch {
	case src.z != nil:
		return src.z.Score(m)
	case src.s != nil:
		return 1, src.s.Has(m)
	}
	return 0, false
}

// Set operations of ZUNION and friends.
const (
	zopUnion = iota
	zopInter
	zopDiff
)

// Aggregates.
const (
	aggSum = iota
	aggMin
	aggMax
)

func aggregate(agg int, acc, v float64) float64 {
	switch agg {
	case aggMin:
		return math.Min(acc, v)
	case aggMax:
		return math.Max(acc, v)
	}
	acc += v
	if math.IsNaN(acc) {
		return 0 // inf + -inf, as redis-server does
	}
	return acc
}

func weighted(v, w float64) float64 {
	v *= w
	if math.IsNaN(v) {
		return 0
	}
	return v
}

func cmdZUnion(x *Ctx)      { zsetOp(x, zopUnion, false) }
func cmdZInter(x *Ctx)      { zsetOp(x, zopInter, false) }
func cmdZDiff(x *Ctx)       { zsetOp(x, zopDiff, false) }
func cmdZUnionStore(x *Ctx) { zsetOp(x, zopUnion, true) }
func cmdZInterStore(x *Ctx) { zsetOp(x, zopInter, true) }
func cmdZDiffStore(x *Ctx)  { zsetOp(x, zopDiff, true) }

func zsetOp(x *Ctx, op int, store bool) {
	args := x.Args
	numIdx := 1
	if store {
		numIdx = 2
	}
	numKeys, ok := x.Int(numIdx)
	if !ok {
		return
	}
	if numKeys < 1 {
		x.W.Error("ERR at least 1 input key is needed for '" + x.Cmd.Name + "' command")
		return
	}
	if numKeys > int64(len(args)-numIdx-1) {
		x.W.Error(ErrSyntax)
		return
	}
	keys := args[numIdx+1 : numIdx+1+int(numKeys)]
	srcs := make([]zsrc, len(keys))
	for i, k := range keys {
		var e *keyspace.Entry
		if store {
			e = x.Write(k)
		} else {
			e = x.Read(k)
		}
		srcs[i].weight = 1
		if e == nil {
			continue
		}
		switch e.Kind {
		case keyspace.KindZSet:
			srcs[i].z = e.Obj().(*keyspace.ZSet)
		case keyspace.KindSet:
			srcs[i].s = e.Obj().(*keyspace.Set)
		default:
			x.W.Error(ErrWrongType)
			return
		}
	}
	agg := aggSum
	withScores := false
	for i := numIdx + 1 + int(numKeys); i < len(args); i++ {
		rem := len(args) - i - 1
		switch {
		case op != zopDiff && equalFold(args[i], "weights") && rem >= int(numKeys):
			for j := range srcs {
				w, ok := parseScore(args[i+1+j])
				if !ok {
					x.W.Error(errWeightFloat)
					return
				}
				srcs[j].weight = w
			}
			i += int(numKeys)
		case op != zopDiff && equalFold(args[i], "aggregate") && rem >= 1:
			switch {
			case equalFold(args[i+1], "sum"):
				agg = aggSum
			case equalFold(args[i+1], "min"):
				agg = aggMin
			case equalFold(args[i+1], "max"):
				agg = aggMax
			default:
				x.W.Error(ErrSyntax)
				return
			}
			i++
		case !store && equalFold(args[i], "withscores"):
			withScores = true
		default:
			x.W.Error(ErrSyntax)
			return
		}
	}
	res := zsetCompute(srcs, op, agg)
	if store {
		storeZSet(x, args[1], res)
		x.W.Int(int64(res.Len()))
		return
	}
	zReplyHeader(x, res.Len(), withScores)
	for n := res.First(); n != nil; n = n.Next() {
		zReplyItem(x, n, withScores)
	}
}

func zsetCompute(srcs []zsrc, op, agg int) *keyspace.ZSet {
	res := keyspace.NewZSet()
	switch op {
	case zopUnion:
		acc := make(map[string]float64)
		var order []string
		for i := range srcs {
			src := &srcs[i]
			src.each(func(m []byte, score float64) bool {
				v := weighted(score, src.weight)
				if cur, ok := acc[string(m)]; ok {
					acc[string(m)] = aggregate(agg, cur, v)
				} else {
					k := string(m)
					acc[k] = v
					order = append(order, k)
				}
				return true
			})
		}
		for _, k := range order {
			res.Insert(k, acc[k])
		}
	case zopInter:
		for _, src := range srcs {
			if src.len() == 0 {
				return res
			}
		}
		sorted := slices.Clone(srcs)
		slices.SortStableFunc(sorted, func(a, b zsrc) int { return a.len() - b.len() })
		sorted[0].each(func(m []byte, score float64) bool {
			v := weighted(score, sorted[0].weight)
			for j := 1; j < len(sorted); j++ {
				s, ok := sorted[j].score(m)
				if !ok {
					return true
				}
				v = aggregate(agg, v, weighted(s, sorted[j].weight))
			}
			res.Insert(string(m), v)
			return true
		})
	case zopDiff:
		srcs[0].each(func(m []byte, score float64) bool {
			for j := 1; j < len(srcs); j++ {
				if _, ok := srcs[j].score(m); ok {
					return true
				}
			}
			res.Insert(string(m), score)
			return true
		})
	}
	return res
}

func cmdZInterCard(x *Ctx) {
	n, ok := x.Int(1)
	if !ok {
		return
	}
	if n < 1 {
		x.W.Error("ERR at least 1 input key is needed for 'zintercard' command")
		return
	}
	if n > int64(len(x.Args)-2) {
		x.W.Error(ErrSyntax)
		return
	}
	keys := x.Args[2 : 2+n]
	limit, ok := parseCardLimit(x, 2+int(n))
	if !ok {
		return
	}
	srcs := make([]zsrc, len(keys))
	for i, k := range keys {
		e := x.Read(k)
		if e == nil {
			continue
		}
		switch e.Kind {
		case keyspace.KindZSet:
			srcs[i].z = e.Obj().(*keyspace.ZSet)
		case keyspace.KindSet:
			srcs[i].s = e.Obj().(*keyspace.Set)
		default:
			x.W.Error(ErrWrongType)
			return
		}
	}
	for _, src := range srcs {
		if src.len() == 0 {
			x.W.Int(0)
			return
		}
	}
	slices.SortStableFunc(srcs, func(a, b zsrc) int { return a.len() - b.len() })
	var count int64
	srcs[0].each(func(m []byte, _ float64) bool {
		for j := 1; j < len(srcs); j++ {
			if _, ok := srcs[j].score(m); !ok {
				return true
			}
		}
		count++
		return limit == 0 || count < limit
	})
	x.W.Int(count)
}
