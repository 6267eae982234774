package rdb

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// The compact blobs redis-server embeds in RDB values: listpack (7.0's
// small-collection format), ziplist (its predecessor, still loaded), intset
// and zipmap (pre-2.6 hashes). Readers check every length against the blob
// so that corrupt input is an error, never a panic or a large allocation.

var errBlob = errors.New("rdb: corrupt listpack, ziplist or intset")

// elem is one element of a compact blob: a string, or an integer when
// isInt (the blob stores integers in binary).
type elem struct {
	s     []byte
	v     int64
	isInt bool
}

// appendTo appends the element's string form.
func (e elem) appendTo(b []byte) []byte {
	if e.isInt {
		return strconv.AppendInt(b, e.v, 10)
	}
	return append(b, e.s...)
}

// String returns the element's string form.
func (e elem) String() string {
	if e.isInt {
		return strconv.FormatInt(e.v, 10)
	}
	return string(e.s)
}

const (
	lpHeader   = 6
	lpEOF      = 0xff
	lpMaxCount = 65535 // the count field's "unknown, walk to count" value
)

// lpWalk calls fn for each element of listpack lp.
func lpWalk(lp []byte, fn func(elem) error) (int, error) {
	if len(lp) < lpHeader+1 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != lpEOF {
		return 0, errBlob
	}
	want := int(binary.LittleEndian.Uint16(lp[4:]))
	n := 0
	p := lpHeader
	for {
		if p >= len(lp) {
			return 0, errBlob
		}
		c := lp[p]
		if c == lpEOF {
			if p != len(lp)-1 {
				return 0, errBlob
			}
			break
		}
		var e elem
		var hdr, dlen int
		switch {
		case c&0x80 == 0:
			e, hdr = elem{v: int64(c), isInt: true}, 1
		case c&0xc0 == 0x80:
			hdr, dlen = 1, int(c&0x3f)
		case c&0xe0 == 0xc0:
			if p+2 > len(lp) {
				return 0, errBlob
			}
			u := uint16(c&0x1f)<<8 | uint16(lp[p+1])
			e, hdr = elem{v: int64(int16(u<<3) >> 3), isInt: true}, 2
		case c&0xf0 == 0xe0:
			if p+2 > len(lp) {
				return 0, errBlob
			}
			hdr, dlen = 2, int(c&0x0f)<<8|int(lp[p+1])
		case c == 0xf0:
			if p+5 > len(lp) {
				return 0, errBlob
			}
			l := binary.LittleEndian.Uint32(lp[p+1:])
			if uint64(l) > uint64(len(lp)) {
				return 0, errBlob
			}
			hdr, dlen = 5, int(l)
		case c >= 0xf1 && c <= 0xf4:
			w := [...]int{2, 3, 4, 8}[c-0xf1]
			if p+1+w > len(lp) {
				return 0, errBlob
			}
			var u uint64
			for k := w - 1; k >= 0; k-- {
				u = u<<8 | uint64(lp[p+1+k])
			}
			sh := uint(64 - 8*w)
			e, hdr = elem{v: int64(u<<sh) >> sh, isInt: true}, 1+w
		default:
			return 0, errBlob
		}
		if p+hdr+dlen > len(lp) {
			return 0, errBlob
		}
		if !e.isInt {
			e.s = lp[p+hdr : p+hdr+dlen]
		}
		l := hdr + dlen
		bl := backlenSize(l)
		if p+l+bl > len(lp) || decodeBacklen(lp[p+l:p+l+bl]) != l {
			return 0, errBlob
		}
		p += l + bl
		n++
		if fn != nil {
			if err := fn(e); err != nil {
				return 0, err
			}
		}
	}
	if want != lpMaxCount && want != n {
		return 0, errBlob
	}
	return n, nil
}

func backlenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// decodeBacklen reads a back length written most significant group first,
// every byte but the first flagged with the high bit.
func decodeBacklen(b []byte) int {
	v := 0
	for i, c := range b {
		if i > 0 && c&0x80 == 0 || i == 0 && len(b) > 1 && c&0x80 != 0 {
			return -1
		}
		v = v<<7 | int(c&0x7f)
	}
	return v
}

func appendBacklen(b []byte, l int) []byte {
	n := backlenSize(l)
	for i := n - 1; i >= 0; i-- {
		c := byte(l>>(7*uint(i))) & 0x7f
		if i != n-1 {
			c |= 0x80
		}
		b = append(b, c)
	}
	return b
}

// lpBuilder accumulates a listpack.
type lpBuilder struct {
	b []byte
	n int
}

func (l *lpBuilder) reset(b []byte) {
	l.b = append(b[:0], 0, 0, 0, 0, 0, 0)
	l.n = 0
}

// size is the listpack's size once finished.
func (l *lpBuilder) size() int { return len(l.b) + 1 }

// add appends s, as an integer when it is one in canonical form (as
// redis-server's listpack does).
func (l *lpBuilder) add(s string) {
	l.n++
	if v, ok := parseCanonicalInt(s); ok {
		l.addInt(v)
		return
	}
	start := len(l.b)
	n := len(s)
	switch {
	case n < 64:
		l.b = append(l.b, 0x80|byte(n))
	case n < 4096:
		l.b = append(l.b, 0xe0|byte(n>>8), byte(n))
	default:
		l.b = append(l.b, 0xf0, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	}
	l.b = append(l.b, s...)
	l.b = appendBacklen(l.b, len(l.b)-start)
}

func (l *lpBuilder) addInt(v int64) {
	start := len(l.b)
	switch {
	case v >= 0 && v <= 127:
		l.b = append(l.b, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint16(v) & 0x1fff
		l.b = append(l.b, 0xc0|byte(u>>8), byte(u))
	case v >= -1<<15 && v < 1<<15:
		l.b = append(l.b, 0xf1, byte(v), byte(v>>8))
	case v >= -1<<23 && v < 1<<23:
		l.b = append(l.b, 0xf2, byte(v), byte(v>>8), byte(v>>16))
	case v >= -1<<31 && v < 1<<31:
		l.b = append(l.b, 0xf3, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	default:
		l.b = append(l.b, 0xf4)
		l.b = binary.LittleEndian.AppendUint64(l.b, uint64(v))
	}
	l.b = appendBacklen(l.b, len(l.b)-start)
}

// finish terminates the listpack and fills in its header.
func (l *lpBuilder) finish() []byte {
	l.b = append(l.b, lpEOF)
	binary.LittleEndian.PutUint32(l.b, uint32(len(l.b)))
	binary.LittleEndian.PutUint16(l.b[4:], uint16(min(l.n, lpMaxCount)))
	return l.b
}

// zlWalk calls fn for each element of ziplist zl.
func zlWalk(zl []byte, fn func(elem) error) (int, error) {
	if len(zl) < 11 || int(binary.LittleEndian.Uint32(zl)) != len(zl) || zl[len(zl)-1] != 0xff {
		return 0, errBlob
	}
	want := int(binary.LittleEndian.Uint16(zl[8:]))
	p, n, prev := 10, 0, 0
	for {
		if p >= len(zl) {
			return 0, errBlob
		}
		if zl[p] == 0xff {
			if p != len(zl)-1 {
				return 0, errBlob
			}
			break
		}
		start := p
		var pl int
		if zl[p] < 254 {
			pl = int(zl[p])
			p++
		} else {
			if zl[p] != 254 || p+5 > len(zl) {
				return 0, errBlob
			}
			pl = int(binary.LittleEndian.Uint32(zl[p+1:]))
			p += 5
		}
		if pl != prev {
			return 0, errBlob
		}
		if p >= len(zl) {
			return 0, errBlob
		}
		c := zl[p]
		var e elem
		var hdr, dlen int
		switch c >> 6 {
		case 0:
			hdr, dlen = 1, int(c&0x3f)
		case 1:
			if p+2 > len(zl) {
				return 0, errBlob
			}
			hdr, dlen = 2, int(c&0x3f)<<8|int(zl[p+1])
		case 2:
			if c != 0x80 || p+5 > len(zl) {
				return 0, errBlob
			}
			l := binary.BigEndian.Uint32(zl[p+1:])
			if uint64(l) > uint64(len(zl)) {
				return 0, errBlob
			}
			hdr, dlen = 5, int(l)
		default:
			var w int
			switch c {
			case 0xc0:
				w = 2
			case 0xd0:
				w = 4
			case 0xe0:
				w = 8
			case 0xf0:
				w = 3
			case 0xfe:
				w = 1
			default:
				if c >= 0xf1 && c <= 0xfd {
					e = elem{v: int64(c&0x0f) - 1, isInt: true}
					hdr = 1
				} else {
					return 0, errBlob
				}
			}
			if w > 0 {
				if p+1+w > len(zl) {
					return 0, errBlob
				}
				var u uint64
				for k := w - 1; k >= 0; k-- {
					u = u<<8 | uint64(zl[p+1+k])
				}
				sh := uint(64 - 8*w)
				e, hdr = elem{v: int64(u<<sh) >> sh, isInt: true}, 1+w
			}
		}
		if p+hdr+dlen > len(zl) {
			return 0, errBlob
		}
		if !e.isInt {
			e.s = zl[p+hdr : p+hdr+dlen]
		}
		p += hdr + dlen
		prev = p - start
		n++
		if fn != nil {
			if err := fn(e); err != nil {
				return 0, err
			}
		}
	}
	if want != 65535 && want != n {
		return 0, errBlob
	}
	return n, nil
}

// intsetWalk calls fn for each integer of intset is, checking that they
// ascend strictly.
func intsetWalk(is []byte, fn func(int64) error) (int, error) {
	if len(is) < 8 {
		return 0, errBlob
	}
	w := int(binary.LittleEndian.Uint32(is))
	n := binary.LittleEndian.Uint32(is[4:])
	if w != 2 && w != 4 && w != 8 || uint64(n)*uint64(w) != uint64(len(is)-8) {
		return 0, errBlob
	}
	var last int64
	for i := 0; i < int(n); i++ {
		p := is[8+i*w:]
		var v int64
		switch w {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		default:
			v = int64(binary.LittleEndian.Uint64(p))
		}
		if i > 0 && v <= last {
			return 0, errBlob
		}
		last = v
		if err := fn(v); err != nil {
			return 0, err
		}
	}
	return int(n), nil
}

func appendIntset(b []byte, vs []int64) []byte {
	w := 2
	for _, v := range vs {
		if v < -1<<31 || v >= 1<<31 {
			w = 8
			break
		}
		if v < -1<<15 || v >= 1<<15 {
			w = 4
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(w))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vs)))
	for _, v := range vs {
		switch w {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

// zipmapWalk calls fn for each field and value of a zipmap, the hash
// encoding of RDB files before Redis 2.6.
func zipmapWalk(zm []byte, fn func(field, value []byte) error) error {
	if len(zm) < 2 {
		return errBlob
	}
	p := 1
	readLen := func() (int, bool) {
		if p >= len(zm) {
			return 0, false
		}
		c := zm[p]
		switch {
		case c < 254:
			p++
			return int(c), true
		case c == 254 && p+5 <= len(zm):
			l := binary.LittleEndian.Uint32(zm[p+1:])
			p += 5
			return int(l), uint64(l) <= uint64(len(zm))
		}
		return 0, false
	}
	for {
		if p >= len(zm) {
			return errBlob
		}
		if zm[p] == 0xff {
			if p != len(zm)-1 {
				return errBlob
			}
			return nil
		}
		fl, ok := readLen()
		if !ok || p+fl > len(zm) {
			return errBlob
		}
		f := zm[p : p+fl]
		p += fl
		vl, ok := readLen()
		if !ok || p >= len(zm) {
			return errBlob
		}
		free := int(zm[p])
		p++
		if p+vl+free > len(zm) {
			return errBlob
		}
		v := zm[p : p+vl]
		p += vl + free
		if err := fn(f, v); err != nil {
			return err
		}
	}
}

// parseCanonicalInt parses s if it is an int64 written the one way
// redis-server writes it: optional '-', no leading zeros, no '+'.
func parseCanonicalInt[T string | []byte](s T) (int64, bool) {
	n := len(s)
	if n == 0 || n > 20 {
		return 0, false
	}
	if n == 1 && s[0] == '0' {
		return 0, true
	}
	i := 0
	neg := s[0] == '-'
	if neg {
		i = 1
	}
	if i >= n || s[i] < '1' || s[i] > '9' {
		return 0, false
	}
	var u uint64
	for ; i < n; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (1<<64-1)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u < uint64(c-'0') {
			return 0, false
		}
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}
