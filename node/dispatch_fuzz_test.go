package node

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/slotd/slotd/node/config"
)

// respLen returns the length of the one RESP2/RESP3 reply at the start of
// b, or ok=false when b does not start with a well-formed reply.
func respLen(b []byte) (n int, ok bool) {
	if len(b) == 0 {
		return 0, false
	}
	nl := bytes.Index(b, []byte("\r\n"))
	if nl < 1 {
		return 0, false
	}
	line := b[1:nl]
	if bytes.IndexByte(line, '\r') >= 0 || bytes.IndexByte(line, '\n') >= 0 {
		return 0, false
	}
	head := nl + 2
	num := func() (int64, bool) {
		v, err := strconv.ParseInt(string(line), 10, 64)
		return v, err == nil
	}
	switch b[0] {
	case '+', '-', '(':
		return head, true
	case ':':
		_, ok := num()
		return head, ok
	case '_':
		return head, len(line) == 0
	case '#':
		return head, string(line) == "t" || string(line) == "f"
	case ',':
		_, err := strconv.ParseFloat(string(line), 64)
		return head, err == nil || string(line) == "inf" || string(line) == "-inf" || string(line) == "nan"
	case '$', '=', '!':
		size, ok := num()
		if !ok || size < -1 {
			return 0, false
		}
		if size == -1 {
			return head, b[0] == '$'
		}
		end := head + int(size)
		if end+2 > len(b) || b[end] != '\r' || b[end+1] != '\n' {
			return 0, false
		}
		return end + 2, true
	case '*', '~', '>', '%':
		count, ok := num()
		if !ok || count < -1 {
			return 0, false
		}
		if count == -1 {
			return head, b[0] == '*'
		}
		if b[0] == '%' {
			count *= 2
		}
		pos := head
		for i := int64(0); i < count; i++ {
			m, ok := respLen(b[pos:])
			if !ok {
				return 0, false
			}
			pos += m
		}
		return pos, true
	}
	return 0, false
}

// fuzzSkip names commands a dispatch fuzzer must not run: they block the
// calling goroutine, stop the server, or silence replies by design.
var fuzzSkip = map[string]bool{
	"client|pause": true, "client|reply": true, "shutdown": true, "debug": true, "monitor": true,
	"sync": true, "psync": true, "replicaof": true, "slaveof": true, "failover": true, "wait": true,
	"migrate": true, "subscribe": true, "psubscribe": true, "ssubscribe": true, "save": true,
	"bgsave": true, "bgrewriteaof": true, "cluster|failover": true,
}

// FuzzDispatch runs random argument vectors through the dispatcher and
// checks that each produces exactly one well-formed reply and no panic.
func FuzzDispatch(f *testing.F) {
	for _, seed := range []string{
		"PING", "SET\x00k\x00v", "GET\x00k", "SET\x00k\x00v\x00EX\x00-1", "MULTI", "EXEC",
		"COMMAND\x00GETKEYS\x00ZUNION\x002\x00a\x00b", "COMMAND\x00INFO\x00get\x00nope",
		"COMMAND\x00GETKEYSANDFLAGS\x00set\x00k\x00v\x00get", "COMMAND\x00LIST\x00FILTERBY\x00PATTERN\x00[a-",
		"COMMAND\x00DOCS\x00client", "CLIENT\x00LIST\x00ID\x00x", "CLIENT\x00KILL\x00ID\x001\x00SKIPME\x00no",
		"CLIENT\x00SETNAME\x00a b", "CLIENT\x00INFO", "HELLO\x003", "HELLO\x002", "RESET",
		"CLIENT\x00TRACKINGINFO", "WATCH\x00k", "SELECT\x0099", "AUTH\x00x", "nope\x00a",
		"CLIENT\x00UNBLOCK\x001\x00error", "COMMAND\x00GETKEYS\x00EVAL\x00s\x00-1",
	} {
		f.Add([]byte(seed))
	}
	cfg, err := config.Load(nil)
	if err != nil {
		f.Fatal(err)
	}
	srv := New(cfg, nil)
	tc := &testClient{s: srv, c: srv.testClient()}
	f.Fuzz(func(t *testing.T, in []byte) {
		parts := bytes.Split(in, []byte{0})
		if len(parts) > 16 || len(parts[0]) == 0 {
			return
		}
		cmd := tc.s.cmds.lookupFull(parts)
		if cmd != nil && (fuzzSkip[cmd.Name] || cmd.Flags&FlagBlocking != 0) {
			return
		}
		if c := tc.s.cmds.lookup(parts[0]); c != nil && fuzzSkip[c.Name] {
			return
		}
		tc.c.Flags &^= ClientCloseAfterReply
		tc.c.ReplyMode = ReplyOn
		tc.c.out.B = tc.c.out.B[:0]
		args := make([][]byte, len(parts))
		for i, p := range parts {
			args[i] = append([]byte(nil), p...)
		}
		tc.s.execute(tc.c, args)
		out := tc.c.out.B
		n, ok := respLen(out)
		if !ok || n != len(out) {
			t.Fatalf("%q: reply is not exactly one RESP value: %q", strings.Join(strings.Split(string(in), "\x00"), " "), out)
		}
	})
}
