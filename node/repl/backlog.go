package repl

// Backlog is a ring buffer holding the last Size bytes of a replication
// stream, so that a replica whose link dropped can be sent what it missed.
type Backlog struct {
	buf  []byte
	head int   // index in buf where the next byte goes
	hist int   // bytes held (<= len(buf))
	end  int64 // offset of the last byte held (the stream's offset)
}

// NewBacklog returns an empty backlog of size bytes whose next byte will
// be offset+1.
func NewBacklog(size int, offset int64) *Backlog {
	if size < 1 {
		size = 1
	}
	return &Backlog{buf: make([]byte, size), end: offset}
}

// Size returns the capacity in bytes.
func (b *Backlog) Size() int { return len(b.buf) }

// Offset returns the offset of the last byte appended.
func (b *Backlog) Offset() int64 { return b.end }

// Histlen returns how many bytes the backlog holds.
func (b *Backlog) Histlen() int { return b.hist }

// First returns the offset of the first byte held (redis-server's
// repl_backlog_first_byte_offset): Offset()+1 when empty.
func (b *Backlog) First() int64 { return b.end - int64(b.hist) + 1 }

// Append adds p at the end of the stream, dropping the oldest bytes when
// full.
func (b *Backlog) Append(p []byte) {
	b.end += int64(len(p))
	n := len(b.buf)
	if len(p) >= n {
		copy(b.buf, p[len(p)-n:])
		b.head, b.hist = 0, n
		return
	}
	c := copy(b.buf[b.head:], p)
	if c < len(p) {
		copy(b.buf, p[c:])
	}
	b.head = (b.head + len(p)) % n
	b.hist = min(b.hist+len(p), n)
}

// Has reports whether the backlog can serve the stream from offset from
// (the first byte a replica lacks) to its end.
func (b *Backlog) Has(from int64) bool {
	return from >= b.First() && from <= b.end+1
}

// AppendFrom appends to dst the bytes from offset from to the end; the
// caller checked Has(from).
func (b *Backlog) AppendFrom(dst []byte, from int64) []byte {
	if !b.Has(from) {
		return dst
	}
	count := int(b.end - from + 1)
	n := len(b.buf)
	start := (b.head - count + n) % n
	if start+count <= n {
		return append(dst, b.buf[start:start+count]...)
	}
	dst = append(dst, b.buf[start:]...)
	return append(dst, b.buf[:count-(n-start)]...)
}

// Resize changes the capacity, keeping the newest bytes that fit.
func (b *Backlog) Resize(size int) {
	if size < 1 {
		size = 1
	}
	if size == len(b.buf) {
		return
	}
	keep := min(b.hist, size)
	data := b.AppendFrom(make([]byte, 0, size), b.end-int64(keep)+1)
	nb := make([]byte, size)
	copy(nb, data)
	b.buf, b.head, b.hist = nb, len(data)%size, len(data)
}

// Reset empties the backlog and restarts it at offset (the next byte is
// offset+1).
func (b *Backlog) Reset(offset int64) {
	b.head, b.hist, b.end = 0, 0, offset
}
