package rdb

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A minimal RESP client and process helper for the interop tests, which
// run a real redis-server 7.0 (the Debian package).

type redisErr string

func (e redisErr) Error() string { return string(e) }

type rconn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

// startRedis runs redis-server on port with dir as its working directory
// and extra directives, and stops it when the test ends.
func startRedis(t *testing.T, port int, dir string, extra ...string) *rconn {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not found in PATH: the RDB interop tests need a real redis-server 7.0 (Debian package redis-server)")
	}
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--enable-debug-command", "yes", "--daemonize", "no", "--logfile", ""}, extra...)
	cmd := exec.Command(bin, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			rc := &rconn{t: t, c: c, r: bufio.NewReader(c)}
			t.Cleanup(func() { c.Close() })
			if _, err := rc.try("PING"); err == nil {
				return rc
			}
			c.Close()
		}
		select {
		case <-exited:
			t.Fatalf("redis-server exited on port %d:\n%s", port, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on port %d did not answer: %v\n%s", port, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *rconn) try(args ...any) (any, error) {
	var b []byte
	b = fmt.Appendf(b, "*%d\r\n", len(args))
	for _, a := range args {
		var s string
		switch v := a.(type) {
		case string:
			s = v
		case []byte:
			s = string(v)
		case int:
			s = strconv.Itoa(v)
		case int64:
			s = strconv.FormatInt(v, 10)
		default:
			s = fmt.Sprint(v)
		}
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(s), s)
	}
	c.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.c.Write(b); err != nil {
		return nil, err
	}
	return c.read()
}

// do runs a command and fails the test on a transport or server error.
func (c *rconn) do(args ...any) any {
	c.t.Helper()
	v, err := c.try(args...)
	if err != nil {
		c.t.Fatalf("%v: %v", args, err)
	}
	return v
}

func (c *rconn) str(args ...any) string {
	c.t.Helper()
	switch v := c.do(args...).(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case nil:
		return ""
	default:
		c.t.Fatalf("%v: unexpected reply %#v", args, v)
	}
	return ""
}

func (c *rconn) strs(args ...any) []string {
	c.t.Helper()
	arr, ok := c.do(args...).([]any)
	if !ok {
		c.t.Fatalf("%v: not an array", args)
	}
	out := make([]string, len(arr))
	for i, v := range arr {
		out[i], _ = v.(string)
	}
	return out
}

func (c *rconn) read() (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, errors.New("short line")
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, redisErr(body)
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		return n, err
	case '$':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			return nil, nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, b); err != nil {
			return nil, err
		}
		return string(b[:n]), nil
	case '*':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			return nil, nil
		}
		arr := make([]any, n)
		for i := range arr {
			v, err := c.read()
			if err != nil && !errors.As(err, new(redisErr)) {
				return nil, err
			}
			arr[i] = v
		}
		return arr, nil
	}
	return nil, fmt.Errorf("bad reply %q", line)
}
