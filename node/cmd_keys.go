package node

import (
	"strconv"
	"strings"

	"github.com/slotd/slotd/node/glob"
	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/slots"
)

// Key specs shared by the generic key commands.
var (
	specRange   = KeySpec{BeginIndex: 1, RangeLast: -1, KeyStep: 1}
	specOne     = KeySpec{BeginIndex: 1, KeyStep: 1}
	specSecond  = KeySpec{BeginIndex: 2, KeyStep: 1}
	keysACLRead = []string{"keyspace", "read"}
)

func withFlags(k KeySpec, flags ...string) KeySpec { k.Flags = flags; return k }

func acl(base []string, more ...string) []string {
	return append(append([]string(nil), base...), more...)
}

func registerKeys(t Table) {
	multi := []string{"request_policy:multi_shard", "response_policy:agg_sum"}
	allShards := []string{"request_policy:all_shards", "response_policy:all_succeeded"}
	w := []string{"keyspace", "write"}
	t.Add(&Command{Name: "del", Arity: -2, Flags: FlagWrite, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl(w, "slow"), Tips: multi,
		KeySpecs: []KeySpec{withFlags(specRange, "RM", "delete")}, Handler: cmdDel})
	t.Add(&Command{Name: "unlink", Arity: -2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl(w, "fast"), Tips: multi,
		KeySpecs: []KeySpec{withFlags(specRange, "RM", "delete")}, Handler: cmdDel})
	t.Add(&Command{Name: "exists", Arity: -2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl(keysACLRead, "fast"), Tips: multi,
		KeySpecs: []KeySpec{withFlags(specRange, "RO")}, Handler: cmdExists})
	t.Add(&Command{Name: "touch", Arity: -2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl(keysACLRead, "fast"), Tips: multi,
		KeySpecs: []KeySpec{withFlags(specRange, "RO")}, Handler: cmdTouch})
	t.Add(&Command{Name: "type", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl(keysACLRead, "fast"),
		KeySpecs: []KeySpec{withFlags(specOne, "RO")}, Handler: cmdType})
	t.Add(&Command{Name: "rename", Arity: 3, Flags: FlagWrite, FirstKey: 1, LastKey: 2, Step: 1, ACL: acl(w, "slow"),
		KeySpecs: []KeySpec{withFlags(specOne, "RW", "access", "delete"), withFlags(specSecond, "OW", "update")}, Handler: cmdRename})
	t.Add(&Command{Name: "renamenx", Arity: 3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 2, Step: 1, ACL: acl(w, "fast"),
		KeySpecs: []KeySpec{withFlags(specOne, "RW", "access", "delete"), withFlags(specSecond, "OW", "insert")}, Handler: cmdRename})
	t.Add(&Command{Name: "copy", Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 2, Step: 1, ACL: acl(w, "slow"),
		KeySpecs: []KeySpec{withFlags(specOne, "RO", "access"), withFlags(specSecond, "OW", "update")}, Handler: cmdCopy})
	t.Add(&Command{Name: "move", Arity: 3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl(w, "fast"),
		KeySpecs: []KeySpec{withFlags(specOne, "RW", "access", "update")}, Handler: cmdMove})
	t.Add(&Command{Name: "keys", Arity: 2, Flags: FlagReadonly, Lock: LockAll, ACL: acl(keysACLRead, "slow", "dangerous"),
		Tips: []string{"request_policy:all_shards", "nondeterministic_output_order"}, Handler: cmdKeys})
	t.Add(&Command{Name: "scan", Arity: -2, Flags: FlagReadonly, Lock: LockSelf, ACL: acl(keysACLRead, "slow"),
		Tips: []string{"nondeterministic_output", "request_policy:special"}, Handler: cmdScan})
	t.Add(&Command{Name: "randomkey", Arity: 1, Flags: FlagReadonly, Lock: LockSelf, ACL: acl(keysACLRead, "slow"),
		Tips: []string{"request_policy:all_shards", "nondeterministic_output"}, Handler: cmdRandomKey})
	t.Add(&Command{Name: "dbsize", Arity: 1, Flags: FlagReadonly | FlagFast, ACL: acl(keysACLRead, "fast"),
		Tips: []string{"request_policy:all_shards", "response_policy:agg_sum"}, Handler: cmdDBSize})
	t.Add(&Command{Name: "flushdb", Arity: -1, Flags: FlagWrite, Lock: LockAll, ACL: acl(w, "slow", "dangerous"), Tips: allShards, Handler: cmdFlushDB})
	t.Add(&Command{Name: "flushall", Arity: -1, Flags: FlagWrite, Lock: LockAll, ACL: acl(w, "slow", "dangerous"), Tips: allShards, Handler: cmdFlushAll})
	t.Add(&Command{Name: "swapdb", Arity: 3, Flags: FlagWrite | FlagFast, Lock: LockAll, ACL: acl(w, "fast", "dangerous"), Handler: cmdSwapDB})

	objSpec := []KeySpec{{Flags: []string{"RO"}, BeginIndex: 2, KeyStep: 1}}
	objACL := acl(keysACLRead, "slow")
	nondet := []string{"nondeterministic_output"}
	t.Add(&Command{Name: "object", Arity: -2, ACL: []string{"slow"}})
	for _, sub := range []string{"encoding", "freq", "idletime", "refcount"} {
		t.Add(&Command{Name: "object|" + sub, Arity: 3, Flags: FlagReadonly, FirstKey: 2, LastKey: 2, Step: 1, ACL: objACL, Tips: nondet, KeySpecs: objSpec, Handler: cmdObject})
	}
	t.Add(&Command{Name: "object|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: []string{"keyspace", "slow"}, Handler: cmdObjectHelp})

	special := []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"}
	t.Add(&Command{Name: "memory", Arity: -2, ACL: []string{"slow"}})
	t.Add(&Command{Name: "memory|usage", Arity: -3, Flags: FlagReadonly, FirstKey: 2, LastKey: 2, Step: 1, ACL: []string{"read", "slow"}, KeySpecs: objSpec, Handler: cmdMemoryUsage})
	t.Add(&Command{Name: "memory|stats", Arity: 2, ACL: []string{"slow"}, Tips: special, Handler: cmdMemoryStats})
	t.Add(&Command{Name: "memory|doctor", Arity: 2, ACL: []string{"slow"}, Tips: special, Handler: cmdMemoryDoctor})
	t.Add(&Command{Name: "memory|malloc-stats", Arity: 2, ACL: []string{"slow"}, Tips: special, Handler: cmdMallocStats})
	t.Add(&Command{Name: "memory|purge", Arity: 2, ACL: []string{"slow"}, Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}, Handler: cmdMemoryPurge})
	t.Add(&Command{Name: "memory|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: []string{"slow"}, Handler: cmdMemoryHelp})
}

// peek looks key up without touching its access time (TYPE, EXISTS,
// OBJECT, as redis-server's LOOKUP_NOTOUCH): expired keys are removed and
// hits and misses counted.
func (x *Ctx) peek(key []byte) *keyspace.Entry {
	e := x.DB.Lookup(x.Slot(key), key, x.Now)
	if e == nil {
		x.S.ks.KeyspaceMiss.Add(1)
	} else {
		x.S.ks.KeyspaceHits.Add(1)
	}
	return e
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
		if x.peek(k) != nil {
			n++
		}
	}
	x.W.Int(n)
}

func cmdTouch(x *Ctx) {
	var n int64
	for _, k := range x.Args[1:] {
		if x.Read(k) != nil {
			n++
		}
	}
	x.W.Int(n)
}

func cmdType(x *Ctx) {
	e := x.peek(x.Args[1])
	if e == nil {
		x.W.Simple("none")
		return
	}
	x.W.Simple(e.Kind.String())
}

// cmdRename serves RENAME and RENAMENX. The entry itself moves, keeping its
// TTL and access time, as redis-server moves the object.
func cmdRename(x *Ctx) {
	nx := len(x.Cmd.Name) == len("renamenx")
	src, dst := x.Args[1], x.Args[2]
	e := x.Write(src)
	if e == nil {
		x.W.Error(ErrNoSuchKey)
		return
	}
	if string(src) == string(dst) {
		if nx {
			x.W.Int(0)
		} else {
			x.W.OK()
		}
		return
	}
	if x.Write(dst) != nil {
		if nx {
			x.W.Int(0)
			return
		}
		x.Del(dst)
	}
	exp := x.Expire(src, e)
	x.Del(src)
	x.DB.SetWithExpire(x.Slot(dst), dst, e, exp)
	x.Modified(dst)
	if nx {
		x.W.Int(1)
	} else {
		x.W.OK()
	}
}

// cloneEntry returns a deep copy of e (without its TTL, which the caller
// stores along).
func cloneEntry(e *keyspace.Entry) *keyspace.Entry {
	if o := e.Obj(); o != nil {
		return keyspace.NewObject(o.Clone())
	}
	c := keyspace.NewString(e.Bytes())
	c.Raw = e.Raw
	return c
}

func cmdCopy(x *Ctx) {
	src, dst := x.Args[1], x.Args[2]
	dstDB := x.DB
	replace := false
	for i := 3; i < len(x.Args); i++ {
		switch opt := strings.ToLower(string(x.Args[i])); {
		case opt == "replace":
			replace = true
		case opt == "db" && i+1 < len(x.Args):
			i++
			n, ok := ParseInt(x.Args[i])
			if !ok {
				x.W.Error(ErrNotInt)
				return
			}
			if n < 0 || n >= int64(x.S.ks.NumDBs()) {
				x.W.Error(ErrDBIndex)
				return
			}
			dstDB = x.S.ks.DB(int(n))
		default:
			x.W.Error(ErrSyntax)
			return
		}
	}
	if dstDB != x.DB && x.S.Cfg.Bool("cluster-enabled") {
		x.W.Error("ERR Copying to another database is not allowed in cluster mode")
		return
	}
	if dstDB == x.DB && string(src) == string(dst) {
		x.W.Error("ERR source and destination objects are the same")
		return
	}
	e := x.Write(src)
	if e == nil {
		x.W.Int(0)
		return
	}
	slot := x.Slot(dst)
	if dstDB.Lookup(slot, dst, x.Now) != nil {
		if !replace {
			x.W.Int(0)
			return
		}
		dstDB.Delete(slot, dst, x.Now)
	}
	c := cloneEntry(e)
	c.Access = x.S.newAccess()
	dstDB.SetWithExpire(slot, dst, c, x.Expire(src, e))
	x.modifiedIn(dstDB, dst)
	x.W.Int(1)
}

// modifiedIn is Modified for a key of another database than the client's.
func (x *Ctx) modifiedIn(db *keyspace.DB, key []byte) {
	if db == x.DB {
		x.Modified(key)
		return
	}
	cur := x.DB
	x.DB = db
	x.Modified(key)
	x.DB = cur
}

func cmdMove(x *Ctx) {
	if x.S.Cfg.Bool("cluster-enabled") {
		x.W.Error("ERR MOVE is not allowed in cluster mode")
		return
	}
	key := x.Args[1]
	n, ok := ParseInt(x.Args[2])
	if !ok {
		x.W.Error(ErrNotInt)
		return
	}
	if n < 0 || n >= int64(x.S.ks.NumDBs()) {
		x.W.Error(ErrDBIndex)
		return
	}
	dst := x.S.ks.DB(int(n))
	if dst == x.DB {
		x.W.Error("ERR source and destination objects are the same")
		return
	}
	e := x.Write(key)
	if e == nil {
		x.W.Int(0)
		return
	}
	slot := x.Slot(key)
	if dst.Lookup(slot, key, x.Now) != nil {
		x.W.Int(0)
		return
	}
	exp := x.Expire(key, e)
	x.Del(key)
	dst.SetWithExpire(slot, key, e, exp)
	x.modifiedIn(dst, key)
	x.W.Int(1)
}

// allKeysPattern reports whether pattern is a lone "*", which redis-server
// treats as "everything" (the matcher itself would not match "").
func allKeysPattern(p []byte) bool { return len(p) == 1 && p[0] == '*' }

// scanMatch is the MATCH filter of HSCAN, SSCAN and ZSCAN: a lone "*"
// selects everything (the empty member too), as redis-server skips
// matching then.
func scanMatch(pattern, s []byte) bool {
	return allKeysPattern(pattern) || glob.Match(pattern, s, false)
}

func cmdKeys(x *Ctx) {
	pat := x.Args[1]
	all := allKeysPattern(pat)
	sp := string(pat)
	var out []string
	for slot := x.DB.NextNonEmpty(0, false); slot >= 0; slot = x.DB.NextNonEmpty(slot+1, false) {
		x.DB.ForEachInSlot(slot, func(k string, e *keyspace.Entry) bool {
			if x.DB.Expired(slot, k, e, x.Now) {
				return true
			}
			if all || glob.Match(sp, k, false) {
				out = append(out, k)
			}
			return true
		})
	}
	x.W.Array(len(out))
	for _, k := range out {
		x.W.BulkString(k)
	}
}

// SCAN cursor layout: the cursor is the number of the next slot to visit
// (0..16383); 0 starts an iteration and, returned, means it is done (slot 0
// is never "next" again after the first call). A call visits whole slots
// in ascending order, skipping empty ones through the non-empty bitmap:
// it stops before a slot whose keys would take the visited count over
// COUNT, but always visits at least one non-empty slot. So a reply holds at
// most max(COUNT, keys of the largest slot) keys (COUNT is a hint, as in
// redis-server, which also returns whole buckets), a call costs O(keys
// returned), and since a slot is visited under its lock and never twice,
// every key present for the whole iteration is returned exactly once.
// Cursors past 16383 end the iteration.
func cmdScan(x *Ctx) {
	cursor, ok := parseCursor(x.Args[1])
	if !ok {
		x.W.Error("ERR invalid cursor")
		return
	}
	count := int64(10)
	var pat, typ []byte
	for i := 2; i < len(x.Args); i += 2 {
		if i+1 >= len(x.Args) {
			x.W.Error(ErrSyntax)
			return
		}
		switch opt := strings.ToLower(string(x.Args[i])); opt {
		case "count":
			n, ok := ParseInt(x.Args[i+1])
			if !ok {
				x.W.Error(ErrNotInt)
				return
			}
			if n < 1 {
				x.W.Error(ErrSyntax)
				return
			}
			count = n
		case "match":
			pat = x.Args[i+1]
			if allKeysPattern(pat) {
				pat = nil
			}
		case "type":
			typ = x.Args[i+1]
		default:
			x.W.Error(ErrSyntax)
			return
		}
	}
	sp := string(pat)
	slot := int(min(cursor, slots.Count))
	var out []string
	var expired []string
	budget := int(min(count, 1<<30))
	visited := 0
	for {
		slot = x.DB.NextNonEmpty(slot, false)
		if slot < 0 {
			slot = slots.Count
			break
		}
		x.LockSlot(slot)
		n := x.DB.SlotLen(slot)
		if visited > 0 && visited+n > budget {
			x.UnlockSlot(slot)
			break
		}
		x.DB.ForEachInSlot(slot, func(k string, e *keyspace.Entry) bool {
			if x.DB.Expired(slot, k, e, x.Now) {
				expired = append(expired, k)
				return true
			}
			if typ != nil && !strings.EqualFold(e.Kind.String(), string(typ)) {
				return true
			}
			if pat != nil && !glob.Match(sp, k, false) {
				return true
			}
			out = append(out, k)
			return true
		})
		for _, k := range expired {
			x.DB.Lookup(slot, []byte(k), x.Now)
		}
		expired = expired[:0]
		x.UnlockSlot(slot)
		visited += n
		slot++
		if visited >= budget {
			break
		}
	}
	next := uint64(0)
	if slot < slots.Count {
		next = uint64(slot)
	}
	x.W.Array(2)
	var tmp [24]byte
	x.W.Bulk(strconv.AppendUint(tmp[:0], next, 10))
	x.W.Array(len(out))
	for _, k := range out {
		x.W.BulkString(k)
	}
}

// parseCursor parses a SCAN cursor as redis-server's strtoull does: an
// unsigned decimal, where a leading '-' wraps around.
func parseCursor(b []byte) (uint64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

func cmdRandomKey(x *Ctx) {
	for {
		slot := x.DB.RandomSlot(nil)
		if slot < 0 {
			x.W.Null()
			return
		}
		x.LockSlot(slot)
		k, e := x.DB.RandomInSlot(slot)
		if e != nil && x.DB.Expired(slot, k, e, x.Now) {
			x.DB.Lookup(slot, []byte(k), x.Now)
			e = nil
		}
		x.UnlockSlot(slot)
		if e != nil {
			x.W.BulkString(k)
			return
		}
	}
}

func cmdDBSize(x *Ctx) { x.W.Int(x.DB.Len()) }

// flushMode checks FLUSHDB/FLUSHALL's optional SYNC|ASYNC argument. Both
// flush at once here: dropping the tables is O(1) and the garbage
// collector frees the values in the background, which is what ASYNC asks.
func flushMode(x *Ctx) bool {
	if len(x.Args) > 2 {
		x.W.Error(ErrSyntax)
		return false
	}
	if len(x.Args) == 2 {
		m := strings.ToLower(string(x.Args[1]))
		if m != "sync" && m != "async" {
			x.W.Error(ErrSyntax)
			return false
		}
	}
	return true
}

func cmdFlushDB(x *Ctx) {
	if !flushMode(x) {
		return
	}
	x.S.touchWatchedDB(x.DB.ID)
	x.DB.Flush()
	x.S.dirty.Add(1)
	x.W.OK()
}

func cmdFlushAll(x *Ctx) {
	if !flushMode(x) {
		return
	}
	for i := 0; i < x.S.ks.NumDBs(); i++ {
		x.S.touchWatchedDB(i)
		x.S.ks.DB(i).Flush()
	}
	x.S.afterFlushAll()
	x.S.dirty.Add(1)
	x.W.OK()
}

func cmdSwapDB(x *Ctx) {
	if x.S.Cfg.Bool("cluster-enabled") {
		x.W.Error("ERR SWAPDB is not allowed in cluster mode")
		return
	}
	a, ok := ParseInt(x.Args[1])
	if !ok {
		x.W.Error("ERR invalid first DB index")
		return
	}
	b, ok := ParseInt(x.Args[2])
	if !ok {
		x.W.Error("ERR invalid second DB index")
		return
	}
	n := int64(x.S.ks.NumDBs())
	if a < 0 || a >= n || b < 0 || b >= n {
		x.W.Error(ErrDBIndex)
		return
	}
	if a != b {
		x.S.touchWatchedSwap(int(a), int(b))
		x.S.ks.SwapDBs(int(a), int(b))
		x.S.dirty.Add(1)
	}
	x.W.OK()
}

// touchWatchedSwap flags the clients watching a key of db a or b that
// exists in either database: after the swap the key's value differs (or it
// appeared or vanished). The caller holds LockAll.
func (s *Server) touchWatchedSwap(a, b int) {
	if s.watching.Load() == 0 {
		return
	}
	da, db := s.ks.DB(a), s.ks.DB(b)
	s.watchMu.Lock()
	for k, cs := range s.watched {
		if k.db != a && k.db != b {
			continue
		}
		key := []byte(k.key)
		slot := slots.Of(key)
		if da.Peek(slot, key) == nil && db.Peek(slot, key) == nil {
			continue
		}
		for _, c := range cs {
			c.dirtyCAS.Store(true)
		}
	}
	s.watchMu.Unlock()
}

const (
	errNoLFU = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	errLFU   = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
)

// sharedRefcount is what OBJECT REFCOUNT reports for redis-server's shared
// small integers (OBJ_SHARED_REFCOUNT).
const sharedRefcount = 2147483647

func cmdObject(x *Ctx) {
	e := x.peek(x.Args[2])
	if e == nil {
		x.W.Null()
		return
	}
	switch x.Cmd.Name {
	case "object|encoding":
		x.W.BulkString(encodingOf(e))
	case "object|idletime":
		if x.S.policy().lfu() {
			x.W.Error(errLFU)
			return
		}
		x.W.Int(x.S.idleSeconds(e))
	case "object|freq":
		if !x.S.policy().lfu() {
			x.W.Error(errNoLFU)
			return
		}
		x.W.Int(int64(x.S.lfuDecayed(e)))
	case "object|refcount":
		if e.Kind == keyspace.KindString && encodingOf(e) == "int" && x.S.sharesIntegers() {
			if n, _ := ParseInt(e.Bytes()); n >= 0 && n < 10000 {
				x.W.Int(sharedRefcount)
				return
			}
		}
		x.W.Int(1)
	}
}

func encodingOf(e *keyspace.Entry) string {
	if e.Kind == keyspace.KindString {
		return StringEncoding(e)
	}
	if o, ok := e.Obj().(keyspace.Object); ok {
		return o.Encoding()
	}
	return "unknown"
}

// isCanonicalInt reports whether b is an integer that prints back as b
// (no sign but a leading '-', no leading zeros), which redis-server stores
// as a number.
func isCanonicalInt(b []byte) bool {
	n, ok := ParseInt(b)
	if !ok {
		return false
	}
	var tmp [24]byte
	return string(strconv.AppendInt(tmp[:0], n, 10)) == string(b)
}

func cmdObjectHelp(x *Ctx) {
	writeHelp(x, "OBJECT",
		"ENCODING <key>",
		"    Names the internal layout of the value at <key> (listpack, hashtable, ...).",
		"FREQ <key>",
		"    The LFU counter of <key>, which grows with the log of its recent use;",
		"    only while maxmemory-policy is an LFU one.",
		"IDLETIME <key>",
		"    About how many seconds ago <key> was last used; not under LFU policies.",
		"REFCOUNT <key>",
		"    How many references hold the value at <key>.")
}

func cmdMemoryHelp(x *Ctx) {
	writeHelp(x, "MEMORY",
		"DOCTOR",
		"    A plain-text opinion on the node's memory use.",
		"MALLOC-STATS",
		"    The allocator's own statistics, when it keeps any.",
		"PURGE",
		"    Hands unused memory pages back to the operating system.",
		"STATS",
		"    Where the node's memory goes, field by field.",
		"USAGE <key> [SAMPLES <count>]",
		"    Estimated bytes held by <key> and its value; for collections the estimate",
		"    looks at <count> elements (5 when omitted, 0 for every element).")
}

func cmdMemoryUsage(x *Ctx) {
	for i := 3; i < len(x.Args); i++ {
		if strings.EqualFold(string(x.Args[i]), "samples") && i+1 < len(x.Args) {
			n, ok := ParseInt(x.Args[i+1])
			if !ok {
				x.W.Error(ErrNotInt)
				return
			}
			if n < 0 {
				x.W.Error(ErrSyntax)
				return
			}
			// Values are measured whole: the sample count only bounds
			// redis-server's estimate of nested values.
			i++
			continue
		}
		x.W.Error(ErrSyntax)
		return
	}
	key := x.Args[2]
	e := x.DB.Lookup(x.Slot(key), key, x.Now)
	if e == nil {
		x.W.Null()
		return
	}
	x.W.Int(memoryUsage(key, e, x.S.Cfg.Bool("cluster-enabled")))
}

// jemallocSize rounds n up to jemalloc's size class (16-byte quantum: 8,
// 16, 32, 48 ... 128, then four classes per doubling), so that MEMORY
// USAGE reports what redis-server's allocator would.
func jemallocSize(n int64) int64 {
	switch {
	case n <= 8:
		return 8
	case n <= 128:
		return (n + 15) &^ 15
	}
	p := int64(128)
	for p*2 < n {
		p *= 2
	}
	step := p / 4
	return (n + step - 1) / step * step
}

// sdsSize is the allocation of an sds string of n bytes (header by length
// plus the terminating NUL).
func sdsSize(n int64) int64 {
	hdr := int64(9)
	switch {
	case n < 32:
		hdr = 1
	case n < 256:
		hdr = 3
	case n < 65536:
		hdr = 5
	}
	return jemallocSize(hdr + n + 1)
}

// memoryUsage answers MEMORY USAGE as redis-server computes it: the dict
// entry (24 bytes), the key's sds, the value's object and payload, plus
// the slot-to-keys links (16 bytes) in cluster mode. Strings follow
// redis-server's int/embstr/raw layouts exactly; collections add the
// value's own estimate to the 16-byte object header.
func memoryUsage(key []byte, e *keyspace.Entry, cluster bool) int64 {
	n := 24 + sdsSize(int64(len(key)))
	if cluster {
		n += 16
	}
	const robj = 16
	if e.Kind == keyspace.KindString {
		switch StringEncoding(e) {
		case "int":
			return n + robj
		case "embstr":
			return n + jemallocSize(robj+3+int64(len(e.Bytes()))+1)
		}
		size := int64(len(e.Bytes()))
		if c := int64(cap(e.Bytes())); e.Raw && c > size {
			size = c // grown in place: redis-server's sds keeps spare room too
		}
		hdr := int64(3)
		if size >= 256 {
			hdr = 5
		}
		if size >= 65536 {
			hdr = 9
		}
		return n + robj + jemallocSize(hdr+size+1)
	}
	if o, ok := e.Obj().(keyspace.Object); ok {
		return n + robj + int64(o.MemoryUsage())
	}
	return n + robj
}

func cmdMemoryStats(x *Ctx) {
	ms := readMemStats()
	used := ms.used
	startup := ms.startup
	dataset := x.S.ks.UsedMemory()
	var keys int64
	for i := 0; i < x.S.ks.NumDBs(); i++ {
		keys += x.S.ks.DB(i).Len()
	}
	perKey := int64(0)
	if keys > 0 {
		perKey = dataset / keys
	}
	overhead := max(used-dataset, 0)
	x.S.mu.Lock()
	nclients := int64(len(x.S.clients))
	x.S.mu.Unlock()
	pct := func(a, b int64) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) * 100 / float64(b)
	}
	ratio := func(a, b int64) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	w := x.W
	w.Map(27)
	ints := func(name string, v int64) { w.BulkString(name); w.Int(v) }
	dbl := func(name string, v float64) { w.BulkString(name); w.Double(v) }
	ints("peak.allocated", max(ms.peak, used))
	ints("total.allocated", used)
	ints("startup.allocated", startup)
	ints("replication.backlog", 0)
	ints("clients.slaves", 0)
	ints("clients.normal", nclients*(16*1024+2048))
	ints("cluster.links", 0)
	ints("aof.buffer", 0)
	ints("lua.caches", 0)
	ints("functions.caches", 0)
	ints("overhead.total", overhead)
	ints("keys.count", keys)
	ints("keys.bytes-per-key", perKey)
	ints("dataset.bytes", dataset)
	dbl("dataset.percentage", pct(dataset, used))
	dbl("peak.percentage", pct(used, max(ms.peak, used)))
	ints("allocator.allocated", used)
	ints("allocator.active", ms.active)
	ints("allocator.resident", ms.resident)
	dbl("allocator-fragmentation.ratio", ratio(ms.active, used))
	ints("allocator-fragmentation.bytes", ms.active-used)
	dbl("allocator-rss.ratio", ratio(ms.resident, ms.active))
	ints("allocator-rss.bytes", ms.resident-ms.active)
	dbl("rss-overhead.ratio", 1)
	ints("rss-overhead.bytes", 0)
	dbl("fragmentation", ratio(ms.resident, used))
	ints("fragmentation.bytes", ms.resident-used)
}

func cmdMemoryDoctor(x *Ctx) {
	// redis-server refuses to diagnose below 5MB of data; this node keeps
	// no allocator statistics to diagnose beyond that.
	msg := "No memory problem found. slotd keeps no allocator statistics, so fragmentation and allocator overhead are not judged.\n"
	if x.S.ks.UsedMemory() < 5<<20 {
		msg = "The node holds less than 5MB: too little for a memory diagnosis.\n"
	}
	x.W.Verbatim(msg)
}

func cmdMallocStats(x *Ctx) {
	x.W.Verbatim("Stats not supported for the current allocator")
}

func cmdMemoryPurge(x *Ctx) {
	freeOSMemory()
	x.W.OK()
}
