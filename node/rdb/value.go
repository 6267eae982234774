package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/slotd/slotd/node/keyspace"
)

// RDB value type codes (the byte before a key, or the first byte of a DUMP
// payload).
const (
	TypeString          = 0
	TypeList            = 1
	TypeSet             = 2
	TypeZSet            = 3
	TypeHash            = 4
	TypeZSet2           = 5
	TypeModule          = 6
	TypeModule2         = 7
	TypeHashZipmap      = 9
	TypeListZiplist     = 10
	TypeSetIntset       = 11
	TypeZSetZiplist     = 12
	TypeHashZiplist     = 13
	TypeListQuicklist   = 14
	TypeStreamListpacks = 15
	TypeHashListpack    = 16
	TypeZSetListpack    = 17
	TypeListQuicklist2  = 18
	TypeStreamListpack2 = 19
	TypeSetListpack     = 20 // Redis 7.2
	TypeStreamListpack3 = 21 // Redis 7.2
)

// Errors returned by the decoders (besides ErrTruncated).
var (
	// ErrCorrupt reports bytes that do not form a valid value or file.
	ErrCorrupt = errors.New("rdb: corrupt data")
	// ErrEmptyKey reports a collection with no elements, which
	// redis-server refuses to restore and skips when loading a file.
	ErrEmptyKey = errors.New("rdb: empty collection")
	// ErrUnsupported reports a value slotd cannot hold (streams and
	// module types).
	ErrUnsupported = errors.New("rdb: unsupported value type")
)

// Length encoding: the top two bits of the first byte select 6-bit,
// 14-bit, 32/64-bit big-endian lengths, or (11) a special string encoding.
const (
	lenEncInt8  = 0
	lenEncInt16 = 1
	lenEncInt32 = 2
	lenEncLZF   = 3
)

// lzfMaxExpand bounds the ratio of expanded to compressed LZF size (a
// three-byte back reference yields at most 264 bytes), so a forged length
// is rejected before anything is allocated for it.
const lzfMaxExpand = 90

func appendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, 0x40|byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		b = append(b, 0x80)
		return binary.BigEndian.AppendUint32(b, uint32(n))
	}
	b = append(b, 0x81)
	return binary.BigEndian.AppendUint64(b, n)
}

// readLen reads a length, or with enc set the special string encoding
// number.
func (s *source) readLen() (n uint64, enc bool, err error) {
	c, err := s.byte()
	if err != nil {
		return 0, false, err
	}
	switch c >> 6 {
	case 0:
		return uint64(c & 0x3f), false, nil
	case 1:
		d, err := s.byte()
		if err != nil {
			return 0, false, err
		}
		return uint64(c&0x3f)<<8 | uint64(d), false, nil
	case 2:
		switch c {
		case 0x80:
			b, err := s.take(4)
			if err != nil {
				return 0, false, err
			}
			return uint64(binary.BigEndian.Uint32(b)), false, nil
		case 0x81:
			b, err := s.take(8)
			if err != nil {
				return 0, false, err
			}
			return binary.BigEndian.Uint64(b), false, nil
		}
		return 0, false, fmt.Errorf("%w: unknown length encoding %#x", ErrCorrupt, c)
	}
	return uint64(c & 0x3f), true, nil
}

// length reads a plain length (no special encoding) that must fit an int.
func (s *source) length() (int, error) {
	n, enc, err := s.readLen()
	if err != nil {
		return 0, err
	}
	if enc || n > math.MaxInt {
		return 0, fmt.Errorf("%w: bad length", ErrCorrupt)
	}
	return int(n), nil
}

// scratchMax bounds the scratch buffer a source keeps between strings.
const scratchMax = 64 << 10

// readString reads a string in any encoding. The result may alias the
// input window or the source's scratch buffer: it is valid until the next
// read.
func (s *source) readString() ([]byte, error) {
	n, enc, err := s.readLen()
	if err != nil {
		return nil, err
	}
	if !enc {
		if n > math.MaxInt {
			return nil, ErrTruncated
		}
		return s.take(int(n))
	}
	switch n {
	case lenEncInt8:
		c, err := s.byte()
		if err != nil {
			return nil, err
		}
		s.scratch = strconv.AppendInt(s.scratch[:0], int64(int8(c)), 10)
		return s.scratch, nil
	case lenEncInt16:
		b, err := s.take(2)
		if err != nil {
			return nil, err
		}
		s.scratch = strconv.AppendInt(s.scratch[:0], int64(int16(binary.LittleEndian.Uint16(b))), 10)
		return s.scratch, nil
	case lenEncInt32:
		b, err := s.take(4)
		if err != nil {
			return nil, err
		}
		s.scratch = strconv.AppendInt(s.scratch[:0], int64(int32(binary.LittleEndian.Uint32(b))), 10)
		return s.scratch, nil
	case lenEncLZF:
		clen, err := s.length()
		if err != nil {
			return nil, err
		}
		ulen, err := s.length()
		if err != nil {
			return nil, err
		}
		if uint64(ulen) > uint64(clen)*lzfMaxExpand+64 {
			return nil, fmt.Errorf("%w: LZF length %d from %d bytes", ErrCorrupt, ulen, clen)
		}
		in, err := s.take(clen)
		if err != nil {
			return nil, err
		}
		out, err := lzfDecompress(s.scratch[:0], in, ulen)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		if cap(out) <= scratchMax {
			s.scratch = out
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unknown string encoding %d", ErrCorrupt, n)
}

// appendString writes s as redis-server does: a short canonical integer
// that fits 32 bits in binary, a string over 20 bytes LZF-compressed when
// compress is set and that saves more than four bytes, else as is.
func appendString[T string | []byte](b []byte, s T, compress bool) []byte {
	n := len(s)
	if n <= 11 {
		if v, ok := parseCanonicalInt(s); ok {
			switch {
			case v >= math.MinInt8 && v <= math.MaxInt8:
				return append(b, 0xc0|lenEncInt8, byte(v))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				return append(b, 0xc0|lenEncInt16, byte(v), byte(v>>8))
			case v >= math.MinInt32 && v <= math.MaxInt32:
				return append(b, 0xc0|lenEncInt32, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
			}
		}
	}
	if compress && n > 20 {
		start := len(b)
		var ok bool
		b, ok = lzfCompress(b, []byte(s), n-4)
		if ok {
			clen := len(b) - start
			var hb [19]byte
			h := append(hb[:0], 0xc0|lenEncLZF)
			h = appendLen(h, uint64(clen))
			h = appendLen(h, uint64(n))
			b = append(b, h...)
			copy(b[start+len(h):], b[start:start+clen])
			copy(b[start:], h)
			return b
		}
		b = b[:start]
	}
	b = appendLen(b, uint64(n))
	return append(b, s...)
}

// scratchPool holds the buffers listpacks and intsets are built in before
// they are written as strings, so that encoding a keyspace (a snapshot)
// does not leave one garbage buffer per collection.
var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func getScratch() *[]byte { return scratchPool.Get().(*[]byte) }

// putScratch returns b, the grown buffer of p, to the pool; very large
// ones are dropped.
func putScratch(p *[]byte, b []byte) {
	if cap(b) > 64<<10 {
		return
	}
	*p = b[:0]
	scratchPool.Put(p)
}

// AppendValue appends e as an RDB object (type byte and encoded value), in
// the encoding redis-server 7.0 would choose for it under the limits in
// force, so that a redis-server loading it reports the same OBJECT
// ENCODING. Strings over 20 bytes are LZF-compressed when that pays, as
// with redis-server's default rdbcompression yes.
func AppendValue(dst []byte, e *keyspace.Entry) []byte {
	return appendValue(dst, e, true)
}

// AppendValueUncompressed is AppendValue without LZF (rdbcompression no).
func AppendValueUncompressed(dst []byte, e *keyspace.Entry) []byte {
	return appendValue(dst, e, false)
}

func appendValue(b []byte, e *keyspace.Entry, compress bool) []byte {
	b = append(b, valueType(e))
	return appendBody(b, e, compress)
}

// valueType is the type code AppendValue writes for e.
func valueType(e *keyspace.Entry) byte {
	switch e.Kind {
	case keyspace.KindString:
		return TypeString
	case keyspace.KindList:
		return TypeListQuicklist2
	case keyspace.KindHash:
		if e.Obj().(*keyspace.Hash).IsListpack() {
			return TypeHashListpack
		}
		return TypeHash
	case keyspace.KindSet:
		if e.Obj().(*keyspace.Set).IsIntset() {
			return TypeSetIntset
		}
		return TypeSet
	case keyspace.KindZSet:
		if e.Obj().(*keyspace.ZSet).IsListpack() {
			return TypeZSetListpack
		}
		return TypeZSet2
	}
	panic("rdb: value of an entry of unknown kind")
}

// appendBody writes e's value after its type code.
func appendBody(b []byte, e *keyspace.Entry, compress bool) []byte {
	switch e.Kind {
	case keyspace.KindString:
		return appendString(b, e.Bytes(), compress)
	case keyspace.KindList:
		return appendList(b, e.Obj().(*keyspace.List), compress)
	case keyspace.KindHash:
		h := e.Obj().(*keyspace.Hash)
		if h.IsListpack() {
			var lp lpBuilder
			sp := getScratch()
			lp.reset(*sp)
			h.Each(func(f, v string) bool {
				lp.add(f)
				lp.add(v)
				return true
			})
			b = appendString(b, lp.finish(), compress)
			putScratch(sp, lp.b)
			return b
		}
		b = appendLen(b, uint64(h.Len()))
		h.Each(func(f, v string) bool {
			b = appendString(b, f, compress)
			b = appendString(b, v, compress)
			return true
		})
		return b
	case keyspace.KindSet:
		st := e.Obj().(*keyspace.Set)
		if st.IsIntset() {
			vs := make([]int64, 0, st.Len())
			st.Each(func(m []byte) bool {
				v, _ := parseCanonicalInt(m)
				vs = append(vs, v)
				return true
			})
			sp := getScratch()
			is := appendIntset((*sp)[:0], vs)
			b = appendString(b, is, compress)
			putScratch(sp, is)
			return b
		}
		b = appendLen(b, uint64(st.Len()))
		st.Each(func(m []byte) bool {
			b = appendString(b, m, compress)
			return true
		})
		return b
	case keyspace.KindZSet:
		z := e.Obj().(*keyspace.ZSet)
		if z.IsListpack() {
			var lp lpBuilder
			sp := getScratch()
			lp.reset(*sp)
			var sb [32]byte
			for n := z.First(); n != nil; n = n.Next() {
				lp.add(n.Member)
				lp.add(string(appendScore(sb[:0], n.Score)))
			}
			b = appendString(b, lp.finish(), compress)
			putScratch(sp, lp.b)
			return b
		}
		// Highest first, as redis-server writes it, so that a loader that
		// inserts at the head does no search.
		b = appendLen(b, uint64(z.Len()))
		for n := z.Last(); n != nil; n = n.Prev() {
			b = appendString(b, n.Member, compress)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(n.Score))
		}
		return b
	}
	panic("rdb: value of an entry of unknown kind")
}

// appendScore formats a score as a listpack holds it: integers in the
// range a double represents exactly as integers, others with 17
// significant digits.
func appendScore(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case f == 0 && math.Signbit(f):
		return append(b, "-0"...)
	case f > -(1<<52-1) && f < 1<<52 && f == math.Trunc(f):
		return strconv.AppendInt(b, int64(f), 10)
	}
	return strconv.AppendFloat(b, f, 'g', 17, 64)
}

// quicklist node limits of redis-server 7.0: the byte sizes selected by a
// negative list-max-listpack-size, the size a count-limited node never
// exceeds, and the element size from which an element gets a node of its
// own.
var qlSizeLimits = [...]int{4096, 8192, 16384, 32768, 65536}

const (
	qlSafetyLimit  = 8192
	qlPackedThresh = 1 << 30
	qlPlain        = 1
	qlPacked       = 2
)

// qlAllow reports whether a quicklist node of size bytes holding count
// elements takes one more element of sz bytes, as redis-server decides
// when elements are pushed at the tail one by one.
func qlAllow(size, count, fill, sz int) bool {
	if sz >= qlPackedThresh {
		return false
	}
	over := 1
	if sz >= 254 {
		over = 5
	}
	switch {
	case sz < 64:
		over++
	case sz < 16384:
		over += 2
	default:
		over += 5
	}
	nsz := size + sz + over
	if fill < 0 && -fill-1 < len(qlSizeLimits) {
		if nsz <= qlSizeLimits[-fill-1] {
			return true
		}
	}
	if nsz > qlSafetyLimit {
		return false
	}
	return count < fill
}

// lpEntrySize is the bytes s takes as a listpack entry.
func lpEntrySize(s string) int {
	var l int
	if v, ok := parseCanonicalInt(s); ok {
		switch {
		case v >= 0 && v <= 127:
			l = 1
		case v >= -4096 && v <= 4095:
			l = 2
		case v >= -1<<15 && v < 1<<15:
			l = 3
		case v >= -1<<23 && v < 1<<23:
			l = 4
		case v >= -1<<31 && v < 1<<31:
			l = 5
		default:
			l = 9
		}
	} else {
		switch n := len(s); {
		case n < 64:
			l = 1 + n
		case n < 4096:
			l = 2 + n
		default:
			l = 5 + n
		}
	}
	return l + backlenSize(l)
}

// appendList writes a list as a quicklist of listpacks, split into nodes
// the way redis-server splits a list built by pushing at the tail.
func appendList(b []byte, l *keyspace.List, compress bool) []byte {
	fill := keyspace.CurrentLimits().ListMaxListpackSize
	n := l.Len()
	// First pass: node boundaries (count of elements per node; a plain
	// node is marked by a negative count).
	var nodes []int
	size, count := 0, 0
	open := false
	for i := 0; i < n; i++ {
		s := l.Index(i)
		if len(s) >= qlPackedThresh {
			if open {
				nodes = append(nodes, count)
				open = false
			}
			nodes = append(nodes, -1)
			continue
		}
		if open && qlAllow(size, count, fill, len(s)) {
			size += lpEntrySize(s)
			count++
			continue
		}
		if open {
			nodes = append(nodes, count)
		}
		open, size, count = true, lpHeader+1+lpEntrySize(s), 1
	}
	if open {
		nodes = append(nodes, count)
	}
	b = appendLen(b, uint64(len(nodes)))
	var lp lpBuilder
	sp := getScratch()
	lp.b = *sp
	defer func() { putScratch(sp, lp.b) }()
	i := 0
	for _, c := range nodes {
		if c < 0 {
			b = appendLen(b, qlPlain)
			b = appendString(b, l.Index(i), compress)
			i++
			continue
		}
		lp.reset(lp.b)
		for k := 0; k < c; k++ {
			lp.add(l.Index(i))
			i++
		}
		b = appendLen(b, qlPacked)
		b = appendString(b, lp.finish(), compress)
	}
	return b
}

// ParseValue reads an RDB object (type byte and value) from the start of b
// and returns it with the bytes after it. Collections get the encodings
// redis-server would give them when loading, under the limits in force.
func ParseValue(b []byte) (*keyspace.Entry, []byte, error) {
	s := source{buf: b}
	t, err := s.byte()
	if err != nil {
		return nil, b, err
	}
	e, err := s.readValue(t)
	if err != nil {
		return nil, b, err
	}
	return e, b[s.pos:], nil
}

func corrupt(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, a...)...)
}

// readValue reads a value of type t.
func (s *source) readValue(t byte) (*keyspace.Entry, error) {
	switch t {
	case TypeString:
		v, err := s.readString()
		if err != nil {
			return nil, err
		}
		if uint64(len(v)) > keyspace.MaxString {
			return nil, corrupt("string too long")
		}
		return keyspace.NewString(v), nil
	case TypeList:
		n, err := s.length()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, ErrEmptyKey
		}
		l := keyspace.NewListSize(min(n, s.remaining()))
		a := keyspace.NewArena(0)
		for i := 0; i < n; i++ {
			v, err := s.readString()
			if err != nil {
				return nil, err
			}
			l.PushBack(a.Str(v))
		}
		return keyspace.NewObject(l), nil
	case TypeSet:
		n, err := s.length()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, ErrEmptyKey
		}
		st := keyspace.NewSetSize(min(n, s.remaining()))
		a := keyspace.NewArena(0)
		for i := 0; i < n; i++ {
			v, err := s.readString()
			if err != nil {
				return nil, err
			}
			var added bool
			if st.IsIntset() {
				added = st.Add(v)
			} else {
				added = st.AddString(a.Str(v))
			}
			if !added {
				return nil, corrupt("duplicate set member")
			}
		}
		return keyspace.NewObject(st), nil
	case TypeZSet, TypeZSet2:
		n, err := s.length()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, ErrEmptyKey
		}
		z := keyspace.NewZSetSize(min(n, s.remaining()))
		a := keyspace.NewArena(0)
		for i := 0; i < n; i++ {
			m, err := s.readString()
			if err != nil {
				return nil, err
			}
			ms := a.Str(m)
			var f float64
			if t == TypeZSet2 {
				fb, err := s.take(8)
				if err != nil {
					return nil, err
				}
				f = math.Float64frombits(binary.LittleEndian.Uint64(fb))
			} else if f, err = s.readStringDouble(); err != nil {
				return nil, err
			}
			if err := zadd(z, ms, f); err != nil {
				return nil, err
			}
		}
		z.Normalize()
		return keyspace.NewObject(z), nil
	case TypeHash:
		n, err := s.length()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, ErrEmptyKey
		}
		h := keyspace.NewHashSize(min(n, s.remaining()))
		a := keyspace.NewArena(0)
		for i := 0; i < n; i++ {
			f, err := s.readString()
			if err != nil {
				return nil, err
			}
			fs := a.Str(f) // copied: reading the value may move the window
			v, err := s.readString()
			if err != nil {
				return nil, err
			}
			if !h.SetOwned(fs, a.Str(v)) {
				return nil, corrupt("duplicate hash field")
			}
		}
		return keyspace.NewObject(h), nil
	case TypeHashZipmap:
		blob, err := s.readString()
		if err != nil {
			return nil, err
		}
		h := keyspace.NewHash()
		err = zipmapWalk(blob, func(f, v []byte) error {
			if !h.SetString(f, string(v)) {
				return corrupt("duplicate hash field")
			}
			return nil
		})
		if err != nil {
			return nil, wrapBlob(err)
		}
		if h.Len() == 0 {
			return nil, ErrEmptyKey
		}
		return keyspace.NewObject(h), nil
	case TypeListZiplist, TypeListQuicklist, TypeListQuicklist2:
		return s.readList(t)
	case TypeSetIntset:
		blob, err := s.readString()
		if err != nil {
			return nil, err
		}
		st := keyspace.NewSet()
		var nb [24]byte
		_, err = intsetWalk(blob, func(v int64) error {
			st.Add(strconv.AppendInt(nb[:0], v, 10))
			return nil
		})
		if err != nil {
			return nil, wrapBlob(err)
		}
		if st.Len() == 0 {
			return nil, ErrEmptyKey
		}
		return keyspace.NewObject(st), nil
	case TypeSetListpack:
		blob, err := s.readString()
		if err != nil {
			return nil, err
		}
		st := keyspace.NewSet()
		var nb []byte
		_, err = lpWalk(blob, func(e elem) error {
			nb = e.appendTo(nb[:0])
			if !st.Add(nb) {
				return corrupt("duplicate set member")
			}
			return nil
		})
		if err != nil {
			return nil, wrapBlob(err)
		}
		if st.Len() == 0 {
			return nil, ErrEmptyKey
		}
		return keyspace.NewObject(st), nil
	case TypeZSetZiplist, TypeZSetListpack:
		blob, err := s.readString()
		if err != nil {
			return nil, err
		}
		z := keyspace.NewZSetSize(blobCount(t == TypeZSetZiplist, blob) / 2)
		a := keyspace.NewArena(len(blob))
		err = walkPairs(t == TypeZSetZiplist, blob, &a, "member without score", func(member string, e elem) error {
			f := float64(e.v)
			if !e.isInt {
				var err error
				if f, err = strconv.ParseFloat(string(e.s), 64); err != nil && !errors.Is(err, strconv.ErrRange) {
					return corrupt("bad score")
				}
			}
			return zadd(z, member, f)
		})
		if err != nil {
			return nil, err
		}
		if z.Len() == 0 {
			return nil, ErrEmptyKey
		}
		return keyspace.NewObject(z), nil
	case TypeHashZiplist, TypeHashListpack:
		blob, err := s.readString()
		if err != nil {
			return nil, err
		}
		h := keyspace.NewHashSize(blobCount(t == TypeHashZiplist, blob) / 2)
		a := keyspace.NewArena(len(blob))
		err = walkPairs(t == TypeHashZiplist, blob, &a, "field without value", func(field string, e elem) error {
			if !h.SetOwned(field, e.str(&a)) {
				return corrupt("duplicate hash field")
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if h.Len() == 0 {
			return nil, ErrEmptyKey
		}
		return keyspace.NewObject(h), nil
	case TypeModule, TypeModule2:
		return nil, fmt.Errorf("%w: module value (type %d)", ErrUnsupported, t)
	case TypeStreamListpacks, TypeStreamListpack2, TypeStreamListpack3:
		return nil, fmt.Errorf("%w: stream value (type %d)", ErrUnsupported, t)
	}
	return nil, corrupt("unknown value type %d", t)
}

// walkPairs walks a ziplist or listpack of alternating names and values
// (a sorted set's members and scores, a hash's fields and values), calling
// fn with each name, copied into a, and its value. An odd count of
// elements is the error unpaired names.
func walkPairs(ziplist bool, blob []byte, a *keyspace.Arena, unpaired string, fn func(name string, v elem) error) error {
	walk := lpWalk
	if ziplist {
		walk = zlWalk
	}
	var name string
	odd := false
	_, err := walk(blob, func(e elem) error {
		if !odd {
			name, odd = e.str(a), true
			return nil
		}
		odd = false
		return fn(name, e)
	})
	if err != nil {
		return wrapBlob(err)
	}
	if odd {
		return corrupt("%s", unpaired)
	}
	return nil
}

func wrapBlob(err error) error {
	if err == errBlob {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return err
}

func zadd(z *keyspace.ZSet, m string, f float64) error {
	if math.IsNaN(f) {
		return corrupt("NaN score")
	}
	if z.Get([]byte(m)) != nil {
		return corrupt("duplicate sorted set member")
	}
	z.Insert(m, f)
	return nil
}

// readStringDouble reads the score format of RDB versions before 8: a
// length byte (253 NaN, 254 +inf, 255 -inf) and that many ASCII bytes.
func (s *source) readStringDouble() (float64, error) {
	c, err := s.byte()
	if err != nil {
		return 0, err
	}
	switch c {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	b, err := s.take(int(c))
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, corrupt("bad double %q", b)
	}
	return f, nil
}

// readList reads the three compact list layouts: one ziplist, a quicklist
// of ziplists, and a quicklist of listpack or plain nodes.
func (s *source) readList(t byte) (*keyspace.Entry, error) {
	l := keyspace.NewList()
	var a keyspace.Arena
	push := func(e elem) error {
		l.PushBack(e.str(&a))
		return nil
	}
	nodes := 1
	if t != TypeListZiplist {
		var err error
		if nodes, err = s.length(); err != nil {
			return nil, err
		}
	}
	for i := 0; i < nodes; i++ {
		container := qlPacked
		if t == TypeListQuicklist2 {
			c, err := s.length()
			if err != nil {
				return nil, err
			}
			if c != qlPlain && c != qlPacked {
				return nil, corrupt("quicklist container %d", c)
			}
			container = c
		}
		blob, err := s.readString()
		if err != nil {
			return nil, err
		}
		if i == 0 {
			a = keyspace.NewArena(len(blob))
		}
		switch {
		case container == qlPlain:
			l.PushBack(a.Str(blob))
		case t == TypeListQuicklist2:
			_, err = lpWalk(blob, push)
		default:
			_, err = zlWalk(blob, push)
		}
		if err != nil {
			return nil, wrapBlob(err)
		}
	}
	if l.Len() == 0 {
		return nil, ErrEmptyKey
	}
	return keyspace.NewObject(l), nil
}

// skipString reads past a string in any encoding without decoding it.
func (s *source) skipString() error {
	n, enc, err := s.readLen()
	if err != nil {
		return err
	}
	if !enc {
		if n > math.MaxInt {
			return ErrTruncated
		}
		_, err = s.take(int(n))
		return err
	}
	switch n {
	case lenEncInt8:
		_, err = s.take(1)
	case lenEncInt16:
		_, err = s.take(2)
	case lenEncInt32:
		_, err = s.take(4)
	case lenEncLZF:
		var clen int
		if clen, err = s.length(); err != nil {
			return err
		}
		if _, err = s.length(); err != nil {
			return err
		}
		_, err = s.take(clen)
	default:
		err = fmt.Errorf("%w: unknown string encoding %d", ErrCorrupt, n)
	}
	return err
}

// skipValue reads past a value of type t, checking only its framing (the
// lengths that say where it ends). A type it does not know is read by
// readValue, for its error.
func (s *source) skipValue(t byte) error {
	switch t {
	case TypeString, TypeHashZipmap, TypeListZiplist, TypeSetIntset, TypeZSetZiplist,
		TypeHashZiplist, TypeHashListpack, TypeZSetListpack, TypeSetListpack:
		return s.skipString()
	case TypeList, TypeSet, TypeZSet, TypeZSet2, TypeHash, TypeListQuicklist, TypeListQuicklist2:
		n, err := s.length()
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if t == TypeListQuicklist2 {
				if _, err := s.length(); err != nil {
					return err
				}
			}
			if err := s.skipString(); err != nil {
				return err
			}
			switch t {
			case TypeHash:
				err = s.skipString()
			case TypeZSet2:
				_, err = s.take(8)
			case TypeZSet:
				var c byte
				if c, err = s.byte(); err == nil && c < 253 {
					_, err = s.take(int(c))
				}
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	_, err := s.readValue(t)
	return err
}

// rawValue reads past a value of type t and returns its bytes, valid
// until the next read.
func (s *source) rawValue(t byte) ([]byte, error) {
	s.mark, s.marked = s.pos, true
	err := s.skipValue(t)
	s.marked = false
	if err != nil {
		return nil, err
	}
	return s.buf[s.mark:s.pos:s.pos], nil
}

// DecodeValue decodes the body of a value of type t, as a Handler's Raw
// callback gets it, the way the Key callback would have got it decoded.
// On error it also returns how far into body decoding got.
func DecodeValue(t byte, body []byte) (*keyspace.Entry, int, error) {
	var d Decoder
	return d.Decode(t, body)
}

// A Decoder is DecodeValue with buffers kept from one value to the next.
// It is not safe for concurrent use.
type Decoder struct {
	s source
}

// Decode is DecodeValue.
func (d *Decoder) Decode(t byte, body []byte) (*keyspace.Entry, int, error) {
	d.s.buf, d.s.pos = body, 0
	e, err := d.s.readValue(t)
	if err == nil && d.s.pos != len(body) {
		err = corrupt("value shorter than its framing")
	}
	d.s.buf = nil
	return e, d.s.pos, err
}

// blobCount is the element count a listpack (or ziplist) header
// announces, 0 when it is not given or the blob is too short.
func blobCount(ziplist bool, blob []byte) int {
	at := 4
	if ziplist {
		at = 8
	}
	if len(blob) < at+2 {
		return 0
	}
	n := int(binary.LittleEndian.Uint16(blob[at:]))
	if n == 65535 {
		return 0
	}
	return n
}

// str returns the string form of e, made in a.
func (e elem) str(a *keyspace.Arena) string {
	if !e.isInt {
		return a.Str(e.s)
	}
	var nb [20]byte
	return a.Str(strconv.AppendInt(nb[:0], e.v, 10))
}
