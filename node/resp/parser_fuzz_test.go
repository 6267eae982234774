package resp

import (
	"bytes"
	"strconv"
	"testing"
	"unsafe"
)

// inside reports whether sub's bytes lie within b.
func inside(sub, b []byte) bool {
	if len(sub) == 0 {
		return true
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	return p >= start && p+uintptr(len(sub)) <= start+uintptr(len(b))
}

func encode(args [][]byte) []byte {
	var b []byte
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// FuzzParser checks the request parser on arbitrary bytes: it never
// panics, never consumes more than it was given, returns multibulk
// arguments that point into the input, reports a useful need for
// incomplete input, and parses encoded commands back to their arguments.
func FuzzParser(f *testing.F) {
	for _, seed := range []string{
		"*1\r\n$4\r\nPING\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
		"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
		"PING\r\n",
		"SET k \"a b\" 'c'\r\n",
		"*1\r\n$2147483648\r\n",
		"*2147483648\r\n",
		"*-1\r\n",
		"*0\r\n",
		"*1\r\n$4\r\nPIN",
		"*1\r\n$4\r\nPINGxx",
		"*1\r\n:4\r\n",
		"$5 hello\r\n",
		"\r\n",
		"\"unbalanced\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*1\r\n$4\r\nPING\r\n",
	} {
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, b []byte, unauth bool) {
		p := Parser{MaxBulk: 1 << 20, Unauthenticated: unauth}
		rest := b
		for steps := 0; len(rest) > 0 && steps < 1000; steps++ {
			args, n, need, err := p.Next(rest)
			if err != nil {
				if n != 0 || args != nil {
					t.Fatalf("error %v with n=%d args=%q", err, n, args)
				}
				break
			}
			if n < 0 || n > len(rest) {
				t.Fatalf("consumed %d of %d", n, len(rest))
			}
			if n == 0 {
				if need <= len(rest) {
					t.Fatalf("incomplete input of %d bytes but need=%d", len(rest), need)
				}
				break
			}
			if rest[0] == '*' {
				for _, a := range args {
					if !inside(a, rest[:n]) {
						t.Fatalf("argument %q is not inside the consumed input", a)
					}
				}
			}
			rest = rest[n:]
		}

		// Round trip: split the input into arguments and encode them.
		var args [][]byte
		for _, a := range bytes.Split(b, []byte{0}) {
			args = append(args, a)
			if len(args) == 8 {
				break
			}
		}
		frame := encode(args)
		var q Parser
		got, n, _, err := q.Next(frame)
		if err != nil || n != len(frame) || len(got) != len(args) {
			t.Fatalf("round trip of %q: args=%q n=%d/%d err=%v", args, got, n, len(frame), err)
		}
		for i := range args {
			if !bytes.Equal(got[i], args[i]) {
				t.Fatalf("round trip arg %d: %q != %q", i, got[i], args[i])
			}
		}
	})
}
