package keyspace

// List is a list value: a ring buffer of immutable strings. Both ends push
// and pop in O(1) amortized time and any index is reached in O(1), which
// makes LINDEX, LSET and LRANGE cheaper than redis-server's quicklist walk;
// inserting or removing in the middle moves the shorter side only.
//
// Elements are Go strings, so handing one to another list (LMOVE) or to a
// clone shares its bytes safely.
type List struct {
	buf   []string // len(buf) is zero or a power of two
	head  int
	n     int
	bytes int // sum of element lengths, for MemoryUsage
}

// minListCap is the smallest ring allocated, and the size below which a
// ring is never shrunk.
const minListCap = 8

// NewList returns an empty list.
func NewList() *List { return &List{} }

// NewListSize returns an empty list with room for n elements.
func NewListSize(n int) *List {
	if n <= 0 {
		return &List{}
	}
	return &List{buf: make([]string, ringCap(n))}
}

// Encoding reports "quicklist": redis-server 7.0 encodes every list so.
func (l *List) Encoding() string { return "quicklist" }

// Len returns the number of elements.
func (l *List) Len() int { return l.n }

// MemoryUsage estimates the bytes held: the ring of string headers plus
// each element's allocation, rounded up to the allocator's 8-byte classes.
func (l *List) MemoryUsage() int {
	return 48 + 16*len(l.buf) + l.bytes + 4*l.n
}

// Clone returns an independent copy.
func (l *List) Clone() Object {
	c := &List{bytes: l.bytes}
	if l.n > 0 {
		c.buf = make([]string, ringCap(l.n))
		l.copyTo(c.buf)
		c.n = l.n
	}
	return c
}

func ringCap(n int) int {
	c := minListCap
	for c < n {
		c <<= 1
	}
	return c
}

// copyTo copies the elements in order to the start of dst.
func (l *List) copyTo(dst []string) {
	if l.n == 0 {
		return
	}
	end := l.head + l.n
	if end <= len(l.buf) {
		copy(dst, l.buf[l.head:end])
		return
	}
	k := copy(dst, l.buf[l.head:])
	copy(dst[k:], l.buf[:end-len(l.buf)])
}

func (l *List) resize(c int) {
	nb := make([]string, c)
	l.copyTo(nb)
	l.buf, l.head = nb, 0
}

func (l *List) grow() {
	if l.n == len(l.buf) {
		l.resize(ringCap(l.n + 1))
	}
}

// maybeShrink gives memory back once the ring is mostly empty.
func (l *List) maybeShrink() {
	if len(l.buf) > minListCap && l.n < len(l.buf)/4 {
		l.resize(ringCap(l.n * 2))
	}
}

func (l *List) pos(i int) int { return (l.head + i) & (len(l.buf) - 1) }

// PushBack appends s.
func (l *List) PushBack(s string) {
	l.grow()
	l.buf[l.pos(l.n)] = s
	l.n++
	l.bytes += len(s)
}

// PushFront prepends s.
func (l *List) PushFront(s string) {
	l.grow()
	l.head = (l.head - 1) & (len(l.buf) - 1)
	l.buf[l.head] = s
	l.n++
	l.bytes += len(s)
}

// PopFront removes and returns the first element; the list must not be
// empty.
func (l *List) PopFront() string {
	s := l.buf[l.head]
	l.buf[l.head] = ""
	l.head = (l.head + 1) & (len(l.buf) - 1)
	l.n--
	l.bytes -= len(s)
	l.maybeShrink()
	return s
}

// PopBack removes and returns the last element; the list must not be empty.
func (l *List) PopBack() string {
	p := l.pos(l.n - 1)
	s := l.buf[p]
	l.buf[p] = ""
	l.n--
	l.bytes -= len(s)
	l.maybeShrink()
	return s
}

// Index returns element i, 0 <= i < Len().
func (l *List) Index(i int) string { return l.buf[l.pos(i)] }

// Set replaces element i, 0 <= i < Len().
func (l *List) Set(i int, s string) {
	p := l.pos(i)
	l.bytes += len(s) - len(l.buf[p])
	l.buf[p] = s
}

// Insert puts s at position i (0 <= i <= Len()), moving the shorter side.
func (l *List) Insert(i int, s string) {
	switch i {
	case 0:
		l.PushFront(s)
		return
	case l.n:
		l.PushBack(s)
		return
	}
	l.grow()
	if i < l.n/2 {
		l.head = (l.head - 1) & (len(l.buf) - 1)
		for j := 0; j < i; j++ {
			l.buf[l.pos(j)] = l.buf[l.pos(j+1)]
		}
	} else {
		for j := l.n; j > i; j-- {
			l.buf[l.pos(j)] = l.buf[l.pos(j-1)]
		}
	}
	l.buf[l.pos(i)] = s
	l.n++
	l.bytes += len(s)
}

// Find returns the index of the first element equal to s, or -1.
func (l *List) Find(s []byte) int {
	for i := 0; i < l.n; i++ {
		if l.buf[l.pos(i)] == string(s) {
			return i
		}
	}
	return -1
}

// Trim keeps elements start..end (inclusive, 0 <= start <= end < Len()),
// or none when start > end.
func (l *List) Trim(start, end int) {
	if start > end {
		l.Clear()
		return
	}
	for i := end + 1; i < l.n; i++ {
		p := l.pos(i)
		l.bytes -= len(l.buf[p])
		l.buf[p] = ""
	}
	l.n = end + 1
	for i := 0; i < start; i++ {
		p := l.pos(i)
		l.bytes -= len(l.buf[p])
		l.buf[p] = ""
	}
	l.head = l.pos(start)
	l.n -= start
	l.maybeShrink()
}

// Clear removes every element.
func (l *List) Clear() { *l = List{} }

// Remove deletes up to count elements equal to s (count 0: all), scanning
// from the head, or from the tail when fromTail is set. It returns how many
// it removed. One pass compacts the ring in place.
func (l *List) Remove(s []byte, count int, fromTail bool) int {
	removed := 0
	if !fromTail {
		w := 0
		for r := 0; r < l.n; r++ {
			v := l.buf[l.pos(r)]
			if (count == 0 || removed < count) && v == string(s) {
				removed++
				continue
			}
			if w != r {
				l.buf[l.pos(w)] = v
			}
			w++
		}
		for i := w; i < l.n; i++ {
			l.buf[l.pos(i)] = ""
		}
	} else {
		w := l.n - 1
		for r := l.n - 1; r >= 0; r-- {
			v := l.buf[l.pos(r)]
			if (count == 0 || removed < count) && v == string(s) {
				removed++
				continue
			}
			if w != r {
				l.buf[l.pos(w)] = v
			}
			w--
		}
		for i := 0; i <= w; i++ {
			l.buf[l.pos(i)] = ""
		}
		if removed > 0 {
			l.head = l.pos(removed)
		}
	}
	l.n -= removed
	l.bytes -= removed * len(s)
	l.maybeShrink()
	return removed
}

// Range calls fn for elements start..end inclusive (0 <= start <= end <
// Len()) in order.
func (l *List) Range(start, end int, fn func(s string)) {
	for i := start; i <= end; i++ {
		fn(l.buf[l.pos(i)])
	}
}

var _ Object = (*List)(nil)
