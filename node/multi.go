package node

import (
	"slices"

	"github.com/slotd/slotd/slots"
)

func registerMulti(t Table) {
	t.Add(&Command{Name: "multi", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy, ACL: []string{"fast", "transaction"}, Handler: cmdMulti})
	t.Add(&Command{Name: "exec", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagSkipSlowlog, ACL: []string{"slow", "transaction"}, Handler: cmdExec})
	t.Add(&Command{Name: "discard", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy, ACL: []string{"fast", "transaction"}, Handler: cmdDiscard})
	t.Add(&Command{Name: "watch", Arity: -2, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy, FirstKey: 1, LastKey: -1, Step: 1, ACL: []string{"fast", "transaction"}, Handler: cmdWatch})
	t.Add(&Command{Name: "unwatch", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy, ACL: []string{"fast", "transaction"}, Handler: cmdUnwatch})
}

func cmdMulti(x *Ctx) {
	if x.C.Flags&ClientMulti != 0 {
		x.W.Error(ErrNestedMulti)
		return
	}
	x.C.Flags |= ClientMulti
	x.W.OK()
}

func cmdDiscard(x *Ctx) {
	if x.C.Flags&ClientMulti == 0 {
		x.W.Error(ErrDiscardNoMulti)
		return
	}
	x.S.discardMulti(x.C)
	x.W.OK()
}

func (s *Server) discardMulti(c *Client) {
	c.Multi = nil
	c.Flags &^= ClientMulti | ClientDirtyExec
	c.dirtyCAS.Store(false)
	s.unwatchAll(c)
}

// cmdExec runs on the dispatcher's goroutine without locks (EXEC has no
// keys); it takes the locks of every queued command at once so that the
// transaction is atomic.
func cmdExec(x *Ctx) {
	s, c := x.S, x.C
	if c.Flags&ClientMulti == 0 {
		x.W.Error(ErrExecNoMulti)
		return
	}
	if c.Flags&ClientDirtyExec != 0 {
		x.W.Error(ErrExecAbort)
		s.discardMulti(c)
		return
	}
	queue := c.Multi
	all := false
	var lockSet []int
	for _, q := range queue {
		if q.cmd.Lock != LockKeys || (q.cmd.NeedsAll != nil && q.cmd.NeedsAll(q.args)) {
			all = true
			break
		}
		for _, p := range q.cmd.keyPositions(q.args, nil) {
			lockSet = append(lockSet, slots.Of(q.args[p]))
		}
	}
	for _, w := range c.Watched {
		lockSet = append(lockSet, slots.Of([]byte(w.key)))
	}
	slices.Sort(lockSet)
	lockSet = slices.Compact(lockSet)
	if all {
		s.ks.LockAll()
		defer s.ks.UnlockAll()
	} else {
		s.ks.LockSlots(lockSet)
		defer s.ks.UnlockSlots(lockSet)
	}
	if r := s.route.Load(); r != nil && !x.master {
		if msg := s.routeCheck(r, c, queue, true); msg != "" {
			x.W.Error(msg)
			s.discardMulti(c)
			return
		}
	}
	if c.dirtyCAS.Load() || s.watchedExpired(c, x.Now) {
		x.W.NullArray()
		s.discardMulti(c)
		return
	}
	c.Multi = nil
	c.Flags &^= ClientMulti
	s.unwatchAll(c)
	x.W.Array(len(queue))
	exec := x.Cmd
	prop := s.feed.on.Load()
	x.inExec = true
	for _, q := range queue {
		x.Cmd, x.Args = q.cmd, q.args
		x.DB = s.ks.DB(c.DB)
		mods := x.mods
		s.run(x)
		if prop {
			x.propagateCall(mods)
		}
		x.propCustom = false
		q.cmd.Stats.Calls.Add(1)
	}
	x.inExec = false
	x.Cmd = exec
	// The transaction reaches the feed as one block while its locks are
	// still held; EXEC itself propagates nothing more.
	if prop {
		c.prop.flush(s.feed)
	}
	x.propCustom = true
}

func cmdWatch(x *Ctx) {
	if x.C.Flags&ClientMulti != 0 {
		x.W.Error(ErrWatchInMulti)
		return
	}
	s, c := x.S, x.C
	for _, k := range x.Args[1:] {
		wk := watchKey{db: c.DB, key: string(k)}
		if slices.Contains(c.Watched, wk) {
			continue
		}
		// Remember whether the key was alive, so that EXEC can tell an
		// expiry that happened after WATCH.
		slot := slots.Of(k)
		if e := x.DB.Peek(slot, k); e != nil && !x.DB.Expired(slot, wk.key, e, x.Now) {
			wk.live = true
		}
		c.Watched = append(c.Watched, wk)
		s.watchMu.Lock()
		s.watched[watchKey{db: wk.db, key: wk.key}] = append(s.watched[watchKey{db: wk.db, key: wk.key}], c)
		s.watchMu.Unlock()
		s.watching.Add(1)
	}
	x.W.OK()
}

func cmdUnwatch(x *Ctx) {
	x.S.unwatchAll(x.C)
	x.C.dirtyCAS.Store(false)
	x.W.OK()
}

func (s *Server) unwatchAll(c *Client) {
	if len(c.Watched) == 0 {
		return
	}
	s.watchMu.Lock()
	for _, w := range c.Watched {
		k := watchKey{db: w.db, key: w.key}
		list := s.watched[k]
		if i := slices.Index(list, c); i >= 0 {
			list = slices.Delete(list, i, i+1)
		}
		if len(list) == 0 {
			delete(s.watched, k)
		} else {
			s.watched[k] = list
		}
	}
	s.watchMu.Unlock()
	s.watching.Add(-int64(len(c.Watched)))
	c.Watched = nil
}

// touchWatched flags every client watching key in db.
func (s *Server) touchWatched(db int, key []byte) {
	s.watchMu.Lock()
	for _, c := range s.watched[watchKey{db: db, key: string(key)}] {
		c.dirtyCAS.Store(true)
	}
	s.watchMu.Unlock()
}

// touchWatchedDB flags every client watching a key of db that exists (for
// FLUSHDB, FLUSHALL and SWAPDB). The caller holds LockAll.
func (s *Server) touchWatchedDB(db int) {
	if s.watching.Load() == 0 {
		return
	}
	d := s.ks.DB(db)
	s.watchMu.Lock()
	for k, cs := range s.watched {
		if k.db != db || d.Peek(slots.Of([]byte(k.key)), []byte(k.key)) == nil {
			continue
		}
		for _, c := range cs {
			c.dirtyCAS.Store(true)
		}
	}
	s.watchMu.Unlock()
}

// watchedExpired reports whether a key that was alive at WATCH time has
// expired since. The caller holds the keys' slot locks.
func (s *Server) watchedExpired(c *Client, now int64) bool {
	for _, w := range c.Watched {
		if !w.live {
			continue
		}
		// Gone without a write (writes flag the client already) means the
		// expire cycle or a lazy lookup removed it: that counts as a change.
		db, slot := s.ks.DB(w.db), slots.Of([]byte(w.key))
		e := db.Peek(slot, []byte(w.key))
		if e == nil || db.Expired(slot, w.key, e, now) {
			return true
		}
	}
	return false
}
