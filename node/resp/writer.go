package resp

import (
	"math"
	"strconv"

	"github.com/tidwall/redcon"
)

// Writer appends replies to B. Proto is 2 or 3; the RESP3-only types fall
// back to their RESP2 shapes when Proto is 2.
type Writer struct {
	B     []byte
	Proto int
}

// OK appends +OK.
func (w *Writer) OK() { w.B = append(w.B, "+OK\r\n"...) }

// Simple appends a status reply.
func (w *Writer) Simple(s string) { w.B = redcon.AppendString(w.B, s) }

// Error appends an error reply; msg must carry its prefix ("ERR ...").
func (w *Writer) Error(msg string) { w.B = redcon.AppendError(w.B, msg) }

// Int appends an integer reply.
func (w *Writer) Int(n int64) { w.B = redcon.AppendInt(w.B, n) }

// Bulk appends a bulk string.
func (w *Writer) Bulk(b []byte) { w.B = redcon.AppendBulk(w.B, b) }

// BulkString appends a bulk string.
func (w *Writer) BulkString(s string) { w.B = redcon.AppendBulkString(w.B, s) }

// BulkInt appends an integer formatted as a bulk string.
func (w *Writer) BulkInt(n int64) {
	var tmp [24]byte
	w.B = redcon.AppendBulk(w.B, strconv.AppendInt(tmp[:0], n, 10))
}

// Array appends an array header of n elements.
func (w *Writer) Array(n int) { w.B = redcon.AppendArray(w.B, n) }

// Null appends the null bulk string ($-1 in RESP2, _ in RESP3).
func (w *Writer) Null() {
	if w.Proto == 3 {
		w.B = append(w.B, "_\r\n"...)
	} else {
		w.B = append(w.B, "$-1\r\n"...)
	}
}

// NullArray appends the null array (*-1 in RESP2, _ in RESP3).
func (w *Writer) NullArray() {
	if w.Proto == 3 {
		w.B = append(w.B, "_\r\n"...)
	} else {
		w.B = append(w.B, "*-1\r\n"...)
	}
}

// Map appends a map header of n pairs (a flat array of 2n in RESP2).
func (w *Writer) Map(n int) {
	if w.Proto == 3 {
		w.B = appendHeader(w.B, '%', n)
	} else {
		w.B = redcon.AppendArray(w.B, 2*n)
	}
}

// Set appends a set header (an array in RESP2).
func (w *Writer) Set(n int) {
	if w.Proto == 3 {
		w.B = appendHeader(w.B, '~', n)
	} else {
		w.B = redcon.AppendArray(w.B, n)
	}
}

// Push appends a push header (an array in RESP2).
func (w *Writer) Push(n int) {
	if w.Proto == 3 {
		w.B = appendHeader(w.B, '>', n)
	} else {
		w.B = redcon.AppendArray(w.B, n)
	}
}

// Bool appends a boolean (:1/:0 in RESP2).
func (w *Writer) Bool(v bool) {
	switch {
	case w.Proto == 3 && v:
		w.B = append(w.B, "#t\r\n"...)
	case w.Proto == 3:
		w.B = append(w.B, "#f\r\n"...)
	case v:
		w.B = append(w.B, ":1\r\n"...)
	default:
		w.B = append(w.B, ":0\r\n"...)
	}
}

// Double appends a double (a bulk string in RESP2), formatted as
// redis-server 7.0 formats scores: %.17g, with inf and -inf.
func (w *Writer) Double(f float64) {
	var tmp [32]byte
	num := AppendDouble(tmp[:0], f)
	if w.Proto == 3 {
		w.B = append(w.B, ',')
		w.B = append(w.B, num...)
		w.B = append(w.B, '\r', '\n')
	} else {
		w.B = redcon.AppendBulk(w.B, num)
	}
}

// Verbatim appends a verbatim string of format "txt" (a bulk string in RESP2).
func (w *Writer) Verbatim(s string) {
	if w.Proto == 3 {
		w.B = appendHeader(w.B, '=', len(s)+4)
		w.B = append(w.B, "txt:"...)
		w.B = append(w.B, s...)
		w.B = append(w.B, '\r', '\n')
	} else {
		w.B = redcon.AppendBulkString(w.B, s)
	}
}

// Raw appends already encoded bytes.
func (w *Writer) Raw(b []byte) { w.B = append(w.B, b...) }

// Len returns the number of bytes written so far.
func (w *Writer) Len() int { return len(w.B) }

// Truncate drops everything written after offset n.
func (w *Writer) Truncate(n int) { w.B = w.B[:n] }

func appendHeader(b []byte, c byte, n int) []byte {
	b = append(b, c)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// AppendDouble formats f like redis-server 7.0's addReplyDouble: "%.17g",
// "inf", "-inf" and "nan".
func AppendDouble(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case math.IsNaN(f):
		return append(b, "nan"...)
	}
	return strconv.AppendFloat(b, f, 'g', 17, 64)
}
