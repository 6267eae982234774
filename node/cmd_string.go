package node

import (
	"math"
	"strings"

	"github.com/slotd/slotd/node/keyspace"
)

func registerStrings(t Table) {
	t.Add(&Command{Name: "get", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"read", "string", "fast"}, Handler: cmdGet})
	t.Add(&Command{Name: "set", Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"write", "string", "slow"}, Handler: cmdSet})
}

func cmdGet(x *Ctx) {
	e, ok := x.ReadKind(x.Args[1], keyspace.KindString)
	if !ok {
		return
	}
	if e == nil {
		x.W.Null()
		return
	}
	x.W.Bulk(e.Str)
}

// Flags of SET-like option parsing.
const (
	setNX = 1 << iota
	setXX
	setGet
	setKeepTTL
	setEX
	setPX
	setEXAT
	setPXAT
)

// parseExpireArg parses the value of EX/PX/EXAT/PXAT into an absolute unix
// ms time. It replies and returns ok=false on error.
func parseExpireArg(x *Ctx, arg []byte, unit int, name string) (int64, bool) {
	n, ok := ParseInt(arg)
	if !ok {
		x.W.Error(ErrNotInt)
		return 0, false
	}
	if n <= 0 || (unit&(setEX|setEXAT) != 0 && n > math.MaxInt64/1000) {
		x.W.Error("ERR invalid expire time in '" + name + "' command")
		return 0, false
	}
	if unit&(setEX|setEXAT) != 0 {
		n *= 1000
	}
	if unit&(setEX|setPX) != 0 {
		if n > math.MaxInt64-x.Now {
			x.W.Error("ERR invalid expire time in '" + name + "' command")
			return 0, false
		}
		n += x.Now
	}
	return n, true
}

func cmdSet(x *Ctx) {
	args := x.Args
	flags := 0
	var expire int64
	for i := 3; i < len(args); i++ {
		opt := strings.ToLower(string(args[i]))
		hasNext := i+1 < len(args)
		switch {
		case opt == "nx" && flags&setXX == 0:
			flags |= setNX
		case opt == "xx" && flags&setNX == 0:
			flags |= setXX
		case opt == "get":
			flags |= setGet
		case opt == "keepttl" && flags&(setEX|setPX|setEXAT|setPXAT) == 0:
			flags |= setKeepTTL
		case (opt == "ex" || opt == "px" || opt == "exat" || opt == "pxat") && hasNext &&
			flags&(setKeepTTL|setEX|setPX|setEXAT|setPXAT) == 0:
			unit := map[string]int{"ex": setEX, "px": setPX, "exat": setEXAT, "pxat": setPXAT}[opt]
			flags |= unit
			i++
			var ok bool
			if expire, ok = parseExpireArg(x, args[i], unit, "set"); !ok {
				return
			}
		default:
			x.W.Error(ErrSyntax)
			return
		}
	}
	key, val := args[1], args[2]
	slot := x.Slot(key)
	old := x.DB.Lookup(slot, key, x.Now)
	if flags&setGet != 0 {
		if old != nil && old.Kind != keyspace.KindString {
			x.W.Error(ErrWrongType)
			return
		}
		if old == nil {
			x.W.Null()
		} else {
			x.W.Bulk(old.Str)
		}
	}
	if (flags&setNX != 0 && old != nil) || (flags&setXX != 0 && old == nil) {
		if flags&setGet == 0 {
			x.W.Null()
		}
		return
	}
	if expire != 0 && expire <= x.Now {
		// Already expired: the key is deleted, as redis-server does.
		x.Del(key)
		if flags&setGet == 0 {
			x.W.OK()
		}
		return
	}
	if old != nil && old.Kind == keyspace.KindString && cap(old.Str) >= len(val) && cap(old.Str) <= 2*len(val)+16 {
		// Overwrite in place: no allocation for the common SET of a
		// same-sized value.
		old.Str = append(old.Str[:0], val...)
		old.Raw = false
		old.Access = x.S.lruClock()
		if flags&setKeepTTL == 0 && (old.Expire != 0 || expire != 0) {
			x.DB.SetExpire(slot, key, old, expire)
		}
		x.Modified(key)
	} else {
		e := keyspace.NewString(val)
		if flags&setKeepTTL != 0 && old != nil {
			e.Expire = old.Expire
		} else {
			e.Expire = expire
		}
		x.Put(key, e)
	}
	if flags&setGet == 0 {
		x.W.OK()
	}
}
