package node

func registerKeys(t Table) {
	t.Add(&Command{Name: "del", Arity: -2, Flags: FlagWrite, FirstKey: 1, LastKey: -1, Step: 1, ACL: []string{"keyspace", "write", "slow"}, Handler: cmdDel})
	t.Add(&Command{Name: "exists", Arity: -2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: -1, Step: 1, ACL: []string{"keyspace", "read", "fast"}, Handler: cmdExists})
	t.Add(&Command{Name: "dbsize", Arity: 1, Flags: FlagReadonly | FlagFast, ACL: []string{"keyspace", "read", "fast"}, Handler: cmdDBSize})
	t.Add(&Command{Name: "flushall", Arity: -1, Flags: FlagWrite, Lock: LockAll, ACL: []string{"keyspace", "write", "slow", "dangerous"}, Handler: cmdFlushAll})
}

func cmdDel(x *Ctx) {
	var n int64
	for _, k := range x.Args[1:] {
		if x.Del(k) {
			n++
		}
	}
	x.W.Int(n)
}

func cmdExists(x *Ctx) {
	var n int64
	for _, k := range x.Args[1:] {
		if x.Read(k) != nil {
			n++
		}
	}
	x.W.Int(n)
}

func cmdDBSize(x *Ctx) { x.W.Int(x.DB.Len()) }

func cmdFlushAll(x *Ctx) {
	for i := 0; i < x.S.ks.NumDBs(); i++ {
		x.S.touchWatchedDB(i)
		x.S.ks.DB(i).Flush()
	}
	x.S.dirty.Add(1)
	x.W.OK()
}
