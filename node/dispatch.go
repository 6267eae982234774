package node

import (
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/slotd/slotd/slots"
)

// execute runs one request from a client: lookup, checks, MULTI queueing,
// then call. ASKING holds for the next command only (or, inside MULTI,
// until EXEC), as in redis-server. CLIENT REPLY OFF/SKIP drop the reply
// afterwards. An error reply is counted for INFO errorstats.
func (s *Server) execute(c *Client, args [][]byte) {
	asking := c.Flags&ClientAsking != 0
	if c.ReplyMode != ReplyOn {
		s.executeMuted(c, args)
	} else {
		before := len(c.out.B)
		s.dispatch(c, args)
		if len(c.out.B) > before && c.out.B[before] == '-' {
			s.noteError(c.out.B[before+1:])
		}
	}
	if asking && c.Flags&ClientMulti == 0 {
		c.Flags &^= ClientAsking
	}
	c.publish()
}

// dispatch is execute's body.
func (s *Server) dispatch(c *Client, args [][]byte) {
	s.cmdsProcessed.AddAt(c.ID, 1)
	cmd := s.cmds.lookup(args[0])
	if cmd == nil {
		c.lastCmd.Store(nil)
		s.rejectInMulti(c)
		c.out.Error(unknownCommand(args))
		return
	}
	if cmd.Subs != nil && len(args) >= 2 {
		sub := cmd.Subs[strings.ToLower(string(args[1]))]
		if sub == nil {
			c.lastCmd.Store(nil)
			s.rejectInMulti(c)
			c.out.Error("ERR unknown subcommand '" + sanitize(string(args[1]), 128) + "'. Try " + strings.ToUpper(cmd.Name) + " HELP.")
			return
		}
		cmd = sub
	}
	c.lastCmd.Store(cmd)
	if (cmd.Arity > 0 && len(args) != cmd.Arity) || len(args) < -cmd.Arity {
		s.reject(c, cmd, errArity(cmd.Name))
		return
	}
	if !c.Auth && cmd.Flags&FlagNoAuth == 0 {
		s.reject(c, cmd, ErrNoAuth)
		return
	}
	master := c.Flags&ClientMaster != 0
	if s.ev.maxmem.Load() != 0 && !master && !s.checkMemory(c, cmd) {
		return
	}
	if g := s.replGate.Load(); g != 0 && !master {
		if msg := s.replRefusal(c, cmd, g); msg != "" {
			s.reject(c, cmd, msg)
			return
		}
	}
	if s.rdb.denyWrites.Load() && !master && (cmd.Flags&FlagWrite != 0 || cmd.Name == "ping") {
		s.reject(c, cmd, errMisconf)
		return
	}
	if s.aof.writeErr.Load() && (cmd.Flags&FlagWrite != 0 || cmd.Name == "ping") {
		if msg := s.aofDenyWrites(); msg != "" {
			s.reject(c, cmd, msg)
			return
		}
	}
	if s.pause.Load() != 0 {
		s.holdWhilePaused(c, cmd)
	}
	if c.Flags&ClientMulti != 0 && !multiControl(cmd) {
		if r := s.route.Load(); r != nil && routed(cmd) && !master {
			one := [1]queued{{cmd: cmd, args: args}}
			if msg := s.routeCheck(r, c, one[:], false); msg != "" {
				s.rejectInMulti(c)
				cmd.Stats.RejectedCalls.AddAt(c.ID, 1)
				c.out.Error(msg)
				return
			}
		}
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

// reject answers a command refused before it ran. Inside MULTI the
// transaction is flagged so that EXEC aborts; a refused EXEC itself discards
// the transaction and answers EXECABORT with the reason, as redis-server does.
func (s *Server) reject(c *Client, cmd *Command, msg string) {
	cmd.Stats.RejectedCalls.AddAt(c.ID, 1)
	if cmd.Name == "exec" {
		if c.Flags&ClientMulti != 0 {
			s.discardMulti(c)
		}
		c.out.Error("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR "))
		return
	}
	s.rejectInMulti(c)
	c.out.Error(msg)
}

// rejectInMulti marks a transaction as failed when a command could not be
// queued, so that EXEC answers EXECABORT.
func (s *Server) rejectInMulti(c *Client) {
	if c.Flags&ClientMulti != 0 {
		c.Flags |= ClientDirtyExec
	}
}

// call locks the slots of the command's keys and runs its handler. In
// cluster mode the routing check runs under the same locks, so that a key
// cannot move to another node between the check and the command.
//
// Timing reads one clock per command: the wall clock is read once per read
// batch (c.clockBase) and each command's end is a monotonic offset from it
// (time.Since reads only the monotonic clock), which is also when the next
// command of the batch starts. A command's time for expiry is the batch's
// wall time plus that offset.
func (s *Server) call(c *Client, cmd *Command, args [][]byte) {
	if c.clockBase.IsZero() {
		c.setClock(time.Now())
	}
	start := c.clockOff
	x := &c.x
	x.Cmd, x.Args, x.Now = cmd, args, c.clockBaseMs+int64(start/time.Millisecond)
	x.DB = s.ks.DB(c.DB)
	x.keyPtr, x.keysPos = nil, nil
	var lockSet []int
	all := cmd.Lock == LockAll || (cmd.NeedsAll != nil && cmd.NeedsAll(args))
relock:
	if all {
		s.ks.LockAll()
	} else if cmd.Lock == LockSelf {
		// The handler locks the slots it visits itself.
		x.selfLock = true
	} else {

		c.keyPos = cmd.keyPositions(args, c.keyPos[:0])
		switch len(c.keyPos) {
		case 0:
		case 1:
			key := args[c.keyPos[0]]
			slot := slots.Of(key)
			x.keyPtr, x.keyLen, x.keySlot = unsafe.SliceData(key), len(key), slot
			c.lockSet = append(c.lockSet[:0], slot)
			lockSet = c.lockSet
			s.ks.Lock(slot)
		default:
			c.keySlots = c.keySlots[:0]
			for _, p := range c.keyPos {
				c.keySlots = append(c.keySlots, slots.Of(args[p]))
			}
			x.keysPos, x.keysSlots = c.keyPos, c.keySlots
			c.lockSet = append(c.lockSet[:0], c.keySlots...)
			slices.Sort(c.lockSet)
			c.lockSet = slices.Compact(c.lockSet)
			lockSet = c.lockSet
			s.ks.LockSlots(lockSet)
		}
	}
	// A pause that began after execute's check is seen here, under the
	// locks: pausing takes every slot lock once after setting the mode
	// (Server.waitPausedWrites), so a write either ran before that or
	// waits now, and the offset a paused master reports is final.
	if mode := s.pause.Load(); mode != 0 && !x.selfLock && heldByPause(c, cmd, mode) {
		if all {
			s.ks.UnlockAll()
		} else if lockSet != nil {
			s.ks.UnlockSlots(lockSet)
		}
		lockSet = nil
		s.holdWhilePaused(c, cmd)
		goto relock
	}
	ok := true
	if r := s.route.Load(); r != nil && routed(cmd) && cmd.Name != "exec" && !(x.keyPtr != nil && r.local(x.keySlot)) && !x.master {
		one := [1]queued{{cmd: cmd, args: args}}
		if msg := s.routeCheck(r, c, one[:], true); msg != "" {
			c.out.Error(msg)
			cmd.Stats.RejectedCalls.AddAt(c.ID, 1)
			ok = false
		}
	}
	if ok {
		mods := x.mods
		s.run(x)
		if s.feed.on.Load() {
			x.propagateCall(mods)
			if end := c.prop.flush(s.feed); end != 0 {
				c.propEnd = end
			}
		}
		x.propCustom = false
	}
	x.selfLock = false
	x.keysPos = nil
	if all {
		s.ks.UnlockAll()
	} else if lockSet != nil {
		s.ks.UnlockSlots(lockSet)
	}
	x.Args = nil
	if !ok {
		return
	}
	end := time.Since(c.clockBase)
	c.clockOff = end
	d := end - start
	cmd.Stats.Calls.AddAt(c.ID, 1)
	cmd.Stats.Usec.AddAt(c.ID, int64(d/time.Microsecond))
	s.afterCall(c, cmd, args, d)

}

// run calls the handler; a failing command counts as failed.
func (s *Server) run(x *Ctx) {
	before := len(x.W.B)
	x.Cmd.Handler(x)
	if len(x.W.B) > before && x.W.B[before] == '-' {
		x.Cmd.Stats.FailedCalls.AddAt(x.C.ID, 1)
	}
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
