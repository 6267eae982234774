package node

import "testing"

func TestSort(t *testing.T) {
	tc := newTestServer(t)
	tc.expect(":5|", "RPUSH", "nums", "3", "10", "-5", "1", "2")
	tc.expect("*5|$2|-5|$1|1|$1|2|$1|3|$2|10|", "SORT", "nums")
	tc.expect("*5|$2|10|$1|3|$1|2|$1|1|$2|-5|", "SORT", "nums", "DESC")
	tc.expect("*2|$1|1|$1|2|", "SORT", "nums", "LIMIT", "1", "2")
	tc.expect("*5|$2|-5|$1|1|$2|10|$1|2|$1|3|", "SORT", "nums", "ALPHA")
	tc.expect("*0|", "SORT", "nums", "LIMIT", "9", "2")
	tc.expect(":3|", "RPUSH", "words", "banana", "apple", "cherry")
	tc.expect("-ERR One or more scores can't be converted into double|", "SORT", "words")
	tc.expect("+OK|", "MSET", "w_apple", "3", "w_banana", "1", "w_cherry", "2", "o_apple", "A", "o_banana", "B")
	tc.expect("*3|$6|banana|$6|cherry|$5|apple|", "SORT", "words", "BY", "w_*")
	// A missing GET key is a null; "#" is the element.
	tc.expect("*6|$6|banana|$1|B|$6|cherry|$-1|$5|apple|$1|A|", "SORT", "words", "BY", "w_*", "GET", "#", "GET", "o_*")
	// BY without '*' keeps the list order.
	tc.expect("*3|$6|banana|$5|apple|$6|cherry|", "SORT", "words", "BY", "nosort")
	tc.expect(":1|", "HSET", "hw_apple", "f", "9")
	tc.expect(":1|", "HSET", "hw_banana", "f", "7")
	tc.expect(":1|", "HSET", "hw_cherry", "f", "8")
	tc.expect("*3|$1|7|$1|8|$1|9|", "SORT", "words", "BY", "hw_*->f", "GET", "hw_*->f")
	tc.expect(":3|", "SORT", "words", "BY", "w_*", "STORE", "dst")
	tc.expect("*3|$6|banana|$6|cherry|$5|apple|", "LRANGE", "dst", "0", "-1")
	tc.expect(":0|", "SORT", "missing", "STORE", "dst")
	tc.expect(":0|", "EXISTS", "dst")
	tc.expect("-ERR syntax error|", "SORT", "words", "BOGUS")
	tc.expect("-ERR syntax error|", "SORT", "words", "LIMIT", "0")
	tc.expect("-ERR syntax error|", "SORT_RO", "words", "STORE", "x")
	tc.expect("-ERR value is not an integer or out of range|", "SORT", "words", "LIMIT", "a", "b")
	tc.expect("+OK|", "SET", "str", "1")
	tc.expect("-WRONGTYPE Operation against a key holding the wrong kind of value|", "SORT", "str")
	tc.expect(":3|", "ZADD", "z", "3", "a", "1", "b", "2", "c")
	tc.expect("*3|$1|a|$1|c|$1|b|", "SORT", "z", "BY", "nosort", "DESC")
	// A pattern read inside MULTI is covered by the transaction's locks.
	tc.expect("+OK|", "MULTI")
	tc.expect("+QUEUED|", "SORT", "words", "BY", "w_*")
	tc.expect("*1|*3|$6|banana|$6|cherry|$5|apple|", "EXEC")
}

func TestSortKeys(t *testing.T) {
	args := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i := range s {
			out[i] = []byte(s[i])
		}
		return out
	}
	if got := sortKeys(args("SORT", "k", "LIMIT", "0", "1", "STORE", "a", "GET", "store", "STORE", "b")); len(got) != 2 || got[1] != 10 {
		t.Fatalf("keys %v", got)
	}
	if sortReadsPatterns(args("SORT", "k", "BY", "nosort", "GET", "#")) {
		t.Fatal("no pattern here")
	}
	if !sortReadsPatterns(args("SORT", "k", "GET", "o_*")) {
		t.Fatal("GET pattern reads other keys")
	}
}

func TestSortClusterDenied(t *testing.T) {
	tc := newTestServer(t, "cluster-enabled", "yes")
	tc.expect("-ERR BY option of SORT denied in Cluster mode.|", "SORT", "k", "BY", "w_*")
	tc.expect("-ERR GET option of SORT denied in Cluster mode.|", "SORT", "k", "GET", "#")
}
