package node

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/slots"
)

func TestSetBasics(t *testing.T) {
	tc := newTestServer(t)
	tc.expect(":3|", "SADD", "s", "3", "1", "2", "2")
	tc.expect(":0|", "SADD", "s", "1")
	tc.expect(":3|", "SCARD", "s")
	tc.expect(":0|", "SCARD", "nokey")
	tc.expect("*3|$1|1|$1|2|$1|3|", "SMEMBERS", "s")
	tc.expect(":1|", "SISMEMBER", "s", "2")
	tc.expect(":0|", "SISMEMBER", "s", "9")
	tc.expect(":0|", "SISMEMBER", "s", "a")
	tc.expect("*3|:1|:0|:1|", "SMISMEMBER", "s", "1", "9", "3")
	tc.expect("*2|:0|:0|", "SMISMEMBER", "nokey", "a", "b")
	tc.expect(":0|", "SISMEMBER", "nokey", "a")
	tc.expect(":1|", "SREM", "s", "1", "9")
	tc.expect("*2|$1|2|$1|3|", "SMEMBERS", "s")
	tc.expect(":0|", "SREM", "nokey", "a")
	tc.expect(":2|", "SREM", "s", "2", "3", "4")
	tc.expect(":0|", "EXISTS", "s")
	tc.expect(":5|", "SADD", "s", "-5", "100", "0", "-9223372036854775808", "9223372036854775807")
	tc.expect("*5|$20|-9223372036854775808|$2|-5|$1|0|$3|100|$19|9223372036854775807|", "SMEMBERS", "s")
	tc.expect(":1|", "SISMEMBER", "s", "0")
	tc.expect(":0|", "SISMEMBER", "s", "-0")
	tc.expect(":1|", "SADD", "s", "01")
	tc.expect("*3|:1|:0|:1|", "SMISMEMBER", "s", "01", "1", "100")
	tc.expect("+OK|", "SET", "str", "x")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SADD", "str", "a")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SREM", "str", "a")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SCARD", "str")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SMEMBERS", "str")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SISMEMBER", "str", "a")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SMISMEMBER", "str", "a")
	tc.expect("-ERR wrong number of arguments for 'sadd' command|", "SADD", "s")
	tc.expect("-ERR wrong number of arguments for 'srem' command|", "SREM", "s")
	tc.expect("-ERR wrong number of arguments for 'scard' command|", "SCARD")
	tc.expect("-ERR wrong number of arguments for 'sismember' command|", "SISMEMBER", "s")
	tc.expect("-ERR wrong number of arguments for 'smismember' command|", "SMISMEMBER", "s")
	tc.expect("-ERR wrong number of arguments for 'smembers' command|", "SMEMBERS")
	tc.do("HELLO", "3")
	tc.expect("~0|", "SMEMBERS", "nokey")
	tc.expect(":3|", "SADD", "i", "5", "2", "9")
	tc.expect("~3|$1|2|$1|5|$1|9|", "SMEMBERS", "i")
	tc.expect("*2|:1|:0|", "SMISMEMBER", "i", "2", "3")
	tc.expect(":1|", "SISMEMBER", "i", "2")
}

func TestSetPopRand(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+OK|", "SET", "str", "x")
	tc.expect(":3|", "SADD", "s", "1", "2", "3")
	tc.expect("-ERR value is out of range, must be positive|", "SPOP", "s", "-1")
	tc.expect("-ERR value is out of range, must be positive|", "SPOP", "s", "abc")
	tc.expect("-ERR value is out of range, must be positive|", "SPOP", "str", "-1")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SPOP", "str", "1")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SPOP", "str")
	tc.expect("-ERR syntax error|", "SPOP", "s", "1", "2")
	tc.expect("$-1|", "SPOP", "nokey")
	tc.expect("*0|", "SPOP", "nokey", "2")
	tc.expect("*0|", "SPOP", "s", "0")
	tc.expect("-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807|", "SRANDMEMBER", "s", "-9223372036854775808")
	tc.expect("-ERR value is not an integer or out of range|", "SRANDMEMBER", "s", "abc")
	tc.expect("-ERR value is not an integer or out of range|", "SRANDMEMBER", "str", "abc")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SRANDMEMBER", "str", "1")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SRANDMEMBER", "str")
	tc.expect("*3|$1|1|$1|2|$1|3|", "SRANDMEMBER", "s", "10")
	tc.expect("*3|$1|1|$1|2|$1|3|", "SRANDMEMBER", "s", "3")
	tc.expect("$-1|", "SRANDMEMBER", "nokey")
	tc.expect("*0|", "SRANDMEMBER", "nokey", "5")
	tc.expect("*0|", "SRANDMEMBER", "nokey", "-5")
	tc.expect("*0|", "SRANDMEMBER", "s", "0")
	tc.expect("-ERR syntax error|", "SRANDMEMBER", "s", "1", "2")
	tc.expect("*3|$1|1|$1|2|$1|3|", "SPOP", "s", "3")
	tc.expect(":0|", "EXISTS", "s")
	tc.expect(":1|", "SADD", "s", "7")
	tc.expect("$1|7|", "SPOP", "s")
	tc.expect(":0|", "EXISTS", "s")
	tc.expect(":1|", "SADD", "s", "7")
	tc.expect("$1|7|", "SRANDMEMBER", "s")
	tc.expect("*3|$1|7|$1|7|$1|7|", "SRANDMEMBER", "s", "-3")
	tc.expect("*1|$1|7|", "SPOP", "s", "10")
	tc.expect("-ERR wrong number of arguments for 'spop' command|", "SPOP")
	tc.expect("-ERR wrong number of arguments for 'srandmember' command|", "SRANDMEMBER")
	tc.do("HELLO", "3")
	tc.expect("~0|", "SPOP", "nokey", "2")
	tc.expect("_|", "SPOP", "nokey")
	tc.expect("_|", "SRANDMEMBER", "nokey")
	tc.expect("*0|", "SRANDMEMBER", "nokey", "2")
	tc.expect(":2|", "SADD", "s", "1", "2")
	tc.expect("~2|$1|1|$1|2|", "SPOP", "s", "5")
	tc.expect(":2|", "SADD", "s", "1", "2")
	tc.expect("*2|$1|1|$1|2|", "SRANDMEMBER", "s", "5")
}

func TestSetMove(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+OK|", "SET", "str", "x")
	tc.expect(":3|", "SADD", "s", "1", "2", "3")
	tc.expect(":0|", "SMOVE", "nokey", "str", "m")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SMOVE", "str", "nokey", "m")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SMOVE", "s", "str", "1")
	tc.expect(":1|", "SMOVE", "s", "s", "1")
	tc.expect(":0|", "SMOVE", "s", "s", "9")
	tc.expect(":0|", "SMOVE", "s", "d", "9")
	tc.expect(":1|", "SMOVE", "s", "d", "1")
	tc.expect("*2|$1|2|$1|3|", "SMEMBERS", "s")
	tc.expect("*1|$1|1|", "SMEMBERS", "d")
	tc.expect(":1|", "SMOVE", "s", "d", "2")
	tc.expect(":1|", "SMOVE", "s", "d", "3")
	tc.expect(":0|", "EXISTS", "s")
	tc.expect("*3|$1|1|$1|2|$1|3|", "SMEMBERS", "d")
	tc.expect(":1|", "SADD", "x", "a")
	tc.expect(":1|", "SMOVE", "d", "x", "2")
	tc.expect("*2|$1|1|$1|3|", "SMEMBERS", "d")
	tc.expect("-ERR wrong number of arguments for 'smove' command|", "SMOVE", "s", "d")
}

func TestSetAlgebra(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+OK|", "SET", "str", "x")
	tc.expect(":5|", "SADD", "a", "1", "2", "3", "4", "5")
	tc.expect(":4|", "SADD", "b", "2", "3", "4", "9")
	tc.expect(":3|", "SADD", "c", "3", "4", "6")
	tc.expect("*2|$1|3|$1|4|", "SINTER", "a", "b", "c")
	tc.expect("*3|$1|2|$1|3|$1|4|", "SINTER", "a", "b")
	tc.expect("*3|$1|3|$1|4|$1|6|", "SINTER", "c")
	tc.expect("*0|", "SINTER", "a", "nokey")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SINTER", "nokey", "str")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SINTER", "str", "nokey")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SINTER", "a", "str")
	tc.expect("*7|$1|1|$1|2|$1|3|$1|4|$1|5|$1|6|$1|9|", "SUNION", "a", "b", "c")
	tc.expect("*5|$1|1|$1|2|$1|3|$1|4|$1|5|", "SUNION", "a", "nokey")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SUNION", "nokey", "str")
	tc.expect("*0|", "SUNION", "nokey")
	tc.expect("*2|$1|1|$1|5|", "SDIFF", "a", "b")
	tc.expect("*2|$1|1|$1|5|", "SDIFF", "a", "b", "c")
	tc.expect("*5|$1|1|$1|2|$1|3|$1|4|$1|5|", "SDIFF", "a", "nokey")
	tc.expect("*0|", "SDIFF", "nokey", "a")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SDIFF", "a", "str")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SDIFF", "str", "a")
	tc.expect(":3|", "SINTERSTORE", "d", "a", "b")
	tc.expect("*3|$1|2|$1|3|$1|4|", "SMEMBERS", "d")
	tc.expect(":0|", "SINTERSTORE", "d", "a", "nokey")
	tc.expect(":0|", "EXISTS", "d")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SINTERSTORE", "d", "str")
	tc.expect(":3|", "SINTERSTORE", "str", "a", "b")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "GET", "str")
	tc.expect(":6|", "SUNIONSTORE", "d", "a", "c")
	tc.expect("*6|$1|1|$1|2|$1|3|$1|4|$1|5|$1|6|", "SMEMBERS", "d")
	tc.expect(":3|", "SDIFFSTORE", "d", "a", "c")
	tc.expect("*3|$1|1|$1|2|$1|5|", "SMEMBERS", "d")
	tc.expect(":0|", "SDIFFSTORE", "d", "d", "d")
	tc.expect(":0|", "EXISTS", "d")
	tc.expect(":6|", "SUNIONSTORE", "a", "a", "b")
	tc.expect("*6|$1|1|$1|2|$1|3|$1|4|$1|5|$1|9|", "SMEMBERS", "a")
	tc.expect("-ERR numkeys should be greater than 0|", "SINTERCARD", "0", "a")
	tc.expect("-ERR numkeys should be greater than 0|", "SINTERCARD", "-1", "a")
	tc.expect("-ERR numkeys should be greater than 0|", "SINTERCARD", "x", "a")
	tc.expect("-ERR Number of keys can't be greater than number of args|", "SINTERCARD", "3", "a")
	tc.expect("-ERR LIMIT can't be negative|", "SINTERCARD", "1", "a", "LIMIT", "-1")
	tc.expect("-ERR LIMIT can't be negative|", "SINTERCARD", "1", "a", "LIMIT", "x")
	tc.expect("-ERR syntax error|", "SINTERCARD", "1", "a", "FOO")
	tc.expect("-ERR syntax error|", "SINTERCARD", "1", "a", "LIMIT")
	tc.expect(":1|", "SINTERCARD", "1", "a", "LIMIT", "1")
	tc.expect(":6|", "SINTERCARD", "1", "a", "LIMIT", "0")
	tc.expect(":6|", "SINTERCARD", "1", "a", "limit", "100")
	tc.expect(":4|", "SINTERCARD", "2", "a", "b")
	tc.expect(":2|", "SINTERCARD", "2", "a", "b", "LIMIT", "2")
	tc.expect(":4|", "SINTERCARD", "2", "a", "b", "LIMIT", "1", "LIMIT", "0")
	tc.expect(":0|", "SINTERCARD", "1", "nokey")
	tc.expect(":0|", "SINTERCARD", "2", "nokey", "str")
	tc.expect(":0|", "SINTERCARD", "2", "str", "nokey")
	tc.expect("-ERR Number of keys can't be greater than number of args|", "SINTERCARD", "2", "a")
	tc.expect("-ERR wrong number of arguments for 'sinter' command|", "SINTER")
	tc.expect("-ERR wrong number of arguments for 'sinterstore' command|", "SINTERSTORE", "d")
	tc.expect("-ERR wrong number of arguments for 'sunionstore' command|", "SUNIONSTORE", "d")
	tc.expect("-ERR wrong number of arguments for 'sdiffstore' command|", "SDIFFSTORE", "d")
	tc.expect("-ERR wrong number of arguments for 'sintercard' command|", "SINTERCARD", "1")
	tc.do("HELLO", "3")
	tc.expect("~4|$1|2|$1|3|$1|4|$1|9|", "SINTER", "a", "b")
	tc.expect("~6|$1|1|$1|2|$1|3|$1|4|$1|5|$1|9|", "SUNION", "a", "b")
	tc.expect("~2|$1|1|$1|5|", "SDIFF", "a", "b")
	tc.expect("~0|", "SINTER", "nokey")
	tc.expect("~0|", "SUNION", "nokey")
	tc.expect("~0|", "SDIFF", "nokey")
}

func TestSetScan(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+OK|", "SET", "str", "x")
	tc.expect(":5|", "SADD", "s", "1", "2", "3", "10", "11")
	tc.expect("-ERR invalid cursor|", "SSCAN", "s", "x")
	tc.expect("*2|$1|0|*5|$1|1|$1|2|$1|3|$2|10|$2|11|", "SSCAN", "s", "-1")
	tc.expect("*2|$1|0|*5|$1|1|$1|2|$1|3|$2|10|$2|11|", "SSCAN", "s", "")
	tc.expect("*2|$1|0|*5|$1|1|$1|2|$1|3|$2|10|$2|11|", "SSCAN", "s", "+0")
	tc.expect("-ERR syntax error|", "SSCAN", "s", "0", "COUNT", "0")
	tc.expect("-ERR value is not an integer or out of range|", "SSCAN", "s", "0", "COUNT", "x")
	tc.expect("-ERR syntax error|", "SSCAN", "s", "0", "FOO")
	tc.expect("-ERR syntax error|", "SSCAN", "s", "0", "MATCH")
	tc.expect("*2|$1|0|*5|$1|1|$1|2|$1|3|$2|10|$2|11|", "SSCAN", "s", "0", "COUNT", "1")
	tc.expect("*2|$1|0|*0|", "SSCAN", "nokey", "0")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SSCAN", "str", "0")
	tc.expect("-ERR invalid cursor|", "SSCAN", "str", "x")
	tc.expect("*2|$1|0|*3|$1|1|$2|10|$2|11|", "SSCAN", "s", "0", "MATCH", "1*")
	tc.expect("*2|$1|0|*2|$1|1|$2|11|", "SSCAN", "s", "0", "MATCH", "*1", "COUNT", "100")
	tc.expect("*2|$1|0|*2|$2|10|$2|11|", "SSCAN", "s", "0", "match", "1?", "count", "2")
	tc.expect("*2|$1|0|*2|$1|2|$1|3|", "SSCAN", "s", "0", "MATCH", "[2-3]")
	tc.expect("*2|$1|0|*2|$1|2|$1|3|", "SSCAN", "s", "0", "MATCH", "[^1]*")
	tc.expect("*2|$1|0|*5|$1|1|$1|2|$1|3|$2|10|$2|11|", "SSCAN", "s", "18446744073709551615")
	tc.expect("-ERR invalid cursor|", "SSCAN", "s", "18446744073709551616")
	tc.expect("-ERR wrong number of arguments for 'sscan' command|", "SSCAN", "s")
	tc.do("HELLO", "3")
	tc.expect("*2|$1|0|*5|$1|1|$1|2|$1|3|$2|10|$2|11|", "SSCAN", "s", "0")
}

// entryOf returns the stored entry of key in database 0, or nil.
func entryOf(tc *testClient, key string) *keyspace.Entry {
	return tc.s.ks.DB(0).Peek(slots.Of([]byte(key)), []byte(key))
}

func objEncoding(tc *testClient, key string) string {
	e := entryOf(tc, key)
	if e == nil {
		return "none"
	}
	return e.Obj().(keyspace.Object).Encoding()
}

// parseFlat splits a reply made only of arrays/sets and bulk strings into
// its bulk strings, sorted.
func sortedBulks(t *testing.T, reply string) []string {
	t.Helper()
	var out []string
	parts := strings.Split(reply, "\r\n")
	for i := 0; i < len(parts); i++ {
		if strings.HasPrefix(parts[i], "$") && parts[i] != "$-1" {
			out = append(out, parts[i+1])
			i++
		}
	}
	slices.Sort(out)
	return out
}

// withLimits changes the encoding thresholds for the rest of the test.
func withLimits(t *testing.T, change func(l *keyspace.Limits)) {
	old := *keyspace.CurrentLimits()
	l := old
	change(&l)
	keyspace.SetLimits(l)
	t.Cleanup(func() { keyspace.SetLimits(old) })
}

func TestSetEncodingConversion(t *testing.T) {
	tc := newTestServer(t)
	args := []string{"SADD", "s"}
	for i := 0; i < 512; i++ {
		args = append(args, strconv.Itoa(i))
	}
	tc.expect(":512|", args...)
	if enc := objEncoding(tc, "s"); enc != "intset" {
		t.Fatalf("512 ints: %s", enc)
	}
	tc.expect(":1|", "SADD", "s", "512")
	if enc := objEncoding(tc, "s"); enc != "hashtable" {
		t.Fatalf("513 ints: %s", enc)
	}
	tc.expect(":1|", "SREM", "s", "512")
	if enc := objEncoding(tc, "s"); enc != "hashtable" {
		t.Fatalf("never converts back: %s", enc)
	}
	tc.expect(":3|", "SADD", "t", "1", "2", "x")
	if enc := objEncoding(tc, "t"); enc != "hashtable" {
		t.Fatal(enc)
	}
	// A stored result is built afresh: all integers again means intset.
	tc.expect(":1|", "SREM", "t", "x")
	tc.expect(":2|", "SUNIONSTORE", "u", "t")
	if enc := objEncoding(tc, "u"); enc != "intset" {
		t.Fatal(enc)
	}
	tc2 := newTestServer(t, "set-max-intset-entries", "2")
	tc2.expect(":2|", "SADD", "s", "1", "2")
	if enc := objEncoding(tc2, "s"); enc != "intset" {
		t.Fatal(enc)
	}
	tc2.expect(":1|", "SADD", "s", "3")
	if enc := objEncoding(tc2, "s"); enc != "hashtable" {
		t.Fatal(enc)
	}
}

func TestSetHashtable(t *testing.T) {
	tc := newTestServer(t)
	var want []string
	args := []string{"SADD", "s"}
	for i := 0; i < 1000; i++ {
		m := "m" + strconv.Itoa(i)
		args = append(args, m)
		want = append(want, m)
	}
	slices.Sort(want)
	tc.expect(":1000|", args...)
	if got := sortedBulks(t, tc.do("SMEMBERS", "s")); !slices.Equal(got, want) {
		t.Fatal("SMEMBERS of a hashtable")
	}
	// SSCAN returns every member that stays in the set, even when members
	// are removed between calls.
	seen := map[string]bool{}
	cursor := "0"
	for step := 0; ; step++ {
		r := tc.do("SSCAN", "s", cursor, "COUNT", "37")
		parts := strings.SplitN(r, "\r\n", 4)
		cursor = parts[2]
		for _, m := range sortedBulks(t, parts[3]) {
			seen[m] = true
		}
		if step == 3 {
			for i := 0; i < 1000; i += 3 {
				tc.do("SREM", "s", "m"+strconv.Itoa(i))
			}
		}
		if cursor == "0" {
			break
		}
	}
	for i := 0; i < 1000; i++ {
		if i%3 != 0 && !seen["m"+strconv.Itoa(i)] {
			t.Fatalf("SSCAN missed m%d", i)
		}
	}
	// Random members are distinct for a positive count, and SPOP removes
	// what it returns.
	r := sortedBulks(t, tc.do("SRANDMEMBER", "s", "50"))
	if len(slices.Compact(r)) != 50 {
		t.Fatalf("SRANDMEMBER 50 gave %d distinct", len(slices.Compact(r)))
	}
	if n := len(sortedBulks(t, tc.do("SRANDMEMBER", "s", "-2000"))); n != 2000 {
		t.Fatalf("SRANDMEMBER -2000 gave %d", n)
	}
	popped := sortedBulks(t, tc.do("SPOP", "s", "100"))
	if len(slices.Compact(popped)) != 100 {
		t.Fatal("SPOP 100 not distinct")
	}
	for _, m := range popped {
		tc.expect(":0|", "SISMEMBER", "s", m)
	}
	tc.expect(":566|", "SCARD", "s")
	tc.expect(":1|", "SADD", "s", "keep")
	tc.expect(":1|", "SMOVE", "s", "d", "keep")
	tc.expect(":0|", "SISMEMBER", "s", "keep")
	tc.expect(":566|", "SCARD", "s")
}

func TestSetWatchAndCrossSlot(t *testing.T) {
	a := newTestServer(t)
	b := a.newClient()
	a.expect("+OK|", "WATCH", "s")
	b.expect(":1|", "SADD", "s", "x")
	a.expect("+OK|", "MULTI")
	a.expect("+QUEUED|", "SCARD", "s")
	a.expect("*-1|", "EXEC")
	// A failed SREM does not touch the key.
	a.expect("+OK|", "WATCH", "s")
	b.expect(":0|", "SREM", "s", "nope")
	a.expect("+OK|", "MULTI")
	a.expect("+QUEUED|", "SCARD", "s")
	a.expect("*1|:1|", "EXEC")
	// Keys in different slots work in standalone mode.
	a.expect(":2|", "SADD", "{a}1", "x", "y")
	a.expect(":2|", "SADD", "{b}2", "y", "z")
	a.expect(":1|", "SINTERSTORE", "{c}3", "{a}1", "{b}2")
	a.expect("*1|$1|y|", "SMEMBERS", "{c}3")
	a.expect(":1|", "SINTERCARD", "2", "{a}1", "{b}2")
}

func TestMemberMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"a*", "abc", true}, {"a*c", "abxc", true}, {"a*c", "abcd", false},
		{"?b", "ab", true}, {"?", "", false}, {"[abc]x", "bx", true}, {"[^abc]x", "bx", false},
		{"[a-c]", "b", true}, {"[c-a]", "b", true}, {`\*`, "*", true}, {`\*`, "a", false},
		{`a\`, `a\`, true}, {"[\\]]", "]", true}, {"*a*a*a*a*a*b", strings.Repeat("a", 60), false},
		{"h*llo", "hllo", true}, {"[abc", "b", true},
	} {
		if got := scanMatch([]byte(c.p), []byte(c.s)); got != c.want {
			t.Errorf("match(%q, %q) = %v", c.p, c.s, got)
		}
	}
}
