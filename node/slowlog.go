package node

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// Slow log limits on what an entry keeps of a command, as redis-server.
const (
	slowlogMaxArgs   = 32
	slowlogMaxArgLen = 128
)

type slowEntry struct {
	id       int64
	at       int64 // unix seconds
	usec     int64
	args     []string
	addr     string
	name     string
	redacted bool
}

// slowLog is the SLOWLOG ring, newest first.
type slowLog struct {
	mu      sync.Mutex
	entries []slowEntry
	nextID  int64
}

// add records a command that took d. It copies what it keeps of args.
func (l *slowLog) add(c *Client, args [][]byte, d time.Duration, maxLen int64) {
	n := len(args)
	if n > slowlogMaxArgs {
		n = slowlogMaxArgs
	}
	kept := make([]string, n)
	for i := 0; i < n; i++ {
		if i == slowlogMaxArgs-1 && len(args) > slowlogMaxArgs {
			kept[i] = "... (" + strconv.Itoa(len(args)-slowlogMaxArgs+1) + " more arguments)"
			break
		}
		a := args[i]
		if len(a) > slowlogMaxArgLen {
			kept[i] = string(a[:slowlogMaxArgLen]) + "... (" + strconv.Itoa(len(a)-slowlogMaxArgLen) + " more bytes)"
		} else {
			kept[i] = string(a)
		}
	}
	e := slowEntry{at: time.Now().Unix(), usec: int64(d / time.Microsecond), args: kept, addr: c.Addr, name: c.Name()}
	l.mu.Lock()
	e.id = l.nextID
	l.nextID++
	l.entries = append([]slowEntry{e}, l.entries...)
	if int64(len(l.entries)) > maxLen {
		l.entries = l.entries[:maxLen]
	}
	l.mu.Unlock()
}

func (l *slowLog) trim(maxLen int64) {
	l.mu.Lock()
	if int64(len(l.entries)) > maxLen {
		l.entries = l.entries[:maxLen]
	}
	l.mu.Unlock()
}

// afterCall is the dispatcher's hook once a command has run: it feeds the
// slow log and the latency monitor.
func (s *Server) afterCall(c *Client, cmd *Command, args [][]byte, d time.Duration) {
	e := &s.ext
	if t := e.slowerThan.Load(); t >= 0 && int64(d/time.Microsecond) >= t && cmd.Flags&FlagSkipSlowlog == 0 {
		e.slowlog.add(c, args, d, e.slowMax.Load())
	}
	if t := e.latencyThreshold.Load(); t > 0 {
		ms := int64(d / time.Millisecond)
		if ms >= t {
			event := "command"
			if cmd.Flags&FlagFast != 0 {
				event = "fast-command"
			}
			e.latency.add(event, ms)
		}
	}
}

func registerSlowlog(t Table) {
	t.Add(&Command{Name: "slowlog", Arity: -2, ACL: []string{"slow"}, Handler: cmdContainerHelp})
	t.Add(&Command{Name: "slowlog|get", Arity: -2, Flags: FlagAdmin | FlagLoading | FlagStale, ACL: []string{"admin", "slow", "dangerous"}, Tips: []string{"request_policy:all_nodes", "nondeterministic_output"}, Handler: cmdSlowlogGet})
	t.Add(&Command{Name: "slowlog|len", Arity: 2, Flags: FlagAdmin | FlagLoading | FlagStale, ACL: []string{"admin", "slow", "dangerous"}, Tips: []string{"request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"}, Handler: cmdSlowlogLen})
	t.Add(&Command{Name: "slowlog|reset", Arity: 2, Flags: FlagAdmin | FlagLoading | FlagStale, ACL: []string{"admin", "slow", "dangerous"}, Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Handler: cmdSlowlogReset})
	t.Add(&Command{Name: "slowlog|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: []string{"slow"}, Handler: cmdSlowlogHelp})
}

// cmdContainerHelp answers a container command called without a
// subcommand, as redis-server does.
func cmdContainerHelp(x *Ctx) {
	x.W.Error("ERR missing subcommand. Try " + strings.ToUpper(x.Cmd.Name) + " HELP.")
}

func subcommandError(x *Ctx) {
	// The subcommand is echoed as the client typed it, as redis-server does.
	parent, _, _ := strings.Cut(x.Cmd.Name, "|")
	x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + sanitize(x.Arg(1), 128) + "'. Try " + strings.ToUpper(parent) + " HELP.")
}

func cmdSlowlogGet(x *Ctx) {
	if len(x.Args) > 3 {
		subcommandError(x)
		return
	}
	count := int64(10)
	if len(x.Args) == 3 {
		n, ok := ParseInt(x.Args[2])
		if !ok || n < -1 {
			x.W.Error("ERR count should be greater than or equal to -1")
			return
		}
		count = n
	}
	l := &x.S.ext.slowlog
	l.mu.Lock()
	n := int64(len(l.entries))
	if count >= 0 && count < n {
		n = count
	}
	x.W.Array(int(n))
	for _, e := range l.entries[:n] {
		x.W.Array(6)
		x.W.Int(e.id)
		x.W.Int(e.at)
		x.W.Int(e.usec)
		x.W.Array(len(e.args))
		for _, a := range e.args {
			x.W.BulkString(a)
		}
		x.W.BulkString(e.addr)
		x.W.BulkString(e.name)
	}
	l.mu.Unlock()
}

func cmdSlowlogLen(x *Ctx) {
	l := &x.S.ext.slowlog
	l.mu.Lock()
	n := len(l.entries)
	l.mu.Unlock()
	x.W.Int(int64(n))
}

func cmdSlowlogReset(x *Ctx) {
	l := &x.S.ext.slowlog
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
	x.W.OK()
}

func cmdSlowlogHelp(x *Ctx) {
	writeHelp(x, "SLOWLOG",
		"GET [<count>]",
		"    The <count> newest slow calls (10 when omitted, every one for -1), each as",
		"    id, unix time, duration in microseconds, arguments, client address, name.",
		"LEN",
		"    How many slow calls are kept.",
		"RESET",
		"    Forgets every kept slow call.")
}
