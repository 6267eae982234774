package node

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// refServer is a real redis-server started by a test, used as the
// reference for exact replies.
type refServer struct {
	addr string
	cmd  *exec.Cmd
}

// startRedis starts redis-server on a free loopback port. The test fails
// (it is not skipped) when redis-server is missing: the conformance tests
// are the point.
func startRedis(t *testing.T) *refServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server 7.0 is needed for this test and was not found in PATH: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// A directory of its own: in-process slotd servers of other tests may
	// leave a dump.rdb in the package directory (FLUSHALL saves when save
	// rules exist, as in redis-server), which redis-server would load.
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--dir", t.TempDir(), "--appendonly", "no", "--enable-debug-command", "yes", "--daemonize", "no", "--logfile", "")
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start redis-server: %v", err)
	}
	r := &refServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", r.addr)
		if err == nil {
			c.Close()
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not start on %s: %v", r.addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// refConn is one connection to the reference server.
type refConn struct {
	c net.Conn
	r *bufio.Reader
}

func (rs *refServer) dial(t *testing.T) *refConn {
	t.Helper()
	c, err := net.Dial("tcp", rs.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &refConn{c: c, r: bufio.NewReader(c)}
}

// do sends a command and returns its raw reply.
func (rc *refConn) do(t *testing.T, args ...string) string {
	t.Helper()
	var b []byte
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	if _, err := rc.c.Write(b); err != nil {
		t.Fatal(err)
	}
	rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var raw strings.Builder
	if _, err := readValue(rc.r, &raw); err != nil {
		t.Fatal(err)
	}
	return raw.String()
}

// rv is a parsed RESP2/RESP3 value used to compare replies field by field.
type rv struct {
	kind  byte
	str   string
	num   int64
	elems []rv
}

// readValue reads one reply, copying its raw bytes to raw when not nil.
func readValue(r *bufio.Reader, raw *strings.Builder) (rv, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return rv{}, err
	}
	if raw != nil {
		raw.WriteString(line)
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return rv{}, errors.New("empty reply line")
	}
	v := rv{kind: line[0]}
	body := line[1:]
	switch v.kind {
	case '+', '-':
		v.str = body
	case ':':
		v.num, err = strconv.ParseInt(body, 10, 64)
	case '_', ',', '#':
		v.str = body
	case '$', '=':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			v.kind = '_'
			break
		}
		buf := make([]byte, n+2)
		for got := 0; got < len(buf); {
			m, err := r.Read(buf[got:])
			if err != nil {
				return v, err
			}
			got += m
		}
		if raw != nil {
			raw.Write(buf)
		}
		v.str = string(buf[:n])
	case '*', '~', '%', '>':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			v.kind = '_'
			break
		}
		if v.kind == '%' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			e, err := readValue(r, raw)
			if err != nil {
				return v, err
			}
			v.elems = append(v.elems, e)
		}
	default:
		return v, fmt.Errorf("bad reply line %q", line)
	}
	return v, err
}

func parseReply(t *testing.T, raw string) rv {
	t.Helper()
	v, err := readValue(bufio.NewReader(strings.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("bad reply %q: %v", raw, err)
	}
	return v
}

func (v rv) strs() []string {
	var out []string
	for _, e := range v.elems {
		out = append(out, e.str)
	}
	return out
}

// String renders v compactly for failure messages.
func (v rv) String() string {
	switch v.kind {
	case '*', '~', '%', '>':
		parts := make([]string, len(v.elems))
		for i, e := range v.elems {
			parts[i] = e.String()
		}
		return string(v.kind) + "[" + strings.Join(parts, " ") + "]"
	case ':':
		return strconv.FormatInt(v.num, 10)
	case '_':
		return "nil"
	}
	return strconv.Quote(v.str)
}

// withoutNotes drops the "notes" entries from key spec maps: they are
// redis-server's prose, which slotd does not repeat.
func withoutNotes(v rv) rv {
	if v.kind != '*' && v.kind != '%' && v.kind != '~' {
		return v
	}
	out := v
	out.elems = nil
	for i := 0; i < len(v.elems); i++ {
		if (v.kind == '%' || v.kind == '*') && i+1 < len(v.elems) && i%2 == 0 && v.elems[i].str == "notes" && v.elems[i].kind == '$' {
			i++
			continue
		}
		out.elems = append(out.elems, withoutNotes(v.elems[i]))
	}
	return out
}
