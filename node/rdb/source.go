package rdb

import (
	"errors"
	"io"
)

// ErrTruncated reports input that ends inside a value or a file.
var ErrTruncated = errors.New("rdb: unexpected end of data")

// source is the decoder's input: a byte slice held whole, or a stream read
// through a growing window. Slices returned by take are valid until the
// next take, which may move the window; callers copy what they keep.
//
// The window only grows as data actually arrives, so a length field that
// claims gigabytes costs memory only if the bytes are really there.
type source struct {
	buf []byte
	pos int
	r   io.Reader // nil: buf is the whole input
	// crc covers the stream bytes dropped from the window so far, and off
	// counts them, for the file checksum and error offsets.
	crc uint64
	off int64
	// mark, while marked, is the start of bytes fill must keep in the
	// window (a value being skipped whole, see rawValue).
	mark   int
	marked bool
	// scratch holds a string readString decoded (an integer's text, an
	// LZF string's bytes), reused from one string to the next.
	scratch []byte
}

func (s *source) remaining() int { return len(s.buf) - s.pos }

// take returns the next n bytes.
func (s *source) take(n int) ([]byte, error) {
	if n < 0 {
		return nil, ErrTruncated
	}
	if s.remaining() < n {
		if s.r == nil {
			return nil, ErrTruncated
		}
		if err := s.fill(n); err != nil {
			return nil, err
		}
	}
	b := s.buf[s.pos : s.pos+n : s.pos+n]
	s.pos += n
	return b, nil
}

func (s *source) byte() (byte, error) {
	if s.pos < len(s.buf) {
		c := s.buf[s.pos]
		s.pos++
		return c, nil
	}
	b, err := s.take(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// fill makes at least n unread bytes available from the stream.
func (s *source) fill(n int) error {
	keep := s.pos
	if s.marked {
		keep = s.mark
	}
	if keep > 0 {
		s.crc = CRC64(s.crc, s.buf[:keep])
		s.off += int64(keep)
		k := copy(s.buf, s.buf[keep:])
		s.buf = s.buf[:k]
		s.pos -= keep
		s.mark -= keep
	}
	const chunk = 64 << 10
	n += s.pos
	for len(s.buf) < n {
		if len(s.buf) == cap(s.buf) {
			// Grow toward n (at least a chunk more), by at most the data
			// already buffered plus a chunk at a time.
			c := max(chunk, min(max(n, len(s.buf)+chunk), max(2*cap(s.buf), len(s.buf)+chunk)))
			nb := make([]byte, len(s.buf), c)
			copy(nb, s.buf)
			s.buf = nb
		}
		k, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+k]
		if err != nil && len(s.buf) < n {
			if err == io.EOF {
				return ErrTruncated
			}
			return err
		}
	}
	return nil
}

// consumed returns the checksum of every byte taken so far and their
// count.
func (s *source) consumed() (uint64, int64) {
	return CRC64(s.crc, s.buf[:s.pos]), s.off + int64(s.pos)
}
