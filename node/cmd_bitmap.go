package node

import (
	"math"
	"math/bits"
	"strings"

	"github.com/slotd/slotd/node/keyspace"
)

// Reply texts of the bitmap family.
const (
	errBitValue     = "ERR bit is not an integer or out of range"
	errBitposBit    = "ERR The bit argument must be 1 or 0."
	errBitopNot     = "ERR BITOP NOT must be called with a single source key."
	errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
	errOverflowType = "ERR Invalid OVERFLOW type specified"
	errBitfieldRO   = "ERR BITFIELD_RO only supports the GET subcommand"
)

func registerBitmaps(t Table) {
	add := func(c *Command) { c.Group = "bitmap"; t.Add(c) }
	add(&Command{Name: "setbit", Arity: 4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1,
		ACL: []string{"write", "bitmap", "slow"}, KeySpecs: []KeySpec{keySpecAt("RW access update", 1)}, Handler: cmdSetBit})
	add(&Command{Name: "getbit", Arity: 3, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1,
		ACL: []string{"read", "bitmap", "fast"}, KeySpecs: []KeySpec{keySpecAt("RO access", 1)}, Handler: cmdGetBit})
	add(&Command{Name: "bitcount", Arity: -2, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1,
		ACL: []string{"read", "bitmap", "slow"}, KeySpecs: []KeySpec{keySpecAt("RO access", 1)}, Handler: cmdBitCount})
	add(&Command{Name: "bitpos", Arity: -3, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1,
		ACL: []string{"read", "bitmap", "slow"}, KeySpecs: []KeySpec{keySpecAt("RO access", 1)}, Handler: cmdBitPos})
	add(&Command{Name: "bitop", Arity: -4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 2, LastKey: -1, Step: 1,
		ACL:      []string{"write", "bitmap", "slow"},
		KeySpecs: []KeySpec{keySpecAt("OW update", 2), keySpecRange("RO access", 3, -1, 1)}, Handler: cmdBitOp})
	add(&Command{Name: "bitfield", Arity: -2, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1,
		ACL: []string{"write", "bitmap", "slow"}, KeySpecs: []KeySpec{keySpecAt("RW access update variable_flags", 1)}, Handler: cmdBitField})
	add(&Command{Name: "bitfield_ro", Arity: -2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1,
		ACL: []string{"read", "bitmap", "fast"}, KeySpecs: []KeySpec{keySpecAt("RO access", 1)}, Handler: cmdBitField})
}

// bitOffset parses a bit offset; with hash, "#N" means N*width. Offsets
// whose byte is past proto-max-bulk-len are rejected.
func bitOffset(x *Ctx, arg []byte, hash bool, width int) (int64, bool) {
	useHash := hash && width > 0 && len(arg) > 0 && arg[0] == '#'
	if useHash {
		arg = arg[1:]
	}
	n, ok := ParseInt(arg)
	if ok && useHash {
		n *= int64(width)
	}
	if !ok || n < 0 || n>>3 >= x.S.maxBulk.Load() {
		x.W.Error(ErrBitOffset)
		return 0, false
	}
	return n, true
}

// bitString returns key's string for a bit write, created or zero-extended
// so that bit maxBit exists, and marks it raw. It replies on a wrong type.
func bitString(x *Ctx, key []byte, maxBit int64) (*keyspace.Entry, bool) {
	e, ok := x.WriteKind(key, keyspace.KindString)
	if !ok {
		return nil, false
	}
	n := int(maxBit>>3) + 1
	if e == nil {
		e = keyspace.WrapString(make([]byte, n))
		e.Raw = true
		x.Put(key, e)
		return e, true
	}
	e.SetBytes(growZero(e.Bytes(), n))
	e.Raw = true
	return e, true
}

func cmdSetBit(x *Ctx) {
	off, ok := bitOffset(x, x.Args[2], false, 0)
	if !ok {
		return
	}
	on, ok := ParseInt(x.Args[3])
	if !ok || on&^1 != 0 {
		x.W.Error(errBitValue)
		return
	}
	key := x.Args[1]
	e, ok := bitString(x, key, off)
	if !ok {
		return
	}
	byteIdx, mask := off>>3, byte(1)<<(7-uint(off&7))
	old := e.Bytes()[byteIdx]&mask != 0
	if on == 1 {
		e.Bytes()[byteIdx] |= mask
	} else {
		e.Bytes()[byteIdx] &^= mask
	}
	x.Modified(key)
	if old {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
}

func cmdGetBit(x *Ctx) {
	off, ok := bitOffset(x, x.Args[2], false, 0)
	if !ok {
		return
	}
	e, ok := x.ReadKind(x.Args[1], keyspace.KindString)
	if !ok {
		return
	}
	if e == nil || off>>3 >= int64(len(e.Bytes())) {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(e.Bytes()[off>>3]>>(7-uint(off&7))) & 1)
}

// parseBitUnit parses BYTE or BIT.
func parseBitUnit(x *Ctx, arg []byte) (isBit, ok bool) {
	switch {
	case strings.EqualFold(string(arg), "bit"):
		return true, true
	case strings.EqualFold(string(arg), "byte"):
		return false, true
	}
	x.W.Error(ErrSyntax)
	return false, false
}

// clampBitRange converts a [start, end] range (negative from the end) over
// total units into absolute, clamped indexes; empty when start > end.
func clampBitRange(start, end, total int64) (int64, int64) {
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start = max(start, 0)
	end = max(end, 0)
	if end >= total {
		end = total - 1
	}
	return start, end
}

func cmdBitCount(x *Ctx) {
	// redis-server looks the key up before it parses the range.
	e, ok := x.ReadKind(x.Args[1], keyspace.KindString)
	if !ok {
		return
	}
	if e == nil {
		x.W.Int(0)
		return
	}
	var start, end int64
	isBit, ranged := false, false
	switch len(x.Args) {
	case 4, 5:
		if start, ok = x.Int(2); !ok {
			return
		}
		if end, ok = x.Int(3); !ok {
			return
		}
		if len(x.Args) == 5 {
			if isBit, ok = parseBitUnit(x, x.Args[4]); !ok {
				return
			}
		}
		ranged = true
	case 2:
	default:
		x.W.Error(ErrSyntax)
		return
	}
	s := e.Bytes()
	if !ranged {
		x.W.Int(popcount(s))
		return
	}
	if start < 0 && end < 0 && start > end {
		x.W.Int(0)
		return
	}
	total := int64(len(s))
	if isBit {
		total <<= 3
	}
	start, end = clampBitRange(start, end, total)
	if start > end {
		x.W.Int(0)
		return
	}
	if !isBit {
		x.W.Int(popcount(s[start : end+1]))
		return
	}
	n := popcount(s[start>>3 : end>>3+1])
	// Take off the bits of the edge bytes that lie outside the range.
	n -= int64(bits.OnesCount8(s[start>>3] & ^byte(0xff>>uint(start&7))))
	n -= int64(bits.OnesCount8(s[end>>3] & byte(0xff>>uint(end&7+1))))
	x.W.Int(n)
}

func popcount(s []byte) int64 {
	var n int
	for len(s) >= 8 {
		n += bits.OnesCount64(uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56)
		s = s[8:]
	}
	for _, c := range s {
		n += bits.OnesCount8(c)
	}
	return int64(n)
}

func cmdBitPos(x *Ctx) {
	bit, ok := x.Int(2)
	if !ok {
		return
	}
	if bit != 0 && bit != 1 {
		x.W.Error(errBitposBit)
		return
	}
	e, ok := x.ReadKind(x.Args[1], keyspace.KindString)
	if !ok {
		return
	}
	if e == nil {
		// A missing key is an endless run of clear bits.
		x.W.Int(-bit)
		return
	}
	s := e.Bytes()
	var start, end int64
	isBit, endGiven := false, false
	switch len(x.Args) {
	case 4, 5, 6:
		if start, ok = x.Int(3); !ok {
			return
		}
		if len(x.Args) == 6 {
			if isBit, ok = parseBitUnit(x, x.Args[5]); !ok {
				return
			}
		}
		if len(x.Args) >= 5 {
			if end, ok = x.Int(4); !ok {
				return
			}
			endGiven = true
		} else {
			end = int64(len(s)) - 1
		}
		total := int64(len(s))
		if isBit {
			total <<= 3
		}
		start, end = clampBitRange(start, end, total)
	case 3:
		start, end = 0, int64(len(s))-1
	default:
		x.W.Error(ErrSyntax)
		return
	}
	if start > end {
		x.W.Int(-1)
		return
	}
	lo, hi := start, end // bit positions
	if !isBit {
		lo, hi = start*8, end*8+7
	}
	if pos := findBit(s, lo, hi, byte(bit)); pos >= 0 {
		x.W.Int(pos)
		return
	}
	// No clear bit in range: without an explicit end the string counts as
	// followed by clear bits.
	if bit == 0 && !endGiven {
		x.W.Int(hi + 1)
		return
	}
	x.W.Int(-1)
}

// findBit returns the first position in [lo, hi] holding bit, or -1.
func findBit(s []byte, lo, hi int64, bit byte) int64 {
	var skip byte // a byte holding no wanted bit
	if bit == 0 {
		skip = 0xff
	}
	for p := lo; p <= hi; {
		if p&7 == 0 && p+7 <= hi && s[p>>3] == skip {
			p += 8
			continue
		}
		if (s[p>>3]>>(7-uint(p&7)))&1 == bit {
			return p
		}
		p++
	}
	return -1
}

func cmdBitOp(x *Ctx) {
	op := strings.ToLower(string(x.Args[1]))
	switch op {
	case "and", "or", "xor", "not":
	default:
		x.W.Error(ErrSyntax)
		return
	}
	if op == "not" && len(x.Args) != 4 {
		x.W.Error(errBitopNot)
		return
	}
	srcs := make([][]byte, 0, len(x.Args)-3)
	maxLen := 0
	for _, k := range x.Args[3:] {
		e, ok := x.ReadKind(k, keyspace.KindString)
		if !ok {
			return
		}
		var s []byte
		if e != nil {
			s = e.Bytes()
		}
		srcs = append(srcs, s)
		maxLen = max(maxLen, len(s))
	}
	dest := x.Args[2]
	if maxLen == 0 {
		x.Del(dest)
		x.W.Int(0)
		return
	}
	res := make([]byte, maxLen)
	copy(res, srcs[0])
	switch op {
	case "not":
		for i := range res {
			res[i] = ^res[i]
		}
	case "and":
		for _, s := range srcs[1:] {
			for i := range res {
				if i < len(s) {
					res[i] &= s[i]
				} else {
					res[i] = 0
				}
			}
		}
	case "or":
		for _, s := range srcs[1:] {
			for i := range s {
				res[i] |= s[i]
			}
		}
	case "xor":
		for _, s := range srcs[1:] {
			for i := range s {
				res[i] ^= s[i]
			}
		}
	}
	e := keyspace.WrapString(res)
	e.Raw = true
	x.Put(dest, e)
	x.W.Int(int64(maxLen))
}

// Overflow behaviours of BITFIELD.
const (
	ovWrap = iota
	ovSat
	ovFail
)

type bitfieldOp struct {
	op     byte // 'g', 's', 'i'
	signed bool
	width  int
	off    int64
	val    int64
	ov     int
}

func bitfieldType(x *Ctx, arg []byte) (signed bool, width int, ok bool) {
	if len(arg) > 0 {
		switch arg[0] {
		case 'i':
			signed = true
			ok = true
		case 'u':
			ok = true
		}
	}
	if ok {
		n, good := ParseInt(arg[1:])
		if !good || n < 1 || (signed && n > 64) || (!signed && n > 63) {
			ok = false
		}
		width = int(n)
	}
	if !ok {
		x.W.Error(errBitfieldType)
	}
	return signed, width, ok
}

// cmdBitField serves BITFIELD and BITFIELD_RO.
func cmdBitField(x *Ctx) {
	args := x.Args
	var ops []bitfieldOp
	ov := ovWrap
	readonly := true
	var highest int64
	for j := 2; j < len(args); j++ {
		rem := len(args) - j - 1
		sub := string(args[j])
		var op byte
		switch {
		case strings.EqualFold(sub, "get") && rem >= 2:
			op = 'g'
		case strings.EqualFold(sub, "set") && rem >= 3:
			op = 's'
		case strings.EqualFold(sub, "incrby") && rem >= 3:
			op = 'i'
		case strings.EqualFold(sub, "overflow") && rem >= 1:
			j++
			switch t := string(args[j]); {
			case strings.EqualFold(t, "wrap"):
				ov = ovWrap
			case strings.EqualFold(t, "sat"):
				ov = ovSat
			case strings.EqualFold(t, "fail"):
				ov = ovFail
			default:
				x.W.Error(errOverflowType)
				return
			}
			continue
		default:
			x.W.Error(ErrSyntax)
			return
		}
		signed, width, ok := bitfieldType(x, args[j+1])
		if !ok {
			return
		}
		off, ok := bitOffset(x, args[j+2], true, width)
		if !ok {
			return
		}
		o := bitfieldOp{op: op, signed: signed, width: width, off: off, ov: ov}
		if op != 'g' {
			readonly = false
			highest = max(highest, off+int64(width)-1)
			if o.val, ok = x.Int(j + 3); !ok {
				return
			}
			j += 3
		} else {
			j += 2
		}
		ops = append(ops, o)
	}
	key := args[1]
	var e *keyspace.Entry
	if readonly {
		var ok bool
		if e, ok = x.ReadKind(key, keyspace.KindString); !ok {
			return
		}
	} else {
		if x.Cmd.Name == "bitfield_ro" {
			x.W.Error(errBitfieldRO)
			return
		}
		var ok bool
		if e, ok = bitString(x, key, highest); !ok {
			return
		}
	}
	x.W.Array(len(ops))
	changed := false
	for _, o := range ops {
		if o.op == 'g' {
			var v uint64
			if e != nil {
				v = readBits(e.Bytes(), o.off, o.width)
			}
			if o.signed {
				x.W.Int(signExtend(v, o.width))
			} else {
				x.W.Int(int64(v))
			}
			continue
		}
		old := readBits(e.Bytes(), o.off, o.width)
		var nv uint64
		var reply int64
		var overflow bool
		if o.signed {
			ov := signExtend(old, o.width)
			if o.op == 'i' {
				r, of := signedOverflow(ov, o.val, o.width, o.ov)
				overflow = of
				if !of {
					r = ov + o.val
				}
				nv, reply = uint64(r), r
			} else {
				r, of := signedOverflow(o.val, 0, o.width, o.ov)
				overflow = of
				if !of {
					r = o.val
				}
				nv, reply = uint64(r), ov
			}
		} else {
			if o.op == 'i' {
				r, of := unsignedOverflow(old, o.val, o.width, o.ov)
				overflow = of
				if !of {
					r = old + uint64(o.val)
				}
				nv, reply = r, int64(r)
			} else {
				r, of := unsignedOverflow(uint64(o.val), 0, o.width, o.ov)
				overflow = of
				if !of {
					r = uint64(o.val)
				}
				nv, reply = r, int64(old)
			}
		}
		if overflow && o.ov == ovFail {
			x.W.Null()
			continue
		}
		x.W.Int(reply)
		writeBits(e.Bytes(), o.off, o.width, nv)
		changed = true
	}
	if changed {
		x.Modified(key)
	}
}

// readBits reads width bits at bit offset off (most significant first),
// treating bytes past the end as zero.
func readBits(s []byte, off int64, width int) uint64 {
	var v uint64
	for i := 0; i < width; i++ {
		p := off + int64(i)
		var b uint64
		if p>>3 < int64(len(s)) {
			b = uint64(s[p>>3]>>(7-uint(p&7))) & 1
		}
		v = v<<1 | b
	}
	return v
}

func writeBits(s []byte, off int64, width int, v uint64) {
	for i := 0; i < width; i++ {
		p := off + int64(i)
		mask := byte(1) << (7 - uint(p&7))
		if v>>(uint(width-1-i))&1 != 0 {
			s[p>>3] |= mask
		} else {
			s[p>>3] &^= mask
		}
	}
}

func signExtend(v uint64, width int) int64 {
	if width < 64 && v&(1<<(width-1)) != 0 {
		v |= math.MaxUint64 << uint(width)
	}
	return int64(v)
}

// signedOverflow reports whether value+incr leaves the signed width-bit
// range and, if so, the value the overflow mode gives.
func signedOverflow(value, incr int64, width, mode int) (int64, bool) {
	maxv := int64(math.MaxInt64)
	if width < 64 {
		maxv = 1<<(width-1) - 1
	}
	minv := -maxv - 1
	maxIncr := int64(uint64(maxv) - uint64(value))
	minIncr := minv - value
	wrap := func() int64 {
		c := uint64(value) + uint64(incr)
		if width < 64 {
			mask := uint64(math.MaxUint64) << uint(width)
			if c&(1<<(width-1)) != 0 {
				c |= mask
			} else {
				c &^= mask
			}
		}
		return int64(c)
	}
	if value > maxv || (width != 64 && incr > maxIncr) || (value >= 0 && incr > 0 && incr > maxIncr) {
		if mode == ovWrap {
			return wrap(), true
		}
		return maxv, true
	}
	if value < minv || (width != 64 && incr < minIncr) || (value < 0 && incr < 0 && incr < minIncr) {
		if mode == ovWrap {
			return wrap(), true
		}
		return minv, true
	}
	return 0, false
}

// unsignedOverflow is signedOverflow for unsigned width-bit fields.
func unsignedOverflow(value uint64, incr int64, width, mode int) (uint64, bool) {
	maxv := uint64(1)<<uint(width) - 1
	maxIncr := int64(maxv - value)
	minIncr := -int64(value)
	wrap := func() uint64 { return (value + uint64(incr)) & maxv }
	if value > maxv || (incr > 0 && incr > maxIncr) {
		if mode == ovWrap {
			return wrap(), true
		}
		return maxv, true
	}
	if incr < 0 && incr < minIncr {
		if mode == ovWrap {
			return wrap(), true
		}
		return 0, true
	}
	return 0, false
}
