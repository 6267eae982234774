package node

import (
	"crypto/subtle"
	"strings"
)

// Version is the redis-server version slotd reports, the one whose
// behaviour it matches.
const Version = "7.0.15"

func registerConn(t Table) {
	t.Add(&Command{Name: "ping", Arity: -1, Flags: FlagFast, ACL: []string{"fast", "connection"}, Handler: cmdPing})
	t.Add(&Command{Name: "echo", Arity: 2, Flags: FlagLoading | FlagStale | FlagFast, ACL: []string{"fast", "connection"}, Handler: cmdEcho})
	t.Add(&Command{Name: "quit", Arity: -1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagAllowBusy, ACL: []string{"fast", "connection"}, Handler: cmdQuit})
	t.Add(&Command{Name: "select", Arity: 2, Flags: FlagLoading | FlagStale | FlagFast, ACL: []string{"fast", "connection"}, Handler: cmdSelect})
	t.Add(&Command{Name: "auth", Arity: -2, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagAllowBusy, ACL: []string{"fast", "connection"}, Handler: cmdAuth})
	t.Add(&Command{Name: "hello", Arity: -1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagAllowBusy, ACL: []string{"fast", "connection"}, Handler: cmdHello})
	t.Add(&Command{Name: "reset", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagAllowBusy, ACL: []string{"fast", "connection"}, Handler: cmdReset})
}

func cmdPing(x *Ctx) {
	if len(x.Args) > 2 {
		x.W.Error(errArity("ping"))
		return
	}
	if len(x.Args) == 2 {
		x.W.Bulk(x.Args[1])
		return
	}
	x.W.Simple("PONG")
}

func cmdEcho(x *Ctx) { x.W.Bulk(x.Args[1]) }

func cmdQuit(x *Ctx) {
	x.C.Flags |= ClientCloseAfterReply
	x.W.OK()
}

func cmdSelect(x *Ctx) {
	n, ok := ParseInt(x.Args[1])
	if !ok {
		x.W.Error("ERR value is not an integer or out of range")
		return
	}
	if x.S.Cfg.Bool("cluster-enabled") && n != 0 {
		x.W.Error("ERR SELECT is not allowed in cluster mode")
		return
	}
	if n < 0 || n >= int64(x.S.ks.NumDBs()) {
		x.W.Error(ErrDBIndex)
		return
	}
	x.C.DB = int(n)
	x.DB = x.S.ks.DB(int(n))
	x.W.OK()
}

// checkPassword reports whether user/pass are valid. Only the default user
// exists: it has the requirepass password, or none.
func (s *Server) checkPassword(user, pass string) bool {
	if user != "default" {
		return false
	}
	want := *s.requirePass.Load()
	if want == "" {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(want), []byte(pass)) == 1
}

func cmdAuth(x *Ctx) {
	if len(x.Args) > 3 {
		x.W.Error(ErrSyntax)
		return
	}
	user, pass := "default", x.Arg(1)
	if len(x.Args) == 3 {
		user, pass = x.Arg(1), x.Arg(2)
	} else if *x.S.requirePass.Load() == "" {
		x.W.Error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		return
	}
	if !x.S.checkPassword(user, pass) {
		x.W.Error(ErrWrongPass)
		return
	}
	x.C.Auth = true
	x.C.User = user
	x.W.OK()
}

func cmdHello(x *Ctx) {
	args := x.Args
	proto := x.C.Proto()
	if len(args) >= 2 {
		v, ok := ParseInt(args[1])
		if !ok {
			x.W.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			x.W.Error("NOPROTO unsupported protocol version")
			return
		}
		proto = int(v)
	}
	var name *string
	authed := false
	for i := 2; i < len(args); i++ {
		more := len(args) - i - 1
		switch opt := strings.ToLower(string(args[i])); {
		case opt == "auth" && more >= 2:
			user, pass := string(args[i+1]), string(args[i+2])
			if !x.S.checkPassword(user, pass) {
				x.W.Error(ErrWrongPass)
				return
			}
			authed = true
			i += 2
		case opt == "setname" && more >= 1:
			n := string(args[i+1])
			if !validClientName(n) {
				x.W.Error("ERR Client names cannot contain spaces, newlines or special characters.")
				return
			}
			name = &n
			i++
		default:
			x.W.Error("ERR Syntax error in HELLO option '" + sanitize(string(args[i]), 128) + "'")
			return
		}
	}
	if !x.C.Auth && !authed {
		x.W.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if authed {
		x.C.Auth = true
	}
	if name != nil {
		x.C.SetName(*name)
	}
	x.C.out.Proto = proto
	mode := "standalone"
	if x.S.Cfg.Bool("cluster-enabled") {
		mode = "cluster"
	}
	w := x.W
	w.Map(7)
	w.BulkString("server")
	w.BulkString("redis")
	w.BulkString("version")
	w.BulkString(Version)
	w.BulkString("proto")
	w.Int(int64(proto))
	w.BulkString("id")
	w.Int(x.C.ID)
	w.BulkString("mode")
	w.BulkString(mode)
	w.BulkString("role")
	w.BulkString(x.S.Role())
	w.BulkString("modules")
	w.Array(0)
}

// Role returns "master" or "slave" (replication lands in a later package).
func (s *Server) Role() string {
	if s.replicaMode.Load() {
		return "slave"
	}
	return "master"
}

func validClientName(n string) bool {
	for i := 0; i < len(n); i++ {
		if n[i] < '!' || n[i] > '~' {
			return false
		}
	}
	return true
}

func cmdReset(x *Ctx) {
	s, c := x.S, x.C
	if c.Flags&ClientMulti != 0 {
		s.discardMulti(c)
	}
	s.unwatchAll(c)
	c.DB = 0
	c.out.Proto = 2
	c.Flags &^= ClientReadonly | ClientAsking | ClientDirtyExec | ClientNoEvict
	c.dirtyCAS.Store(false)
	c.ReplyMode = ReplyOn
	c.SetName("")
	c.Auth = *s.requirePass.Load() == ""
	c.User = "default"
	x.W.Simple("RESET")
}
