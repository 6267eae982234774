package node

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/slots"
)

// encodingOf returns the OBJECT ENCODING name of key in db 0.
func (tc *testClient) encodingOf(key string) string {
	e := tc.s.ks.DB(0).Peek(slots.Of([]byte(key)), []byte(key))
	if e == nil {
		return ""
	}
	return e.Obj().(keyspace.Object).Encoding()
}

func TestHashBasics(t *testing.T) {
	tc := newTestServer(t)
	tc.script([][]string{
		{"+OK|", "SET", "s", "x"},
		{"-ERR wrong number of arguments for 'hset' command|", "HSET", "h", "f"},
		{"-ERR wrong number of arguments for 'hset' command|", "HSET", "h", "f", "v", "g"},
		{"-ERR wrong number of arguments for 'hmset' command|", "HMSET", "h", "f", "v", "g"},
		{wrongType, "HSET", "s", "f", "v"},
		{":2|", "HSET", "h", "a", "1", "b", "2", "a", "3"},
		{"*4|$1|a|$1|3|$1|b|$1|2|", "HGETALL", "h"},
		{"+OK|", "HMSET", "h", "c", "3"},
		{":0|", "HSETNX", "h", "a", "9"},
		{":1|", "HSETNX", "h", "d", "4"},
		{wrongType, "HSETNX", "s", "a", "1"},
		{"$1|3|", "HGET", "h", "a"},
		{"$-1|", "HGET", "h", "z"},
		{"$-1|", "HGET", "missing", "a"},
		{wrongType, "HGET", "s", "a"},
		{"*3|$1|3|$-1|$1|2|", "HMGET", "h", "a", "z", "b"},
		{"*2|$-1|$-1|", "HMGET", "missing", "a", "b"},
		{wrongType, "HMGET", "s", "a"},
		{":1|", "HDEL", "h", "z", "a"},
		{":0|", "HDEL", "missing", "a"},
		{wrongType, "HDEL", "s", "a"},
		{"*6|$1|b|$1|2|$1|c|$1|3|$1|d|$1|4|", "HGETALL", "h"},
		{":0|", "HSET", "h", "b", "22"},
		{"*6|$1|b|$2|22|$1|c|$1|3|$1|d|$1|4|", "HGETALL", "h"},
		{":3|", "HLEN", "h"},
		{":0|", "HLEN", "missing"},
		{wrongType, "HLEN", "s"},
		{":2|", "HSTRLEN", "h", "b"},
		{":0|", "HSTRLEN", "h", "z"},
		{":0|", "HSTRLEN", "missing", "z"},
		{wrongType, "HSTRLEN", "s", "z"},
		{":1|", "HEXISTS", "h", "b"},
		{":0|", "HEXISTS", "h", "z"},
		{":0|", "HEXISTS", "missing", "a"},
		{wrongType, "HEXISTS", "s", "a"},
		{"*3|$1|b|$1|c|$1|d|", "HKEYS", "h"},
		{"*3|$2|22|$1|3|$1|4|", "HVALS", "h"},
		{"*0|", "HKEYS", "missing"},
		{"*0|", "HVALS", "missing"},
		{"*0|", "HGETALL", "missing"},
		{wrongType, "HVALS", "s"},
		{wrongType, "HKEYS", "s"},
		{wrongType, "HGETALL", "s"},
		{":3|", "HDEL", "h", "b", "c", "d", "e"},
		{":0|", "EXISTS", "h"},
		{"-ERR wrong number of arguments for 'hgetall' command|", "HGETALL", "h", "x"},
		{"-ERR wrong number of arguments for 'hdel' command|", "HDEL", "h"},
	})
	tc.hello3()
	tc.script([][]string{
		{":2|", "HSET", "h", "a", "1", "b", "2"},
		{"%2|$1|a|$1|1|$1|b|$1|2|", "HGETALL", "h"},
		{"%0|", "HGETALL", "missing"},
		{"*2|$1|a|$1|b|", "HKEYS", "h"},
		{"_|", "HGET", "h", "z"},
		{"*2|$1|1|_|", "HMGET", "h", "a", "z"},
	})
}

func TestHashIncr(t *testing.T) {
	tc := newTestServer(t)
	tc.script([][]string{
		{"+OK|", "SET", "s", "x"},
		{":1|", "HSET", "h", "b", "2"},
		{":7|", "HINCRBY", "h", "b", "5"},
		{"-ERR value is not an integer or out of range|", "HINCRBY", "h", "b", "x"},
		{"-ERR value is not an integer or out of range|", "HINCRBY", "s", "b", "x"},
		{":-3|", "HINCRBY", "h", "new", "-3"},
		{"-ERR increment or decrement would overflow|", "HINCRBY", "h", "b", "9223372036854775807"},
		{"-ERR increment or decrement would overflow|", "HINCRBY", "h", "new", "-9223372036854775807"},
		{":1|", "HSET", "h", "str", "abc"},
		{"-ERR hash value is not an integer|", "HINCRBY", "h", "str", "1"},
		{":1|", "HINCRBY", "missing", "f", "1"},
		{wrongType, "HINCRBY", "s", "f", "1"},
		{"$3|8.5|", "HINCRBYFLOAT", "h", "b", "1.5"},
		{"-ERR value is not a valid float|", "HINCRBYFLOAT", "h", "b", "x"},
		{"-ERR value is not a valid float|", "HINCRBYFLOAT", "s", "b", "x"},
		{"-ERR value is NaN or Infinity|", "HINCRBYFLOAT", "s", "b", "inf"},
		{"-ERR value is not a valid float|", "HINCRBYFLOAT", "h", "b", "nan"},
		{wrongType, "HINCRBYFLOAT", "s", "b", "1"},
		{"-ERR hash value is not a float|", "HINCRBYFLOAT", "h", "str", "1"},
		{":4|", "HSET", "f", "v", "inf", "sp", " 1", "e", "1e5", "q", "0x1p3"},
		{"-ERR increment would produce NaN or Infinity|", "HINCRBYFLOAT", "f", "v", "1"},
		{"-ERR hash value is not a float|", "HINCRBYFLOAT", "f", "sp", "1"},
		{"-ERR hash value is not an integer|", "HINCRBY", "f", "sp", "1"},
		{"-ERR hash value is not an integer|", "HINCRBY", "f", "e", "1"},
		{"$6|100001|", "HINCRBYFLOAT", "f", "e", "1"},
		{"$1|8|", "HINCRBYFLOAT", "f", "q", "0"},
		{"$1|1|", "HINCRBYFLOAT", "f", "w", "1.0000000000000000001"},
		{"$1|0|", "HINCRBYFLOAT", "f", "w", "-1"},
		{"$3|0.1|", "HINCRBYFLOAT", "f", "w", "0.1"},
		{"$1|0|", "HINCRBYFLOAT", "f", "w", "-0.1"},
		{"$1|0|", "HINCRBYFLOAT", "f", "z", "1e-20"},
		{"$2|16|", "HINCRBYFLOAT", "f", "z", "0x10"},
		{"-ERR value is not a valid float|", "HINCRBYFLOAT", "f", "z", "1_0"},
		{"-ERR value is not a valid float|", "HINCRBYFLOAT", "f", "z", " 1"},
		{"-ERR value is not a valid float|", "HINCRBYFLOAT", "f", "z", "1 "},
		{"-ERR value is not a valid float|", "HINCRBYFLOAT", "f", "z", ""},
		{"-ERR value is not a valid float|", "HINCRBYFLOAT", "f", "z", "1e5000"},
		{"-ERR value is not a valid float|", "HINCRBYFLOAT", "f", "z", "1e-5000"},
		{"$1|5|", "HINCRBYFLOAT", "f", "y", "5."},
		{"$3|5.5|", "HINCRBYFLOAT", "f", "y", ".5"},
		{"$3|6.5|", "HINCRBYFLOAT", "f", "y", "+1"},
		{"$5|106.5|", "HINCRBYFLOAT", "f", "y", "1E2"},
		{"$21|109.64159265358979324|", "HINCRBYFLOAT", "f", "y", "3.14159265358979323846"},
		{"$11|-0.00000025|", "HINCRBYFLOAT", "f", "y2", "-2.5e-7"},
		{"$3|0.1|", "HINCRBYFLOAT", "f", "y3", "0.1"},
		{"$3|0.3|", "HINCRBYFLOAT", "f", "y3", "0.2"},
		{"$71|10000000000000000000222479489586148259025995410601157579323600873193472|", "HINCRBYFLOAT", "f", "big", "1e70"},
		{"$308|99999999999999999996685879655845645660560099847415567207797047994921734868838061872100126921888539320446747225054013223152134749593960583597420814430196418767959100019603190778663109604507106667939153395788938914560543563061268364901618630217086589253444881623791300855757318142424510452728255046343928578048|", "HINCRBYFLOAT", "f", "big2", "1e308"},
		// 1e308 + 1e308 in an 80-bit long double, as redis-server computes it.
		{"$309|199999999999999999993371759311691291321120199694831134415594095989843469737676123744200253843777078640893494450108026446304269499187921167194841628860392837535918200039206381557326219209014213335878306791577877829121087126122536729803237260434173178506889763247582601711514636284849020905456510092687857156096|", "HINCRBYFLOAT", "f", "big2", "1e308"},
	})
	// The whole long double range: 1e4932 formats to 4933 digits.
	r := tc.do("HINCRBYFLOAT", "f", "huge", "1e4932")
	if !strings.HasPrefix(r, "$4933\r\n10000000000000000000060189493879638913238377742545331147737850413525330194866087224075333277794331427736665255636662776820618609064404603366234161649310975421086536237399472378242736") {
		t.Fatalf("1e4932: %.80q", r)
	}
}

func TestHashEncoding(t *testing.T) {
	tc := newTestServer(t)
	lim := keyspace.CurrentLimits()
	long := strings.Repeat("x", lim.HashMaxListpackValue+1)
	edge := strings.Repeat("x", lim.HashMaxListpackValue)
	tc.expect(":1|", "HSET", "h1", "a", "1")
	tc.expect(":0|", "HSETNX", "h1", "a", long)
	if got := tc.encodingOf("h1"); got != "listpack" {
		t.Fatalf("HSETNX on an existing field converted: %s", got)
	}
	tc.expect(":1|", "HINCRBY", "h1", long, "1")
	if got := tc.encodingOf("h1"); got != "hashtable" {
		t.Fatalf("long field via HINCRBY: %s", got)
	}
	tc.expect(":1|", "HSET", "h2", edge, edge)
	if got := tc.encodingOf("h2"); got != "listpack" {
		t.Fatalf("value at the limit: %s", got)
	}
	tc.expect(":0|", "HSET", "h2", edge, long)
	if got := tc.encodingOf("h2"); got != "hashtable" {
		t.Fatalf("long value on update: %s", got)
	}
	tc.expect(":1|", "HSET", "h3", "a", "1")
	tc.expect("$71|10000000000000000000222479489586148259025995410601157579323600873193472|", "HINCRBYFLOAT", "h3", "a", "1e70")
	if got := tc.encodingOf("h3"); got != "hashtable" {
		t.Fatalf("long float result: %s", got)
	}
	// Lookups and deletes of long fields do not convert.
	tc.expect(":1|", "HSET", "h4", "a", "1")
	tc.expect("$-1|", "HGET", "h4", long)
	tc.expect(":0|", "HDEL", "h4", long)
	tc.expect("*1|$-1|", "HMGET", "h4", long)
	if got := tc.encodingOf("h4"); got != "listpack" {
		t.Fatalf("reads converted: %s", got)
	}

	// Entry count: listpack up to the limit, in insertion order.
	n := lim.HashMaxListpackEntries
	args := []string{"HSET", "big"}
	var all strings.Builder
	fmt.Fprintf(&all, "*%d\r\n", 2*n)
	for i := 1; i <= n; i++ {
		f, v := "f"+strconv.Itoa(i), "v"+strconv.Itoa(i)
		args = append(args, f, v)
		fmt.Fprintf(&all, "$%d\r\n%s\r\n$%d\r\n%s\r\n", len(f), f, len(v), v)
	}
	tc.expect(":"+strconv.Itoa(n)+"|", args...)
	if got := tc.encodingOf("big"); got != "listpack" {
		t.Fatalf("at the entry limit: %s", got)
	}
	tc.expect(all.String(), "HGETALL", "big")
	tc.expect("*2\r\n$1\r\n0\r\n"+all.String(), "HSCAN", "big", "0")
	tc.expect("*2\r\n$1\r\n0\r\n"+all.String(), "HSCAN", "big", "123", "COUNT", "1")
	tc.expect(":1|", "HSET", "big", "one", "more")
	if got := tc.encodingOf("big"); got != "hashtable" {
		t.Fatalf("over the entry limit: %s", got)
	}
	// Deleting back under the limit does not convert back.
	tc.expect(":2|", "HDEL", "big", "one", "f1")
	if got := tc.encodingOf("big"); got != "hashtable" {
		t.Fatalf("after deletes: %s", got)
	}
	tc.expect(":"+strconv.Itoa(n-1)+"|", "HLEN", "big")
}

func TestHashScan(t *testing.T) {
	tc := newTestServer(t)
	tc.script([][]string{
		{"+OK|", "SET", "s", "x"},
		{":3|", "HSET", "h", "a", "1", "b", "2", "c", "3"},
		{"*2|$1|0|*6|$1|a|$1|1|$1|b|$1|2|$1|c|$1|3|", "HSCAN", "h", "0"},
		{"*2|$1|0|*2|$1|a|$1|1|", "HSCAN", "h", "0", "match", "a*"},
		{"*2|$1|0|*2|$1|b|$1|2|", "HSCAN", "h", "0", "MATCH", "a*", "MATCH", "b*"},
		{"*2|$1|0|*4|$1|a|$1|1|$1|b|$1|2|", "HSCAN", "h", "0", "MATCH", "[ab]", "COUNT", "1"},
		{"*2|$1|0|*6|$1|a|$1|1|$1|b|$1|2|$1|c|$1|3|", "HSCAN", "h", "0", "COUNT", "1", "COUNT", "2"},
		{"-ERR syntax error|", "HSCAN", "h", "0", "count", "0"},
		{"-ERR syntax error|", "HSCAN", "h", "0", "count", "-1"},
		{"-ERR value is not an integer or out of range|", "HSCAN", "h", "0", "count", "x"},
		{"-ERR invalid cursor|", "HSCAN", "h", "x"},
		{"-ERR invalid cursor|", "HSCAN", "h", " 1"},
		{"-ERR invalid cursor|", "HSCAN", "h", "18446744073709551616"},
		{"-ERR invalid cursor|", "HSCAN", "h", "-18446744073709551616"},
		{"*2|$1|0|*6|$1|a|$1|1|$1|b|$1|2|$1|c|$1|3|", "HSCAN", "h", "-1"},
		{"*2|$1|0|*6|$1|a|$1|1|$1|b|$1|2|$1|c|$1|3|", "HSCAN", "h", "18446744073709551615"},
		{"*2|$1|0|*6|$1|a|$1|1|$1|b|$1|2|$1|c|$1|3|", "HSCAN", "h", ""},
		{"*2|$1|0|*6|$1|a|$1|1|$1|b|$1|2|$1|c|$1|3|", "HSCAN", "h", "+1"},
		{"-ERR syntax error|", "HSCAN", "h", "0", "foo"},
		{"-ERR syntax error|", "HSCAN", "h", "0", "match"},
		{"-ERR syntax error|", "HSCAN", "h", "0", "novalues"},
		{"-ERR syntax error|", "HSCAN", "h", "0", "type", "string"},
		{"*2|$1|0|*0|", "HSCAN", "missing", "0"},
		{"*2|$1|0|*0|", "HSCAN", "missing", "0", "foo"},
		{"-ERR invalid cursor|", "HSCAN", "missing", "x"},
		{wrongType, "HSCAN", "s", "0"},
		{"-ERR invalid cursor|", "HSCAN", "s", "x"},
	})
	tc.hello3()
	tc.expectBoth("*2|$1|0|*6|$1|a|$1|1|$1|b|$1|2|$1|c|$1|3|", "HSCAN", "h", "0")

	// A hashtable is walked in pieces; every field comes back exactly once
	// even while other fields are deleted and added during the scan.
	n := keyspace.CurrentLimits().HashMaxListpackEntries + 100
	want := map[string]bool{}
	for i := 0; i < n; i++ {
		f := "f" + strconv.Itoa(i)
		tc.do("HSET", "t", f, "v")
		if i%3 != 0 {
			want[f] = true
		}
	}
	got := map[string]int{}
	cursor := "0"
	for step := 0; ; step++ {
		r := tc.do("HSCAN", "t", cursor, "COUNT", "7")
		lines := strings.Split(r, "\r\n")
		cursor = lines[2]
		for i := 4; i+3 < len(lines); i += 4 {
			got[lines[i+1]]++
		}
		if step < n/3 {
			tc.do("HDEL", "t", "f"+strconv.Itoa(3*step))
			tc.do("HSET", "t", "new"+strconv.Itoa(step), "v")
		}
		if cursor == "0" {
			break
		}
	}
	for f := range want {
		if got[f] != 1 {
			t.Fatalf("field %s seen %d times", f, got[f])
		}
	}
}

func TestHashRandField(t *testing.T) {
	tc := newTestServer(t)
	tc.script([][]string{
		{"+OK|", "SET", "s", "x"},
		{":3|", "HSET", "h", "a", "1", "b", "2", "c", "3"},
		{"$-1|", "HRANDFIELD", "missing"},
		{"*0|", "HRANDFIELD", "missing", "2"},
		{"*0|", "HRANDFIELD", "missing", "-2", "withvalues"},
		{wrongType, "HRANDFIELD", "s"},
		{wrongType, "HRANDFIELD", "s", "1"},
		{"-ERR value is not an integer or out of range|", "HRANDFIELD", "h", "x"},
		{"-ERR value is not an integer or out of range|", "HRANDFIELD", "missing", "x"},
		{"-ERR value is not an integer or out of range|", "HRANDFIELD", "h", "x", "withvalues", "extra"},
		{"*0|", "HRANDFIELD", "h", "0"},
		{"*0|", "HRANDFIELD", "h", "0", "withvalues"},
		{"*3|$1|a|$1|b|$1|c|", "HRANDFIELD", "h", "5"},
		{"*3|$1|a|$1|b|$1|c|", "HRANDFIELD", "h", "3"},
		{"*6|$1|a|$1|1|$1|b|$1|2|$1|c|$1|3|", "HRANDFIELD", "h", "5", "WITHVALUES"},
		{"-ERR syntax error|", "HRANDFIELD", "h", "1", "foo"},
		{"-ERR syntax error|", "HRANDFIELD", "h", "1", "withvalues", "x"},
		{"-ERR syntax error|", "HRANDFIELD", "missing", "1", "foo"},
		{"-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807|", "HRANDFIELD", "h", "-9223372036854775808"},
		{"-ERR value is out of range|", "HRANDFIELD", "h", "-4611686018427387904", "withvalues"},
		{"-ERR value is out of range|", "HRANDFIELD", "h", "4611686018427387904", "withvalues"},
		{"-ERR value is out of range|", "HRANDFIELD", "h", "9223372036854775807", "withvalues"},
	})
	vals := map[string]string{"a": "1", "b": "2", "c": "3"}
	check := func(r string, n int, withValues, unique bool) {
		t.Helper()
		lines := strings.Split(strings.TrimSuffix(r, "\r\n"), "\r\n")
		per := 2
		if withValues {
			per = 4
		}
		if lines[0] != "*"+strconv.Itoa(n*per/2) || len(lines) != 1+n*per {
			t.Fatalf("shape: %q", r)
		}
		seen := map[string]bool{}
		for i := 1; i < len(lines); i += per {
			f := lines[i+1]
			if _, ok := vals[f]; !ok {
				t.Fatalf("unknown field in %q", r)
			}
			if withValues && lines[i+3] != vals[f] {
				t.Fatalf("wrong value in %q", r)
			}
			if unique && seen[f] {
				t.Fatalf("repeated field in %q", r)
			}
			seen[f] = true
		}
	}
	for i := 0; i < 20; i++ {
		check(tc.do("HRANDFIELD", "h", "-5"), 5, false, false)
		check(tc.do("HRANDFIELD", "h", "-5", "withvalues"), 5, true, false)
		check(tc.do("HRANDFIELD", "h", "2"), 2, false, true)
		check(tc.do("HRANDFIELD", "h", "2", "withvalues"), 2, true, true)
		check(tc.do("HRANDFIELD", "h", "1"), 1, false, true)
		if r := tc.do("HRANDFIELD", "h"); r != "$1\r\na\r\n" && r != "$1\r\nb\r\n" && r != "$1\r\nc\r\n" {
			t.Fatalf("single: %q", r)
		}
	}
	tc.hello3()
	tc.script([][]string{
		{"_|", "HRANDFIELD", "missing"},
		{"*0|", "HRANDFIELD", "missing", "2", "withvalues"},
		{"*3|*2|$1|a|$1|1|*2|$1|b|$1|2|*2|$1|c|$1|3|", "HRANDFIELD", "h", "3", "withvalues"},
		{"*0|", "HRANDFIELD", "h", "0", "withvalues"},
	})
	if r := tc.do("HRANDFIELD", "h", "-2", "withvalues"); !strings.HasPrefix(r, "*2\r\n*2\r\n$1\r\n") {
		t.Fatalf("RESP3 withvalues: %q", r)
	}
	if r := tc.do("HRANDFIELD", "h", "1"); !strings.HasPrefix(r, "*1\r\n$1\r\n") {
		t.Fatalf("RESP3 count: %q", r)
	}

	// Unique picks from a large hashtable, both selection strategies.
	n := keyspace.CurrentLimits().HashMaxListpackEntries + 10
	for i := 0; i < n; i++ {
		tc.do("HSET", "t", "f"+strconv.Itoa(i), "v")
	}
	for _, k := range []int{5, n - 5} {
		r := tc.do("HRANDFIELD", "t", strconv.Itoa(k))
		lines := strings.Split(strings.TrimSuffix(r, "\r\n"), "\r\n")
		seen := map[string]bool{}
		for i := 2; i < len(lines); i += 2 {
			if seen[lines[i]] {
				t.Fatalf("repeat %s in HRANDFIELD %d", lines[i], k)
			}
			seen[lines[i]] = true
		}
		if len(seen) != k {
			t.Fatalf("HRANDFIELD %d gave %d fields", k, len(seen))
		}
	}
}

func TestScanMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"*", "", true},
		{"a*", "abc", true},
		{"a*c", "abxc", true},
		{"a*c", "abxcd", false},
		{"*a*b", "xxaxxb", true},
		{"h?llo", "hello", true},
		{"h?llo", "hllo", false},
		{"h[ae]llo", "hallo", true},
		{"h[^e]llo", "hello", false},
		{"h[^e]llo", "hallo", true},
		{"h[a-b]llo", "hbllo", true},
		{"h[b-a]llo", "hbllo", true},
		{"h[a-b]llo", "hcllo", false},
		{"h\\*llo", "h*llo", true},
		{"h\\*llo", "hello", false},
		{"[\\]]", "]", true},
		{"ab\\", "ab\\", true},
		{"a[bc", "ab", true},
		{"a[bc", "ac", true},
		{"a[", "a", false},
		{"**a", "a", true},
		{"a[", "a[", false},
		{"a[b-", "ab", true},
		{"a[b-", "a-", true},
		{"a[^", "ab", true},
		{"a[^", "a[", true},
		{"a[^", "a", false},
	} {
		if got := scanMatch([]byte(c.p), []byte(c.s)); got != c.want {
			t.Errorf("scanMatch(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

// benchCmd runs one command repeatedly through the dispatcher.
func benchCmd(b *testing.B, setup [][]string, args ...string) {
	tc := newTestServer(&testing.T{})
	for _, s := range setup {
		tc.do(s...)
	}
	bs := make([][]byte, len(args))
	for i, a := range args {
		bs[i] = []byte(a)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tc.c.out.B = tc.c.out.B[:0]
		tc.s.execute(tc.c, bs)
	}
}

func BenchmarkHSetUpdate(b *testing.B) {
	benchCmd(b, [][]string{{"HSET", "h", "f", "v"}}, "HSET", "h", "f", "v")
}
func BenchmarkHGet(b *testing.B) {
	benchCmd(b, [][]string{{"HSET", "h", "a", "1", "f", "v"}}, "HGET", "h", "f")
}
func BenchmarkHIncrBy(b *testing.B) { benchCmd(b, nil, "HINCRBY", "h", "f", "1") }
func BenchmarkLPushRPop(b *testing.B) {
	benchCmd(b, [][]string{{"RPUSH", "l", "a", "b", "c"}}, "RPOPLPUSH", "l", "l")
}
func BenchmarkLRange10(b *testing.B) {
	benchCmd(b, [][]string{{"RPUSH", "l", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}}, "LRANGE", "l", "0", "9")
}
