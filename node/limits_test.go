package node

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/node/config"
)

// startTCP starts a server in process on a free loopback port with the
// given directives ("name", "value", ...) and returns it and its address.
func startTCP(t *testing.T, directives ...string) (*Server, string) {
	t.Helper()
	args := []string{"--port", "0", "--bind", "127.0.0.1"}
	for i := 0; i+1 < len(directives); i += 2 {
		if directives[i] == "bind" {
			args[3] = directives[i+1]
			continue
		}
		// Several words are several arguments, as a shell passes them.
		args = append(append(args, "--"+directives[i]), strings.Fields(directives[i+1])...)
	}
	cfg, err := config.Load(args)
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, nil)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	return s, s.Addr().String()
}

type tcpClient struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

// respCmd encodes args as a RESP array of bulk strings, as clients send
// commands.
func respCmd(args ...string) string {
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	return b.String()
}

func dialTCP(t *testing.T, addr string) *tcpClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &tcpClient{t: t, c: c, r: bufio.NewReader(c)}
}

func (tc *tcpClient) send(s string) {
	tc.t.Helper()
	if _, err := tc.c.Write([]byte(s)); err != nil {
		tc.t.Fatalf("write: %v", err)
	}
}

// reply reads one reply (raw bytes) within the deadline.
func (tc *tcpClient) reply() string {
	tc.t.Helper()
	tc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var raw strings.Builder
	if _, err := readValue(tc.r, &raw); err != nil {
		tc.t.Fatalf("reading reply: %v (got %q)", err, raw.String())
	}
	return raw.String()
}

// expectReply sends a request and checks its raw reply.
func (tc *tcpClient) expectReply(req, want string) {
	tc.t.Helper()
	tc.send(req)
	if got := tc.reply(); got != want {
		tc.t.Fatalf("%q: got %q, want %q", req, got, want)
	}
}

// expectClosed checks that the server closes the connection within d
// without sending anything more.
func (tc *tcpClient) expectClosed(d time.Duration) {
	tc.t.Helper()
	tc.c.SetReadDeadline(time.Now().Add(d))
	b, err := io.ReadAll(tc.r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		tc.t.Fatalf("connection still open after %v (read %d bytes)", d, len(b))
	}
	if len(b) > 0 {
		tc.t.Fatalf("unexpected data before close: %q", truncate(string(b), 100))
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func TestLimitMaxClients(t *testing.T) {
	_, addr := startTCP(t, "maxclients", "2")
	a, b := dialTCP(t, addr), dialTCP(t, addr)
	a.expectReply("PING\r\n", "+PONG\r\n")
	b.expectReply("PING\r\n", "+PONG\r\n")
	c := dialTCP(t, addr)
	if got := c.reply(); got != "-ERR max number of clients reached\r\n" {
		t.Fatalf("third client got %q", got)
	}
	c.expectClosed(2 * time.Second)
	a.c.Close()
	// The slot frees up once the server has seen the close.
	deadline := time.Now().Add(5 * time.Second)
	for {
		d := dialTCP(t, addr)
		d.send("PING\r\n")
		if got := d.reply(); got == "+PONG\r\n" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no room after a client left: %q", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLimitProtoMaxBulkLen(t *testing.T) {
	_, addr := startTCP(t, "proto-max-bulk-len", "1mb")
	a := dialTCP(t, addr)
	val := strings.Repeat("x", 1<<20)
	a.send("*2\r\n$4\r\nECHO\r\n$1048576\r\n" + val + "\r\n")
	if got := a.reply(); got != "$1048576\r\n"+val+"\r\n" {
		t.Fatalf("ECHO of exactly proto-max-bulk-len: %q", truncate(got, 40))
	}
	a.send("*2\r\n$4\r\nECHO\r\n$1048577\r\n")
	if got := a.reply(); got != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("bulk over proto-max-bulk-len: %q", got)
	}
	a.expectClosed(2 * time.Second)
}

func TestLimitHugeBulkHeader(t *testing.T) {
	_, addr := startTCP(t)
	before := heapInUse()
	a := dialTCP(t, addr)
	start := time.Now()
	a.send("*1\r\n$2147483648\r\n")
	if got := a.reply(); got != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("2 GB bulk header: %q", got)
	}
	a.expectClosed(2 * time.Second)
	if d := time.Since(start); d > time.Second {
		t.Fatalf("answer took %v", d)
	}
	if after := heapInUse(); after > before+16<<20 {
		t.Fatalf("heap grew from %d to %d bytes", before, after)
	}
}

// TestLimitBigBulkIsNotPreallocated announces a bulk just under
// proto-max-bulk-len and sends only a few bytes of it: the server must not
// allocate for the announced size.
func TestLimitBigBulkIsNotPreallocated(t *testing.T) {
	s, addr := startTCP(t)
	before := heapInUse()
	var conns []*tcpClient
	for i := 0; i < 4; i++ {
		a := dialTCP(t, addr)
		a.send("*2\r\n$4\r\nECHO\r\n$536870000\r\n" + strings.Repeat("y", 100000))
		a.send("*2147483647\r\n$4\r\nPING\r\n"[:0])
		conns = append(conns, a)
	}
	m := dialTCP(t, addr)
	m.send("*2147483647\r\n$4\r\nPING\r\n$1\r\na\r\n")
	waitFor(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.clients) == 5
	})
	time.Sleep(100 * time.Millisecond)
	if after := heapInUse(); after > before+32<<20 {
		t.Fatalf("heap grew from %d to %d bytes for 5 partial requests", before, after)
	}
	// The connections are still usable: finish nothing, but the server
	// answers others.
	dialTCP(t, addr).expectReply("PING\r\n", "+PONG\r\n")
	_ = conns
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLimitQueryBuffer(t *testing.T) {
	_, addr := startTCP(t, "client-query-buffer-limit", "1mb")
	a := dialTCP(t, addr)
	a.send("*2\r\n$4\r\nECHO\r\n$3000000\r\n")
	chunk := strings.Repeat("z", 64<<10)
	for i := 0; i < 24; i++ {
		if _, err := a.c.Write([]byte(chunk)); err != nil {
			break // closed already
		}
	}
	a.expectClosed(3 * time.Second)
	dialTCP(t, addr).expectReply("PING\r\n", "+PONG\r\n")
}

func TestLimitInline(t *testing.T) {
	_, addr := startTCP(t)
	a := dialTCP(t, addr)
	a.send(strings.Repeat("a", 70<<10))
	if got := a.reply(); got != "-ERR Protocol error: too big inline request\r\n" {
		t.Fatalf("endless inline: %q", got)
	}
	a.expectClosed(2 * time.Second)
	b := dialTCP(t, addr)
	b.send("*1\r\n$" + strings.Repeat("1", 70<<10))
	if got := b.reply(); got != "-ERR Protocol error: too big bulk count string\r\n" {
		t.Fatalf("endless bulk header: %q", got)
	}
	b.expectClosed(2 * time.Second)
}

func TestLimitOutputBuffer(t *testing.T) {
	_, addr := startTCP(t, "client-output-buffer-limit", "normal 1mb 0 0")
	a := dialTCP(t, addr)
	big := strings.Repeat("v", 2<<20)
	a.expectReply("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2097152\r\n"+big+"\r\n", "+OK\r\n")
	a.expectReply("*3\r\n$3\r\nSET\r\n$1\r\ns\r\n$3\r\nabc\r\n", "+OK\r\n")
	// Small replies in one batch are fine.
	a.expectReply("GET s\r\n", "$3\r\nabc\r\n")
	before := heapInUse()
	a.send("GET k\r\n")
	a.expectClosed(3 * time.Second)
	if after := heapInUse(); after > before+8<<20 {
		t.Fatalf("heap grew from %d to %d", before, after)
	}
	dialTCP(t, addr).expectReply("STRLEN k\r\n"[:0]+"PING\r\n", "+PONG\r\n")
}

func TestLimitIdleTimeout(t *testing.T) {
	_, addr := startTCP(t, "timeout", "1")
	a := dialTCP(t, addr)
	a.expectReply("PING\r\n", "+PONG\r\n")
	start := time.Now()
	a.expectClosed(4 * time.Second)
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("closed after %v, before the timeout", d)
	}
}

// nonLoopbackIPv4 returns an address of this host that is not loopback.
func nonLoopbackIPv4() net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP
		}
	}
	return nil
}

type remoteConn struct {
	fakeConn
	remote net.Addr
}

func (c remoteConn) RemoteAddr() net.Addr { return c.remote }

func TestLimitProtectedMode(t *testing.T) {
	tc := newTestServer(t)
	outside := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 77), Port: 5000}
	if msg := tc.s.admit(tc.s.newClient(remoteConn{remote: outside})); msg != errDenied {
		t.Fatalf("admit from outside: %q", msg)
	}
	if msg := tc.s.admit(tc.s.newClient(fakeConn{})); msg != "" {
		t.Fatalf("admit from loopback: %q", msg)
	}
	pw := newTestServer(t, "requirepass", "pw")
	if msg := pw.s.admit(pw.s.newClient(remoteConn{remote: outside})); msg != "" {
		t.Fatalf("admit from outside with a password: %q", msg)
	}
	off := newTestServer(t, "protected-mode", "no")
	if msg := off.s.admit(off.s.newClient(remoteConn{remote: outside})); msg != "" {
		t.Fatalf("admit with protected-mode no: %q", msg)
	}
	if !strings.HasPrefix(errDenied, "DENIED Redis is running in protected mode") || !strings.HasSuffix(errDenied, "accepting connections from the outside.") {
		t.Fatalf("DENIED text: %q", errDenied)
	}

	ip := nonLoopbackIPv4()
	if ip == nil {
		t.Log("no non-loopback address: real connection not tested")
		return
	}
	_, addr := startTCP(t, "bind", ip.String())
	a := dialTCP(t, addr)
	if got := a.reply(); got != "-"+errDenied+"\r\n" {
		t.Fatalf("connection from %s: %q", ip, truncate(got, 80))
	}
	a.expectClosed(2 * time.Second)
}

func TestLimitRequirePass(t *testing.T) {
	_, addr := startTCP(t, "requirepass", "pw")
	a := dialTCP(t, addr)
	a.expectReply("GET k\r\n", "-NOAUTH Authentication required.\r\n")
	a.expectReply("AUTH x\r\n", "-WRONGPASS invalid username-password pair or user is disabled.\r\n")
	a.expectReply("AUTH default x\r\n", "-WRONGPASS invalid username-password pair or user is disabled.\r\n")
	a.expectReply("AUTH nobody pw\r\n", "-WRONGPASS invalid username-password pair or user is disabled.\r\n")
	a.expectReply("HELLO 3 AUTH default x\r\n", "-WRONGPASS invalid username-password pair or user is disabled.\r\n")
	a.expectReply("HELLO 3\r\n", "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n")
	a.expectReply("AUTH pw\r\n", "+OK\r\n")
	a.expectReply("GET k\r\n", "$-1\r\n")

	b := dialTCP(t, addr)
	b.send("HELLO 3 AUTH default pw\r\n")
	if got := b.reply(); !strings.HasPrefix(got, "%7\r\n$6\r\nserver\r\n") {
		t.Fatalf("HELLO 3 AUTH: %q", got)
	}
	b.expectReply("GET k\r\n", "_\r\n")

	// Before AUTH, requests are held to tight size limits.
	c := dialTCP(t, addr)
	c.expectReply("*11\r\n", "-ERR Protocol error: unauthenticated multibulk length\r\n")
	c.expectClosed(2 * time.Second)
	d := dialTCP(t, addr)
	d.expectReply("*1\r\n$16385\r\n", "-ERR Protocol error: unauthenticated bulk length\r\n")
	d.expectClosed(2 * time.Second)
	e := dialTCP(t, addr)
	e.expectReply("AUTH pw\r\n", "+OK\r\n")
	e.expectReply("*12\r\n$4\r\nECHO\r\n$20000\r\n"[:0]+"*2\r\n$4\r\nECHO\r\n$20000\r\n"+strings.Repeat("q", 20000)+"\r\n",
		"$20000\r\n"+strings.Repeat("q", 20000)+"\r\n")
	_ = bytes.MinRead
}
