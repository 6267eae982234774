// Package hll implements redis-server 7.0's HyperLogLog string format, byte
// for byte: a 16-byte header ("HYLL", encoding, 3 unused bytes, an 8-byte
// little-endian cached cardinality whose top bit marks it stale), then
// either 16384 packed 6-bit registers (dense) or a run-length opcode stream
// (sparse). Elements are hashed with MurmurHash64A (seed 0xadc83b19); the
// low 14 bits pick the register and the run of zero bits above them, plus
// one, is the register's candidate value.
//
// The functions work on the value's bytes in place and return the
// (possibly reallocated) slice; callers store what they get back. The
// estimator is Ertl's improved raw estimator, as redis-server uses.
package hll

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Format constants.
const (
	P         = 14
	Registers = 1 << P
	Q         = 64 - P
	regBits   = 6
	regMax    = 1<<regBits - 1
	HdrSize   = 16
	// DenseSize is the length of a dense value.
	DenseSize = HdrSize + (Registers*regBits+7)/8

	// Encodings as stored in header byte 4.
	Dense  = 0
	Sparse = 1

	sparseValMax    = 32
	sparseValMaxLen = 4
	sparseZeroMax   = 64
	sparseXZeroMax  = 16384

	hashSeed = 0xadc83b19
	alphaInf = 0.721347520444481703680
)

// ErrCorrupt reports a sparse opcode stream that does not cover exactly
// the 16384 registers.
var ErrCorrupt = errors.New("hll: corrupted HLL object")

// New returns an empty sparse HLL, its cardinality cache valid and zero.
func New() []byte {
	b := make([]byte, HdrSize+2, HdrSize+64)
	copy(b, "HYLL")
	b[4] = Sparse
	putXZero(b[HdrSize:], Registers)
	return b
}

// Valid reports whether b has a valid HLL header, as redis-server checks it
// before every HLL command.
func Valid(b []byte) bool {
	if len(b) < HdrSize || string(b[:4]) != "HYLL" || b[4] > Sparse {
		return false
	}
	return b[4] != Dense || len(b) == DenseSize
}

// Encoding returns "dense" or "sparse" for a valid b.
func Encoding(b []byte) string {
	if b[4] == Dense {
		return "dense"
	}
	return "sparse"
}

// CachedCard returns the cached cardinality and whether it is current.
func CachedCard(b []byte) (uint64, bool) {
	if b[15]&0x80 != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[8:16]), true
}

// SetCachedCard stores n as the current cardinality.
func SetCachedCard(b []byte, n uint64) { binary.LittleEndian.PutUint64(b[8:16], n) }

// Invalidate marks the cached cardinality stale; the other cache bytes are
// kept as they are, as redis-server keeps them.
func Invalidate(b []byte) { b[15] |= 0x80 }

// murmur64A is Austin Appleby's MurmurHash64A.
func murmur64A(data []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ (uint64(len(data)) * m)
	for len(data) >= 8 {
		k := binary.LittleEndian.Uint64(data)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		data = data[8:]
	}
	if n := len(data); n > 0 {
		for i := n - 1; i >= 0; i-- {
			h ^= uint64(data[i]) << (8 * uint(i))
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// position returns the register an element goes to and its candidate value
// (1..Q+1).
func position(ele []byte) (idx int, count uint8) {
	h := murmur64A(ele, hashSeed)
	idx = int(h & (Registers - 1))
	h >>= P
	h |= 1 << Q
	return idx, uint8(bits.TrailingZeros64(h) + 1)
}

func denseGet(regs []byte, i int) uint8 {
	bit := i * regBits
	b, fb := bit/8, uint(bit&7)
	v := regs[b] >> fb
	if b+1 < len(regs) {
		v |= regs[b+1] << (8 - fb)
	}
	return v & regMax
}

func denseSet(regs []byte, i int, v uint8) {
	bit := i * regBits
	b, fb := bit/8, uint(bit&7)
	regs[b] &^= regMax << fb
	regs[b] |= v << fb
	if b+1 < len(regs) {
		regs[b+1] &^= regMax >> (8 - fb)
		regs[b+1] |= v >> (8 - fb)
	}
}

// Sparse opcodes: 00xxxxxx ZERO (1..64 zero registers), 01xxxxxx yyyyyyyy
// XZERO (1..16384), 1vvvvvxx VAL (1..4 registers of value 1..32).
func isZero(c byte) bool  { return c&0xc0 == 0 }
func isXZero(c byte) bool { return c&0xc0 == 0x40 }
func zeroLen(c byte) int  { return int(c&0x3f) + 1 }
func xzeroLen(p []byte) int {
	return (int(p[0]&0x3f)<<8 | int(p[1])) + 1
}
func valValue(c byte) uint8 { return (c>>2)&0x1f + 1 }
func valLen(c byte) int     { return int(c&3) + 1 }
func makeVal(v uint8, n int) byte {
	return 0x80 | (v-1)<<2 | byte(n-1)
}
func putXZero(p []byte, n int) {
	n--
	p[0] = 0x40 | byte(n>>8)
	p[1] = byte(n)
}

// appendZeros appends the opcode for a run of n zero registers.
func appendZeros(dst []byte, n int) []byte {
	if n > sparseZeroMax {
		var x [2]byte
		putXZero(x[:], n)
		return append(dst, x[:]...)
	}
	return append(dst, byte(n-1))
}

// walkSparse calls fn for each run of the opcode stream; it fails when an
// opcode is truncated or the runs do not cover exactly Registers.
func walkSparse(ops []byte, fn func(first, n int, v uint8)) error {
	idx := 0
	for p := 0; p < len(ops); {
		c := ops[p]
		var n int
		var v uint8
		switch {
		case isZero(c):
			n = zeroLen(c)
			p++
		case isXZero(c):
			if p+1 >= len(ops) {
				return ErrCorrupt
			}
			n = xzeroLen(ops[p:])
			p += 2
		default:
			n, v = valLen(c), valValue(c)
			p++
		}
		if idx+n > Registers {
			return ErrCorrupt
		}
		fn(idx, n, v)
		idx += n
	}
	if idx != Registers {
		return ErrCorrupt
	}
	return nil
}

// ToDense converts a sparse b to dense (a dense b is returned as is). The
// header, cache included, is carried over.
func ToDense(b []byte) ([]byte, error) {
	if b[4] == Dense {
		return b, nil
	}
	d := make([]byte, DenseSize)
	copy(d, b[:HdrSize])
	d[4] = Dense
	regs := d[HdrSize:]
	err := walkSparse(b[HdrSize:], func(first, n int, v uint8) {
		if v == 0 {
			return
		}
		for i := first; i < first+n; i++ {
			denseSet(regs, i, v)
		}
	})
	if err != nil {
		return b, err
	}
	return d, nil
}

// Add adds one element. It returns the new value, whether a register
// changed, and ErrCorrupt for a broken sparse stream. sparseMax is
// hll-sparse-max-bytes: a sparse value that would grow beyond it becomes
// dense. The cache is not touched: the caller invalidates it once.
func Add(b []byte, ele []byte, sparseMax int) ([]byte, bool, error) {
	idx, count := position(ele)
	return Set(b, idx, count, sparseMax)
}

// Set raises register idx to count if it is lower, as Add does.
func Set(b []byte, idx int, count uint8, sparseMax int) ([]byte, bool, error) {
	if b[4] == Dense {
		regs := b[HdrSize:]
		if denseGet(regs, idx) >= count {
			return b, false, nil
		}
		denseSet(regs, idx, count)
		return b, true, nil
	}
	return sparseSet(b, idx, count, sparseMax)
}

func promote(b []byte, idx int, count uint8) ([]byte, bool, error) {
	d, err := ToDense(b)
	if err != nil {
		return b, false, err
	}
	regs := d[HdrSize:]
	if denseGet(regs, idx) >= count {
		return d, false, nil
	}
	denseSet(regs, idx, count)
	return d, true, nil
}

func sparseSet(b []byte, idx int, count uint8, sparseMax int) ([]byte, bool, error) {
	if count > sparseValMax {
		return promote(b, idx, count)
	}
	// Find the opcode covering idx, and the one before it.
	ops := b[HdrSize:]
	p, prev, first, span := 0, -1, 0, 0
	for p < len(ops) {
		c := ops[p]
		oplen := 1
		switch {
		case isZero(c):
			span = zeroLen(c)
		case isXZero(c):
			if p+1 >= len(ops) {
				return b, false, ErrCorrupt
			}
			span = xzeroLen(ops[p:])
			oplen = 2
		default:
			span = valLen(c)
		}
		if idx <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= len(ops) {
		return b, false, ErrCorrupt
	}
	c := ops[p]
	zero, xzero := isZero(c), isXZero(c)
	val := !zero && !xzero
	switch {
	case val && valValue(c) >= count:
		return b, false, nil
	case val && span == 1, zero && span == 1:
		ops[p] = makeVal(count, 1)
		return mergeVals(b, prev), true, nil
	}
	// Split the run into [before][idx][after].
	var seq [5]byte
	n := seq[:0]
	last := first + span - 1
	if val {
		v := valValue(c)
		if idx != first {
			n = append(n, makeVal(v, idx-first))
		}
		n = append(n, makeVal(count, 1))
		if idx != last {
			n = append(n, makeVal(v, last-idx))
		}
	} else {
		if idx != first {
			n = appendZeros(n, idx-first)
		}
		n = append(n, makeVal(count, 1))
		if idx != last {
			n = appendZeros(n, last-idx)
		}
	}
	oldlen := 1
	if xzero {
		oldlen = 2
	}
	delta := len(n) - oldlen
	if delta > 0 && len(b)+delta > sparseMax {
		return promote(b, idx, count)
	}
	at := HdrSize + p
	if delta > 0 {
		b = append(b, n[:delta]...) // grow; the tail is moved below
	}
	copy(b[at+len(n):], b[at+oldlen:len(b)-max(delta, 0)])
	copy(b[at:], n)
	if delta < 0 {
		b = b[:len(b)+delta]
	}
	return mergeVals(b, prev), true, nil
}

// mergeVals joins adjacent VAL opcodes of equal value, scanning a few
// opcodes from prev (-1: the start), as redis-server does after an update.
func mergeVals(b []byte, prev int) []byte {
	p := HdrSize + max(prev, 0)
	for scan := 5; p < len(b) && scan > 0; scan-- {
		c := b[p]
		if isXZero(c) {
			p += 2
			continue
		}
		if isZero(c) {
			p++
			continue
		}
		if p+1 < len(b) && !isZero(b[p+1]) && !isXZero(b[p+1]) {
			v := valValue(c)
			if valValue(b[p+1]) == v {
				if n := valLen(c) + valLen(b[p+1]); n <= sparseValMaxLen {
					b[p+1] = makeVal(v, n)
					copy(b[p:], b[p+1:])
					b = b[:len(b)-1]
					scan++
					continue
				}
			}
		}
		p++
	}
	return b
}

// Merge raises each of max's registers to b's value.
func Merge(max *[Registers]uint8, b []byte) error {
	if b[4] == Dense {
		regs := b[HdrSize:]
		for i := range max {
			if v := denseGet(regs, i); v > max[i] {
				max[i] = v
			}
		}
		return nil
	}
	return walkSparse(b[HdrSize:], func(first, n int, v uint8) {
		for i := first; i < first+n; i++ {
			if v > max[i] {
				max[i] = v
			}
		}
	})
}

// Count estimates the cardinality of a valid b from its registers,
// ignoring the cache.
func Count(b []byte) (uint64, error) {
	var histo [64]int
	if b[4] == Dense {
		regs := b[HdrSize:]
		for i := 0; i < Registers; i++ {
			histo[denseGet(regs, i)]++
		}
	} else if err := walkSparse(b[HdrSize:], func(_, n int, v uint8) { histo[v] += n }); err != nil {
		return 0, err
	}
	return estimate(&histo), nil
}

// CountRegisters estimates the cardinality of an unpacked register array.
func CountRegisters(regs *[Registers]uint8) uint64 {
	var histo [64]int
	for _, v := range regs {
		histo[v&63]++
	}
	return estimate(&histo)
}

func estimate(histo *[64]int) uint64 {
	m := float64(Registers)
	z := m * tau((m-float64(histo[Q+1]))/m)
	for j := Q; j >= 1; j-- {
		z += float64(histo[j])
		z *= 0.5
	}
	z += m * sigma(float64(histo[0])/m)
	return uint64(math.Round(alphaInf * m * m / z))
}

func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += x * y
		y += y
		if prev == z {
			return z
		}
	}
}

func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := 1 - x
		z -= d * d * y
		if prev == z {
			return z / 3
		}
	}
}

// Registers unpacks a dense b's registers.
func DenseRegisters(b []byte) []uint8 {
	out := make([]uint8, Registers)
	regs := b[HdrSize:]
	for i := range out {
		out[i] = denseGet(regs, i)
	}
	return out
}

// Decode describes a sparse b's opcodes as PFDEBUG DECODE prints them.
func Decode(b []byte) string {
	var sb strings.Builder
	ops := b[HdrSize:]
	for p := 0; p < len(ops); {
		c := ops[p]
		switch {
		case isZero(c):
			sb.WriteString("z:" + strconv.Itoa(zeroLen(c)) + " ")
			p++
		case isXZero(c) && p+1 < len(ops):
			sb.WriteString("Z:" + strconv.Itoa(xzeroLen(ops[p:])) + " ")
			p += 2
		case isXZero(c):
			sb.WriteString("Z:" + strconv.Itoa((int(c&0x3f)<<8)+1) + " ")
			p++
		default:
			sb.WriteString("v:" + strconv.Itoa(int(valValue(c))) + "," + strconv.Itoa(valLen(c)) + " ")
			p++
		}
	}
	return strings.TrimRight(sb.String(), " ")
}
