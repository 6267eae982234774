package node

import (
	"strings"

	"github.com/slotd/slotd/node/keyspace"
)

// List-command reply texts, as redis-server 7.0 words them.
const (
	errPositive       = "ERR value is out of range, must be positive"
	errRankZero       = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	errCountNegative  = "ERR COUNT can't be negative"
	errMaxlenNegative = "ERR MAXLEN can't be negative"
	errNumkeys        = "ERR numkeys should be greater than 0"
)

// keySpec1 is the key spec of a command whose only key is argument 1.
func keySpec1(flags ...string) []KeySpec {
	return []KeySpec{{Flags: flags, BeginIndex: 1, KeyStep: 1}}
}

func registerLists(t Table) {
	type c = Command
	acl := func(cat ...string) []string { return cat }
	list := func(cmd *Command) {
		cmd.Group = "list"
		if cmd.FirstKey == 0 && cmd.Keys == nil {
			cmd.FirstKey, cmd.LastKey, cmd.Step = 1, 1, 1
		}
		t.Add(cmd)
	}
	wf := FlagWrite | FlagDenyOOM | FlagFast
	list(&c{Name: "lpush", Arity: -3, Flags: wf, ACL: acl("write", "list", "fast"), KeySpecs: keySpec1("RW", "insert"), Since: "1.0.0", Handler: func(x *Ctx) { cmdPush(x, true, false) }})
	list(&c{Name: "rpush", Arity: -3, Flags: wf, ACL: acl("write", "list", "fast"), KeySpecs: keySpec1("RW", "insert"), Since: "1.0.0", Handler: func(x *Ctx) { cmdPush(x, false, false) }})
	list(&c{Name: "lpushx", Arity: -3, Flags: wf, ACL: acl("write", "list", "fast"), KeySpecs: keySpec1("RW", "insert"), Since: "2.2.0", Handler: func(x *Ctx) { cmdPush(x, true, true) }})
	list(&c{Name: "rpushx", Arity: -3, Flags: wf, ACL: acl("write", "list", "fast"), KeySpecs: keySpec1("RW", "insert"), Since: "2.2.0", Handler: func(x *Ctx) { cmdPush(x, false, true) }})
	list(&c{Name: "lpop", Arity: -2, Flags: FlagWrite | FlagFast, ACL: acl("write", "list", "fast"), KeySpecs: keySpec1("RW", "access", "delete"), Since: "1.0.0", Handler: func(x *Ctx) { cmdPop(x, true) }})
	list(&c{Name: "rpop", Arity: -2, Flags: FlagWrite | FlagFast, ACL: acl("write", "list", "fast"), KeySpecs: keySpec1("RW", "access", "delete"), Since: "1.0.0", Handler: func(x *Ctx) { cmdPop(x, false) }})
	list(&c{Name: "llen", Arity: 2, Flags: FlagReadonly | FlagFast, ACL: acl("read", "list", "fast"), KeySpecs: keySpec1("RO"), Since: "1.0.0", Handler: cmdLLen})
	list(&c{Name: "lindex", Arity: 3, Flags: FlagReadonly, ACL: acl("read", "list", "slow"), KeySpecs: keySpec1("RO", "access"), Since: "1.0.0", Handler: cmdLIndex})
	list(&c{Name: "lset", Arity: 4, Flags: FlagWrite | FlagDenyOOM, ACL: acl("write", "list", "slow"), KeySpecs: keySpec1("RW", "update"), Since: "1.0.0", Handler: cmdLSet})
	list(&c{Name: "lrange", Arity: 4, Flags: FlagReadonly, ACL: acl("read", "list", "slow"), KeySpecs: keySpec1("RO", "access"), Since: "1.0.0", Handler: cmdLRange})
	list(&c{Name: "ltrim", Arity: 4, Flags: FlagWrite, ACL: acl("write", "list", "slow"), KeySpecs: keySpec1("RW", "delete"), Since: "1.0.0", Handler: cmdLTrim})
	list(&c{Name: "lrem", Arity: 4, Flags: FlagWrite, ACL: acl("write", "list", "slow"), KeySpecs: keySpec1("RW", "delete"), Since: "1.0.0", Handler: cmdLRem})
	list(&c{Name: "linsert", Arity: 5, Flags: FlagWrite | FlagDenyOOM, ACL: acl("write", "list", "slow"), KeySpecs: keySpec1("RW", "insert"), Since: "2.2.0", Handler: cmdLInsert})
	list(&c{Name: "lpos", Arity: -3, Flags: FlagReadonly, ACL: acl("read", "list", "slow"), KeySpecs: keySpec1("RO", "access"), Since: "6.0.6", Handler: cmdLPos})
	moveSpecs := []KeySpec{
		{Flags: []string{"RW", "access", "delete"}, BeginIndex: 1, KeyStep: 1},
		{Flags: []string{"RW", "insert"}, BeginIndex: 2, KeyStep: 1},
	}
	list(&c{Name: "lmove", Arity: 5, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 2, Step: 1, ACL: acl("write", "list", "slow"), KeySpecs: moveSpecs, Since: "6.2.0", Handler: cmdLMove})
	list(&c{Name: "rpoplpush", Arity: 3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 2, Step: 1, ACL: acl("write", "list", "slow"), KeySpecs: moveSpecs, Since: "1.2.0", Handler: cmdRPopLPush})
	lmpopSpecs := []KeySpec{{Flags: []string{"RW", "access", "delete"}, BeginIndex: 1, KeyNum: true, KeyNumIdx: 0, KeyNumFirst: 1, KeyStep: 1}}
	list(&c{Name: "lmpop", Arity: -4, Flags: FlagWrite, Keys: lmpopKeys, ACL: acl("write", "list", "slow"), KeySpecs: lmpopSpecs, Since: "7.0.0", Handler: cmdLMPop})
}

// lmpopKeys finds LMPOP's keys: a count at argument 1, then that many
// keys. A bad count yields no keys: the handler then rejects the call.
func lmpopKeys(args [][]byte) []int {
	n, ok := ParseInt(args[1])
	if !ok || n < 1 || n > int64(len(args)-2) {
		return nil
	}
	pos := make([]int, n)
	for i := range pos {
		pos[i] = 2 + i
	}
	return pos
}

// listOf returns the list held by a list entry.
func listOf(e *keyspace.Entry) *keyspace.List { return e.Obj().(*keyspace.List) }

func newListEntry(l *keyspace.List) *keyspace.Entry {
	return keyspace.NewObject(l)
}

// cmdPush is LPUSH/RPUSH and, with onlyExisting, LPUSHX/RPUSHX.
func cmdPush(x *Ctx, front, onlyExisting bool) {
	key := x.Args[1]
	e, ok := x.WriteKind(key, keyspace.KindList)
	if !ok {
		return
	}
	var l *keyspace.List
	if e == nil {
		if onlyExisting {
			x.W.Int(0)
			return
		}
		l = keyspace.NewList()
	} else {
		l = listOf(e)
	}
	for _, v := range x.Args[2:] {
		if front {
			l.PushFront(string(v))
		} else {
			l.PushBack(string(v))
		}
	}
	if e == nil {
		x.Put(key, newListEntry(l))
	} else {
		x.Modified(key)
	}
	x.W.Int(int64(l.Len()))
}

// popN removes up to n elements from one end of the list under key, which
// e holds, deleting the key when it empties, and writes them as an array.
func popN(x *Ctx, key []byte, e *keyspace.Entry, front bool, n int64) {
	l := listOf(e)
	if n > int64(l.Len()) {
		n = int64(l.Len())
	}
	x.W.Array(int(n))
	for i := int64(0); i < n; i++ {
		if front {
			x.W.BulkString(l.PopFront())
		} else {
			x.W.BulkString(l.PopBack())
		}
	}
	listWritten(x, key, l)
}

// listWritten signals a change to the list under key and deletes the key
// when the list is empty.
func listWritten(x *Ctx, key []byte, l *keyspace.List) {
	if l.Len() == 0 {
		x.Del(key)
	} else {
		x.Modified(key)
	}
}

func cmdPop(x *Ctx, front bool) {
	if len(x.Args) > 3 {
		x.W.Error(errArity(x.Cmd.Name))
		return
	}
	withCount := len(x.Args) == 3
	var n int64 = 1
	if withCount {
		var ok bool
		if n, ok = ParseInt(x.Args[2]); !ok || n < 0 {
			x.W.Error(errPositive)
			return
		}
	}
	key := x.Args[1]
	e, ok := x.WriteKind(key, keyspace.KindList)
	if !ok {
		return
	}
	if e == nil {
		if withCount {
			x.W.NullArray()
		} else {
			x.W.Null()
		}
		return
	}
	if withCount {
		popN(x, key, e, front, n)
		return
	}
	l := listOf(e)
	if front {
		x.W.BulkString(l.PopFront())
	} else {
		x.W.BulkString(l.PopBack())
	}
	listWritten(x, key, l)
}

func cmdLLen(x *Ctx) {
	e, ok := x.ReadKind(x.Args[1], keyspace.KindList)
	if !ok {
		return
	}
	if e == nil {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(listOf(e).Len()))
}

// listIndex turns a possibly negative index into a position, or -1 when it
// is out of range.
func listIndex(i int64, n int) int {
	if i < 0 {
		i += int64(n)
	}
	if i < 0 || i >= int64(n) {
		return -1
	}
	return int(i)
}

func cmdLIndex(x *Ctx) {
	e, ok := x.ReadKind(x.Args[1], keyspace.KindList)
	if !ok {
		return
	}
	if e == nil {
		x.W.Null()
		return
	}
	i, ok := x.Int(2)
	if !ok {
		return
	}
	l := listOf(e)
	p := listIndex(i, l.Len())
	if p < 0 {
		x.W.Null()
		return
	}
	x.W.BulkString(l.Index(p))
}

func cmdLSet(x *Ctx) {
	key := x.Args[1]
	e, ok := x.WriteKind(key, keyspace.KindList)
	if !ok {
		return
	}
	if e == nil {
		x.W.Error(ErrNoSuchKey)
		return
	}
	i, ok := x.Int(2)
	if !ok {
		return
	}
	l := listOf(e)
	p := listIndex(i, l.Len())
	if p < 0 {
		x.W.Error(ErrIndexRange)
		return
	}
	l.Set(p, string(x.Args[3]))
	x.Modified(key)
	x.W.OK()
}

// listRange clamps start..end (inclusive, negative from the end) to a list
// of n elements as LRANGE and LTRIM do; ok is false for an empty range.
func listRange(start, end int64, n int) (s, e int, ok bool) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if end < 0 {
		end += ln
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= ln {
		return 0, 0, false
	}
	if end >= ln {
		end = ln - 1
	}
	return int(start), int(end), true
}

func cmdLRange(x *Ctx) {
	start, ok := x.Int(2)
	if !ok {
		return
	}
	end, ok := x.Int(3)
	if !ok {
		return
	}
	e, ok := x.ReadKind(x.Args[1], keyspace.KindList)
	if !ok {
		return
	}
	if e == nil {
		x.W.Array(0)
		return
	}
	l := listOf(e)
	s, t, ok := listRange(start, end, l.Len())
	if !ok {
		x.W.Array(0)
		return
	}
	x.W.Array(t - s + 1)
	for i := s; i <= t; i++ {
		x.W.BulkString(l.Index(i))
	}
}

func cmdLTrim(x *Ctx) {
	start, ok := x.Int(2)
	if !ok {
		return
	}
	end, ok := x.Int(3)
	if !ok {
		return
	}
	key := x.Args[1]
	e, ok := x.WriteKind(key, keyspace.KindList)
	if !ok {
		return
	}
	if e != nil {
		l := listOf(e)
		s, t, nonEmpty := listRange(start, end, l.Len())
		if nonEmpty {
			l.Trim(s, t)
		} else {
			l.Clear()
		}
		listWritten(x, key, l)
	}
	x.W.OK()
}

func cmdLRem(x *Ctx) {
	count, ok := x.Int(2)
	if !ok {
		return
	}
	key := x.Args[1]
	e, ok := x.WriteKind(key, keyspace.KindList)
	if !ok {
		return
	}
	if e == nil {
		x.W.Int(0)
		return
	}
	fromTail := count < 0
	if fromTail {
		count = -count
	}
	if count < 0 {
		// -MinInt64 overflows; redis-server then removes every match.
		count = 0
	}
	l := listOf(e)
	n := l.Remove(x.Args[3], int(count), fromTail)
	if n > 0 {
		listWritten(x, key, l)
	}
	x.W.Int(int64(n))
}

func cmdLInsert(x *Ctx) {
	var after bool
	switch strings.ToLower(string(x.Args[2])) {
	case "before":
	case "after":
		after = true
	default:
		x.W.Error(ErrSyntax)
		return
	}
	key := x.Args[1]
	e, ok := x.WriteKind(key, keyspace.KindList)
	if !ok {
		return
	}
	if e == nil {
		x.W.Int(0)
		return
	}
	l := listOf(e)
	i := l.Find(x.Args[3])
	if i < 0 {
		x.W.Int(-1)
		return
	}
	if after {
		i++
	}
	l.Insert(i, string(x.Args[4]))
	x.Modified(key)
	x.W.Int(int64(l.Len()))
}

func cmdLPos(x *Ctx) {
	var rank, count, maxlen int64 = 1, 0, 0
	withCount := false
	for j := 3; j < len(x.Args); j++ {
		opt := strings.ToLower(string(x.Args[j]))
		more := j+1 < len(x.Args)
		switch {
		case opt == "rank" && more:
			j++
			var ok bool
			if rank, ok = x.Int(j); !ok {
				return
			}
			if rank == 0 {
				x.W.Error(errRankZero)
				return
			}
		case opt == "count" && more:
			j++
			var ok bool
			if count, ok = ParseInt(x.Args[j]); !ok || count < 0 {
				x.W.Error(errCountNegative)
				return
			}
			withCount = true
		case opt == "maxlen" && more:
			j++
			var ok bool
			if maxlen, ok = ParseInt(x.Args[j]); !ok || maxlen < 0 {
				x.W.Error(errMaxlenNegative)
				return
			}
		default:
			x.W.Error(ErrSyntax)
			return
		}
	}
	e, ok := x.ReadKind(x.Args[1], keyspace.KindList)
	if !ok {
		return
	}
	if e == nil {
		if withCount {
			x.W.Array(0)
		} else {
			x.W.Null()
		}
		return
	}
	l := listOf(e)
	n := l.Len()
	fromTail := rank < 0
	if fromTail {
		// For MinInt64 this wraps back to MinInt64, which then matches at
		// the first hit, as redis-server's arithmetic does.
		rank = -rank
	}
	elem := x.Args[2]
	var found []int64
	var matches int64
	for idx := 0; idx < n && (maxlen == 0 || int64(idx) < maxlen); idx++ {
		p := idx
		if fromTail {
			p = n - 1 - idx
		}
		if l.Index(p) != string(elem) {
			continue
		}
		matches++
		if matches < rank {
			continue
		}
		found = append(found, int64(p))
		if !withCount || (count != 0 && matches-rank+1 >= count) {
			break
		}
	}
	if !withCount {
		if len(found) == 0 {
			x.W.Null()
		} else {
			x.W.Int(found[0])
		}
		return
	}
	x.W.Array(len(found))
	for _, p := range found {
		x.W.Int(p)
	}
}

// parseWhere parses LEFT or RIGHT; front is true for LEFT.
func parseWhere(b []byte) (front, ok bool) {
	switch strings.ToLower(string(b)) {
	case "left":
		return true, true
	case "right":
		return false, true
	}
	return false, false
}

func cmdLMove(x *Ctx) {
	from, ok1 := parseWhere(x.Args[3])
	to, ok2 := parseWhere(x.Args[4])
	if !ok1 || !ok2 {
		x.W.Error(ErrSyntax)
		return
	}
	listMove(x, from, to)
}

func cmdRPopLPush(x *Ctx) { listMove(x, false, true) }

// listMove pops from Args[1] at one end and pushes onto Args[2] at the
// other (or the same) end, replying with the element.
func listMove(x *Ctx, fromFront, toFront bool) {
	src, dst := x.Args[1], x.Args[2]
	se, ok := x.WriteKind(src, keyspace.KindList)
	if !ok {
		return
	}
	if se == nil {
		x.W.Null()
		return
	}
	de, ok := x.WriteKind(dst, keyspace.KindList)
	if !ok {
		return
	}
	sl := listOf(se)
	var v string
	if fromFront {
		v = sl.PopFront()
	} else {
		v = sl.PopBack()
	}
	var dl *keyspace.List
	if de == nil {
		dl = keyspace.NewList()
	} else {
		dl = listOf(de)
	}
	if toFront {
		dl.PushFront(v)
	} else {
		dl.PushBack(v)
	}
	if de == nil {
		x.Put(dst, newListEntry(dl))
	} else {
		x.Modified(dst)
	}
	if de != se {
		listWritten(x, src, sl)
	}
	x.W.BulkString(v)
}

func cmdLMPop(x *Ctx) {
	args := x.Args
	numkeys, ok := ParseInt(args[1])
	if !ok || numkeys < 1 {
		x.W.Error(errNumkeys)
		return
	}
	if numkeys > int64(len(args)-3) {
		x.W.Error(ErrSyntax)
		return
	}
	whereIdx := 2 + int(numkeys)
	front, ok := parseWhere(args[whereIdx])
	if !ok {
		x.W.Error(ErrSyntax)
		return
	}
	var count int64 = 1
	seenCount := false
	for j := whereIdx + 1; j < len(args); j++ {
		if seenCount || !strings.EqualFold(string(args[j]), "count") || j+1 >= len(args) {
			x.W.Error(ErrSyntax)
			return
		}
		j++
		if count, ok = ParseInt(args[j]); !ok || count < 1 {
			x.W.Error(errCountPositive)
			return
		}
		seenCount = true
	}
	for _, key := range args[2:whereIdx] {
		e, ok := x.WriteKind(key, keyspace.KindList)
		if !ok {
			return
		}
		if e == nil {
			continue
		}
		// Propagated as LPOP/RPOP with the number popped.
		pop := rpopArg
		if front {
			pop = lpopArg
		}
		x.Propagate(pop, key, FormatInt(min(count, int64(listOf(e).Len()))))
		x.W.Array(2)
		x.W.Bulk(key)
		popN(x, key, e, front, count)
		return
	}
	x.W.NullArray()
}

var (
	lpopArg = []byte("LPOP")
	rpopArg = []byte("RPOP")
)
