package node

import (
	"bufio"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// realRedis is a connection to a real redis-server, used when the
// environment names one in SLOTD_LISTHASH_REDIS (host:port): every scripted
// step is then also checked against it, to keep the wanted bytes honest.
type realRedis struct {
	conn net.Conn
	r    *bufio.Reader
}

var realConns = map[*testing.T]*realRedis{}

func realFor(t *testing.T) *realRedis {
	addr := os.Getenv("SLOTD_LISTHASH_REDIS")
	if addr == "" {
		return nil
	}
	if rr := realConns[t]; rr != nil {
		return rr
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	rr := &realRedis{conn: c, r: bufio.NewReader(c)}
	realConns[t] = rr
	t.Cleanup(func() { c.Close(); delete(realConns, t) })
	rr.do(t, "FLUSHALL")
	return rr
}

// do sends one command and returns the raw reply, read until the server
// pauses (replies here are small).
func (rr *realRedis) do(t *testing.T, args ...string) string {
	if _, err := rr.conn.Write([]byte(respCmd(args...))); err != nil {
		t.Fatal(err)
	}
	var out []byte
	buf := make([]byte, 1<<16)
	deadline := 300 * time.Millisecond
	for {
		rr.conn.SetReadDeadline(time.Now().Add(deadline))
		n, err := rr.r.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			break
		}
		deadline = 30 * time.Millisecond
	}
	return string(out)
}

// script runs steps of "want | args" against tc; each step is the wanted
// raw reply (| for CRLF) followed by the command's arguments.
func (tc *testClient) script(steps [][]string) {
	tc.t.Helper()
	rr := realFor(tc.t)
	for _, s := range steps {
		if rr != nil {
			want := strings.ReplaceAll(s[0], "|", "\r\n")
			if got := rr.do(tc.t, s[1:]...); got != want {
				tc.t.Errorf("real redis %q:\n got  %q\n want %q", s[1:], got, want)
			}
		}
		tc.expect(s[0], s[1:]...)
	}
}

// hello3 switches tc (and the real server, if any) to RESP3.
func (tc *testClient) hello3() {
	tc.t.Helper()
	if rr := realFor(tc.t); rr != nil {
		rr.do(tc.t, "HELLO", "3")
	}
	if r := tc.do("HELLO", "3"); !strings.HasPrefix(r, "%") {
		tc.t.Fatalf("HELLO 3: %q", r)
	}
}

// expectBoth is expect, also checked against the real server if any.
func (tc *testClient) expectBoth(want string, args ...string) {
	tc.t.Helper()
	tc.script([][]string{append([]string{want}, args...)})
}

const wrongType = "-WRONGTYPE Operation against a key holding the wrong kind of value|"

func TestListPushPop(t *testing.T) {
	tc := newTestServer(t)
	tc.script([][]string{
		{"+OK|", "SET", "s", "x"},
		{":3|", "RPUSH", "l", "a", "b", "c"},
		{":5|", "LPUSH", "l", "y", "z"},
		{"*5|$1|z|$1|y|$1|a|$1|b|$1|c|", "LRANGE", "l", "0", "-1"},
		{":0|", "LPUSHX", "missing", "a"},
		{":0|", "RPUSHX", "missing", "a"},
		{":0|", "EXISTS", "missing"},
		{":7|", "RPUSHX", "l", "d", "e"},
		{":8|", "LPUSHX", "l", "q"},
		{wrongType, "LPUSH", "s", "a"},
		{wrongType, "RPUSH", "s", "a"},
		{wrongType, "LPUSHX", "s", "a"},
		{wrongType, "RPUSHX", "s", "a"},
		{"-ERR wrong number of arguments for 'lpush' command|", "LPUSH", "l"},
		{"-ERR wrong number of arguments for 'rpushx' command|", "RPUSHX", "l"},
		{"$1|q|", "LPOP", "l"},
		{"$1|e|", "RPOP", "l"},
		{"*2|$1|z|$1|y|", "LPOP", "l", "2"},
		{"*2|$1|d|$1|c|", "RPOP", "l", "2"},
		{"*0|", "LPOP", "l", "0"},
		{"-ERR value is out of range, must be positive|", "LPOP", "l", "-1"},
		{"-ERR value is out of range, must be positive|", "LPOP", "l", "x"},
		{"-ERR value is out of range, must be positive|", "RPOP", "missing", "9223372036854775808"},
		{"-ERR wrong number of arguments for 'lpop' command|", "LPOP", "l", "1", "2"},
		{"-ERR wrong number of arguments for 'rpop' command|", "RPOP"},
		{"$-1|", "LPOP", "missing"},
		{"*-1|", "LPOP", "missing", "2"},
		{"*-1|", "RPOP", "missing", "0"},
		{wrongType, "LPOP", "s"},
		{wrongType, "LPOP", "s", "0"},
		{"*2|$1|a|$1|b|", "LPOP", "l", "9223372036854775807"},
		{":0|", "EXISTS", "l"},
		{":1|", "RPUSH", "l", "a"},
		{"$1|a|", "RPOP", "l"},
		{":0|", "EXISTS", "l"},
	})
}

func TestListPopRESP3(t *testing.T) {
	tc := newTestServer(t)
	tc.hello3()
	tc.script([][]string{
		{"_|", "LPOP", "missing"},
		{"_|", "LPOP", "missing", "2"},
		{"_|", "RPOP", "missing", "0"},
		{":2|", "RPUSH", "l", "a", "b"},
		{"*1|$1|a|", "LPOP", "l", "1"},
		{"*0|", "LPOP", "l", "0"},
		{"$1|b|", "RPOP", "l"},
	})
}

func TestListIndexRange(t *testing.T) {
	tc := newTestServer(t)
	tc.script([][]string{
		{"+OK|", "SET", "s", "x"},
		{":4|", "RPUSH", "l", "a", "b", "c", "a"},
		{":4|", "LLEN", "l"},
		{":0|", "LLEN", "missing"},
		{wrongType, "LLEN", "s"},
		{"$1|b|", "LINDEX", "l", "1"},
		{"$1|a|", "LINDEX", "l", "-1"},
		{"$-1|", "LINDEX", "l", "4"},
		{"$-1|", "LINDEX", "l", "-5"},
		{"$-1|", "LINDEX", "l", "-9223372036854775808"},
		{"$-1|", "LINDEX", "l", "9223372036854775807"},
		{"-ERR value is not an integer or out of range|", "LINDEX", "l", "x"},
		{"$-1|", "LINDEX", "missing", "x"},
		{wrongType, "LINDEX", "s", "x"},
		{"*4|$1|a|$1|b|$1|c|$1|a|", "LRANGE", "l", "-100", "100"},
		{"*4|$1|a|$1|b|$1|c|$1|a|", "LRANGE", "l", "-9223372036854775808", "9223372036854775807"},
		{"*2|$1|b|$1|c|", "LRANGE", "l", "1", "-2"},
		{"*0|", "LRANGE", "l", "5", "10"},
		{"*0|", "LRANGE", "l", "2", "1"},
		{"*0|", "LRANGE", "missing", "0", "1"},
		{"-ERR value is not an integer or out of range|", "LRANGE", "missing", "x", "1"},
		{"-ERR value is not an integer or out of range|", "LRANGE", "s", "0", "x"},
		{wrongType, "LRANGE", "s", "0", "1"},
		{"+OK|", "LSET", "l", "0", "z"},
		{"+OK|", "LSET", "l", "-1", "y"},
		{"*4|$1|z|$1|b|$1|c|$1|y|", "LRANGE", "l", "0", "-1"},
		{"-ERR index out of range|", "LSET", "l", "4", "z"},
		{"-ERR index out of range|", "LSET", "l", "-9223372036854775808", "z"},
		{"-ERR value is not an integer or out of range|", "LSET", "l", "x", "z"},
		{"-ERR no such key|", "LSET", "missing", "x", "z"},
		{wrongType, "LSET", "s", "x", "z"},
		{"-ERR wrong number of arguments for 'lset' command|", "LSET", "l", "0"},
	})
}

func TestListTrimRemInsert(t *testing.T) {
	tc := newTestServer(t)
	tc.script([][]string{
		{"+OK|", "SET", "s", "x"},
		{"-ERR value is not an integer or out of range|", "LTRIM", "missing", "x", "1"},
		{wrongType, "LTRIM", "s", "0", "1"},
		{"+OK|", "LTRIM", "missing", "0", "1"},
		{"-ERR value is not an integer or out of range|", "LREM", "missing", "x", "a"},
		{wrongType, "LREM", "s", "0", "a"},
		{":0|", "LREM", "missing", "0", "a"},
		{":0|", "LINSERT", "missing", "before", "a", "b"},
		{"-ERR syntax error|", "LINSERT", "missing", "middle", "a", "b"},
		{"-ERR syntax error|", "LINSERT", "s", "middle", "a", "b"},
		{wrongType, "LINSERT", "s", "before", "a", "b"},
		{":7|", "RPUSH", "l", "a", "b", "c", "a", "b", "c", "a"},
		{":-1|", "LINSERT", "l", "before", "z", "b"},
		{":8|", "LINSERT", "l", "BEFORE", "a", "x"},
		{":9|", "LINSERT", "l", "After", "a", "y"},
		{"*9|$1|x|$1|a|$1|y|$1|b|$1|c|$1|a|$1|b|$1|c|$1|a|", "LRANGE", "l", "0", "-1"},
		{":1|", "LREM", "l", "0", "x"},
		{":2|", "LREM", "l", "-2", "a"},
		{"*6|$1|a|$1|y|$1|b|$1|c|$1|b|$1|c|", "LRANGE", "l", "0", "-1"},
		{":1|", "LREM", "l", "1", "b"},
		{"*5|$1|a|$1|y|$1|c|$1|b|$1|c|", "LRANGE", "l", "0", "-1"},
		{":0|", "LREM", "l", "0", "zz"},
		{"+OK|", "LTRIM", "l", "1", "-2"},
		{"*3|$1|y|$1|c|$1|b|", "LRANGE", "l", "0", "-1"},
		{"+OK|", "LTRIM", "l", "-9223372036854775808", "9223372036854775807"},
		{"*3|$1|y|$1|c|$1|b|", "LRANGE", "l", "0", "-1"},
		{"+OK|", "LTRIM", "l", "5", "1"},
		{":0|", "EXISTS", "l"},
		{":4|", "RPUSH", "l", "a", "b", "a", "a"},
		{":3|", "LREM", "l", "-9223372036854775808", "a"},
		{":1|", "LREM", "l", "0", "b"},
		{":0|", "EXISTS", "l"},
	})
}

func TestListPos(t *testing.T) {
	tc := newTestServer(t)
	tc.script([][]string{
		{"+OK|", "SET", "s", "x"},
		{":7|", "RPUSH", "l", "a", "b", "c", "a", "b", "c", "a"},
		{":0|", "LPOS", "l", "a"},
		{"-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list|", "LPOS", "l", "a", "RANK", "0"},
		{":3|", "LPOS", "l", "a", "rank", "-2"},
		{"*3|:0|:3|:6|", "LPOS", "l", "a", "COUNT", "0"},
		{"-ERR COUNT can't be negative|", "LPOS", "l", "a", "count", "-1"},
		{"-ERR COUNT can't be negative|", "LPOS", "l", "a", "count", "x"},
		{"-ERR MAXLEN can't be negative|", "LPOS", "l", "a", "maxlen", "-1"},
		{"-ERR MAXLEN can't be negative|", "LPOS", "l", "a", "maxlen", "9223372036854775808"},
		{"-ERR value is not an integer or out of range|", "LPOS", "l", "a", "rank", "x"},
		{"-ERR syntax error|", "LPOS", "l", "a", "foo"},
		{"-ERR syntax error|", "LPOS", "l", "a", "count"},
		{"$-1|", "LPOS", "l", "z"},
		{"*0|", "LPOS", "l", "z", "count", "2"},
		{"*2|:6|:3|", "LPOS", "l", "a", "count", "2", "rank", "-1"},
		{"*0|", "LPOS", "l", "a", "rank", "2", "count", "0", "maxlen", "3"},
		{"*1|:0|", "LPOS", "l", "a", "maxlen", "1", "count", "0"},
		{":6|", "LPOS", "l", "a", "rank", "-1", "maxlen", "1"},
		{"$-1|", "LPOS", "l", "a", "rank", "4"},
		{":6|", "LPOS", "l", "a", "rank", "-9223372036854775808"},
		{"$-1|", "LPOS", "missing", "a"},
		{"*0|", "LPOS", "missing", "a", "count", "0"},
		{wrongType, "LPOS", "s", "a"},
		{"-ERR wrong number of arguments for 'lpos' command|", "LPOS", "l"},
	})
	tc.hello3()
	tc.expectBoth("_|", "LPOS", "l", "z")
	tc.expectBoth("*0|", "LPOS", "l", "z", "count", "0")
}

func TestListMove(t *testing.T) {
	tc := newTestServer(t)
	tc.script([][]string{
		{"+OK|", "SET", "s", "x"},
		{":3|", "RPUSH", "l", "a", "b", "c"},
		{"-ERR syntax error|", "LMOVE", "l", "l2", "up", "left"},
		{"-ERR syntax error|", "LMOVE", "l", "l2", "left", "down"},
		{"$-1|", "LMOVE", "missing", "s", "left", "left"},
		{wrongType, "LMOVE", "l", "s", "left", "left"},
		{wrongType, "LMOVE", "s", "l", "left", "left"},
		{"$-1|", "RPOPLPUSH", "missing", "s"},
		{wrongType, "RPOPLPUSH", "l", "s"},
		{"*3|$1|a|$1|b|$1|c|", "LRANGE", "l", "0", "-1"},
		{"$1|a|", "LMOVE", "l", "l", "LEFT", "RIGHT"},
		{"*3|$1|b|$1|c|$1|a|", "LRANGE", "l", "0", "-1"},
		{"$1|a|", "LMOVE", "l", "l2", "right", "left"},
		{"$1|c|", "RPOPLPUSH", "l", "l2"},
		{"$1|b|", "RPOPLPUSH", "l", "l2"},
		{"$-1|", "RPOPLPUSH", "l", "l2"},
		{":0|", "EXISTS", "l"},
		{"*3|$1|b|$1|c|$1|a|", "LRANGE", "l2", "0", "-1"},
		{":1|", "RPUSH", "one", "x"},
		{"$1|x|", "RPOPLPUSH", "one", "one"},
		{"*1|$1|x|", "LRANGE", "one", "0", "-1"},
		{"$1|x|", "LMOVE", "one", "other", "left", "right"},
		{":0|", "EXISTS", "one"},
		{"-ERR wrong number of arguments for 'lmove' command|", "LMOVE", "a", "b", "left"},
	})
}

func TestListMPop(t *testing.T) {
	tc := newTestServer(t)
	tc.script([][]string{
		{"+OK|", "SET", "s", "x"},
		{":4|", "RPUSH", "l", "a", "b", "c", "d"},
		{"-ERR numkeys should be greater than 0|", "LMPOP", "0", "l", "left"},
		{"-ERR numkeys should be greater than 0|", "LMPOP", "-1", "l", "left"},
		{"-ERR numkeys should be greater than 0|", "LMPOP", "x", "l", "left"},
		{"-ERR syntax error|", "LMPOP", "2", "l", "left"},
		{"-ERR syntax error|", "LMPOP", "9223372036854775807", "l", "left"},
		{"-ERR syntax error|", "LMPOP", "1", "l", "middle"},
		{"-ERR count should be greater than 0|", "LMPOP", "1", "l", "left", "count", "0"},
		{"-ERR count should be greater than 0|", "LMPOP", "1", "l", "left", "count", "-1"},
		{"-ERR count should be greater than 0|", "LMPOP", "1", "l", "left", "count", "x"},
		{"-ERR syntax error|", "LMPOP", "1", "l", "left", "count"},
		{"-ERR syntax error|", "LMPOP", "1", "l", "left", "count", "1", "count", "2"},
		{"-ERR syntax error|", "LMPOP", "1", "l", "left", "foo"},
		{"-ERR wrong number of arguments for 'lmpop' command|", "LMPOP", "1", "l"},
		{"*2|$1|l|*2|$1|d|$1|c|", "LMPOP", "2", "missing", "l", "right", "COUNT", "2"},
		{"*-1|", "LMPOP", "1", "missing", "left"},
		{wrongType, "LMPOP", "2", "s", "l", "left"},
		{wrongType, "LMPOP", "2", "missing", "s", "left"},
		{"*2|$1|l|*2|$1|a|$1|b|", "LMPOP", "1", "l", "LEFT", "count", "10"},
		{":0|", "EXISTS", "l"},
		{"*-1|", "LMPOP", "1", "l", "left"},
		{":2|", "RPUSH", "l", "a", "b"},
	})
	tc.hello3()
	tc.expectBoth("*2|$1|l|*1|$1|a|", "LMPOP", "1", "l", "left")
	tc.expectBoth("_|", "LMPOP", "1", "missing", "left")
}

func TestListCommandMeta(t *testing.T) {
	tc := newTestServer(t)
	lmpop := tc.s.cmds["lmpop"]
	args := func(a ...string) [][]byte {
		out := make([][]byte, len(a))
		for i, s := range a {
			out[i] = []byte(s)
		}
		return out
	}
	got := lmpop.keyPositions(args("lmpop", "2", "a", "b", "left"), nil)
	if len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("lmpop keys: %v", got)
	}
	for _, bad := range [][]string{{"lmpop", "x", "a", "left"}, {"lmpop", "3", "a", "left"}, {"lmpop", "0", "a", "left"}} {
		if got := lmpop.keyPositions(args(bad...), nil); len(got) != 0 {
			t.Fatalf("lmpop keys of %v: %v", bad, got)
		}
	}
	if lmpop.Flags&FlagMovableKeys == 0 {
		t.Fatal("lmpop must be movablekeys")
	}
	lmove := tc.s.cmds["lmove"]
	if got := lmove.keyPositions(args("lmove", "a", "b", "left", "right"), nil); len(got) != 2 {
		t.Fatalf("lmove keys: %v", got)
	}
}
