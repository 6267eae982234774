package node

import (
	"slices"
	"strings"
	"time"

	"github.com/slotd/slotd/slots"
)

// execute runs one request from a client and counts an error reply for
// INFO errorstats.
func (s *Server) execute(c *Client, args [][]byte) {
	before := len(c.out.B)
	s.dispatch(c, args)
	if len(c.out.B) > before && c.out.B[before] == '-' {
		s.noteError(c.out.B[before+1:])
	}
}

// dispatch is execute's body: lookup, checks, MULTI queueing, then call.
func (s *Server) dispatch(c *Client, args [][]byte) {
	s.cmdsProcessed.Add(1)
	cmd := s.cmds.lookup(args[0])
	if cmd == nil {
		s.rejectInMulti(c)
		c.out.Error(unknownCommand(args))
		return
	}
	if cmd.Subs != nil && len(args) >= 2 {
		sub := cmd.Subs[strings.ToLower(string(args[1]))]
		if sub == nil {
			s.rejectInMulti(c)
			c.out.Error("ERR unknown subcommand '" + sanitize(string(args[1]), 128) + "'. Try " + strings.ToUpper(cmd.Name) + " HELP.")
			return
		}
		cmd = sub
	}
	if (cmd.Arity > 0 && len(args) != cmd.Arity) || len(args) < -cmd.Arity {
		s.rejectInMulti(c)
		cmd.Stats.RejectedCalls.Add(1)
		c.out.Error(errArity(cmd.Name))
		return
	}
	if !c.Auth && cmd.Flags&FlagNoAuth == 0 {
		s.rejectInMulti(c)
		cmd.Stats.RejectedCalls.Add(1)
		c.out.Error(ErrNoAuth)
		return
	}
	if c.Flags&ClientMulti != 0 && !multiControl(cmd) {
		if cmd.Flags&FlagNoMulti != 0 {
			s.rejectInMulti(c)
			c.out.Error("ERR Command not allowed inside a transaction")
			return
		}
		q := queued{cmd: cmd, args: make([][]byte, len(args))}
		for i, a := range args {
			q.args[i] = append([]byte(nil), a...)
		}
		c.Multi = append(c.Multi, q)
		c.out.Simple("QUEUED")
		return
	}
	s.call(c, cmd, args)
}

func multiControl(cmd *Command) bool {
	switch cmd.Name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// rejectInMulti marks a transaction as failed when a command could not be
// queued, so that EXEC answers EXECABORT.
func (s *Server) rejectInMulti(c *Client) {
	if c.Flags&ClientMulti != 0 {
		c.Flags |= ClientDirtyExec
	}
}

// call locks the slots of the command's keys and runs its handler.
func (s *Server) call(c *Client, cmd *Command, args [][]byte) {
	start := time.Now()
	x := &c.x
	x.Cmd, x.Args, x.Now = cmd, args, start.UnixMilli()
	x.DB = s.ks.DB(c.DB)
	switch cmd.Lock {
	case LockAll:
		s.ks.LockAll()
		s.run(x)
		s.ks.UnlockAll()
	default:
		c.keyPos = cmd.keyPositions(args, c.keyPos[:0])
		switch len(c.keyPos) {
		case 0:
			s.run(x)
		case 1:
			slot := slots.Of(args[c.keyPos[0]])
			s.ks.Lock(slot)
			s.run(x)
			s.ks.Unlock(slot)
		default:
			c.lockSet = slotSet(args, c.keyPos, c.lockSet[:0])
			s.ks.LockSlots(c.lockSet)
			s.run(x)
			s.ks.UnlockSlots(c.lockSet)
		}
	}
	x.Args = nil
	d := time.Since(start)
	cmd.Stats.Calls.Add(1)
	cmd.Stats.Usec.Add(int64(d / time.Microsecond))
	s.afterCall(c, cmd, args, d)
}

// run calls the handler; a failing command counts as failed.
func (s *Server) run(x *Ctx) {
	before := len(x.W.B)
	x.Cmd.Handler(x)
	if len(x.W.B) > before && x.W.B[before] == '-' {
		x.Cmd.Stats.FailedCalls.Add(1)
	}
}

// slotSet returns the sorted, distinct slots of the keys at pos.
func slotSet(args [][]byte, pos []int, dst []int) []int {
	for _, p := range pos {
		dst = append(dst, slots.Of(args[p]))
	}
	slices.Sort(dst)
	return slices.Compact(dst)
}

func unknownCommand(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.WriteString(sanitize(string(args[0]), 128))
	b.WriteString("', with args beginning with: ")
	for _, a := range args[1:] {
		if b.Len() > 1024 {
			break
		}
		b.WriteByte('\'')
		b.WriteString(sanitize(string(a), 128))
		b.WriteString("' ")
	}
	return b.String()
}

// sanitize shortens s to n bytes and replaces characters that cannot
// appear in an error line, as redis-server does for echoed arguments.
func sanitize(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	if strings.ContainsAny(s, "\r\n") {
		s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	}
	return s
}
