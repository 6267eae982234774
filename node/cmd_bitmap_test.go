package node

import "testing"

// Expected replies were taken from redis-server 7.0.15.

func TestBitmapSetGet(t *testing.T) {
	tc := newTestServer(t)
	tc.putList("l")
	tc.expect(":0|", "SETBIT", "b", "7", "1")
	tc.expect("$1|\x01|", "GET", "b")
	tc.expect(":1|", "SETBIT", "b", "7", "0")
	tc.expect(":0|", "SETBIT", "b", "100", "1")
	tc.expect(":1|", "GETBIT", "b", "100")
	tc.expect(":0|", "GETBIT", "b", "99")
	tc.expect(":0|", "GETBIT", "b", "100000")
	tc.expect(":0|", "GETBIT", "nokey", "5")
	for _, off := range []string{"-1", "x", "4294967296", "#1", " 1"} {
		tc.expect("-ERR bit offset is not an integer or out of range|", "SETBIT", "b", off, "1")
		tc.expect("-ERR bit offset is not an integer or out of range|", "GETBIT", "b", off)
	}
	for _, v := range []string{"2", "-1", "x", "01"} {
		tc.expect("-ERR bit is not an integer or out of range|", "SETBIT", "b", "1", v)
	}
	tc.expect(wrongType, "SETBIT", "l", "1", "1")
	tc.expect(wrongType, "GETBIT", "l", "1")
	tc.expect("-ERR wrong number of arguments for 'setbit' command|", "SETBIT", "b")
}

func TestBitmapCountPos(t *testing.T) {
	tc := newTestServer(t)
	tc.putList("l")
	tc.do("SET", "s", "foobar")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, ":26|"}, {[]string{"1", "1"}, ":6|"}, {[]string{"-2", "-1"}, ":7|"}, {[]string{"-1", "-2"}, ":0|"},
		{[]string{"5", "30", "bit"}, ":17|"}, {[]string{"5", "30", "BYTE"}, ":4|"}, {[]string{"7", "8", "bit"}, ":0|"},
		{[]string{"0"}, "-ERR syntax error|"}, {[]string{"0", "1", "foo"}, "-ERR syntax error|"},
		{[]string{"x", "1"}, "-ERR value is not an integer or out of range|"},
	} {
		tc.expect(c.want, append([]string{"BITCOUNT", "s"}, c.args...)...)
	}
	tc.expect(":0|", "BITCOUNT", "nokey", "x", "1") // looked up before parsing
	tc.expect(wrongType, "BITCOUNT", "l")
	tc.do("SET", "p", "\xff\xf0\x00")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"0"}, ":12|"}, {[]string{"1"}, ":0|"}, {[]string{"0", "2"}, ":16|"}, {[]string{"0", "0", "-1"}, ":12|"},
		{[]string{"0", "0", "0"}, ":-1|"}, {[]string{"1", "4", "11", "bit"}, ":4|"}, {[]string{"0", "3", "5", "bit"}, ":-1|"},
		{[]string{"1", "2"}, ":-1|"}, {[]string{"0", "100"}, ":-1|"},
		{[]string{"2"}, "-ERR The bit argument must be 1 or 0.|"}, {[]string{"0", "1", "2", "foo"}, "-ERR syntax error|"},
	} {
		tc.expect(c.want, append([]string{"BITPOS", "p"}, c.args...)...)
	}
	tc.do("SET", "ff", "\xff\xff")
	tc.expect(":16|", "BITPOS", "ff", "0")
	tc.expect(":-1|", "BITPOS", "ff", "0", "0", "-1")
	tc.expect(":0|", "BITPOS", "nokey", "0", "x")
	tc.expect(":-1|", "BITPOS", "nokey", "1")
	tc.do("SET", "e", "")
	tc.expect(":-1|", "BITPOS", "e", "0")
	tc.expect(wrongType, "BITPOS", "l", "0")
}

func TestBitmapBitop(t *testing.T) {
	tc := newTestServer(t)
	tc.putList("l")
	tc.do("SET", "a", "\x0f\xf0abc")
	tc.do("SET", "b", "\xff")
	tc.expect(":5|", "BITOP", "AND", "d", "a", "b")
	tc.expect("$5|\x0f\x00\x00\x00\x00|", "GET", "d")
	tc.expect(":5|", "BITOP", "or", "d", "a", "b", "nokey")
	tc.expect("$5|\xff\xf0abc|", "GET", "d")
	tc.expect(":5|", "BITOP", "xor", "d", "a", "b")
	tc.expect("$5|\xf0\xf0abc|", "GET", "d")
	tc.expect(":1|", "BITOP", "not", "d", "b")
	tc.expect("$1|\x00|", "GET", "d")
	tc.expect(":0|", "BITOP", "and", "d", "nokey")
	tc.expect(":0|", "EXISTS", "d")
	tc.expect("-ERR BITOP NOT must be called with a single source key.|", "BITOP", "not", "d", "a", "b")
	tc.expect("-ERR syntax error|", "BITOP", "nand", "d", "a")
	tc.expect(wrongType, "BITOP", "or", "d", "a", "l")
	tc.expect("-ERR wrong number of arguments for 'bitop' command|", "BITOP", "and", "d")
}

func TestBitmapBitfield(t *testing.T) {
	tc := newTestServer(t)
	tc.putList("l")
	tc.expect("*0|", "BITFIELD", "f")
	tc.expect("*1|:0|", "BITFIELD", "f", "GET", "u8", "0")
	tc.expect(":0|", "EXISTS", "f")
	tc.expect("*1|:0|", "BITFIELD", "f", "SET", "i8", "0", "-100")
	tc.expect("$1|\x9c|", "GET", "f")
	tc.expect("*2|:156|:-100|", "BITFIELD", "f", "GET", "u8", "0", "GET", "i8", "0")
	const badType = "-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.|"
	for _, ty := range []string{"u64", "i65", "u0", "x8", "u", "U8", "I8"} {
		tc.expect(badType, "BITFIELD", "f", "GET", ty, "0")
	}
	tc.expect(badType, "BITFIELD", "f", "GET", "u08", "100")
	tc.expect("*2|:255|:0|", "BITFIELD", "g", "OVERFLOW", "WRAP", "INCRBY", "u8", "0", "-1", "INCRBY", "u8", "0", "1")
	tc.expect("*2|:127|:-128|", "BITFIELD", "g", "OVERFLOW", "SAT", "INCRBY", "i8", "8", "300", "INCRBY", "i8", "8", "-300")
	tc.expect("*3|$-1|:0|:1|", "BITFIELD", "g", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "4", "SET", "u2", "#0", "3", "GET", "u1", "#0")
	tc.expect("*1|:0|", "BITFIELD", "g", "SET", "i8", "#3", "300")
	tc.expect("*1|:44|", "BITFIELD", "g", "GET", "i8", "#3")
	tc.expect("-ERR Invalid OVERFLOW type specified|", "BITFIELD", "g", "OVERFLOW", "bad")
	tc.expect("-ERR syntax error|", "BITFIELD", "g", "GET", "u8")
	tc.expect("-ERR syntax error|", "BITFIELD", "g", "foo")
	tc.expect("-ERR value is not an integer or out of range|", "BITFIELD", "g", "SET", "u8", "0", "x")
	tc.expect("-ERR bit offset is not an integer or out of range|", "BITFIELD", "g", "GET", "u8", "#x")
	tc.expect("-ERR bit offset is not an integer or out of range|", "BITFIELD", "g", "GET", "u8", "#536870912")
	tc.expect(wrongType, "BITFIELD", "l", "GET", "u8", "0")
	tc.expect("*1|:44|", "BITFIELD_RO", "g", "GET", "i8", "#3")
	tc.expect("*1|:0|", "BITFIELD_RO", "g", "OVERFLOW", "SAT", "GET", "u8", "100")
	tc.expect("-ERR BITFIELD_RO only supports the GET subcommand|", "BITFIELD_RO", "g", "SET", "u8", "0", "1")
	tc.expect("-ERR wrong number of arguments for 'bitfield_ro' command|", "BITFIELD_RO")
}
