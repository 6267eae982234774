package node

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"unsafe"

	"github.com/slotd/slotd/node/keyspace"
)

// Hash-command reply texts, as redis-server 7.0 words them.
const (
	errHashNotInt   = "ERR hash value is not an integer"
	errHashNotFloat = "ERR hash value is not a float"
	errNaNOrInf     = "ERR value is NaN or Infinity"
	errIncrNaNOrInf = "ERR increment would produce NaN or Infinity"
)

func registerHashes(t Table) {
	type c = Command
	acl := func(cat ...string) []string { return cat }
	hash := func(cmd *Command) {
		cmd.Group = "hash"
		cmd.FirstKey, cmd.LastKey, cmd.Step = 1, 1, 1
		t.Add(cmd)
	}
	wf := FlagWrite | FlagDenyOOM | FlagFast
	rf := FlagReadonly | FlagFast
	order := []string{"nondeterministic_output_order"}
	nondet := []string{"nondeterministic_output"}
	hash(&c{Name: "hset", Arity: -4, Flags: wf, ACL: acl("write", "hash", "fast"), KeySpecs: keySpec1("RW", "update"), Since: "2.0.0", Handler: func(x *Ctx) { cmdHSet(x, false) }})
	hash(&c{Name: "hsetnx", Arity: 4, Flags: wf, ACL: acl("write", "hash", "fast"), KeySpecs: keySpec1("RW", "insert"), Since: "2.0.0", Handler: cmdHSetNX})
	hash(&c{Name: "hget", Arity: 3, Flags: rf, ACL: acl("read", "hash", "fast"), KeySpecs: keySpec1("RO", "access"), Since: "2.0.0", Handler: cmdHGet})
	hash(&c{Name: "hmget", Arity: -3, Flags: rf, ACL: acl("read", "hash", "fast"), KeySpecs: keySpec1("RO", "access"), Since: "2.0.0", Handler: cmdHMGet})
	hash(&c{Name: "hmset", Arity: -4, Flags: wf, ACL: acl("write", "hash", "fast"), KeySpecs: keySpec1("RW", "update"), Since: "2.0.0", Handler: func(x *Ctx) { cmdHSet(x, true) }})
	hash(&c{Name: "hdel", Arity: -3, Flags: FlagWrite | FlagFast, ACL: acl("write", "hash", "fast"), KeySpecs: keySpec1("RW", "delete"), Since: "2.0.0", Handler: cmdHDel})
	hash(&c{Name: "hlen", Arity: 2, Flags: rf, ACL: acl("read", "hash", "fast"), KeySpecs: keySpec1("RO"), Since: "2.0.0", Handler: cmdHLen})
	hash(&c{Name: "hstrlen", Arity: 3, Flags: rf, ACL: acl("read", "hash", "fast"), KeySpecs: keySpec1("RO"), Since: "3.2.0", Handler: cmdHStrLen})
	hash(&c{Name: "hexists", Arity: 3, Flags: rf, ACL: acl("read", "hash", "fast"), KeySpecs: keySpec1("RO"), Since: "2.0.0", Handler: cmdHExists})
	hash(&c{Name: "hkeys", Arity: 2, Flags: FlagReadonly, ACL: acl("read", "hash", "slow"), Tips: order, KeySpecs: keySpec1("RO", "access"), Since: "2.0.0", Handler: func(x *Ctx) { cmdHGetAll(x, true, false) }})
	hash(&c{Name: "hvals", Arity: 2, Flags: FlagReadonly, ACL: acl("read", "hash", "slow"), Tips: order, KeySpecs: keySpec1("RO", "access"), Since: "2.0.0", Handler: func(x *Ctx) { cmdHGetAll(x, false, true) }})
	hash(&c{Name: "hgetall", Arity: 2, Flags: FlagReadonly, ACL: acl("read", "hash", "slow"), Tips: order, KeySpecs: keySpec1("RO", "access"), Since: "2.0.0", Handler: func(x *Ctx) { cmdHGetAll(x, true, true) }})
	hash(&c{Name: "hincrby", Arity: 4, Flags: wf, ACL: acl("write", "hash", "fast"), KeySpecs: keySpec1("RW", "access", "update"), Since: "2.0.0", Handler: cmdHIncrBy})
	hash(&c{Name: "hincrbyfloat", Arity: 4, Flags: wf, ACL: acl("write", "hash", "fast"), KeySpecs: keySpec1("RW", "access", "update"), Since: "2.6.0", Handler: cmdHIncrByFloat})
	hash(&c{Name: "hrandfield", Arity: -2, Flags: FlagReadonly, ACL: acl("read", "hash", "slow"), Tips: nondet, KeySpecs: keySpec1("RO", "access"), Since: "6.2.0", Handler: cmdHRandField})
	hash(&c{Name: "hscan", Arity: -3, Flags: FlagReadonly, ACL: acl("read", "hash", "slow"), Tips: nondet, KeySpecs: keySpec1("RO", "access"), Since: "2.8.0", Handler: cmdHScan})
}

// hashStrBytes views s as bytes without copying, for read-only parsing.
func hashStrBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// hashOf returns the hash held by a hash entry.
func hashOf(e *keyspace.Entry) *keyspace.Hash { return e.Obj().(*keyspace.Hash) }

// writeHash looks key up for writing, creating an empty hash when it is
// missing. created says whether the caller must Put the entry. It replies
// WRONGTYPE and returns nil for another kind.
func writeHash(x *Ctx, key []byte) (e *keyspace.Entry, created bool) {
	e, ok := x.WriteKind(key, keyspace.KindHash)
	if !ok {
		return nil, false
	}
	if e == nil {
		return keyspace.NewObject(keyspace.NewHash()), true
	}
	return e, false
}

// hashWritten stores a new hash entry or signals the change of an old one.
func hashWritten(x *Ctx, key []byte, e *keyspace.Entry, created bool) {
	if created {
		x.Put(key, e)
	} else {
		x.Modified(key)
	}
}

func cmdHSet(x *Ctx, hmset bool) {
	if len(x.Args)%2 != 0 {
		x.W.Error(errArity(x.Cmd.Name))
		return
	}
	key := x.Args[1]
	e, created := writeHash(x, key)
	if e == nil {
		return
	}
	h := hashOf(e)
	var n int64
	for i := 2; i < len(x.Args); i += 2 {
		if h.Set(x.Args[i], x.Args[i+1]) {
			n++
		}
	}
	hashWritten(x, key, e, created)
	if hmset {
		x.W.OK()
	} else {
		x.W.Int(n)
	}
}

func cmdHSetNX(x *Ctx) {
	key := x.Args[1]
	e, created := writeHash(x, key)
	if e == nil {
		return
	}
	h := hashOf(e)
	if h.Has(x.Args[2]) {
		x.W.Int(0)
		return
	}
	h.Set(x.Args[2], x.Args[3])
	hashWritten(x, key, e, created)
	x.W.Int(1)
}

func cmdHGet(x *Ctx) {
	e, ok := x.ReadKind(x.Args[1], keyspace.KindHash)
	if !ok {
		return
	}
	if e == nil {
		x.W.Null()
		return
	}
	if v, ok := hashOf(e).Get(x.Args[2]); ok {
		x.W.BulkString(v)
	} else {
		x.W.Null()
	}
}

func cmdHMGet(x *Ctx) {
	e, ok := x.ReadKind(x.Args[1], keyspace.KindHash)
	if !ok {
		return
	}
	fields := x.Args[2:]
	x.W.Array(len(fields))
	for _, f := range fields {
		if e != nil {
			if v, ok := hashOf(e).Get(f); ok {
				x.W.BulkString(v)
				continue
			}
		}
		x.W.Null()
	}
}

func cmdHDel(x *Ctx) {
	key := x.Args[1]
	e, ok := x.WriteKind(key, keyspace.KindHash)
	if !ok {
		return
	}
	if e == nil {
		x.W.Int(0)
		return
	}
	h := hashOf(e)
	var n int64
	for _, f := range x.Args[2:] {
		if h.Delete(f) {
			n++
			if h.Len() == 0 {
				break
			}
		}
	}
	if n > 0 {
		if h.Len() == 0 {
			x.Del(key)
		} else {
			x.Modified(key)
		}
	}
	x.W.Int(n)
}

func cmdHLen(x *Ctx) {
	e, ok := x.ReadKind(x.Args[1], keyspace.KindHash)
	if !ok {
		return
	}
	if e == nil {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(hashOf(e).Len()))
}

func cmdHStrLen(x *Ctx) {
	e, ok := x.ReadKind(x.Args[1], keyspace.KindHash)
	if !ok {
		return
	}
	var n int
	if e != nil {
		v, _ := hashOf(e).Get(x.Args[2])
		n = len(v)
	}
	x.W.Int(int64(n))
}

func cmdHExists(x *Ctx) {
	e, ok := x.ReadKind(x.Args[1], keyspace.KindHash)
	if !ok {
		return
	}
	if e != nil && hashOf(e).Has(x.Args[2]) {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
}

// cmdHGetAll is HKEYS (fields), HVALS (values) and HGETALL (both, a map in
// RESP3).
func cmdHGetAll(x *Ctx, fields, values bool) {
	e, ok := x.ReadKind(x.Args[1], keyspace.KindHash)
	if !ok {
		return
	}
	if e == nil {
		if fields && values {
			x.W.Map(0)
		} else {
			x.W.Array(0)
		}
		return
	}
	h := hashOf(e)
	if fields && values {
		x.W.Map(h.Len())
	} else {
		x.W.Array(h.Len())
	}
	w := x.W
	h.Each(func(f, v string) bool {
		if fields {
			w.BulkString(f)
		}
		if values {
			w.BulkString(v)
		}
		return true
	})
}

func cmdHIncrBy(x *Ctx) {
	incr, ok := x.Int(3)
	if !ok {
		return
	}
	key, field := x.Args[1], x.Args[2]
	e, created := writeHash(x, key)
	if e == nil {
		return
	}
	h := hashOf(e)
	var cur int64
	if v, ok := h.Get(field); ok {
		if cur, ok = ParseInt(hashStrBytes(v)); !ok {
			x.W.Error(errHashNotInt)
			return
		}
	}
	if (incr < 0 && cur < 0 && incr < math.MinInt64-cur) || (incr > 0 && cur > 0 && incr > math.MaxInt64-cur) {
		x.W.Error(ErrOverflow)
		return
	}
	cur += incr
	h.SetString(field, strconv.FormatInt(cur, 10))
	hashWritten(x, key, e, created)
	x.W.Int(cur)
}

func cmdHIncrByFloat(x *Ctx) {
	var incr, sum big.Float
	if !parseLongDouble(&incr, x.Args[3]) {
		x.W.Error(ErrNotFloat)
		return
	}
	if incr.IsInf() {
		x.W.Error(errNaNOrInf)
		return
	}
	key, field := x.Args[1], x.Args[2]
	e, created := writeHash(x, key)
	if e == nil {
		return
	}
	h := hashOf(e)
	sum.SetPrec(ldPrec)
	if v, ok := h.Get(field); ok {
		if !parseLongDouble(&sum, hashStrBytes(v)) {
			x.W.Error(errHashNotFloat)
			return
		}
		if sum.IsInf() {
			x.W.Error(errIncrNaNOrInf)
			return
		}
	}
	sum.Add(&sum, &incr)
	if sum.IsInf() || (sum.Sign() != 0 && sum.MantExp(nil) > ldMaxExp) {
		x.W.Error(errIncrNaNOrInf)
		return
	}
	s := string(formatLongDoubleHuman(&sum))
	h.SetString(field, s)
	hashWritten(x, key, e, created)
	// The result, not the increment, so that a replay cannot round
	// differently.
	x.Propagate(hsetArg, key, field, []byte(s))
	x.W.BulkString(s)
}

var hsetArg = []byte("HSET")

func cmdHRandField(x *Ctx) {
	args := x.Args
	if len(args) == 2 {
		e, ok := x.ReadKind(args[1], keyspace.KindHash)
		if !ok {
			return
		}
		if e == nil {
			x.W.Null()
			return
		}
		f, _ := hashOf(e).Random(rand.IntN)
		x.W.BulkString(f)
		return
	}
	count, ok := ParseInt(args[2])
	if !ok {
		x.W.Error(ErrNotInt)
		return
	}
	if count == math.MinInt64 {
		x.W.Error(errRandRange)
		return
	}
	withValues := false
	if len(args) > 4 || (len(args) == 4 && !strings.EqualFold(string(args[3]), "withvalues")) {
		x.W.Error(ErrSyntax)
		return
	}
	if len(args) == 4 {
		withValues = true
		if count < -math.MaxInt64/2 || count > math.MaxInt64/2 {
			x.W.Error(errOutOfRange)
			return
		}
	}
	e, ok := x.ReadKind(args[1], keyspace.KindHash)
	if !ok {
		return
	}
	if e == nil || count == 0 {
		x.W.Array(0)
		return
	}
	h := hashOf(e)
	w := x.W
	pair := func(f, v string) {
		if !withValues {
			w.BulkString(f)
			return
		}
		if w.Proto == 3 {
			w.Array(2)
		}
		w.BulkString(f)
		w.BulkString(v)
	}
	header := func(n int) {
		if withValues && w.Proto != 3 {
			w.Array(2 * n)
		} else {
			w.Array(n)
		}
	}
	if count < 0 {
		// Repetitions allowed: independent draws.
		header(int(-count))
		for i := int64(0); i < -count; i++ {
			pair(h.Random(rand.IntN))
		}
		return
	}
	n := h.Len()
	if count >= int64(n) {
		// The whole hash, in its own order (listpack order when small),
		// as redis-server does.
		header(n)
		h.Each(func(f, v string) bool {
			pair(f, v)
			return true
		})
		return
	}
	k := int(count)
	header(k)
	if k*3 > n {
		// A large share of the hash: shuffle the live slots partially.
		idx := make([]int, 0, n)
		for i := 0; i < h.Slots(); i++ {
			if _, _, live := h.Slot(i); live {
				idx = append(idx, i)
			}
		}
		for i := 0; i < k; i++ {
			j := i + rand.IntN(len(idx)-i)
			idx[i], idx[j] = idx[j], idx[i]
			f, v, _ := h.Slot(idx[i])
			pair(f, v)
		}
		return
	}
	// A small share: draw until k distinct fields came up.
	seen := make(map[string]struct{}, k)
	for len(seen) < k {
		f, v := h.Random(rand.IntN)
		if _, dup := seen[f]; dup {
			continue
		}
		seen[f] = struct{}{}
		pair(f, v)
	}
}

func cmdHScan(x *Ctx) {
	args := x.Args
	cursor, ok := parseScanCursor(args[2])
	if !ok {
		x.W.Error(errInvalidCursor)
		return
	}
	e, ok := x.ReadKind(args[1], keyspace.KindHash)
	if !ok {
		return
	}
	if e == nil {
		x.W.Array(2)
		x.W.BulkString("0")
		x.W.Array(0)
		return
	}
	count := 10
	var pattern []byte
	for i := 3; i < len(args); i++ {
		more := i+1 < len(args)
		switch {
		case more && strings.EqualFold(string(args[i]), "count"):
			i++
			n, ok := x.Int(i)
			if !ok {
				return
			}
			if n < 1 {
				x.W.Error(ErrSyntax)
				return
			}
			count = int(min(n, math.MaxInt32))
		case more && strings.EqualFold(string(args[i]), "match"):
			i++
			pattern = args[i]
			if len(pattern) == 1 && pattern[0] == '*' {
				pattern = nil
			}
		default:
			x.W.Error(ErrSyntax)
			return
		}
	}
	h := hashOf(e)
	var out []string
	collect := func(f, v string) {
		if pattern == nil || scanMatch(pattern, hashStrBytes(f)) {
			out = append(out, f, v)
		}
	}
	var next uint64
	if h.IsListpack() {
		// redis-server answers a listpack in one call, whatever the cursor.
		h.Each(func(f, v string) bool {
			collect(f, v)
			return true
		})
	} else {
		next = h.Scan(cursor, count, collect)
	}
	x.W.Array(2)
	var tmp [20]byte
	x.W.Bulk(strconv.AppendUint(tmp[:0], next, 10))
	x.W.Array(len(out))
	for _, s := range out {
		x.W.BulkString(s)
	}
}
