package rdb

import (
	"errors"
	"sync"
)

// LZF, the compressor redis-server uses for long strings. A compressed
// stream is a series of runs, each led by a control byte c:
//
//   - c < 32: a literal of c+1 bytes follows.
//   - otherwise a back reference: length field c>>5 (7 means one more byte
//     adds to it), offset high bits c&31, then the offset's low byte. The
//     reference copies length+2 bytes starting offset+1 bytes back; the
//     source may overlap the bytes being produced.

const (
	lzfMaxLit = 32
	lzfMaxOff = 1 << 13
	lzfMaxRef = 7 + 255 + 2
	lzfHLog   = 14
)

var htabPool = sync.Pool{New: func() any { return new([1 << lzfHLog]int32) }}

var errLZF = errors.New("rdb: invalid LZF data")

// lzfDecompress expands in into exactly n bytes appended to dst.
func lzfDecompress(dst, in []byte, n int) ([]byte, error) {
	base := len(dst)
	end := base + n
	if cap(dst) < end {
		nd := make([]byte, base, end)
		copy(nd, dst)
		dst = nd
	}
	for i := 0; i < len(in); {
		c := int(in[i])
		i++
		if c < 32 {
			c++
			if i+c > len(in) || len(dst)+c > end {
				return nil, errLZF
			}
			dst = append(dst, in[i:i+c]...)
			i += c
			continue
		}
		l := c >> 5
		if l == 7 {
			if i >= len(in) {
				return nil, errLZF
			}
			l += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, errLZF
		}
		ref := len(dst) - (c&31)<<8 - int(in[i]) - 1
		i++
		l += 2
		if ref < base || len(dst)+l > end {
			return nil, errLZF
		}
		for k := 0; k < l; k++ {
			dst = append(dst, dst[ref+k])
		}
	}
	if len(dst) != end {
		return nil, errLZF
	}
	return dst, nil
}

// lzfCompress appends the compressed form of in to dst, or returns ok
// false if it would take more than max bytes (redis-server stores a string
// compressed only when that saves more than four bytes).
func lzfCompress(dst, in []byte, max int) ([]byte, bool) {
	if len(in) == 0 || max <= 0 {
		return dst, false
	}
	base := len(dst)
	// htab holds position+1 of the last 3-byte sequence with each hash. A
	// short input gets a small table: clearing the full one would cost more
	// than compressing a key.
	hlog := uint(6)
	for hlog < lzfHLog && 1<<hlog < len(in) {
		hlog++
	}
	hp := htabPool.Get().(*[1 << lzfHLog]int32)
	defer htabPool.Put(hp)
	htab := hp[:1<<hlog]
	clear(htab)
	hash := func(p int) uint32 {
		v := uint32(in[p])<<16 | uint32(in[p+1])<<8 | uint32(in[p+2])
		return (v * 2654435761) >> (32 - hlog)
	}
	lit := 0 // pending literal bytes ending at i
	flush := func(i int) {
		for lit > 0 {
			k := min(lit, lzfMaxLit)
			dst = append(dst, byte(k-1))
			dst = append(dst, in[i-lit:i-lit+k]...)
			lit -= k
		}
	}
	i := 0
	for i+2 < len(in) {
		h := hash(i)
		ref := int(htab[h]) - 1
		htab[h] = int32(i + 1)
		if ref >= 0 && i-ref-1 < lzfMaxOff && in[ref] == in[i] && in[ref+1] == in[i+1] && in[ref+2] == in[i+2] {
			l := 3
			maxl := min(lzfMaxRef, len(in)-i)
			for l < maxl && in[ref+l] == in[i+l] {
				l++
			}
			flush(i)
			off := i - ref - 1
			if l-2 < 7 {
				dst = append(dst, byte(off>>8|(l-2)<<5))
			} else {
				dst = append(dst, byte(off>>8|7<<5), byte(l-2-7))
			}
			dst = append(dst, byte(off))
			if len(dst)-base > max {
				return dst[:base], false
			}
			// Index the positions inside the match too, so later repeats find
			// the nearest copy.
			for j := i + 1; j < i+l && j+2 < len(in); j++ {
				htab[hash(j)] = int32(j + 1)
			}
			i += l
			continue
		}
		lit++
		i++
		if len(dst)-base+lit+lit/lzfMaxLit+1 > max {
			return dst[:base], false
		}
	}
	lit += len(in) - i
	flush(len(in))
	if len(dst)-base > max {
		return dst[:base], false
	}
	return dst, true
}
