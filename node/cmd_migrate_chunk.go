package node

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/node/rdb"
	"github.com/slotd/slotd/slots"
)

// Chunked key migration: a slotd-only extension that moves one large
// collection between two slotd nodes in bounded pieces, so that neither
// node holds a slot lock for longer than one piece takes (Redis's MIGRATE
// serializes, sends and deletes the whole key under one lock). slotctl
// drives it; docs/design.md ("Slot migration") has the protocol and the
// state diagram. The commands, all under SLOTD.MIGRATE:
//
//	On the source (the slot is migrating):
//	  VERSION                            -> :1 (probe: is this slotd?)
//	  BIGKEYS slot min-elements count    -> keys of the slot with >= min elements
//	  FREEZE key lease-ms                -> [kind, length, pttl]; writes to key answer TRYAGAIN
//	  CHUNK key cursor count             -> [next-cursor, elements...] (renews the lease)
//	  THAW key                           -> :1 if it was frozen (roll back)
//	  DELFROZEN key                      -> :1 deletes the frozen key (after COMMIT)
//	On the target (the slot is importing; these carry the asking flag):
//	  STAGE key kind element...          -> :staged-so-far (hidden until COMMIT)
//	  COMMIT key pttl length             -> +OK installs the staged value as key
//	  DISCARD key                        -> :1 if something was staged
//	On any master:
//	  SETSLOTS action node-id slot...    -> CLUSTER SETSLOT for many slots, one config write
//	                                        (cmd_migrate_batch.go)
//
// Elements are flat: member score pairs for a zset, field value pairs for a
// hash, members for a set, elements in order for a list. A frozen key's
// lease ends lease-ms after the last FREEZE or CHUNK, so a tool that dies
// mid-move does not leave the key read-only for good.
//
// Replicas and the AOF receive STAGE, DISCARD and COMMIT (its TTL as a
// PEXPIREAT) as the target ran them, so they build the same value; the
// source's DELFROZEN reaches them as a DEL.

// chunkState holds the frozen keys of a source and the staged values of a
// target.
type chunkState struct {
	// snapGen counts the snapshots begun (BGSAVE, SAVE, a replica's full
	// sync, an AOF rewrite): a staged value that saw one is not in it.
	snapGen atomic.Uint64
	frozenN atomic.Int32
	mu      sync.Mutex
	frozen  map[string]int64 // key -> lease end, unix ms
	staged  map[string]*stagedValue
}

type stagedValue struct {
	// gen is snapGen when the first piece was staged.
	gen  uint64
	kind keyspace.Kind
	obj  keyspace.Object
	list *keyspace.List
}

// isFrozen reports whether writes to key must wait (answer TRYAGAIN). It
// costs one atomic load when no key is frozen.
func (cs *chunkState) isFrozen(key []byte) bool {
	if cs.frozenN.Load() == 0 {
		return false
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	until, ok := cs.frozen[string(key)]
	if !ok {
		return false
	}
	if time.Now().UnixMilli() >= until {
		delete(cs.frozen, string(key))
		cs.frozenN.Add(-1)
		return false
	}
	return true
}

func (cs *chunkState) freeze(key string, until int64) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.frozen == nil {
		cs.frozen = map[string]int64{}
	}
	if _, ok := cs.frozen[key]; !ok {
		cs.frozenN.Add(1)
	}
	cs.frozen[key] = until
}

// renew extends a live lease; it reports false when key is not frozen.
func (cs *chunkState) renew(key string, until int64, now int64) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	old, ok := cs.frozen[key]
	if !ok || now >= old {
		return false
	}
	cs.frozen[key] = until
	return true
}

func (cs *chunkState) thaw(key string) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if _, ok := cs.frozen[key]; !ok {
		return false
	}
	delete(cs.frozen, key)
	cs.frozenN.Add(-1)
	return true
}

func registerMigrateChunk(t Table) {
	t.Add(&Command{Name: "slotd.migrate", Arity: -2, Flags: FlagAdmin, ACL: []string{"admin", "slow", "dangerous"},
		Group: "cluster", Since: "slotd", Summary: "Moves one large key between slotd nodes in bounded pieces",
		Handler: func(x *Ctx) {
			x.W.Error("ERR unknown subcommand '" + sanitize(x.Arg(1), 128) + "'. Try SLOTD.MIGRATE HELP.")
		}})
	sub := func(name string, arity int, flags Flag, firstKey int, lock LockMode, h HandlerFunc) {
		last := 0
		if firstKey > 0 {
			last = firstKey
		}
		t.Add(&Command{Name: "slotd.migrate|" + name, Arity: arity, Flags: FlagAdmin | flags,
			FirstKey: firstKey, LastKey: last, Step: 1, Lock: lock, ACL: []string{"admin", "slow", "dangerous"},
			Group: "cluster", Since: "slotd", Handler: h})
	}
	sub("version", 2, FlagFast, 0, LockKeys, func(x *Ctx) { x.W.Int(1) })
	sub("bigkeys", 5, 0, 0, LockSelf, cmdChunkBigKeys)
	sub("freeze", 4, 0, 2, LockKeys, cmdChunkFreeze)
	sub("chunk", 5, 0, 2, LockKeys, cmdChunkRead)
	sub("thaw", 3, 0, 2, LockKeys, func(x *Ctx) { x.W.Int(boolInt64(x.S.chunks.thaw(string(x.Args[2])))) })
	sub("delfrozen", 3, 0, 2, LockKeys, cmdChunkDelFrozen)
	sub("stage", -5, FlagAsking|FlagDenyOOM, 2, LockKeys, cmdChunkStage)
	sub("commit", 5, FlagAsking, 2, LockKeys, cmdChunkCommit)
	sub("discard", 3, FlagAsking, 2, LockKeys, cmdChunkDiscard)
	sub("setslots", -5, FlagStale|FlagNoAsyncLoading, 0, LockKeys, cmdSetSlots)
	sub("help", 2, 0, 0, LockKeys, func(x *Ctx) {
		lines := []string{
			"SLOTD.MIGRATE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"VERSION", "BIGKEYS <slot> <min-elements> <count>", "FREEZE <key> <lease-ms>",
			"CHUNK <key> <cursor> <count>", "THAW <key>", "DELFROZEN <key>",
			"STAGE <key> <kind> <element> ...", "COMMIT <key> <pttl> <length>", "DISCARD <key>",
			"SETSLOTS <IMPORTING|MIGRATING|NODE|STABLE> <node-id|-> <slot> ...", "HELP",
		}
		x.W.Array(len(lines))
		for _, l := range lines {
			x.W.Simple(l)
		}
	})
}

func boolInt64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func collectionLen(e *keyspace.Entry) int {
	if e.Kind == keyspace.KindString {
		return 0
	}
	return e.Obj().Len()
}

func cmdChunkBigKeys(x *Ctx) {
	n, ok1 := ParseInt(x.Args[2])
	min, ok2 := ParseInt(x.Args[3])
	count, ok3 := ParseInt(x.Args[4])
	if !ok1 || !ok2 || !ok3 {
		x.W.Error(ErrNotInt)
		return
	}
	if n < 0 || n >= slots.Count || count < 0 {
		x.W.Error("ERR Invalid slot or number of keys")
		return
	}
	slot := int(n)
	var keys []string
	x.LockSlot(slot)
	x.S.ks.DB(0).ForEachInSlot(slot, func(k string, e *keyspace.Entry) bool {
		if int64(len(keys)) >= count {
			return false
		}
		if int64(collectionLen(e)) >= min {
			keys = append(keys, k)
		}
		return true
	})
	x.UnlockSlot(slot)
	x.W.Array(len(keys))
	for _, k := range keys {
		x.W.BulkString(k)
	}
}

func cmdChunkFreeze(x *Ctx) {
	lease, ok := ParseInt(x.Args[3])
	if !ok || lease <= 0 {
		x.W.Error("ERR invalid lease")
		return
	}
	e := x.Read(x.Args[2])
	if e == nil {
		x.W.Error("ERR no such key")
		return
	}
	if e.Kind == keyspace.KindString {
		x.W.Error("ERR strings are moved with MIGRATE")
		return
	}
	pttl := int64(-1)
	if ms := x.Expire(x.Args[2], e); ms > 0 {
		pttl = max(ms-x.Now, 1)
	}
	x.S.chunks.freeze(string(x.Args[2]), x.Now+lease)
	x.W.Array(3)
	x.W.BulkString(e.Kind.String())
	x.W.Int(int64(e.Obj().Len()))
	x.W.Int(pttl)
}

func chunkScore(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func cmdChunkRead(x *Ctx) {
	cursor, ok1 := ParseInt(x.Args[3])
	count, ok2 := ParseInt(x.Args[4])
	if !ok1 || !ok2 || cursor < 0 || count <= 0 {
		x.W.Error(ErrNotInt)
		return
	}
	key := string(x.Args[2])
	// The lease is renewed only while it is live: a key whose lease ran out
	// may have been written since, so the mover must start over.
	if !x.S.chunks.renew(key, x.Now+30_000, time.Now().UnixMilli()) {
		x.W.Error("ERR key is not frozen")
		return
	}
	e := x.Read(x.Args[2])
	if e == nil {
		x.W.Error("ERR no such key")
		return
	}
	var out []string
	var next uint64
	switch e.Kind {
	case keyspace.KindZSet:
		next = e.Obj().(*keyspace.ZSet).Scan(uint64(cursor), int(count), func(n *keyspace.ZNode) {
			out = append(out, n.Member, chunkScore(n.Score))
		})
	case keyspace.KindHash:
		next = e.Obj().(*keyspace.Hash).Scan(uint64(cursor), int(count), func(f, v string) {
			out = append(out, f, v)
		})
	case keyspace.KindSet:
		next = e.Obj().(*keyspace.Set).Scan(uint64(cursor), int(count), func(m []byte) {
			out = append(out, string(m))
		})
	case keyspace.KindList:
		l := e.Obj().(*keyspace.List)
		end := min(int(cursor)+int(count), l.Len())
		if int(cursor) < end {
			l.Range(int(cursor), end-1, func(s string) { out = append(out, s) })
		}
		if end < l.Len() {
			next = uint64(end)
		}
	default:
		x.W.Error("ERR strings are moved with MIGRATE")
		return
	}
	x.W.Array(1 + len(out))
	x.W.BulkString(strconv.FormatUint(next, 10))
	for _, s := range out {
		x.W.BulkString(s)
	}
}

func cmdChunkDelFrozen(x *Ctx) {
	key := string(x.Args[2])
	if !x.S.chunks.thaw(key) {
		x.W.Error("ERR key is not frozen")
		return
	}
	// Replicas and the AOF see a plain DEL: they never froze the key.
	if x.Del(x.Args[2]) {
		x.Propagate(delArg, x.Args[2])
		x.W.Int(1)
		return
	}
	x.NoPropagate()
	x.W.Int(0)
}

func parseKind(s string) (keyspace.Kind, bool) {
	switch strings.ToLower(s) {
	case "zset":
		return keyspace.KindZSet, true
	case "hash":
		return keyspace.KindHash, true
	case "set":
		return keyspace.KindSet, true
	case "list":
		return keyspace.KindList, true
	}
	return 0, false
}

func cmdChunkStage(x *Ctx) {
	kind, ok := parseKind(x.Arg(3))
	if !ok {
		x.W.Error("ERR unknown kind")
		return
	}
	elems := x.Args[4:]
	if (kind == keyspace.KindZSet || kind == keyspace.KindHash) && len(elems)%2 != 0 {
		x.W.Error("ERR syntax error")
		return
	}
	key := string(x.Args[2])
	cs := &x.S.chunks
	cs.mu.Lock()
	sv := cs.staged[key]
	cs.mu.Unlock()
	if sv == nil {
		sv = &stagedValue{kind: kind, gen: cs.snapGen.Load()}
		switch kind {
		case keyspace.KindZSet:
			sv.obj = keyspace.NewZSet()
		case keyspace.KindHash:
			sv.obj = keyspace.NewHash()
		case keyspace.KindSet:
			sv.obj = keyspace.NewSet()
		case keyspace.KindList:
			sv.list = keyspace.NewList()
			sv.obj = sv.list
		}
	} else if sv.kind != kind {
		x.W.Error("ERR staged value is of another kind")
		return
	}
	// Scores are checked before anything is added, so a bad call stages
	// nothing.
	if kind == keyspace.KindZSet {
		for i := 1; i < len(elems); i += 2 {
			if _, err := strconv.ParseFloat(string(elems[i]), 64); err != nil {
				x.W.Error("ERR value is not a valid float")
				return
			}
		}
	}
	// The slot lock the dispatcher holds for key serializes STAGE calls
	// for the same key, so the value is filled without its own lock.
	switch kind {
	case keyspace.KindZSet:
		z := sv.obj.(*keyspace.ZSet)
		for i := 0; i+1 < len(elems); i += 2 {
			f, _ := strconv.ParseFloat(string(elems[i+1]), 64)
			z.Add(elems[i], f)
		}
	case keyspace.KindHash:
		h := sv.obj.(*keyspace.Hash)
		for i := 0; i+1 < len(elems); i += 2 {
			h.Set(elems[i], elems[i+1])
		}
	case keyspace.KindSet:
		s := sv.obj.(*keyspace.Set)
		for _, m := range elems {
			s.Add(m)
		}
	case keyspace.KindList:
		for _, m := range elems {
			sv.list.PushBack(string(m))
		}
	}
	cs.mu.Lock()
	if cs.staged == nil {
		cs.staged = map[string]*stagedValue{}
	}
	cs.staged[key] = sv
	cs.mu.Unlock()
	// Replicas and the AOF stage the same pieces, so that the COMMIT that
	// follows in the stream finds them.
	x.Propagate(x.Args...)
	x.W.Int(int64(sv.obj.Len()))
}

func cmdChunkCommit(x *Ctx) {
	pttl, ok1 := ParseInt(x.Args[3])
	length, ok2 := ParseInt(x.Args[4])
	if !ok1 || !ok2 {
		x.W.Error(ErrNotInt)
		return
	}
	key := string(x.Args[2])
	cs := &x.S.chunks
	cs.mu.Lock()
	sv := cs.staged[key]
	cs.mu.Unlock()
	if sv == nil {
		x.W.Error("ERR nothing staged for this key")
		return
	}
	if int64(sv.obj.Len()) != length {
		x.W.Error("ERR staged " + itoa(sv.obj.Len()) + " elements, expected " + itoa(length))
		return
	}
	if x.Write(x.Args[2]) != nil {
		x.W.Error("BUSYKEY Target key name already exists.")
		return
	}
	cs.mu.Lock()
	delete(cs.staged, key)
	cs.mu.Unlock()
	e := keyspace.NewObject(sv.obj)
	e.Kind = sv.kind
	var at int64
	if pttl > 0 {
		at = x.Now + pttl
	}
	x.PutWithExpire(x.Args[2], e, at)
	if sv.gen != cs.snapGen.Load() {
		// A snapshot began after the first STAGE: the replica it went
		// to (or the AOF it became the base of) lacks the pieces staged
		// before it, and would fail this COMMIT. They get the whole
		// value instead, after dropping the pieces they have.
		x.Propagate(x.Args[0], []byte("DISCARD"), x.Args[2])
		ttl := []byte("0")
		if at > 0 {
			ttl = strconv.AppendInt(nil, at, 10)
		}
		x.Propagate([]byte("RESTORE"), x.Args[2], ttl, rdb.AppendDump(nil, e), []byte("REPLACE"), absttlArg)
		x.W.OK()
		return
	}
	// The TTL goes to replicas and the AOF as an absolute time.
	x.Propagate(x.Args[0], x.Args[1], x.Args[2], []byte("-1"), x.Args[4])
	if at > 0 {
		x.Propagate([]byte("PEXPIREAT"), x.Args[2], strconv.AppendInt(nil, at, 10))
	}
	x.W.OK()
}

func cmdChunkDiscard(x *Ctx) {
	key := string(x.Args[2])
	cs := &x.S.chunks
	cs.mu.Lock()
	_, ok := cs.staged[key]
	delete(cs.staged, key)
	cs.mu.Unlock()
	if ok {
		x.Propagate(x.Args...)
	}
	x.W.Int(boolInt64(ok))
}
