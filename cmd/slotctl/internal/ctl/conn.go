package ctl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// CmdError is a failed command: which node, which command, what went wrong.
// Every error an operation returns about a node is one of these, so the
// message always names both.
type CmdError struct {
	Addr string
	Cmd  string
	Err  error
}

func (e *CmdError) Error() string {
	return fmt.Sprintf("node %s: %s: %v", e.Addr, e.Cmd, e.Err)
}

func (e *CmdError) Unwrap() error { return e.Err }

// go-redis logs pool failures on its own; slotctl reports every failure
// itself, naming the node and command, so the library stays quiet.
func init() { redis.SetLogger(quietLogger{}) }

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// Conn is a connection to one node.
type Conn struct {
	Addr    string
	c       *redis.Client
	timeout time.Duration
}

// Dial opens a connection to addr (host:port) and checks it with PING, so
// a wrong address or password fails here with a clear message.
func Dial(ctx context.Context, addr string, o *Options) (*Conn, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("bad address %q: want host:port", addr)
	}
	c := &Conn{
		Addr:    addr,
		timeout: o.timeout(),
		c: redis.NewClient(&redis.Options{
			Addr:     addr,
			Password: o.Password,
			// RESP2 as redis-cli speaks it: nothing in the tool needs
			// RESP3, and it keeps the handshake to AUTH alone.
			Protocol:        2,
			DisableIdentity: true,
			DialTimeout:     o.timeout(),
			ReadTimeout:     o.timeout(),
			WriteTimeout:    o.timeout(),
			// No silent retries: resending ADDSLOTS or MEET after a
			// timeout would hide what happened.
			MaxRetries:    -1,
			DialerRetries: 1,
			PoolSize:      2,
		}),
	}
	if _, err := c.Do(ctx, "PING"); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// Do sends one command and returns its reply; a Redis error reply or a
// network failure becomes a *CmdError.
func (c *Conn) Do(ctx context.Context, args ...any) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	v, err := c.c.Do(ctx, args...).Result()
	if err != nil {
		return nil, &CmdError{Addr: c.Addr, Cmd: cmdString(args), Err: err}
	}
	return v, nil
}

// Text sends a command whose reply is a string.
func (c *Conn) Text(ctx context.Context, args ...any) (string, error) {
	v, err := c.Do(ctx, args...)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", &CmdError{Addr: c.Addr, Cmd: cmdString(args), Err: fmt.Errorf("unexpected reply %T", v)}
	}
	return s, nil
}

// Int sends a command whose reply is an integer.
func (c *Conn) Int(ctx context.Context, args ...any) (int64, error) {
	v, err := c.Do(ctx, args...)
	if err != nil {
		return 0, err
	}
	n, ok := v.(int64)
	if !ok {
		return 0, &CmdError{Addr: c.Addr, Cmd: cmdString(args), Err: fmt.Errorf("unexpected reply %T", v)}
	}
	return n, nil
}

// OK sends a command that must answer +OK.
func (c *Conn) OK(ctx context.Context, args ...any) error {
	s, err := c.Text(ctx, args...)
	if err != nil {
		return err
	}
	if s != "OK" {
		return &CmdError{Addr: c.Addr, Cmd: cmdString(args), Err: fmt.Errorf("unexpected reply %q", s)}
	}
	return nil
}

// Nodes returns the node's own view (CLUSTER NODES).
func (c *Conn) Nodes(ctx context.Context) ([]NodeInfo, error) {
	s, err := c.Text(ctx, "CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	view, err := ParseNodes(s)
	if err != nil {
		return nil, &CmdError{Addr: c.Addr, Cmd: "CLUSTER NODES", Err: err}
	}
	if Myself(view) == nil {
		return nil, &CmdError{Addr: c.Addr, Cmd: "CLUSTER NODES", Err: errors.New("no line flagged myself")}
	}
	return view, nil
}

// Info returns the fields of INFO [section] as a map. Lines are split at
// the first ':'; section headers and blank lines are skipped.
func (c *Conn) Info(ctx context.Context, section ...string) (map[string]string, error) {
	args := []any{"INFO"}
	for _, s := range section {
		args = append(args, s)
	}
	s, err := c.Text(ctx, args...)
	if err != nil {
		return nil, err
	}
	return parseInfo(s), nil
}

// ClusterInfo returns the fields of CLUSTER INFO.
func (c *Conn) ClusterInfo(ctx context.Context) (map[string]string, error) {
	s, err := c.Text(ctx, "CLUSTER", "INFO")
	if err != nil {
		return nil, err
	}
	return parseInfo(s), nil
}

func parseInfo(s string) map[string]string {
	m := make(map[string]string)
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// cmdString renders a command for error messages. Long argument lists
// (ADDSLOTS with thousands of slots) are cut short.
func cmdString(args []any) string {
	var b strings.Builder
	for i, a := range args {
		if i == 8 && len(args) > 9 {
			fmt.Fprintf(&b, " ... (%d more)", len(args)-i)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		switch v := a.(type) {
		case string:
			b.WriteString(v)
		case int:
			b.WriteString(strconv.Itoa(v))
		default:
			fmt.Fprint(&b, v)
		}
	}
	return b.String()
}

// isUnknownCommand reports whether err is the reply of a server that does
// not know a command or subcommand, so a caller can fall back to an older
// form.
func isUnknownCommand(err error) bool {
	var ce *CmdError
	if !errors.As(err, &ce) {
		return false
	}
	msg := ce.Err.Error()
	return strings.HasPrefix(msg, "ERR unknown subcommand") || strings.HasPrefix(msg, "ERR unknown command")
}
