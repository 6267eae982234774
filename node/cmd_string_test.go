package node

import (
	"strings"
	"testing"

	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/slots"
)

// putList stores a non-string value under key so that WRONGTYPE paths can
// be tested without the list commands.
func (tc *testClient) putList(key string) {
	tc.s.ks.DB(tc.c.DB).Set(slots.Of([]byte(key)), []byte(key), &keyspace.Entry{Kind: keyspace.KindList})
}

// All expected replies below were taken from redis-server 7.0.15.

func TestStringSetFamily(t *testing.T) {
	tc := newTestServer(t)
	tc.putList("l")
	tc.expect(":1|", "SETNX", "n", "1")
	tc.expect(":0|", "SETNX", "n", "2")
	tc.expect(":0|", "SETNX", "l", "2")
	tc.expect("-ERR wrong number of arguments for 'setnx' command|", "SETNX", "n")
	tc.expect("-ERR invalid expire time in 'setex' command|", "SETEX", "s", "0", "v")
	tc.expect("-ERR invalid expire time in 'setex' command|", "SETEX", "s", "-1", "v")
	tc.expect("-ERR invalid expire time in 'setex' command|", "SETEX", "s", "9223372036854775807", "v")
	tc.expect("-ERR value is not an integer or out of range|", "SETEX", "s", "x", "v")
	tc.expect("-ERR invalid expire time in 'psetex' command|", "PSETEX", "s", "0", "v")
	tc.expect("+OK|", "SETEX", "s", "100", "v")
	tc.expect("+OK|", "PSETEX", "l", "100000", "v") // overwrites any type
	tc.expect("$1|v|", "GET", "l")
	tc.expect("+OK|", "SET", "k", "v", "EX", "abc", "EX", "10") // the last value wins
	tc.expect("$-1|", "SET", "k", "v", "NX", "NX")
	tc.expect("-ERR syntax error|", "SET", "k", "v", "EX", "10", "KEEPTTL")
	tc.expect("-ERR syntax error|", "SET", "k", "v", "PX", "10", "EX", "10")
	tc.expect("+OK|", "SET", "k", "v", "PXAT", "1")
	tc.expect(":0|", "EXISTS", "k")
}

func TestStringGetFamily(t *testing.T) {
	tc := newTestServer(t)
	tc.putList("l")
	tc.expect("+OK|", "SET", "a", "1")
	tc.expect("-ERR syntax error|", "GETEX", "a", "foo")
	tc.expect("-ERR syntax error|", "GETEX", "a", "PERSIST", "EX", "10")
	tc.expect("-ERR syntax error|", "GETEX", "a", "EX")
	tc.expect("-ERR invalid expire time in 'getex' command|", "GETEX", "a", "EX", "0")
	tc.expect("$-1|", "GETEX", "nokey", "EX", "0") // the key is looked up first
	tc.expect("-ERR value is not an integer or out of range|", "GETEX", "a", "EX", "abc")
	tc.expect("$1|1|", "GETEX", "a", "PERSIST", "PERSIST")
	tc.expect("$1|1|", "GETEX", "a", "EX", "abc", "EX", "100")
	if e := tc.s.ks.DB(0).Peek(slots.Of([]byte("a")), []byte("a")); !e.HasTTL() {
		t.Fatal("GETEX EX did not set a TTL")
	}
	tc.expect("$1|1|", "GETEX", "a", "PERSIST")
	if e := tc.s.ks.DB(0).Peek(slots.Of([]byte("a")), []byte("a")); e.HasTTL() {
		t.Fatal("GETEX PERSIST kept the TTL")
	}
	tc.expect("$1|1|", "GETEX", "a", "PXAT", "1")
	tc.expect(":0|", "EXISTS", "a")
	tc.expect(wrongType, "GETEX", "l")
	tc.expect("+OK|", "SET", "a", "1")
	tc.expect("$1|1|", "GETDEL", "a")
	tc.expect("$-1|", "GETDEL", "a")
	tc.expect(wrongType, "GETDEL", "l")
	tc.expect("$-1|", "GETSET", "a", "1")
	tc.expect("$1|1|", "GETSET", "a", "2")
	tc.expect(wrongType, "GETSET", "l", "2")
	tc.expect("*3|$1|2|$-1|$-1|", "MGET", "a", "l", "nokey")
	tc.expect("-ERR wrong number of arguments for 'mget' command|", "MGET")
}

func TestStringMSet(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("-ERR wrong number of arguments for 'mset' command|", "MSET", "a")
	tc.expect("-ERR wrong number of arguments for 'mset' command|", "MSET", "a", "1", "b")
	tc.expect("-ERR wrong number of arguments for 'msetnx' command|", "MSETNX", "a", "1", "b")
	tc.expect("+OK|", "MSET", "a", "1", "b", "2", "a", "3")
	tc.expect("*2|$1|3|$1|2|", "MGET", "a", "b")
	tc.expect(":0|", "MSETNX", "a", "1", "z", "2")
	tc.expect(":0|", "EXISTS", "z")
	tc.expect(":1|", "MSETNX", "y", "1", "z", "2")
	tc.expect(":1|", "MSETNX", "q", "1", "q", "2")
	tc.expect("$1|2|", "GET", "q")
}

func TestStringIncr(t *testing.T) {
	tc := newTestServer(t)
	tc.putList("l")
	tc.expect(":1|", "INCR", "n")
	tc.expect(":-1|", "DECRBY", "n", "2")
	tc.expect(":4|", "INCRBY", "n", "5")
	tc.expect(":3|", "DECR", "n")
	tc.expect(wrongType, "INCR", "l")
	tc.expect("-ERR value is not an integer or out of range|", "INCRBY", "n", "abc")
	tc.expect("-ERR decrement would overflow|", "DECRBY", "n", "-9223372036854775808")
	tc.expect("+OK|", "SET", "n", "9223372036854775807")
	tc.expect("-ERR increment or decrement would overflow|", "INCR", "n")
	tc.expect("+OK|", "SET", "n", "-9223372036854775808")
	tc.expect("-ERR increment or decrement would overflow|", "DECR", "n")
	for _, v := range []string{"abc", "012", " 1", "1 ", "+1", "-0", "1.5", "", "9223372036854775808"} {
		tc.expect("+OK|", "SET", "n", v)
		tc.expect("-ERR value is not an integer or out of range|", "INCR", "n")
	}
	tc.expect("+OK|", "SETEX", "t", "100", "5")
	tc.expect(":6|", "INCR", "t")
	if e := tc.s.ks.DB(0).Peek(slots.Of([]byte("t")), []byte("t")); !e.HasTTL() {
		t.Fatal("INCR dropped the TTL")
	}
}

func TestStringIncrByFloat(t *testing.T) {
	tc := newTestServer(t)
	tc.putList("l")
	tc.expect("$3|0.1|", "INCRBYFLOAT", "f", "0.1")
	tc.expect("$3|0.3|", "INCRBYFLOAT", "f", "0.2") // long double arithmetic
	for _, c := range []struct{ in, out string }{
		{"1e20", "100000000000000000000"},
		{"5.0e3", "5000"},
		{"-1.5", "-1.5"},
		{"0x10", "16"},
		{"1e-20", "0"},
		{"-0", "0"},
		{"-1e-30", "0"},
		{"1.23456789012345678901", "1.23456789012345679"},
		{"3.0e-4", "0.0003"},
		{"1.5e-7", "0.00000015"},
		{"123456789.123456789", "123456789.12345678899873747"},
		{"0.000003814697265625", "0.00000381469726562"}, // ties round to even
		{"1.000011444091796875", "1.00001144409179688"},
		{".5", "0.5"},
		{"5.", "5"},
		{"1e+2", "100"},
		{"1e-4940", "0"},
		{"0e99999", "0"},
	} {
		tc.do("DEL", "g")
		want := "$" + itoa(len(c.out)) + "|" + c.out + "|"
		tc.expect(want, "INCRBYFLOAT", "g", c.in)
	}
	tc.do("DEL", "g")
	dblMax := "179769313486231569995921046774104434048386446944329178485314420765176628523124396354701868608387085564428793419425520689308708363451136055357897278026477617073498977686288394835618163294045594434929537447290627480669417384648879122776218333598953852832103282504751611691208117720159985926376802466863339536384"
	tc.expect("$309|"+dblMax+"|", "INCRBYFLOAT", "g", "1.7976931348623157e308")
	for _, in := range []string{"nan", "abc", " 1", "1 ", "1e", "1e5000", "1e-5000", "0x", "1..2", "--1", "e5", "1_0", ""} {
		tc.expect("-ERR value is not a valid float|", "INCRBYFLOAT", "f", in)
	}
	for _, in := range []string{"inf", "-inf", "INFINITY", "-Infinity"} {
		tc.expect("-ERR increment would produce NaN or Infinity|", "INCRBYFLOAT", "f", in)
	}
	tc.expect("+OK|", "SET", "x", "1.5 ")
	tc.expect("-ERR value is not a valid float|", "INCRBYFLOAT", "x", "1")
	tc.expect("+OK|", "SET", "x", "1e4930")
	tc.expect("-ERR increment would produce NaN or Infinity|", "INCRBYFLOAT", "x", "1.18e4932")
	tc.expect(wrongType, "INCRBYFLOAT", "l", "1")
	tc.expect("$2|10|", "INCRBYFLOAT", "e", "10")
	e := tc.s.ks.DB(0).Peek(slots.Of([]byte("e")), []byte("e"))
	if enc := StringEncoding(e); enc != "embstr" {
		t.Fatalf("encoding after INCRBYFLOAT: %s", enc)
	}
}

func TestStringAppendRange(t *testing.T) {
	tc := newTestServer(t, "proto-max-bulk-len", "1mb")
	tc.putList("l")
	tc.expect(":1|", "APPEND", "a", "5")
	tc.expect(":3|", "APPEND", "a", "ab")
	tc.expect("$3|5ab|", "GET", "a")
	tc.expect(wrongType, "APPEND", "l", "x")
	tc.expect(":3|", "STRLEN", "a")
	tc.expect(":0|", "STRLEN", "nokey")
	tc.expect(wrongType, "STRLEN", "l")
	tc.expect("+OK|", "SET", "gr", "Hello World")
	for _, c := range [][3]string{
		{"0", "-1", "$11|Hello World|"}, {"-3", "-1", "$3|rld|"}, {"-1", "-3", "$0||"}, {"5", "2", "$0||"},
		{"0", "100", "$11|Hello World|"}, {"-100", "-50", "$1|H|"}, {"2", "-100", "$0||"}, {"100", "200", "$0||"},
	} {
		tc.expect(c[2], "GETRANGE", "gr", c[0], c[1])
		tc.expect(c[2], "SUBSTR", "gr", c[0], c[1])
	}
	tc.expect("$0||", "GETRANGE", "nokey", "0", "-1")
	tc.expect("-ERR value is not an integer or out of range|", "GETRANGE", "gr", "x", "1")
	tc.expect(wrongType, "GETRANGE", "l", "0", "1")
	tc.expect("-ERR offset is out of range|", "SETRANGE", "sr", "-1", "x")
	tc.expect(":0|", "SETRANGE", "sr", "0", "")
	tc.expect(":0|", "EXISTS", "sr")
	tc.expect(":8|", "SETRANGE", "sr", "5", "abc")
	tc.expect("$8|\x00\x00\x00\x00\x00abc|", "GET", "sr")
	tc.expect(":8|", "SETRANGE", "sr", "0", "XY")
	tc.expect(":8|", "SETRANGE", "sr", "99999999999", "")
	tc.expect(wrongType, "SETRANGE", "l", "0", "a")
	tc.expect("-ERR string exceeds maximum allowed size (proto-max-bulk-len)|", "SETRANGE", "sr", "1048575", "xx")
	tc.expect(":1048576|", "SETRANGE", "sr", "1048575", "x")
	tc.expect("-ERR string exceeds maximum allowed size (proto-max-bulk-len)|", "APPEND", "sr", "x")
	tc.expect("-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len|", "LCS", "sr", "gr")
}

func TestStringEncoding(t *testing.T) {
	tc := newTestServer(t)
	enc := func(key string) string {
		return StringEncoding(tc.s.ks.DB(0).Peek(slots.Of([]byte(key)), []byte(key)))
	}
	for _, c := range [][2]string{
		{"12", "int"}, {"012", "embstr"}, {"-0", "embstr"}, {" 1", "embstr"}, {"+1", "embstr"}, {"0", "int"},
		{"-9223372036854775808", "int"}, {"9223372036854775807", "int"}, {"9223372036854775808", "embstr"},
		{strings.Repeat("a", 44), "embstr"}, {strings.Repeat("a", 45), "raw"},
	} {
		tc.do("SET", "k", c[0])
		if got := enc("k"); got != c[1] {
			t.Errorf("SET %q: %s, want %s", c[0], got, c[1])
		}
	}
	tc.do("SET", "k", "5")
	tc.do("APPEND", "k", "1")
	if enc("k") != "raw" {
		t.Error("APPEND should make raw")
	}
	tc.do("INCR", "k")
	if enc("k") != "int" {
		t.Error("INCR should make int")
	}
	tc.do("APPEND", "new", "5")
	if enc("new") != "int" {
		t.Error("APPEND to a new key keeps int")
	}
	tc.do("SETRANGE", "s", "0", "ab")
	tc.do("SETBIT", "b", "1", "1")
	tc.do("PFADD", "h", "a")
	for _, k := range []string{"s", "b", "h"} {
		if enc(k) != "raw" {
			t.Errorf("%s: %s, want raw", k, enc(k))
		}
	}
}

func TestStringLCS(t *testing.T) {
	tc := newTestServer(t)
	tc.putList("l")
	tc.do("MSET", "a", "ohmytext", "b", "mynewtext")
	tc.expect("$6|mytext|", "LCS", "a", "b")
	tc.expect(":6|", "LCS", "a", "b", "LEN")
	tc.expect("*4|$7|matches|*2|*2|*2|:4|:7|*2|:5|:8|*2|*2|:2|:3|*2|:0|:1|$3|len|:6|", "LCS", "a", "b", "IDX")
	tc.expect("*4|$7|matches|*1|*3|*2|:4|:7|*2|:5|:8|:4|$3|len|:6|", "LCS", "a", "b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN")
	tc.expect("$0||", "LCS", "a", "nokey")
	tc.expect("-ERR The specified keys must contain string values|", "LCS", "a", "l")
	tc.expect("-ERR If you want both the length and indexes, please just use IDX.|", "LCS", "a", "b", "LEN", "IDX")
	tc.expect("-ERR value is not an integer or out of range|", "LCS", "a", "b", "MINMATCHLEN", "x")
	tc.expect("-ERR syntax error|", "LCS", "a", "b", "MINMATCHLEN")
	tc.expect("-ERR wrong number of arguments for 'lcs' command|", "LCS", "a")
	tc.do("HELLO", "3")
	tc.expect("%2|$7|matches|*1|*2|*2|:4|:7|*2|:5|:8|$3|len|:6|", "LCS", "a", "b", "IDX", "MINMATCHLEN", "3")
}
