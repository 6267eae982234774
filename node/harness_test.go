package node

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/node/config"
)

// fakeConn is a net.Conn that is never read or written: tests drive the
// dispatcher directly and read replies from the client's buffer.
type fakeConn struct{}

func (fakeConn) Read([]byte) (int, error)         { return 0, net.ErrClosed }
func (fakeConn) Write(b []byte) (int, error)      { return len(b), nil }
func (fakeConn) Close() error                     { return nil }
func (fakeConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6379} }
func (fakeConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000} }
func (fakeConn) SetDeadline(time.Time) error      { return nil }
func (fakeConn) SetReadDeadline(time.Time) error  { return nil }
func (fakeConn) SetWriteDeadline(time.Time) error { return nil }

// testClient runs commands in process and returns raw RESP replies.
type testClient struct {
	t *testing.T
	s *Server
	c *Client
}

// newTestServer returns a server configured with the given directives
// ("name", "value", ...) and a client connected to it.
func newTestServer(t *testing.T, directives ...string) *testClient {
	t.Helper()
	var args []string
	for i := 0; i+1 < len(directives); i += 2 {
		args = append(args, "--"+directives[i], directives[i+1])
	}
	cfg, err := config.Load(args)
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, nil)
	return &testClient{t: t, s: s, c: s.testClient()}
}

// testClient registers a client that is not backed by a socket.
func (s *Server) testClient() *Client {
	c := s.newClient(fakeConn{})
	c.Auth = *s.requirePass.Load() == ""
	s.mu.Lock()
	s.clients[c.ID] = c
	s.mu.Unlock()
	return c
}

// newClient returns another client of the same server.
func (tc *testClient) newClient() *testClient {
	return &testClient{t: tc.t, s: tc.s, c: tc.s.testClient()}
}

// do runs one command and returns its raw reply.
func (tc *testClient) do(args ...string) string {
	bs := make([][]byte, len(args))
	for i, a := range args {
		bs[i] = []byte(a)
	}
	tc.c.out.B = tc.c.out.B[:0]
	tc.c.setClock(time.Now())
	tc.s.execute(tc.c, bs)
	return string(tc.c.out.B)
}

// expect runs a command and fails the test unless the raw reply is want.
// want may be written with "\r\n" or with "|" standing for "\r\n".
func (tc *testClient) expect(want string, args ...string) {
	tc.t.Helper()
	want = strings.ReplaceAll(want, "|", "\r\n")
	if got := tc.do(args...); got != want {
		tc.t.Fatalf("%q:\n got  %q\n want %q", args, got, want)
	}
}

// setNow is not provided: tests that need time use PX/PEXPIRE with small
// values and wait, or absolute times far in the past or future.

func TestHarnessBasics(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+PONG|", "PING")
	tc.expect("+OK|", "SET", "k", "v")
	tc.expect("$1|v|", "get", "k")
	tc.expect("-ERR wrong number of arguments for 'get' command|", "GET")
	tc.expect("-ERR unknown command 'nope', with args beginning with: 'a' |", "nope", "a")
	tc.expect("+OK|", "MULTI")
	tc.expect("+QUEUED|", "SET", "k", "w")
	tc.expect("*1|+OK|", "EXEC")
	tc.expect("$1|w|", "GET", "k")
	tc.expect("$-1|", "SET", "k", "x", "NX")
	tc.expect("-ERR syntax error|", "SET", "k", "x", "NX", "XX")
	tc.expect("-ERR invalid expire time in 'set' command|", "SET", "k", "x", "EX", "0")
	tc.expect("-ERR value is not an integer or out of range|", "SET", "k", "x", "EX", "a")
}

func TestWatchAbortsExec(t *testing.T) {
	a := newTestServer(t)
	b := a.newClient()
	a.expect("+OK|", "WATCH", "k")
	b.expect("+OK|", "SET", "k", "1")
	a.expect("+OK|", "MULTI")
	a.expect("+QUEUED|", "SET", "k", "2")
	a.expect("*-1|", "EXEC")
	a.expect("$1|1|", "GET", "k")
}
