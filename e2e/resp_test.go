package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// reply is one RESP2/RESP3 reply as read from the wire: Raw holds its exact
// bytes; the parsed fields serve the directives that normalise replies
// (sort, mask) before comparing.
type reply struct {
	Raw   []byte
	Type  byte   // '+', '-', ':', '$', '*', '%', '~', '>', '_', ',', '#', '(', '='
	Line  []byte // the header line after the type, without CRLF
	Bulk  []byte // '$', '=' and '!' payloads
	Elems []*reply
	Attr  *reply // a '|' attribute that preceded the reply
}

// maxReplyBytes bounds what a faulty server can make the reader allocate.
const maxReplyBytes = 64 << 20

var errProto = errors.New("protocol error")

// readReply reads exactly one reply.
func readReply(r *bufio.Reader) (*reply, error) {
	var raw bytes.Buffer
	rp, err := readInto(r, &raw, 0)
	if err != nil {
		return nil, err
	}
	rp.Raw = raw.Bytes()
	return rp, nil
}

func readLine(r *bufio.Reader, raw *bytes.Buffer) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, fmt.Errorf("%w: header line too long", errProto)
	}
	if err != nil {
		return nil, err
	}
	raw.Write(line)
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("%w: line %q not terminated by CRLF", errProto, line)
	}
	return append([]byte(nil), line[:len(line)-2]...), nil
}

func readInto(r *bufio.Reader, raw *bytes.Buffer, depth int) (*reply, error) {
	if depth > 64 {
		return nil, fmt.Errorf("%w: nesting too deep", errProto)
	}
	line, err := readLine(r, raw)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 {
		return nil, fmt.Errorf("%w: empty line", errProto)
	}
	rp := &reply{Type: line[0], Line: line[1:]}
	switch rp.Type {
	case '+', '-', ':', '_', ',', '#', '(':
		return rp, nil
	case '$', '=', '!':
		n, err := strconv.Atoi(string(rp.Line))
		if err != nil || n < -1 || n > maxReplyBytes {
			return nil, fmt.Errorf("%w: bad bulk length %q", errProto, line)
		}
		if n == -1 {
			return rp, nil
		}
		body := make([]byte, n+2)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, err
		}
		raw.Write(body)
		if body[n] != '\r' || body[n+1] != '\n' {
			return nil, fmt.Errorf("%w: bulk not followed by CRLF", errProto)
		}
		rp.Bulk = body[:n]
		return rp, nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(string(rp.Line))
		if err != nil || n < -1 || n > maxReplyBytes {
			return nil, fmt.Errorf("%w: bad aggregate length %q", errProto, line)
		}
		if rp.Type == '%' || rp.Type == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			e, err := readInto(r, raw, depth+1)
			if err != nil {
				return nil, err
			}
			rp.Elems = append(rp.Elems, e)
		}
		if rp.Type == '|' {
			// An attribute is metadata in front of the real reply.
			next, err := readInto(r, raw, depth+1)
			if err != nil {
				return nil, err
			}
			next.Attr = rp
			return next, nil
		}
		return rp, nil
	}
	return nil, fmt.Errorf("%w: unknown type byte %q", errProto, rp.Type)
}

// encode writes the reply back in RESP; for a reply read off the wire and
// not modified it gives Raw again.
func (rp *reply) encode(dst []byte) []byte {
	if rp.Attr != nil {
		dst = rp.Attr.encodeSelf(dst)
	}
	return rp.encodeSelf(dst)
}

func (rp *reply) encodeSelf(dst []byte) []byte {
	dst = append(dst, rp.Type)
	switch rp.Type {
	case '$', '=', '!':
		if rp.Bulk == nil && string(rp.Line) == "-1" {
			return append(append(dst, rp.Line...), "\r\n"...)
		}
		dst = strconv.AppendInt(dst, int64(len(rp.Bulk)), 10)
		dst = append(dst, "\r\n"...)
		dst = append(dst, rp.Bulk...)
		return append(dst, "\r\n"...)
	case '*', '~', '>', '%', '|':
		if string(rp.Line) == "-1" {
			return append(dst, "-1\r\n"...)
		}
		n := len(rp.Elems)
		if rp.Type == '%' || rp.Type == '|' {
			n /= 2
		}
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, "\r\n"...)
		for _, e := range rp.Elems {
			dst = e.encode(dst)
		}
		return dst
	}
	dst = append(dst, rp.Line...)
	return append(dst, "\r\n"...)
}

func (rp *reply) aggregate() bool {
	switch rp.Type {
	case '*', '~', '>', '%':
		return true
	}
	return false
}

// sortElems orders the elements of aggregates at the given depth (1: the
// reply itself) by their encoding. Maps keep each key with its value, and
// so do arrays when pairs is set (RESP2 HGETALL, ZRANGE WITHSCORES).
func (rp *reply) sortElems(depth int, pairs bool) {
	if !rp.aggregate() {
		return
	}
	if depth > 1 {
		for _, e := range rp.Elems {
			e.sortElems(depth-1, pairs)
		}
		return
	}
	step := 1
	if rp.Type == '%' || pairs {
		step = 2
	}
	if len(rp.Elems)%step != 0 {
		return
	}
	groups := make([][]*reply, 0, len(rp.Elems)/step)
	for i := 0; i < len(rp.Elems); i += step {
		groups = append(groups, rp.Elems[i:i+step])
	}
	key := func(g []*reply) string {
		var b []byte
		for _, e := range g {
			b = e.encode(b)
		}
		return string(b)
	}
	sort.SliceStable(groups, func(i, j int) bool { return key(groups[i]) < key(groups[j]) })
	out := make([]*reply, 0, len(rp.Elems))
	for _, g := range groups {
		out = append(out, g...)
	}
	rp.Elems = out
}

// mask replaces, anywhere in the reply, the value that follows a bulk or
// simple string equal to name in a map or a flat key/value array, so that
// fields that legitimately differ (client ids) do not fail the comparison.
func (rp *reply) mask(name string) {
	if !rp.aggregate() {
		return
	}
	for i := 0; i+1 < len(rp.Elems); i++ {
		e := rp.Elems[i]
		if (e.Type == '$' && string(e.Bulk) == name) || (e.Type == '+' && string(e.Line) == name) {
			rp.Elems[i+1] = &reply{Type: '+', Line: []byte("<masked>")}
		}
	}
	for _, e := range rp.Elems {
		e.mask(name)
	}
}
