package slots

import (
	"math/bits"
	"strconv"
	"strings"
)

// Bitmap is a set of slots, one bit per slot, in the byte order the cluster
// bus carries it (slot n is bit n%8 of byte n/8).
type Bitmap [Count / 8]byte

// Set adds slot s.
func (b *Bitmap) Set(s int) { b[s>>3] |= 1 << (s & 7) }

// Clear removes slot s.
func (b *Bitmap) Clear(s int) { b[s>>3] &^= 1 << (s & 7) }

// Has reports whether slot s is in the set.
func (b *Bitmap) Has(s int) bool { return b[s>>3]&(1<<(s&7)) != 0 }

// Count returns the number of slots in the set.
func (b *Bitmap) Count() int {
	n := 0
	for _, x := range b {
		n += bits.OnesCount8(x)
	}
	return n
}

// Ranges returns the set as sorted, merged, inclusive ranges.
func (b *Bitmap) Ranges() []Range {
	var out []Range
	start := -1
	for s := 0; s < Count; s++ {
		if b.Has(s) {
			if start < 0 {
				start = s
			}
		} else if start >= 0 {
			out = append(out, Range{start, s - 1})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, Range{start, Count - 1})
	}
	return out
}

// Range is an inclusive range of slots.
type Range struct{ Start, End int }

// String formats the range as Redis prints it: "N" or "A-B".
func (r Range) String() string {
	if r.Start == r.End {
		return strconv.Itoa(r.Start)
	}
	return strconv.Itoa(r.Start) + "-" + strconv.Itoa(r.End)
}

// FormatRanges joins ranges with single spaces, as CLUSTER NODES prints them.
func FormatRanges(rs []Range) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, " ")
}

// ParseRange parses "N" or "A-B" with both ends inside 0..16383 and A <= B.
func ParseRange(s string) (Range, bool) {
	a, b, dash := strings.Cut(s, "-")
	lo, ok := parseSlot(a)
	if !ok {
		return Range{}, false
	}
	if !dash {
		return Range{lo, lo}, true
	}
	hi, ok := parseSlot(b)
	if !ok || hi < lo {
		return Range{}, false
	}
	return Range{lo, hi}, true
}

func parseSlot(s string) (int, bool) {
	if s == "" || len(s) > 5 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n < Count
}
