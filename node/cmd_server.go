package node

import (
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"go.uber.org/zap"

	"github.com/slotd/slotd/node/config"
	"github.com/slotd/slotd/node/keyspace"
)

func registerServer(t Table) {
	adminACL := []string{"admin", "slow", "dangerous"}
	cfgFlags := FlagAdmin | FlagNoScript | FlagLoading | FlagStale
	t.Add(&Command{Name: "config", Arity: -2, ACL: []string{"slow"}, Handler: cmdContainerHelp})
	t.Add(&Command{Name: "config|get", Arity: -3, Flags: cfgFlags, ACL: adminACL, Handler: cmdConfigGet})
	t.Add(&Command{Name: "config|set", Arity: -4, Flags: cfgFlags, ACL: adminACL, Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Handler: cmdConfigSet})
	t.Add(&Command{Name: "config|resetstat", Arity: 2, Flags: cfgFlags, ACL: adminACL, Handler: cmdConfigResetStat})
	t.Add(&Command{Name: "config|rewrite", Arity: 2, Flags: cfgFlags, ACL: adminACL, Handler: cmdConfigRewrite})
	t.Add(&Command{Name: "config|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: []string{"slow"}, Handler: cmdConfigHelp})
	t.Add(&Command{Name: "time", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, ACL: []string{"fast"}, Tips: []string{"nondeterministic_output"}, Handler: cmdTime})
	// SAVE and BGSAVE take the slot locks themselves (writeSnapshot).
	t.Add(&Command{Name: "save", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading | FlagNoMulti, ACL: adminACL, Lock: LockSelf, Handler: cmdSave})
	t.Add(&Command{Name: "bgsave", Arity: -1, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading, ACL: adminACL, Lock: LockSelf, Handler: cmdBgsave})
	t.Add(&Command{Name: "lastsave", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, ACL: []string{"admin", "fast", "dangerous"}, Tips: []string{"nondeterministic_output"}, Handler: cmdLastSave})
	t.Add(&Command{Name: "shutdown", Arity: -1, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale | FlagNoMulti | FlagAllowBusy, ACL: adminACL, Handler: cmdShutdown})
	t.Add(&Command{Name: "debug", Arity: -2, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, ACL: adminACL, Lock: LockAll, Handler: cmdDebug})
	t.Add(&Command{Name: "bgrewriteaof", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading, ACL: adminACL, Lock: LockSelf, Handler: cmdBgrewriteaof})
	registerInfo(t)
	registerSlowlog(t)
	registerLatency(t)
}

func cmdConfigGet(x *Ctx) {
	pats := make([]string, len(x.Args)-2)
	for i, a := range x.Args[2:] {
		pats[i] = string(a)
	}
	pairs := x.S.Cfg.Match(pats)
	x.W.Map(len(pairs))
	for _, p := range pairs {
		x.W.BulkString(p[0])
		x.W.BulkString(p[1])
	}
}

func cmdConfigSet(x *Ctx) {
	if len(x.Args)%2 != 0 {
		x.W.Error(ErrSyntax)
		return
	}
	pairs := make([]string, len(x.Args)-2)
	for i, a := range x.Args[2:] {
		pairs[i] = string(a)
	}
	if err := x.S.Cfg.SetMulti(pairs, isLoopback(x.C.conn.RemoteAddr())); err != nil {
		x.W.Error(err.Error())
		return
	}
	x.W.OK()
}

func cmdConfigResetStat(x *Ctx) {
	x.S.resetStats()
	x.W.OK()
}

func cmdConfigRewrite(x *Ctx) {
	err := x.S.Cfg.Rewrite()
	switch {
	case err == nil:
		x.S.Log.Warn("CONFIG REWRITE executed with success.")
		x.W.OK()
	case errors.Is(err, config.ErrNoConfigFile):
		x.W.Error("ERR " + err.Error())
	default:
		x.S.Log.Warn("CONFIG REWRITE failed", zap.Error(err))
		x.W.Error("ERR Rewriting config file: " + configErrText(err))
	}
}

// configErrText renders an OS error as C's strerror words it.
func configErrText(err error) string {
	var errno interface{ Unwrap() error }
	for errors.As(err, &errno) {
		inner := errno.Unwrap()
		if inner == nil {
			break
		}
		err = inner
	}
	s := err.Error()
	if s != "" && 'a' <= s[0] && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

func cmdConfigHelp(x *Ctx) {
	writeHelp(x, "CONFIG",
		"GET <pattern>",
		"    Each parameter whose name matches the glob <pattern>, with its value.",
		"SET <directive> <value>",
		"    Changes <directive> to <value> at run time.",
		"RESETSTAT",
		"    Zeroes the counters that INFO shows.",
		"REWRITE",
		"    Writes the running configuration back to the config file.")
}

func cmdTime(x *Ctx) {
	now := time.Now()
	x.W.Array(2)
	x.W.BulkInt(now.Unix())
	x.W.BulkInt(int64(now.Nanosecond() / 1000))
}

func cmdLastSave(x *Ctx) { x.W.Int(x.S.ext.lastSave.Load()) }

func cmdShutdown(x *Ctx) {
	nosave, save, abort := false, false, false
	for _, a := range x.Args[1:] {
		switch strings.ToLower(string(a)) {
		case "nosave":
			nosave = true
		case "save":
			save = true
		case "now", "force":
		case "abort":
			abort = true
		default:
			x.W.Error(ErrSyntax)
			return
		}
	}
	if (abort && len(x.Args) > 2) || (nosave && save) {
		x.W.Error(ErrSyntax)
		return
	}
	if abort {
		// Shutdowns complete at once here: none is ever pending.
		x.W.Error("ERR No shutdown in progress.")
		return
	}
	doSave := save || (!nosave && x.S.Cfg.Str("save") != "")
	if h := x.S.ext.Shutdown; h != nil {
		if err := h(doSave); err != nil {
			x.W.Error("ERR Errors trying to SHUTDOWN. Check logs.")
			return
		}
	}
	x.S.Log.Warn("User requested shutdown...")
	// The reply never comes: the connection closes with the server. Close
	// waits for this connection's goroutine, so it runs on its own.
	x.C.Flags |= ClientCloseAfterReply
	go x.S.Close()
}

const errDebugNotAllowed = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."

func cmdDebug(x *Ctx) {
	switch x.S.ext.debugMode.Load() {
	case 0:
		x.W.Error(errDebugNotAllowed)
		return
	case 2:
		if !isLoopback(x.C.conn.RemoteAddr()) {
			x.W.Error(errDebugNotAllowed)
			return
		}
	}
	sub := strings.ToLower(x.Arg(1))
	n := len(x.Args)
	switch {
	case sub == "help" && n == 2:
		debugHelp(x)
	case sub == "sleep" && n == 3:
		f, err := strconv.ParseFloat(x.Arg(2), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0
		}
		if f > 0 {
			time.Sleep(time.Duration(f * float64(time.Second)))
		}
		x.W.OK()
	case sub == "set-active-expire" && n == 3:
		v, _ := strconv.Atoi(x.Arg(2))
		x.S.SetActiveExpire(v != 0)
		x.W.OK()
	case sub == "object" && n == 3:
		debugObject(x)
	case sub == "digest" && n == 2:
		d := x.S.digest()
		x.W.Simple(hex.EncodeToString(d[:]))
	case sub == "digest-value" && n >= 2:
		x.W.Array(n - 2)
		for _, k := range x.Args[2:] {
			// Logically expired keys count, as in redis-server.
			var d [20]byte
			if e := x.DB.Peek(x.Slot(k), k); e != nil {
				valueDigest(&d, e, e.HasTTL())
			}
			x.W.Simple(hex.EncodeToString(d[:]))
		}
	case sub == "populate" && n >= 3 && n <= 5:
		debugPopulate(x)
	case sub == "change-repl-id" && n == 2:
		r := &x.S.repl
		r.mu.Lock()
		r.ids.ID, r.ids.ID2, r.ids.Second = randomHex40(), zeroReplID, -1
		r.mu.Unlock()
		x.W.OK()
	case sub == "reload":
		debugReload(x)
	case sub == "log" && n == 3:
		x.S.Log.Warn("DEBUG LOG: " + x.Arg(2))
		x.W.OK()
	case sub == "error" && n == 3:
		x.W.Error(x.Arg(2))
	default:
		x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + sanitize(x.Arg(1), 128) + "'. Try DEBUG HELP.")
	}
}

func debugObject(x *Ctx) {
	k := x.Args[2]
	slot := x.Slot(k)
	e := x.DB.Peek(slot, k)
	if e == nil || (e.HasTTL() && x.DB.ExpireOf(slot, k, e) <= x.Now) {
		x.W.Error(ErrNoSuchKey)
		return
	}
	enc := "raw"
	if e.Kind == keyspace.KindString {
		enc = stringEncoding(e)
	} else if o, ok := e.Obj().(keyspace.Object); ok {
		enc = o.Encoding()
	}
	idle := int64(x.S.lruClock()) - int64(e.Access)
	if idle < 0 {
		idle += lruMask + 1
	}
	x.W.Simple("Value at:0x" + strconv.FormatUint(uint64(uintptrOf(e)), 16) + " refcount:1 encoding:" + enc +
		" serializedlength:" + strconv.Itoa(serializedLen(e)) + " lru:" + strconv.FormatUint(uint64(e.Access), 10) +
		" lru_seconds_idle:" + strconv.FormatInt(idle, 10))
}

// stringEncoding is OBJECT ENCODING's answer for a string value.
func stringEncoding(e *keyspace.Entry) string {
	if _, ok := ParseInt(e.Bytes()); ok && len(e.Bytes()) <= 20 && !e.Raw {
		return "int"
	}
	if len(e.Bytes()) <= 44 && !e.Raw {
		return "embstr"
	}
	return "raw"
}

// serializedLen approximates the RDB length of a value: for strings the
// integer or length-prefixed encoding redis-server would write.
func serializedLen(e *keyspace.Entry) int {
	if e.Kind != keyspace.KindString {
		return 1
	}
	if n, ok := ParseInt(e.Bytes()); ok && len(e.Bytes()) <= 20 {
		switch {
		case n >= math.MinInt8 && n <= math.MaxInt8:
			return 2
		case n >= math.MinInt16 && n <= math.MaxInt16:
			return 3
		case n >= math.MinInt32 && n <= math.MaxInt32:
			return 5
		}
	}
	l := len(e.Bytes())
	switch {
	case l < 1<<6:
		return l + 1
	case l < 1<<14:
		return l + 2
	case l <= math.MaxUint32:
		return l + 5
	}
	return l + 9
}

func debugPopulate(x *Ctx) {
	count, ok := ParseInt(x.Args[2])
	if !ok || count < 0 {
		x.W.Error("ERR value is out of range, must be positive")
		return
	}
	prefix := "key"
	if len(x.Args) >= 4 {
		prefix = x.Arg(3)
	}
	size := int64(-1)
	if len(x.Args) == 5 {
		sz, ok := ParseInt(x.Args[4])
		if !ok || sz < 0 {
			x.W.Error("ERR value is out of range, must be positive")
			return
		}
		size = sz
	}
	var key, val []byte
	for i := int64(0); i < count; i++ {
		key = append(append(key[:0], prefix...), ':')
		key = strconv.AppendInt(key, i, 10)
		if x.DB.Lookup(x.Slot(key), key, x.Now) != nil {
			continue
		}
		val = strconv.AppendInt(append(val[:0], "value:"...), i, 10)
		if size >= 0 {
			if int64(len(val)) > size {
				val = val[:size]
			} else {
				for int64(len(val)) < size {
					val = append(val, 0)
				}
			}
		}
		x.Put(key, keyspace.NewString(val))
	}
	x.W.OK()
}

func debugHelp(x *Ctx) {
	writeHelp(x, "DEBUG",
		"CHANGE-REPL-ID",
		"    Gives the node fresh replication IDs; meant only for replication tests.",
		"DIGEST",
		"    A hex checksum of the whole dataset (forty zeros when it is empty).",
		"DIGEST-VALUE <key> [<key> ...]",
		"    A hex checksum of each named key's value.",
		"ERROR <string>",
		"    Answers with <string> as an error reply, for testing client error paths.",
		"LOG <message>",
		"    Puts <message> in the node's log.",
		"OBJECT <key>",
		"    Internal details of the value at <key>.",
		"POPULATE <count> [<prefix>] [<size>]",
		"    Fills the dataset with <count> string keys <prefix>:<n> (prefix \"key\" when",
		"    omitted), values <size> bytes long. Nothing is replicated and the keys",
		"    may land in slots this node does not serve.",
		"SET-ACTIVE-EXPIRE <0|1>",
		"    0 stops the background sweep of expired keys, leaving expiry to reads;",
		"    1 turns it back on.",
		"SLEEP <seconds>",
		"    Blocks the node for <seconds>, fractions allowed.")
}

func uintptrOf(e *keyspace.Entry) uintptr { return uintptr(unsafe.Pointer(e)) }
