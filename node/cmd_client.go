package node

import (
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func registerClient(t Table) {
	t.Add(metaCommand("client", cmdClientParent))
	for _, sub := range []struct {
		name string
		h    HandlerFunc
	}{
		{"caching", cmdClientCaching},
		{"getname", cmdClientGetName},
		{"getredir", cmdClientGetRedir},
		{"help", cmdClientHelp},
		{"id", cmdClientID},
		{"info", cmdClientInfo},
		{"kill", cmdClientKill},
		{"list", cmdClientList},
		{"no-evict", cmdClientNoEvict},
		{"pause", cmdClientPause},
		{"reply", cmdClientReply},
		{"setname", cmdClientSetName},
		{"tracking", cmdClientTracking},
		{"trackinginfo", cmdClientTrackingInfo},
		{"unblock", cmdClientUnblock},
		{"unpause", cmdClientUnpause},
	} {
		t.Add(metaCommand("client|"+sub.name, sub.h))
	}
	// CLIENT SETINFO is a 7.2 command that client libraries (go-redis,
	// redis-py) send on connect; slotd accepts it rather than failing their
	// handshake, although redis-server 7.0 does not know it.
	t.Add(&Command{Name: "client|setinfo", Arity: 4, Flags: FlagNoScript | FlagLoading | FlagStale,
		ACL: []string{"slow", "connection"}, Handler: cmdClientSetInfo,
		Group: "connection", Since: "7.2.0", Summary: "Records the client library's name or version"})
}

func cmdClientParent(x *Ctx) { x.W.Error(errArity("client")) }

func cmdClientID(x *Ctx) { x.W.Int(x.C.ID) }

func cmdClientGetName(x *Ctx) {
	if n := x.C.Name(); n != "" {
		x.W.BulkString(n)
	} else {
		x.W.Null()
	}
}

func cmdClientSetName(x *Ctx) {
	n := x.Arg(2)
	if !validClientName(n) {
		x.W.Error("ERR Client names cannot contain spaces, newlines or special characters.")
		return
	}
	x.C.SetName(n)
	x.W.OK()
}

func cmdClientSetInfo(x *Ctx) {
	val := x.Arg(3)
	switch attr := strings.ToLower(x.Arg(2)); attr {
	case "lib-name", "lib-ver":
		if !validClientName(val) {
			x.W.Error("ERR " + attr + " cannot contain spaces, newlines or special characters.")
			return
		}
		if attr == "lib-name" {
			x.C.SetLib(&val, nil)
		} else {
			x.C.SetLib(nil, &val)
		}
		x.W.OK()
	default:
		x.W.Error("ERR Unrecognized option '" + sanitize(x.Arg(2), 128) + "'")
	}
}

func cmdClientNoEvict(x *Ctx) {
	switch strings.ToLower(x.Arg(2)) {
	case "on":
		x.C.Flags |= ClientNoEvict
	case "off":
		x.C.Flags &^= ClientNoEvict
	default:
		x.W.Error(ErrSyntax)
		return
	}
	x.W.OK()
}

func cmdClientReply(x *Ctx) {
	switch strings.ToLower(x.Arg(2)) {
	case "on":
		x.C.ReplyMode = ReplyOn
		x.W.OK()
	case "off":
		x.C.ReplyMode = ReplyOff
	case "skip":
		if x.C.ReplyMode != ReplyOff {
			x.C.ReplyMode = ReplySkipNext
		}
	default:
		x.W.Error(ErrSyntax)
	}
}

// executeMuted runs a command while CLIENT REPLY OFF or SKIP is in force
// and drops what it replied, except the +OK of CLIENT REPLY ON.
func (s *Server) executeMuted(c *Client, args [][]byte) {
	start := len(c.out.B)
	if c.ReplyMode == ReplySkipNext {
		c.ReplyMode = ReplyOn // only this command is skipped
	}
	s.dispatch(c, args)
	if c.ReplyMode == ReplyOn && string(c.out.B[start:]) == "+OK\r\n" {
		if cmd := c.lastCmd.Load(); cmd != nil && cmd.Name == "client|reply" {
			return
		}
	}
	c.out.B = c.out.B[:start]
}

func cmdClientTracking(x *Ctx) {
	switch strings.ToLower(x.Arg(2)) {
	case "off":
		x.W.OK()
	case "on":
		x.W.Error("ERR CLIENT TRACKING is not supported by this server")
	default:
		x.W.Error(ErrSyntax)
	}
}

func cmdClientCaching(x *Ctx) {
	x.W.Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
}

func cmdClientGetRedir(x *Ctx) { x.W.Int(-1) }

func cmdClientTrackingInfo(x *Ctx) {
	w := x.W
	w.Map(3)
	w.BulkString("flags")
	w.Set(1)
	w.BulkString("off")
	w.BulkString("redirect")
	w.Int(-1)
	w.BulkString("prefixes")
	w.Array(0)
}

func cmdClientUnblock(x *Ctx) {
	if _, ok := x.Int(2); !ok {
		return
	}
	if len(x.Args) == 4 {
		switch strings.ToLower(x.Arg(3)) {
		case "timeout", "error":
		default:
			x.W.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	} else if len(x.Args) > 4 {
		x.W.Error(ErrSyntax)
		return
	}
	// No client of slotd blocks in a command yet.
	x.W.Int(0)
}

// Pause modes, as stored in Server.pause.
const (
	pauseWrite int32 = 1
	pauseAll   int32 = 2
)

func cmdClientPause(x *Ctx) {
	if len(x.Args) > 4 {
		x.W.Error(ErrSyntax)
		return
	}
	ms, ok := x.TimeoutMs(2)
	if !ok {
		return
	}
	mode := pauseAll
	if len(x.Args) == 4 {
		switch strings.ToLower(x.Arg(3)) {
		case "write":
			mode = pauseWrite
		case "all":
		default:
			x.W.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	}
	end := time.UnixMilli(x.Now).Add(time.Duration(ms) * time.Millisecond)
	if ms > int64(100*365*24*time.Hour/time.Millisecond) {
		end = time.UnixMilli(x.Now).Add(100 * 365 * 24 * time.Hour)
	}
	x.S.pauseClients(mode, end)
	x.W.OK()
}

func cmdClientUnpause(x *Ctx) {
	x.S.unpauseClients()
	x.W.OK()
}

// pauseClients starts or extends a pause: the stricter mode and the later
// end win, as with overlapping pauses in redis-server.
func (s *Server) pauseClients(mode int32, end time.Time) {
	s.pauseMu.Lock()
	defer s.pauseMu.Unlock()
	if cur := s.pause.Load(); cur != 0 {
		mode = max(mode, cur)
		if s.pauseEnd.After(end) {
			end = s.pauseEnd
		}
	}
	s.pauseEnd = end
	if s.pauseWake == nil {
		s.pauseWake = make(chan struct{})
	}
	s.pause.Store(mode)
}

// waitPausedWrites returns once every write that passed the pause check
// before pauseClients has finished, propagation included: call holds its
// slot locks until then and checks the pause again under them.
func (s *Server) waitPausedWrites() {
	s.ks.LockAllQuiet()
	s.ks.UnlockAll()
}

func (s *Server) unpauseClients() {
	s.pauseMu.Lock()
	defer s.pauseMu.Unlock()
	s.pause.Store(0)
	if s.pauseWake != nil {
		close(s.pauseWake)
		s.pauseWake = nil
	}
}

// heldByPause reports whether a command must wait in the given pause mode:
// everything in ALL mode; in WRITE mode what writes or may replicate,
// including an EXEC of a transaction that writes.
func heldByPause(c *Client, cmd *Command, mode int32) bool {
	if mode == pauseAll {
		return true
	}
	if cmd.Flags&(FlagWrite|FlagMayReplicate) != 0 {
		return true
	}
	if cmd.Name == "exec" {
		for _, q := range c.Multi {
			if q.cmd.Flags&(FlagWrite|FlagMayReplicate) != 0 {
				return true
			}
		}
	}
	return false
}

// holdWhilePaused blocks the connection's goroutine while a CLIENT PAUSE
// applies to cmd.
func (s *Server) holdWhilePaused(c *Client, cmd *Command) {
	for {
		mode := s.pause.Load()
		if mode == 0 || !heldByPause(c, cmd, mode) {
			return
		}
		s.pauseMu.Lock()
		end, wake := s.pauseEnd, s.pauseWake
		if !time.Now().Before(end) {
			s.pause.Store(0)
			if s.pauseWake != nil {
				close(s.pauseWake)
				s.pauseWake = nil
			}
			s.pauseMu.Unlock()
			return
		}
		s.pauseMu.Unlock()
		t := time.NewTimer(time.Until(end))
		select {
		case <-wake:
		case <-t.C:
		case <-s.done:
			t.Stop()
			return
		}
		t.Stop()
	}
}

// Client types of CLIENT LIST TYPE and CLIENT KILL TYPE. slotd's clients
// are all normal until replication and pub/sub tag them.
func parseClientType(s string) (string, bool) {
	switch t := strings.ToLower(s); t {
	case "normal", "master", "pubsub":
		return t, true
	case "replica", "slave":
		return "replica", true
	}
	return "", false
}

func (c *Client) clientType() string {
	_, f, _, _ := c.published()
	switch {
	case f&ClientMaster != 0:
		return "master"
	case f&ClientReplica != 0:
		return "replica"
	}
	return "normal"
}

func cmdClientList(x *Ctx) {
	var typ string
	var ids map[int64]bool
	switch {
	case len(x.Args) == 2:
	case len(x.Args) == 4 && strings.EqualFold(x.Arg(2), "type"):
		t, ok := parseClientType(x.Arg(3))
		if !ok {
			x.W.Error("ERR Unknown client type '" + sanitize(x.Arg(3), 128) + "'")
			return
		}
		typ = t
	case len(x.Args) >= 4 && strings.EqualFold(x.Arg(2), "id"):
		ids = map[int64]bool{}
		for _, a := range x.Args[3:] {
			id, ok := ParseInt(a)
			if !ok {
				x.W.Error("ERR Invalid client ID")
				return
			}
			ids[id] = true
		}
	default:
		x.W.Error(ErrSyntax)
		return
	}
	var b []byte
	for _, c := range x.S.clientsByID() {
		if typ != "" && c.clientType() != typ {
			continue
		}
		if ids != nil && !ids[c.ID] {
			continue
		}
		b = appendClientInfo(b, x, c)
		b = append(b, '\n')
	}
	x.W.Verbatim(string(b))
}

func cmdClientInfo(x *Ctx) {
	b := appendClientInfo(nil, x, x.C)
	b = append(b, '\n')
	x.W.Verbatim(string(b))
}

// clientsByID returns the connected clients in id order.
func (s *Server) clientsByID() []*Client {
	s.mu.Lock()
	out := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		out = append(out, c)
	}
	s.mu.Unlock()
	sortClients(out)
	return out
}

func sortClients(cs []*Client) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j-1].ID > cs[j].ID; j-- {
			cs[j-1], cs[j] = cs[j], cs[j-1]
		}
	}
}

// connFD returns the socket's file descriptor, or -1 for a connection
// without one.
func connFD(conn net.Conn) int {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	raw.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// clientOverhead approximates the memory redis-server counts for a client
// beyond its buffers (the client struct and its static reply buffer), so
// that tot-mem is of the same order.
const clientOverhead = 16384 + 4890

// appendClientInfo appends the CLIENT LIST line of c (without newline).
// Fields owned by c's goroutine are read from their published copies,
// except for the calling client itself.
func appendClientInfo(b []byte, x *Ctx, c *Client) []byte {
	now := time.Now().UnixMilli()
	db, flags, proto, multi := c.published()
	var argvMem, obl int64
	if c == x.C {
		db, flags, proto = c.DB, c.Flags, c.out.Proto
		multi = -1
		if c.Flags&ClientMulti != 0 {
			multi = int64(len(c.Multi))
		}
		for _, a := range x.Args {
			argvMem += int64(len(a))
		}
		obl = int64(len(x.W.B))
	}
	var multiMem int64
	if c == x.C {
		for _, q := range c.Multi {
			multiMem += int64(len(q.args)) * 8
			for _, a := range q.args {
				multiMem += int64(len(a))
			}
		}
	}
	qbuf := c.qbuf.Load()
	rbs := c.rbs.Load()
	if rbs == 0 {
		rbs = readChunk
	}
	qfree := rbs - qbuf
	if qfree < 0 {
		qfree = 0
	}
	field := func(k string, v int64) {
		b = append(b, ' ')
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendInt(b, v, 10)
	}
	str := func(k, v string) {
		b = append(b, ' ')
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, v...)
	}
	b = append(b, "id="...)
	b = strconv.AppendInt(b, c.ID, 10)
	str("addr", c.Addr)
	str("laddr", c.LAddr)
	field("fd", int64(connFD(c.conn)))
	str("name", c.Name())
	field("age", (now-c.CreatedMs)/1000)
	field("idle", (now-c.lastInteraction.Load())/1000)
	str("flags", clientFlagString(flags))
	field("db", int64(db))
	field("sub", 0)
	field("psub", 0)
	field("ssub", 0)
	field("multi", multi)
	field("qbuf", qbuf)
	field("qbuf-free", qfree)
	field("argv-mem", argvMem)
	field("multi-mem", multiMem)
	field("rbs", rbs)
	field("rbp", rbs)
	field("obl", obl)
	field("oll", 0)
	field("omem", 0)
	field("tot-mem", clientOverhead+rbs+argvMem+multiMem)
	str("events", "r")
	cmd := "NULL"
	if lc := c.lastCmd.Load(); lc != nil {
		cmd = lc.Name
	}
	str("cmd", cmd)
	user := "default"
	str("user", user)
	field("redir", -1)
	field("resp", int64(proto))
	return b
}

// clientFlagString renders client flags as CLIENT LIST's flags= letters.
func clientFlagString(f uint32) string {
	var b []byte
	if f&ClientReplica != 0 {
		b = append(b, 'S')
	}
	if f&ClientMaster != 0 {
		b = append(b, 'M')
	}
	if f&ClientMulti != 0 {
		b = append(b, 'x')
	}
	if f&ClientDirtyCAS != 0 {
		b = append(b, 'd')
	}
	if f&ClientCloseAfterReply != 0 {
		b = append(b, 'c')
	}
	if f&ClientReadonly != 0 {
		b = append(b, 'r')
	}
	if f&ClientNoEvict != 0 {
		b = append(b, 'e')
	}
	if len(b) == 0 {
		return "N"
	}
	return string(b)
}

func cmdClientKill(x *Ctx) {
	if len(x.Args) == 3 {
		// Old form: CLIENT KILL addr.
		addr := x.Arg(2)
		for _, c := range x.S.clientsByID() {
			if c.Addr == addr && !c.killed.Load() {
				x.S.killClient(x, c)
				x.W.OK()
				return
			}
		}
		x.W.Error("ERR No such client")
		return
	}
	if len(x.Args)%2 != 0 {
		x.W.Error(ErrSyntax)
		return
	}
	var (
		id                int64
		addr, laddr, user string
		typ               string
		skipMe            = true
	)
	for i := 2; i < len(x.Args); i += 2 {
		val := x.Arg(i + 1)
		switch strings.ToLower(x.Arg(i)) {
		case "id":
			n, ok := ParseInt(x.Args[i+1])
			if !ok || n <= 0 {
				x.W.Error("ERR client-id should be greater than 0")
				return
			}
			id = n
		case "type":
			t, ok := parseClientType(val)
			if !ok {
				x.W.Error("ERR Unknown client type '" + sanitize(val, 128) + "'")
				return
			}
			typ = t
		case "addr":
			addr = val
		case "laddr":
			laddr = val
		case "user":
			if val != "default" {
				x.W.Error("ERR No such user '" + sanitize(val, 128) + "'")
				return
			}
			user = val
		case "skipme":
			switch strings.ToLower(val) {
			case "yes":
				skipMe = true
			case "no":
				skipMe = false
			default:
				x.W.Error(ErrSyntax)
				return
			}
		default:
			x.W.Error(ErrSyntax)
			return
		}
	}
	killed := 0
	for _, c := range x.S.clientsByID() {
		switch {
		case id != 0 && c.ID != id,
			typ != "" && c.clientType() != typ,
			addr != "" && c.Addr != addr,
			laddr != "" && c.LAddr != laddr,
			user != "" && !c.isUser(x, user),
			skipMe && c == x.C,
			// Killed already, its goroutine not yet gone: redis-server
			// frees a killed client at once, so a second KILL finds none.
			c.killed.Load():
			continue
		}
		x.S.killClient(x, c)
		killed++
	}
	x.W.Int(int64(killed))
}

func (c *Client) isUser(x *Ctx, user string) bool {
	// Only the default user exists; a client not yet authenticated is
	// still the default user's connection.
	return user == "default"
}

// killClient closes c; the calling client is closed after its reply.
func (s *Server) killClient(x *Ctx, c *Client) {
	if c == x.C {
		c.Flags |= ClientCloseAfterReply
		return
	}
	c.Kill()
}

var clientHelp = []string{
	"CACHING (YES|NO)",
	"    Whether the next command's keys are tracked, in OPTIN or OPTOUT mode.",
	"GETREDIR",
	"    The ID of the client that gets this connection's invalidations, or -1 or 0.",
	"GETNAME",
	"    This connection's name.",
	"ID",
	"    This connection's ID.",
	"INFO",
	"    This connection described in one CLIENT LIST line.",
	"KILL <ip:port>",
	"    Closes the connection coming from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Closes the connections that match every filter given:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      the peer is at this address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      the connection came in on this local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      the connection is of this kind",
	"    * USER <username>",
	"      the connection is logged in as <username>",
	"    * SKIPME (YES|NO)",
	"      YES (the default) spares the connection that asks.",
	"LIST [options ...]",
	"    One line per connection, optionally only:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      the connections of this kind",
	"UNPAUSE",
	"    Ends a pause early; held clients go on.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Holds clients' commands (every one, or only writes) for <timeout> ms.",
	"REPLY (ON|OFF|SKIP)",
	"    Turns this connection's replies on, off, or off for the next command only.",
	"SETNAME <name>",
	"    Names this connection <name>.",
	"UNBLOCK <clientid> [TIMEOUT|ERROR]",
	"    Wakes a client blocked in a command, as by timeout or with an error.",
	"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
	"         [OPTIN] [OPTOUT] [NOLOOP]",
	"    Turns on or off invalidation messages for client-side caching.",
	"TRACKINGINFO",
	"    This connection's tracking mode and options.",
	"NO-EVICT (ON|OFF)",
	"    Whether this connection is exempt from client eviction.",
}

func cmdClientHelp(x *Ctx) { writeHelp(x, "CLIENT", clientHelp...) }
