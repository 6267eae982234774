package node

import (
	"math"
	"strings"
)

func registerExpire(t Table) {
	rw := []KeySpec{withFlags(specOne, "RW", "update")}
	ro := []KeySpec{withFlags(specOne, "RO", "access")}
	wacl := []string{"keyspace", "write", "fast"}
	racl := []string{"keyspace", "read", "fast"}
	nondet := []string{"nondeterministic_output"}
	for _, name := range []string{"expire", "pexpire", "expireat", "pexpireat"} {
		t.Add(&Command{Name: name, Arity: -3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: wacl, KeySpecs: rw, Handler: cmdExpire})
	}
	t.Add(&Command{Name: "ttl", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: racl, Tips: nondet, KeySpecs: ro, Handler: cmdTTL})
	t.Add(&Command{Name: "pttl", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: racl, Tips: nondet, KeySpecs: ro, Handler: cmdTTL})
	t.Add(&Command{Name: "expiretime", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: racl, KeySpecs: ro, Handler: cmdTTL})
	t.Add(&Command{Name: "pexpiretime", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: racl, KeySpecs: ro, Handler: cmdTTL})
	t.Add(&Command{Name: "persist", Arity: 2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: wacl, KeySpecs: rw, Handler: cmdPersist})
}

// EXPIRE option flags.
const (
	expNX = 1 << iota
	expXX
	expGT
	expLT
)

// cmdExpire serves EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT. Checks run in
// redis-server's order: options, then the time (its syntax and overflow),
// then the key.
func cmdExpire(x *Ctx) {
	name := x.Cmd.Name
	flags := 0
	for _, a := range x.Args[3:] {
		switch strings.ToLower(string(a)) {
		case "nx":
			flags |= expNX
		case "xx":
			flags |= expXX
		case "gt":
			flags |= expGT
		case "lt":
			flags |= expLT
		default:
			x.W.Error("ERR Unsupported option " + sanitize(string(a), 128))
			return
		}
	}
	if flags&expNX != 0 && flags&(expXX|expGT|expLT) != 0 {
		x.W.Error("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if flags&expGT != 0 && flags&expLT != 0 {
		x.W.Error("ERR GT and LT options at the same time are not compatible")
		return
	}
	when, ok := ParseInt(x.Args[2])
	if !ok {
		x.W.Error(ErrNotInt)
		return
	}
	invalid := "ERR invalid expire time in '" + name + "' command"
	if name == "expire" || name == "expireat" {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			x.W.Error(invalid)
			return
		}
		when *= 1000
	}
	if name == "expire" || name == "pexpire" {
		if (when > 0 && x.Now > math.MaxInt64-when) || (when < 0 && x.Now < math.MinInt64-when) {
			x.W.Error(invalid)
			return
		}
		when += x.Now
	}
	key := x.Args[1]
	e := x.Write(key)
	if e == nil {
		x.W.Int(0)
		return
	}
	cur := x.Expire(key, e)
	switch {
	case flags&expNX != 0 && cur != 0,
		flags&expXX != 0 && cur == 0,
		flags&expGT != 0 && (cur == 0 || when <= cur),
		flags&expLT != 0 && cur != 0 && when >= cur:
		x.W.Int(0)
		return
	}
	if x.timePassed(when) {
		x.Del(key)
		// Replicas and the AOF delete the key rather than replay a time
		// that has passed here but may not have there.
		x.Propagate(delArg, key)
		x.W.Int(1)
		return
	}
	x.SetExpire(key, e, when)
	x.Modified(key)
	if name != "pexpireat" {
		// A relative or seconds time is propagated as the absolute ms
		// time it came to, options kept, as redis-server does.
		args := make([][]byte, 0, len(x.Args))
		args = append(args, pexpireatArg, key, FormatInt(when))
		x.Propagate(append(args, x.Args[3:]...)...)
	}
	x.W.Int(1)
}

var pexpireatArg = []byte("PEXPIREAT")

// cmdTTL serves TTL, PTTL, EXPIRETIME and PEXPIRETIME: -2 for a missing
// key, -1 for one without a TTL. Seconds are rounded to the nearest.
func cmdTTL(x *Ctx) {
	e := x.peek(x.Args[1])
	if e == nil {
		x.W.Int(-2)
		return
	}
	exp := x.Expire(x.Args[1], e)
	if exp == 0 {
		x.W.Int(-1)
		return
	}
	switch x.Cmd.Name {
	case "ttl":
		x.W.Int((max(exp-x.Now, 0) + 500) / 1000)
	case "pttl":
		x.W.Int(max(exp-x.Now, 0))
	case "expiretime":
		// Unsigned, so that the largest times round as redis-server's do.
		x.W.Int(int64((uint64(exp) + 500) / 1000))
	default:
		x.W.Int(exp)
	}
}

func cmdPersist(x *Ctx) {
	key := x.Args[1]
	e := x.Write(key)
	if e == nil || !e.HasTTL() {
		x.W.Int(0)
		return
	}
	x.SetExpire(key, e, 0)
	x.Modified(key)
	x.W.Int(1)
}
