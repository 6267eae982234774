package node

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/slotd/slotd/node/keyspace"
)

// Reply texts of the string family.
const (
	errOffsetRange    = "ERR offset is out of range"
	errDecrOverflow   = "ERR decrement would overflow"
	errIncrNaN        = "ERR increment would produce NaN or Infinity"
	errLCSType        = "ERR The specified keys must contain string values"
	errLCSLenIdx      = "ERR If you want both the length and indexes, please just use IDX."
	errLCSMemory      = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
	errLCSTooLong     = "ERR String too long for LCS"
	embstrMaxLen      = 44 // longest string redis-server 7.0 keeps embstr-encoded
	intEncodingMaxLen = 20
)

// keySpecAt is the key spec of a command whose only key is argument begin.
func keySpecAt(flags string, begin int) KeySpec {
	return KeySpec{Flags: strings.Fields(flags), BeginIndex: begin, KeyStep: 1}
}

// keySpecRange is the key spec of keys from argument begin to last (negative:
// from the end) every step arguments.
func keySpecRange(flags string, begin, last, step int) KeySpec {
	return KeySpec{Flags: strings.Fields(flags), BeginIndex: begin, RangeLast: last, KeyStep: step}
}

func registerStrings(t Table) {
	str := func(name string, arity int, flags Flag, first, last, step int, acl string, spec []KeySpec, h HandlerFunc) *Command {
		c := &Command{Name: name, Arity: arity, Flags: flags, FirstKey: first, LastKey: last, Step: step,
			ACL: strings.Fields(acl), KeySpecs: spec, Handler: h, Group: "string"}
		t.Add(c)
		return c
	}
	w, wd, r := FlagWrite, FlagWrite|FlagDenyOOM, FlagReadonly
	one := func(flags string) []KeySpec { return []KeySpec{keySpecAt(flags, 1)} }
	str("get", 2, r|FlagFast, 1, 1, 1, "read string fast", one("RO access"), cmdGet)
	str("set", -3, wd, 1, 1, 1, "write string slow", one("RW access update variable_flags"), cmdSet)
	str("setnx", 3, wd|FlagFast, 1, 1, 1, "write string fast", one("OW insert"), cmdSetNX)
	str("setex", 4, wd, 1, 1, 1, "write string slow", one("OW update"), cmdSetEX)
	str("psetex", 4, wd, 1, 1, 1, "write string slow", one("OW update"), cmdSetEX)
	str("getex", -2, w|FlagFast, 1, 1, 1, "write string fast", one("RW access update"), cmdGetEX)
	str("getdel", 2, w|FlagFast, 1, 1, 1, "write string fast", one("RW access delete"), cmdGetDel)
	str("getset", 3, wd|FlagFast, 1, 1, 1, "write string fast", one("RW access update"), cmdGetSet)
	str("mget", -2, r|FlagFast, 1, -1, 1, "read string fast", []KeySpec{keySpecRange("RO access", 1, -1, 1)}, cmdMGet).
		Tips = []string{"request_policy:multi_shard"}
	str("mset", -3, wd, 1, -1, 2, "write string slow", []KeySpec{keySpecRange("OW update", 1, -1, 2)}, cmdMSet).
		Tips = []string{"request_policy:multi_shard", "response_policy:all_succeeded"}
	str("msetnx", -3, wd, 1, -1, 2, "write string slow", []KeySpec{keySpecRange("OW insert", 1, -1, 2)}, cmdMSet).
		Tips = []string{"request_policy:multi_shard", "response_policy:agg_min"}
	str("incr", 2, wd|FlagFast, 1, 1, 1, "write string fast", one("RW access update"), cmdIncr)
	str("decr", 2, wd|FlagFast, 1, 1, 1, "write string fast", one("RW access update"), cmdIncr)
	str("incrby", 3, wd|FlagFast, 1, 1, 1, "write string fast", one("RW access update"), cmdIncr)
	str("decrby", 3, wd|FlagFast, 1, 1, 1, "write string fast", one("RW access update"), cmdIncr)
	str("incrbyfloat", 3, wd|FlagFast, 1, 1, 1, "write string fast", one("RW access update"), cmdIncrByFloat)
	str("append", 3, wd|FlagFast, 1, 1, 1, "write string fast", one("RW insert"), cmdAppend)
	str("strlen", 2, r|FlagFast, 1, 1, 1, "read string fast", one("RO"), cmdStrlen)
	str("getrange", 4, r, 1, 1, 1, "read string slow", one("RO access"), cmdGetRange)
	str("substr", 4, r, 1, 1, 1, "read string slow", one("RO access"), cmdGetRange)
	str("setrange", 4, wd, 1, 1, 1, "write string slow", one("RW update"), cmdSetRange)
	str("lcs", -3, r, 1, 2, 1, "read string slow", []KeySpec{keySpecRange("RO access", 1, 1, 1)}, cmdLCS)
}

// StringEncoding returns what OBJECT ENCODING prints for a string entry, as
// redis-server 7.0 would encode the same value: "int" for a canonical 64-bit
// integer that was stored through a path that tries integer encoding,
// "embstr" up to 44 bytes, "raw" beyond or after APPEND/SETRANGE/bit writes.
func StringEncoding(e *keyspace.Entry) string {
	if e.Raw {
		return "raw"
	}
	if !e.NoInt && len(e.Bytes()) <= intEncodingMaxLen {
		if _, ok := ParseInt(e.Bytes()); ok {
			return "int"
		}
	}
	if len(e.Bytes()) <= embstrMaxLen {
		return "embstr"
	}
	return "raw"
}

func cmdGet(x *Ctx) {
	e, ok := x.ReadKind(x.Args[1], keyspace.KindString)
	if !ok {
		return
	}
	if e == nil {
		x.W.Null()
		return
	}
	x.W.Bulk(e.Bytes())
}

// Flags of SET-like option parsing.
const (
	setNX = 1 << iota
	setXX
	setGet
	setKeepTTL
	setEX
	setPX
	setEXAT
	setPXAT
	setPersist

	setExpireFlags = setEX | setPX | setEXAT | setPXAT
)

// parseExpireArg parses the value of EX/PX/EXAT/PXAT into an absolute unix
// ms time. It replies and returns ok=false on error.
func parseExpireArg(x *Ctx, arg []byte, unit int, name string) (int64, bool) {
	n, ok := ParseInt(arg)
	if !ok {
		x.W.Error(ErrNotInt)
		return 0, false
	}
	if n <= 0 || (unit&(setEX|setEXAT) != 0 && n > math.MaxInt64/1000) {
		x.W.Error("ERR invalid expire time in '" + name + "' command")
		return 0, false
	}
	if unit&(setEX|setEXAT) != 0 {
		n *= 1000
	}
	if unit&(setEX|setPX) != 0 {
		if n > math.MaxInt64-x.Now {
			x.W.Error("ERR invalid expire time in '" + name + "' command")
			return 0, false
		}
		n += x.Now
	}
	return n, true
}

// expireUnit maps an option name to its flag, or 0.
func expireUnit(opt []byte) int {
	if len(opt) < 2 || len(opt) > 4 {
		return 0
	}
	switch {
	case strings.EqualFold(string(opt), "ex"):
		return setEX
	case strings.EqualFold(string(opt), "px"):
		return setPX
	case strings.EqualFold(string(opt), "exat"):
		return setEXAT
	case strings.EqualFold(string(opt), "pxat"):
		return setPXAT
	}
	return 0
}

// parseStringOpts parses SET's (get=false) or GETEX's (get=true) options
// from args[from:]. As redis-server does, an option may repeat (the last
// expire value wins) but may not be combined with a conflicting one, and
// the expire value is validated later by the caller. It returns the flags
// and the index of the expire value (0 if none); it replies on error.
func parseStringOpts(x *Ctx, from int, get bool) (flags, expIdx int, ok bool) {
	args := x.Args
	for i := from; i < len(args); i++ {
		opt := args[i]
		if u := expireUnit(opt); u != 0 && i+1 < len(args) &&
			flags&(setKeepTTL|setPersist|(setExpireFlags&^u)) == 0 {
			flags |= u
			i++
			expIdx = i
			continue
		}
		s := string(opt)
		switch {
		case !get && strings.EqualFold(s, "nx") && flags&setXX == 0:
			flags |= setNX
		case !get && strings.EqualFold(s, "xx") && flags&setNX == 0:
			flags |= setXX
		case !get && strings.EqualFold(s, "get"):
			flags |= setGet
		case !get && strings.EqualFold(s, "keepttl") && flags&setExpireFlags == 0:
			flags |= setKeepTTL
		case get && strings.EqualFold(s, "persist") && flags&setExpireFlags == 0:
			flags |= setPersist
		default:
			x.W.Error(ErrSyntax)
			return 0, 0, false
		}
	}
	return flags, expIdx, true
}

func cmdSet(x *Ctx) {
	args := x.Args
	flags, expIdx, ok := parseStringOpts(x, 3, false)
	if !ok {
		return
	}
	var expire int64
	if expIdx != 0 {
		if expire, ok = parseExpireArg(x, args[expIdx], flags&setExpireFlags, "set"); !ok {
			return
		}
	}
	key, val := args[1], args[2]
	slot := x.Slot(key)
	old := x.lookup(key)
	if flags&setGet != 0 {
		if old != nil && old.Kind != keyspace.KindString {
			x.W.Error(ErrWrongType)
			return
		}
		if old == nil {
			x.W.Null()
		} else {
			x.W.Bulk(old.Bytes())
		}
	}
	if (flags&setNX != 0 && old != nil) || (flags&setXX != 0 && old == nil) {
		if flags&setGet == 0 {
			x.W.Null()
		}
		return
	}
	if expire != 0 && x.timePassed(expire) {
		// Already expired: the key is deleted, as redis-server does.
		if x.Del(key) {
			x.Propagate(delArg, key)
		}
		if flags&setGet == 0 {
			x.W.OK()
		}
		return
	}
	if flags&setKeepTTL != 0 && old != nil {
		expire = x.DB.ExpireOf(slot, key, old)
	}
	x.setString(slot, key, old, val, expire)
	switch {
	case expIdx != 0 && flags&setPXAT == 0:
		// EX, PX and EXAT propagate as the absolute time in ms.
		x.Propagate(setArg, key, val, pxatArg, FormatInt(expire))
	case flags&setGet != 0 && expIdx == 0:
		// GET changes nothing on a replica: propagated without it.
		prop := make([][]byte, 0, len(args))
		for i, a := range args {
			if i < 3 || !strings.EqualFold(string(a), "get") {
				prop = append(prop, a)
			}
		}
		x.Propagate(prop...)
	}
	if flags&setGet == 0 {
		x.W.OK()
	}
}

var (
	setArg     = []byte("SET")
	pxatArg    = []byte("PXAT")
	keepTTLArg = []byte("KEEPTTL")
)

// setString stores val under key (old is the current entry or nil) with
// the given absolute expiry (0: none), reusing old's buffer when it fits
// so that the common overwrite of a same-sized value does not allocate.
func (x *Ctx) setString(slot int, key []byte, old *keyspace.Entry, val []byte, expire int64) {
	var b []byte
	if old != nil {
		b = old.Bytes() // nil unless a string
	}
	if old != nil && old.Kind == keyspace.KindString && cap(b) >= len(val) && cap(b) <= 2*len(val)+16 {
		old.SetBytes(append(b[:0], val...))
		old.Raw, old.NoInt = false, false
		x.S.touch(old)
		if (expire != 0 || old.HasTTL()) && x.DB.ExpireOf(slot, key, old) != expire {
			x.DB.SetExpire(slot, key, old, expire)
		}
		x.Modified(key)
		return
	}
	x.PutWithExpire(key, keyspace.NewStringKey(key, val), expire)
}

func cmdSetNX(x *Ctx) {
	key := x.Args[1]
	if x.Write(key) != nil {
		x.W.Int(0)
		return
	}
	x.Put(key, keyspace.NewStringKey(key, x.Args[2]))
	x.W.Int(1)
}

// cmdSetEX serves SETEX and PSETEX.
func cmdSetEX(x *Ctx) {
	unit, name := setEX, "setex"
	if x.Cmd.Name == "psetex" {
		unit, name = setPX, "psetex"
	}
	expire, ok := parseExpireArg(x, x.Args[2], unit, name)
	if !ok {
		return
	}
	key := x.Args[1]
	slot := x.Slot(key)
	x.setString(slot, key, x.DB.Lookup(slot, key, x.Now), x.Args[3], expire)
	x.Propagate(setArg, key, x.Args[3], pxatArg, FormatInt(expire))
	x.W.OK()
}

func cmdGetEX(x *Ctx) {
	flags, expIdx, ok := parseStringOpts(x, 2, true)
	if !ok {
		return
	}
	key := x.Args[1]
	e, ok := x.ReadKind(key, keyspace.KindString)
	if !ok {
		return
	}
	if e == nil {
		x.W.Null()
		return
	}
	var expire int64
	if expIdx != 0 {
		if expire, ok = parseExpireArg(x, x.Args[expIdx], flags&setExpireFlags, "getex"); !ok {
			return
		}
	}
	x.W.Bulk(e.Bytes())
	switch {
	case expIdx != 0 && x.timePassed(expire):
		x.Del(key)
		x.Propagate(delArg, key)
	case expIdx != 0:
		x.SetExpire(key, e, expire)
		x.Modified(key)
		x.Propagate(pexpireatArg, key, FormatInt(expire))
	case flags&setPersist != 0 && e.HasTTL():
		x.SetExpire(key, e, 0)
		x.Modified(key)
		x.Propagate(persistArg, key)
	}
}

func cmdGetDel(x *Ctx) {
	key := x.Args[1]
	e, ok := x.ReadKind(key, keyspace.KindString)
	if !ok {
		return
	}
	if e == nil {
		x.W.Null()
		return
	}
	x.W.Bulk(e.Bytes())
	x.Del(key)
	x.Propagate(delArg, key)
}

var persistArg = []byte("PERSIST")

func cmdGetSet(x *Ctx) {
	key := x.Args[1]
	e, ok := x.ReadKind(key, keyspace.KindString)
	if !ok {
		return
	}
	if e == nil {
		x.W.Null()
		x.Put(key, keyspace.NewStringKey(key, x.Args[2]))
		return
	}
	x.W.Bulk(e.Bytes())
	// The reply holds a copy of the old value, so its buffer may be reused.
	x.setString(x.Slot(key), key, e, x.Args[2], 0)
}

func cmdMGet(x *Ctx) {
	keys := x.Args[1:]
	x.warmKeys(1)
	x.W.Array(len(keys))
	for _, k := range keys {
		e := x.Read(k)
		if e == nil || e.Kind != keyspace.KindString {
			x.W.Null()
			continue
		}
		x.W.Bulk(e.Bytes())
	}
}

// cmdMSet serves MSET and MSETNX.
func cmdMSet(x *Ctx) {
	if len(x.Args)%2 == 0 {
		x.W.Error(errArity(x.Cmd.Name))
		return
	}
	x.warmKeys(2)
	nx := x.Cmd.Name == "msetnx"
	if nx {
		for i := 1; i < len(x.Args); i += 2 {
			if x.Write(x.Args[i]) != nil {
				x.W.Int(0)
				return
			}
		}
	}
	for i := 1; i < len(x.Args); i += 2 {
		key := x.Args[i]
		slot := x.Slot(key)
		x.setString(slot, key, x.DB.Lookup(slot, key, x.Now), x.Args[i+1], 0)
	}
	if nx {
		x.W.Int(1)
	} else {
		x.W.OK()
	}
}

// cmdIncr serves INCR, DECR, INCRBY and DECRBY.
func cmdIncr(x *Ctx) {
	var by int64 = 1
	switch x.Cmd.Name {
	case "decr":
		by = -1
	case "incrby", "decrby":
		n, ok := x.Int(2)
		if !ok {
			return
		}
		by = n
		if x.Cmd.Name == "decrby" {
			if n == math.MinInt64 {
				x.W.Error(errDecrOverflow)
				return
			}
			by = -n
		}
	}
	key := x.Args[1]
	e, ok := x.WriteKind(key, keyspace.KindString)
	if !ok {
		return
	}
	var v int64
	if e != nil {
		if v, ok = ParseInt(e.Bytes()); !ok {
			x.W.Error(ErrNotInt)
			return
		}
	}
	if (by < 0 && v < 0 && by < math.MinInt64-v) || (by > 0 && v > 0 && by > math.MaxInt64-v) {
		x.W.Error(ErrOverflow)
		return
	}
	v += by
	if e == nil {
		var tmp [20]byte
		x.Put(key, keyspace.NewStringKey(key, strconv.AppendInt(tmp[:0], v, 10)))
	} else {
		// The TTL is kept, as redis-server keeps it.
		e.SetBytes(strconv.AppendInt(e.Bytes()[:0], v, 10))
		e.Raw, e.NoInt = false, false
		x.Modified(key)
	}
	x.W.Int(v)
}

func cmdIncrByFloat(x *Ctx) {
	key := x.Args[1]
	e, ok := x.WriteKind(key, keyspace.KindString)
	if !ok {
		return
	}
	var cur, incr big.Float
	cur.SetPrec(64)
	if e != nil {
		if !parseLongDouble(&cur, e.Bytes()) {
			x.W.Error(ErrNotFloat)
			return
		}
	}
	if !parseLongDouble(&incr, x.Args[2]) {
		x.W.Error(ErrNotFloat)
		return
	}
	if cur.IsInf() || incr.IsInf() {
		x.W.Error(errIncrNaN)
		return
	}
	cur.Add(&cur, &incr)
	if cur.Sign() != 0 && cur.MantExp(nil) > ldMaxExp {
		x.W.Error(errIncrNaN)
		return
	}
	out := formatLongDoubleHuman(&cur)
	if e == nil {
		e := keyspace.WrapString(out)
		e.NoInt = true
		x.Put(key, e)
	} else {
		e.SetBytes(out)
		e.Raw, e.NoInt = false, true
		x.Modified(key)
	}
	// The result, not the increment, so that a replay cannot round
	// differently; KEEPTTL keeps the key's TTL as the increment did.
	x.Propagate(setArg, key, out, keepTTLArg)
	x.W.Bulk(out)
}

// Limits of the x87 80-bit long double redis-server computes INCRBYFLOAT in,
// as big.Float exponents (mantissa in [0.5, 1)).
const (
	ldPrec     = 64
	ldMaxExp   = 16384  // LDBL_MAX < 2^16384
	ldMinExp   = -16444 // the smallest subnormal is 2^-16445
	ldMaxChars = 5 * 1024
)

// parseLongDouble parses b as redis-server's string2ld does (strtold with
// no surrounding space, no trailing bytes, no NaN, no overflow, no
// underflow to zero), rounding to a 64-bit mantissa. f's precision is set
// to 64. Infinity ("inf", "infinity") is accepted.
func parseLongDouble(f *big.Float, b []byte) bool {
	f.SetPrec(ldPrec)
	if len(b) == 0 || len(b) >= ldMaxChars {
		return false
	}
	s := b
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	if strings.EqualFold(string(s), "inf") || strings.EqualFold(string(s), "infinity") {
		f.SetInf(neg)
		return true
	}
	if len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return parseHexLongDouble(f, b, s[2:])
	}
	// Decimal: digits [. digits] [e [sign] digits], at least one digit.
	var mant big.Int
	digits := make([]byte, 0, len(s))
	i, nd, fracDigits := 0, 0, 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits = append(digits, s[i])
		nd++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits = append(digits, s[i])
			nd++
			fracDigits++
		}
	}
	if nd == 0 {
		return false
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		start := i
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if exp < 1e8 {
				exp = exp*10 + int(s[i]-'0')
			}
		}
		if i == start {
			return false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return false
	}
	// Strip leading zeros; an all-zero mantissa is zero whatever the exponent.
	k := 0
	for k < len(digits) && digits[k] == '0' {
		k++
	}
	if k == len(digits) {
		f.SetInt64(0)
		if neg {
			f.Neg(f)
		}
		return true
	}
	digits = digits[k:]
	exp -= fracDigits
	// The value is 0.d1d2... * 10^mag: far outside the long double range it
	// overflows or underflows without exact arithmetic.
	mag := exp + len(digits)
	if mag > 4940 || mag < -4960 {
		return false
	}
	mant.SetString(string(digits), 10)
	var r big.Rat
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil)
	if exp >= 0 {
		r.SetInt(mant.Mul(&mant, pow))
	} else {
		r.SetFrac(&mant, pow)
	}
	f.SetRat(&r)
	if neg {
		f.Neg(f)
	}
	return longDoubleInRange(f)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// parseHexLongDouble parses a C hexadecimal float (whole is the full input,
// s what follows "0x").
func parseHexLongDouble(f *big.Float, whole, s []byte) bool {
	isHex := func(c byte) bool {
		return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
	}
	i, nd := 0, 0
	for ; i < len(s) && isHex(s[i]); i++ {
		nd++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for ; i < len(s) && isHex(s[i]); i++ {
			nd++
		}
	}
	if nd == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'p' || s[i] == 'P') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		}
		if i == start || i-start > 7 {
			return false
		}
	}
	if i != len(s) {
		return false
	}
	if _, _, err := f.Parse(string(whole), 0); err != nil {
		return false
	}
	return longDoubleInRange(f)
}

// longDoubleInRange rejects what strtold reports as ERANGE overflow or
// underflow to zero.
func longDoubleInRange(f *big.Float) bool {
	if f.Sign() == 0 || f.IsInf() {
		return true
	}
	var m big.Float
	e := f.MantExp(&m)
	if e > ldMaxExp {
		return false
	}
	if e < ldMinExp {
		// Below the smallest subnormal: it rounds to zero unless it is more
		// than half of it.
		half := e == ldMinExp-1 && m.Abs(&m).Cmp(big.NewFloat(0.5)) > 0
		if !half {
			return false
		}
	}
	return true
}

// formatLongDoubleHuman formats f as redis-server's human-friendly long
// double: "%.17Lf" with trailing zeros (and a bare point) removed, and
// "-0" written "0".
func formatLongDoubleHuman(f *big.Float) []byte {
	out := f.Append(nil, 'f', 17)
	if n := len(out); n > 0 {
		for out[n-1] == '0' {
			n--
		}
		if out[n-1] == '.' {
			n--
		}
		out = out[:n]
	}
	if len(out) == 2 && out[0] == '-' && out[1] == '0' {
		out = out[1:]
	}
	return out
}

func cmdAppend(x *Ctx) {
	key, val := x.Args[1], x.Args[2]
	e, ok := x.WriteKind(key, keyspace.KindString)
	if !ok {
		return
	}
	if e == nil {
		x.Put(key, keyspace.NewStringKey(key, val))
		x.W.Int(int64(len(val)))
		return
	}
	if int64(len(e.Bytes())+len(val)) > x.S.maxBulk.Load() {
		x.W.Error(ErrStringTooLong)
		return
	}
	e.SetBytes(append(e.Bytes(), val...))
	e.Raw = true
	x.Modified(key)
	x.W.Int(int64(len(e.Bytes())))
}

func cmdStrlen(x *Ctx) {
	e, ok := x.ReadKind(x.Args[1], keyspace.KindString)
	if !ok {
		return
	}
	if e == nil {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(len(e.Bytes())))
}

// cmdGetRange serves GETRANGE and SUBSTR.
func cmdGetRange(x *Ctx) {
	start, ok := x.Int(2)
	if !ok {
		return
	}
	end, ok := x.Int(3)
	if !ok {
		return
	}
	e, ok := x.ReadKind(x.Args[1], keyspace.KindString)
	if !ok {
		return
	}
	if e == nil {
		x.W.Bulk(nil)
		return
	}
	x.W.Bulk(strRange(e.Bytes(), start, end))
}

// strRange applies GETRANGE's index rules: negative indexes count from
// the end, both ends are clamped, an empty result when start passes end.
func strRange(s []byte, start, end int64) []byte {
	n := int64(len(s))
	if start < 0 && end < 0 && start > end {
		return nil
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start = max(start, 0)
	end = max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		return nil
	}
	return s[start : end+1]
}

func cmdSetRange(x *Ctx) {
	off, ok := x.Int(2)
	if !ok {
		return
	}
	if off < 0 {
		x.W.Error(errOffsetRange)
		return
	}
	key, val := x.Args[1], x.Args[3]
	e, ok := x.WriteKind(key, keyspace.KindString)
	if !ok {
		return
	}
	if len(val) == 0 {
		if e == nil {
			x.W.Int(0)
		} else {
			x.W.Int(int64(len(e.Bytes())))
		}
		return
	}
	if off > x.S.maxBulk.Load()-int64(len(val)) {
		x.W.Error(ErrStringTooLong)
		return
	}
	end := int(off) + len(val)
	if e == nil {
		b := make([]byte, end)
		copy(b[off:], val)
		e := keyspace.WrapString(b)
		e.Raw = true
		x.Put(key, e)
		x.W.Int(int64(end))
		return
	}
	e.SetBytes(growZero(e.Bytes(), end))
	copy(e.Bytes()[off:], val)
	e.Raw = true
	x.Modified(key)
	x.W.Int(int64(len(e.Bytes())))
}

// growZero extends b with zero bytes to at least n bytes.
func growZero(b []byte, n int) []byte {
	if n <= len(b) {
		return b
	}
	if n <= cap(b) {
		old := len(b)
		b = b[:n]
		clear(b[old:])
		return b
	}
	nb := make([]byte, n, max(n, 2*cap(b)))
	copy(nb, b)
	return nb
}

func cmdLCS(x *Ctx) {
	ea, eb := x.Read(x.Args[1]), x.Read(x.Args[2])
	if (ea != nil && ea.Kind != keyspace.KindString) || (eb != nil && eb.Kind != keyspace.KindString) {
		x.W.Error(errLCSType)
		return
	}
	var a, b []byte
	if ea != nil {
		a = ea.Bytes()
	}
	if eb != nil {
		b = eb.Bytes()
	}
	var getLen, getIdx, withLen bool
	var minLen int64
	for i := 3; i < len(x.Args); i++ {
		opt := string(x.Args[i])
		switch {
		case strings.EqualFold(opt, "idx"):
			getIdx = true
		case strings.EqualFold(opt, "len"):
			getLen = true
		case strings.EqualFold(opt, "withmatchlen"):
			withLen = true
		case strings.EqualFold(opt, "minmatchlen") && i+1 < len(x.Args):
			n, ok := x.Int(i + 1)
			if !ok {
				return
			}
			minLen = max(n, 0)
			i++
		default:
			x.W.Error(ErrSyntax)
			return
		}
	}
	if getIdx && getLen {
		x.W.Error(errLCSLenIdx)
		return
	}
	if len(a) >= math.MaxUint32-1 || len(b) >= math.MaxUint32-1 {
		x.W.Error(errLCSTooLong)
		return
	}
	rows, cols := len(a)+1, len(b)+1
	if uint64(rows)*uint64(cols)*4 > uint64(x.S.maxBulk.Load()) {
		x.W.Error(errLCSMemory)
		return
	}
	// tab[i*cols+j] is the LCS length of a[:i] and b[:j].
	tab := make([]uint32, rows*cols)
	for i := 1; i < rows; i++ {
		for j := 1; j < cols; j++ {
			if a[i-1] == b[j-1] {
				tab[i*cols+j] = tab[(i-1)*cols+j-1] + 1
			} else {
				tab[i*cols+j] = max(tab[(i-1)*cols+j], tab[i*cols+j-1])
			}
		}
	}
	total := tab[rows*cols-1]
	if getLen {
		x.W.Int(int64(total))
		return
	}
	// Walk back from the end collecting the common string and, for IDX, the
	// contiguous matching ranges, last first (the order redis-server uses).
	res := make([]byte, total)
	type match struct{ as, ae, bs, be int }
	var matches []match
	idx := int(total)
	i, j := len(a), len(b)
	none := len(a) // as == none: no range open
	cur := match{as: none}
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			res[idx-1] = a[i-1]
			switch {
			case cur.as == none:
				cur = match{i - 1, i - 1, j - 1, j - 1}
			case cur.as == i && cur.bs == j:
				cur.as--
				cur.bs--
			default:
				emit = true
			}
			if cur.as == 0 || cur.bs == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if tab[(i-1)*cols+j] > tab[i*cols+j-1] {
				i--
			} else {
				j--
			}
			if cur.as != none {
				emit = true
			}
		}
		if emit {
			if getIdx && (minLen == 0 || int64(cur.ae-cur.as+1) >= minLen) {
				matches = append(matches, cur)
			}
			cur.as = none
		}
	}
	if !getIdx {
		x.W.Bulk(res)
		return
	}
	x.W.Map(2)
	x.W.BulkString("matches")
	x.W.Array(len(matches))
	for _, m := range matches {
		if withLen {
			x.W.Array(3)
		} else {
			x.W.Array(2)
		}
		x.W.Array(2)
		x.W.Int(int64(m.as))
		x.W.Int(int64(m.ae))
		x.W.Array(2)
		x.W.Int(int64(m.bs))
		x.W.Int(int64(m.be))
		if withLen {
			x.W.Int(int64(m.ae - m.as + 1))
		}
	}
	x.W.BulkString("len")
	x.W.Int(int64(total))
}
