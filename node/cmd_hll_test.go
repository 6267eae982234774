package node

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// The digests and counts below are what redis-server 7.0.15 stores and
// replies after the same commands: the value must be byte-identical.

func pfaddRange(tc *testClient, key string, n int) {
	for i := 0; i < n; i += 7 {
		args := []string{"PFADD", key}
		for j := i; j < min(n, i+7); j++ {
			args = append(args, fmt.Sprintf("e%d", j))
		}
		tc.do(args...)
	}
}

func getDigest(tc *testClient, key string) (int, string) {
	r := tc.do("GET", key)
	body := r[strings.Index(r, "\r\n")+2 : len(r)-2]
	sum := sha256.Sum256([]byte(body))
	return len(body), hex.EncodeToString(sum[:])
}

func TestHLLByteIdentical(t *testing.T) {
	tc := newTestServer(t)
	for _, c := range []struct {
		n                    int
		size                 int
		before, count, after string
		enc                  string
	}{
		{3, 27, "a959110bed486c1a5a884b4b30d9623a721d3b5ffc4310a627a8beb5d45c4d34", ":3|", "20fad011f1c9cf449235924a364c8128399f8074d7cff4d5df2036d0f0c2cbdd", "+sparse|"},
		{300, 713, "ab79ebe4610713608b23a3804528ae5599497cc1c3c75823949c82ce2c86a485", ":302|", "5c5ae406a720663ee52d40494c2524c28b6a11e991e72ee5280d5c0ccea416c5", "+sparse|"},
		{1500, 2719, "5b297deb36af6db2d6a24d1fa5a6157d1ff83b4e6aed25c66fb59cb74f4d75af", ":1509|", "27fd190c99857ded3c88da07d9539633e78cbb33e7b9a05048b5f889f7e357cb", "+sparse|"},
		{5000, 12304, "0a4b61a05c269540574e1293e6e18e69a4e9cb96ade9ecb5b7ff490debf31722", ":4968|", "bd470063c39f632ff0572b22d3ae558cdc523a5ae6f47e7324ed636dcc84e2ec", "+dense|"},
	} {
		key := fmt.Sprintf("h%d", c.n)
		pfaddRange(tc, key, c.n)
		if size, sum := getDigest(tc, key); size != c.size || sum != c.before {
			t.Fatalf("%s after PFADD: %d bytes %s, want %d %s", key, size, sum, c.size, c.before)
		}
		tc.expect(c.count, "PFCOUNT", key)
		if _, sum := getDigest(tc, key); sum != c.after {
			t.Fatalf("%s after PFCOUNT: %s, want %s", key, sum, c.after)
		}
		tc.expect(c.enc, "PFDEBUG", "ENCODING", key)
	}
	tc.expect(":4968|", "PFCOUNT", "h3", "h300", "h1500", "h5000")
	tc.expect("+OK|", "PFMERGE", "m", "h300", "h1500")
	if _, sum := getDigest(tc, "m"); sum != "5b297deb36af6db2d6a24d1fa5a6157d1ff83b4e6aed25c66fb59cb74f4d75af" {
		t.Fatalf("PFMERGE result %s", sum)
	}
	tc.expect(":1509|", "PFCOUNT", "m")
	tc.expect("$44|Z:1318 v:1,1 Z:14384 v:2,1 Z:245 v:2,1 Z:434|", "PFDEBUG", "DECODE", "h3")
	tc.expect("$27|HYLL\x01\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00E%\x80x/\x84@\xf4\x84A\xb1|", "GET", "h3")
}

func TestHLLCommands(t *testing.T) {
	tc := newTestServer(t)
	tc.putList("l")
	tc.expect(":1|", "PFADD", "h")
	tc.expect("$18|HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff|", "GET", "h")
	tc.expect(":0|", "PFADD", "h")
	tc.expect(":0|", "PFCOUNT", "h")
	tc.expect("$18|HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff|", "GET", "h")
	tc.expect(":1|", "PFADD", "h", "a", "b", "c")
	tc.expect(":0|", "PFADD", "h", "a")
	tc.expect(":3|", "PFCOUNT", "h")
	tc.expect(":0|", "PFCOUNT", "nokey")
	tc.expect("-ERR The specified key does not exist|", "PFDEBUG", "GETREG", "nokey")
	tc.expect("-ERR Unknown PFDEBUG subcommand 'foo'|", "PFDEBUG", "foo", "h")
	tc.expect("-ERR wrong number of arguments for 'pfdebug' command|", "PFDEBUG", "GETREG")
	tc.expect(":1|", "PFDEBUG", "TODENSE", "h")
	tc.expect(":0|", "PFDEBUG", "TODENSE", "h")
	tc.expect("-ERR HLL encoding is not sparse|", "PFDEBUG", "DECODE", "h")
	tc.expect("+dense|", "PFDEBUG", "ENCODING", "h")
	if r := tc.do("PFDEBUG", "GETREG", "h"); !strings.HasPrefix(r, "*16384\r\n:0\r\n") {
		t.Fatalf("GETREG: %q", r[:20])
	}
	const notHLL = "-WRONGTYPE Key is not a valid HyperLogLog string value.|"
	tc.do("SET", "s", "foo")
	tc.expect(notHLL, "PFADD", "s", "a")
	tc.expect(notHLL, "PFCOUNT", "s")
	tc.expect(notHLL, "PFCOUNT", "h", "s")
	tc.expect(notHLL, "PFMERGE", "d", "s")
	tc.expect(notHLL, "PFDEBUG", "GETREG", "s")
	tc.do("SET", "bad", "HYLL\x00"+strings.Repeat("x", 20)) // dense of the wrong size
	tc.expect(notHLL, "PFCOUNT", "bad")
	tc.expect(wrongType, "PFADD", "l", "a")
	tc.expect(wrongType, "PFCOUNT", "l")
	// A sparse stream that covers too few registers.
	tc.do("SET", "bad3", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xfe")
	const corrupt = "-INVALIDOBJ Corrupted HLL object detected|"
	tc.expect(":1|", "PFADD", "bad3", "x") // its register is covered
	tc.expect(corrupt, "PFCOUNT", "bad3")
	tc.expect(corrupt, "PFCOUNT", "bad3", "h")
	tc.expect(corrupt, "PFMERGE", "z", "bad3")
	tc.expect(corrupt, "PFDEBUG", "GETREG", "bad3")
	tc.expect("+OK|", "PFMERGE", "empty")
	tc.expect("$18|HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff|", "GET", "empty")
	tc.expect("-ERR wrong number of arguments for 'pfadd' command|", "PFADD")
	tc.expect("+OK|", "PFSELFTEST")
}
