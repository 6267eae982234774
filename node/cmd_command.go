package node

import (
	"slices"
	"sort"
	"strings"

	"github.com/slotd/slotd/node/glob"
)

func registerCommandCmd(t Table) {
	t.Add(metaCommand("command", cmdCommand))
	for _, sub := range []struct {
		name string
		h    HandlerFunc
	}{
		{"count", cmdCommandCount},
		{"docs", cmdCommandDocs},
		{"getkeys", cmdCommandGetKeys},
		{"getkeysandflags", cmdCommandGetKeys},
		{"help", cmdCommandHelp},
		{"info", cmdCommandInfo},
		{"list", cmdCommandList},
	} {
		t.Add(metaCommand("command|"+sub.name, sub.h))
	}
}

// metaCommand builds a command entry from the facts redis-server 7.0
// reports for it, so that slotd's own commands cannot drift from them.
func metaCommand(name string, h HandlerFunc) *Command {
	m := redisMeta[name]
	if m == nil {
		panic("node: no metadata for " + name)
	}
	return &Command{Name: name, Arity: m.Arity, Flags: m.Flags &^ FlagMovableKeys,
		FirstKey: m.FirstKey, LastKey: m.LastKey, Step: m.Step, ACL: m.ACL, Handler: h}
}

// flagOrder is the order in which COMMAND prints flags. may_replicate is
// never printed by redis-server 7.0.
var flagOrder = []struct {
	f    Flag
	name string
}{
	{FlagWrite, "write"}, {FlagReadonly, "readonly"}, {FlagDenyOOM, "denyoom"}, {FlagModule, "module"},
	{FlagAdmin, "admin"}, {FlagPubSub, "pubsub"}, {FlagNoScript, "noscript"}, {FlagBlocking, "blocking"},
	{FlagLoading, "loading"}, {FlagStale, "stale"}, {FlagSkipMonitor, "skip_monitor"},
	{FlagSkipSlowlog, "skip_slowlog"}, {FlagAsking, "asking"}, {FlagFast, "fast"}, {FlagNoAuth, "no_auth"},
	{FlagNoMandatoryKeys, "no_mandatory_keys"}, {FlagNoAsyncLoading, "no_async_loading"},
	{FlagNoMulti, "no_multi"}, {FlagMovableKeys, "movablekeys"}, {FlagAllowBusy, "allow_busy"},
}

// commandFlagNames returns the flags COMMAND shows, in its order.
func commandFlagNames(f Flag) []string {
	var out []string
	for _, e := range flagOrder {
		if f&e.f != 0 {
			out = append(out, e.name)
		}
	}
	return out
}

// sortedCommands returns the table's top-level commands by name.
func (t Table) sortedCommands() []*Command {
	out := make([]*Command, 0, len(t))
	for _, c := range t {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func sortedSubs(c *Command) []*Command {
	out := make([]*Command, 0, len(c.Subs))
	for _, s := range c.Subs {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// lookupFull finds a command and, when it has subcommands and args names
// one, the subcommand.
func (t Table) lookupFull(args [][]byte) *Command {
	c := t.lookup(args[0])
	if c == nil || c.Subs == nil || len(args) < 2 {
		return c
	}
	return c.Subs[strings.ToLower(string(args[1]))]
}

// lookupName finds "name" or "parent|sub", ignoring case.
func (t Table) lookupName(name string) *Command {
	name = strings.ToLower(name)
	parent, sub, ok := strings.Cut(name, "|")
	c := t[parent]
	if !ok || c == nil {
		return c
	}
	return c.Subs[sub]
}

func cmdCommand(x *Ctx) {
	cmds := x.S.cmds.sortedCommands()
	x.W.Array(len(cmds))
	for _, c := range cmds {
		writeCommandInfo(x, c)
	}
}

func cmdCommandCount(x *Ctx) { x.W.Int(int64(len(x.S.cmds))) }

func cmdCommandInfo(x *Ctx) {
	if len(x.Args) == 2 {
		cmdCommand(x)
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, a := range x.Args[2:] {
		if c := x.S.cmds.lookupName(string(a)); c != nil {
			writeCommandInfo(x, c)
		} else {
			x.W.Null()
		}
	}
}

func writeCommandInfo(x *Ctx, c *Command) {
	w := x.W
	w.Array(10)
	w.BulkString(c.Name)
	w.Int(int64(c.Arity))
	flags := commandFlagNames(c.Flags)
	w.Set(len(flags))
	for _, f := range flags {
		w.Simple(f)
	}
	w.Int(int64(c.FirstKey))
	w.Int(int64(c.LastKey))
	w.Int(int64(c.Step))
	w.Set(len(c.ACL))
	for _, a := range c.ACL {
		w.Simple("@" + a)
	}
	w.Set(len(c.Tips))
	for _, tip := range c.Tips {
		w.BulkString(tip)
	}
	w.Set(len(c.KeySpecs))
	for i := range c.KeySpecs {
		writeKeySpec(x, &c.KeySpecs[i])
	}
	if c.Subs == nil {
		w.Set(0)
		return
	}
	w.Array(len(c.Subs))
	for _, s := range sortedSubs(c) {
		writeCommandInfo(x, s)
	}
}

func writeKeySpec(x *Ctx, ks *KeySpec) {
	w := x.W
	w.Map(3)
	w.BulkString("flags")
	w.Set(len(ks.Flags))
	for _, f := range ks.Flags {
		w.Simple(f)
	}
	w.BulkString("begin_search")
	w.Map(2)
	w.BulkString("type")
	switch {
	case ks.Unknown:
		w.BulkString("unknown")
		w.BulkString("spec")
		w.Map(0)
	case ks.BeginKeyword != "":
		w.BulkString("keyword")
		w.BulkString("spec")
		w.Map(2)
		w.BulkString("keyword")
		w.BulkString(ks.BeginKeyword)
		w.BulkString("startfrom")
		w.Int(int64(ks.KeywordStart))
	default:
		w.BulkString("index")
		w.BulkString("spec")
		w.Map(1)
		w.BulkString("index")
		w.Int(int64(ks.BeginIndex))
	}
	w.BulkString("find_keys")
	w.Map(2)
	w.BulkString("type")
	switch {
	case ks.Unknown:
		w.BulkString("unknown")
		w.BulkString("spec")
		w.Map(0)
	case ks.KeyNum:
		w.BulkString("keynum")
		w.BulkString("spec")
		w.Map(3)
		w.BulkString("keynumidx")
		w.Int(int64(ks.KeyNumIdx))
		w.BulkString("firstkey")
		w.Int(int64(ks.KeyNumFirst))
		w.BulkString("keystep")
		w.Int(int64(ks.KeyStep))
	default:
		w.BulkString("range")
		w.BulkString("spec")
		w.Map(3)
		w.BulkString("lastkey")
		w.Int(int64(ks.RangeLast))
		w.BulkString("keystep")
		w.Int(int64(ks.KeyStep))
		w.BulkString("limit")
		w.Int(int64(ks.Limit))
	}
}

func cmdCommandDocs(x *Ctx) {
	var cmds []*Command
	if len(x.Args) == 2 {
		cmds = x.S.cmds.sortedCommands()
	} else {
		for _, a := range x.Args[2:] {
			if c := x.S.cmds.lookupName(string(a)); c != nil {
				cmds = append(cmds, c)
			}
		}
	}
	x.W.Map(len(cmds))
	for _, c := range cmds {
		x.W.BulkString(c.Name)
		writeDocs(x, c)
	}
}

func writeDocs(x *Ctx, c *Command) {
	w := x.W
	m := redisMeta[c.Name]
	if m == nil {
		m = &metaEntry{}
	}
	n := 0
	for _, present := range []bool{c.Summary != "", c.Since != "", c.Group != "", m.Complexity != "",
		len(m.DocFlags) > 0, m.DeprecatedSince != "", len(m.Args) > 0, c.Subs != nil} {
		if present {
			n++
		}
	}
	w.Map(n)
	pair := func(k, v string) {
		if v != "" {
			w.BulkString(k)
			w.BulkString(v)
		}
	}
	pair("summary", c.Summary)
	pair("since", c.Since)
	pair("group", c.Group)
	pair("complexity", m.Complexity)
	if len(m.DocFlags) > 0 {
		w.BulkString("doc_flags")
		w.Set(len(m.DocFlags))
		for _, f := range m.DocFlags {
			w.Simple(f)
		}
	}
	pair("deprecated_since", m.DeprecatedSince)
	if len(m.Args) > 0 {
		w.BulkString("arguments")
		writeDocArgs(x, m.Args)
	}
	if c.Subs != nil {
		w.BulkString("subcommands")
		w.Map(len(c.Subs))
		for _, s := range sortedSubs(c) {
			w.BulkString(s.Name)
			writeDocs(x, s)
		}
	}
}

func writeDocArgs(x *Ctx, args []*DocArg) {
	w := x.W
	w.Array(len(args))
	for _, a := range args {
		// A pure token always has one, even the empty string (MIGRATE's
		// "" in place of a key).
		hasToken := a.Token != "" || a.Type == "pure-token"
		n := 2
		for _, present := range []bool{a.DisplayText != "", a.KeySpecIndex > 0, hasToken, a.Since != "",
			len(a.Flags) > 0, a.DeprecatedSince != "", a.Value != "", len(a.Args) > 0} {
			if present {
				n++
			}
		}
		w.Map(n)
		w.BulkString("name")
		w.BulkString(a.Name)
		w.BulkString("type")
		w.BulkString(a.Type)
		if a.DisplayText != "" {
			w.BulkString("display_text")
			w.BulkString(a.DisplayText)
		}
		if a.KeySpecIndex > 0 {
			w.BulkString("key_spec_index")
			w.Int(int64(a.KeySpecIndex - 1))
		}
		if hasToken {
			w.BulkString("token")
			w.BulkString(a.Token)
		}
		if a.Since != "" {
			w.BulkString("since")
			w.BulkString(a.Since)
		}
		if len(a.Flags) > 0 {
			w.BulkString("flags")
			w.Set(len(a.Flags))
			for _, f := range a.Flags {
				w.Simple(f)
			}
		}
		if a.DeprecatedSince != "" {
			w.BulkString("deprecated_since")
			w.BulkString(a.DeprecatedSince)
		}
		if a.Value != "" {
			w.BulkString("value")
			w.BulkString(a.Value)
		}
		if len(a.Args) > 0 {
			w.BulkString("arguments")
			writeDocArgs(x, a.Args)
		}
	}
}

func cmdCommandList(x *Ctx) {
	var keep func(c *Command) bool
	switch {
	case len(x.Args) == 2:
		keep = func(*Command) bool { return true }
	case len(x.Args) == 5 && strings.EqualFold(x.Arg(2), "filterby"):
		val := x.Arg(4)
		switch strings.ToLower(x.Arg(3)) {
		case "module":
			keep = func(*Command) bool { return false }
		case "aclcat":
			val = strings.ToLower(val)
			keep = func(c *Command) bool { return slices.Contains(c.ACL, val) }
		case "pattern":
			keep = func(c *Command) bool { return glob.Match(val, c.Name, true) }
		}
	}
	if keep == nil {
		x.W.Error(ErrSyntax)
		return
	}
	var names []string
	for _, c := range x.S.cmds.sortedCommands() {
		if keep(c) {
			names = append(names, c.Name)
		}
		for _, s := range sortedSubs(c) {
			if keep(s) {
				names = append(names, s.Name)
			}
		}
	}
	x.W.Array(len(names))
	for _, n := range names {
		x.W.BulkString(n)
	}
}

// keyRef is a key position found by COMMAND GETKEYS and its key spec flags.
type keyRef struct {
	pos   int
	flags []string
}

// specKeys finds keys with the command's key specs, as redis-server does
// before it falls back to a command's own key finder. ok is false when a
// spec is unknown, incomplete or does not fit the arguments.
func specKeys(c *Command, args [][]byte) (refs []keyRef, ok bool) {
	if len(c.KeySpecs) == 0 {
		return nil, false
	}
	argc := len(args)
	for i := range c.KeySpecs {
		ks := &c.KeySpecs[i]
		if ks.Unknown || slices.Contains(ks.Flags, "variable_flags") {
			return nil, false
		}
		first := 0
		if ks.BeginKeyword != "" {
			start, end := ks.KeywordStart, argc-1
			if start <= 0 {
				start, end = argc+ks.KeywordStart, 0
			}
			for j := start; ; {
				if j >= argc || j < 1 {
					break
				}
				if strings.EqualFold(string(args[j]), ks.BeginKeyword) {
					first = j + 1
					break
				}
				if j == end {
					break
				}
				if start <= end {
					j++
				} else {
					j--
				}
			}
			if first == 0 {
				continue
			}
		} else {
			first = ks.BeginIndex
		}
		var last, step int
		if ks.KeyNum {
			step = ks.KeyStep
			if ks.KeyNumIdx >= argc-first {
				return nil, false
			}
			n, isNum := ParseInt(args[first+ks.KeyNumIdx])
			if !isNum || n < 0 || n > int64(argc) {
				return nil, false
			}
			first += ks.KeyNumFirst
			last = first + int(n) - 1
		} else {
			step = ks.KeyStep
			switch {
			case ks.RangeLast >= 0:
				last = first + ks.RangeLast
			case ks.Limit == 0:
				last = argc + ks.RangeLast
			default:
				last = first + (argc-first)/ks.Limit + ks.RangeLast
			}
		}
		if last >= argc || last < first || first >= argc {
			return nil, false
		}
		if step <= 0 {
			step = 1
		}
		for j := first; j <= last; j += step {
			refs = append(refs, keyRef{pos: j, flags: ks.Flags})
		}
		if slices.Contains(ks.Flags, "incomplete") {
			return nil, false
		}
	}
	return refs, true
}

// commandKeys returns the keys of a full command for COMMAND GETKEYS.
func commandKeys(c *Command, args [][]byte) []keyRef {
	if refs, ok := specKeys(c, args); ok {
		return refs
	}
	var pos []int
	switch {
	case c.Keys != nil:
		pos = c.Keys(args)
	case len(c.KeySpecs) == 0 || hasVariableFlags(c):
		pos = c.keyPositions(args, nil)
	}
	refs := make([]keyRef, 0, len(pos))
	for _, p := range pos {
		if p <= 0 || p >= len(args) {
			return nil
		}
		refs = append(refs, keyRef{pos: p, flags: specFlagsFor(c, args, p)})
	}
	return refs
}

func hasVariableFlags(c *Command) bool {
	for i := range c.KeySpecs {
		if slices.Contains(c.KeySpecs[i].Flags, "variable_flags") {
			return true
		}
	}
	return false
}

// specFlagsFor guesses the key spec flags of a key found by a command's own
// key finder: the spec that begins at its position, else the last
// unknown spec (a key found by scanning options), else the first spec.
func specFlagsFor(c *Command, args [][]byte, pos int) []string {
	if len(c.KeySpecs) == 0 {
		return nil
	}
	if c.Name == "set" {
		// SET's flags depend on GET: without it the old value is not read.
		for _, a := range args[3:] {
			if strings.EqualFold(string(a), "get") {
				return []string{"RW", "access", "update"}
			}
		}
		return []string{"OW", "update"}
	}
	var unknown []string
	for i := range c.KeySpecs {
		ks := &c.KeySpecs[i]
		if ks.Unknown {
			unknown = ks.Flags
			continue
		}
		if ks.BeginIndex == pos {
			return withoutVariable(ks.Flags)
		}
	}
	if unknown != nil {
		return unknown
	}
	return withoutVariable(c.KeySpecs[0].Flags)
}

func withoutVariable(flags []string) []string {
	if !slices.Contains(flags, "variable_flags") {
		return flags
	}
	out := make([]string, 0, len(flags))
	for _, f := range flags {
		if f != "variable_flags" {
			out = append(out, f)
		}
	}
	return out
}

func cmdCommandGetKeys(x *Ctx) {
	args := x.Args[2:]
	withFlags := x.Cmd.Name == "command|getkeysandflags"
	c := x.S.cmds.lookupFull(args)
	if c == nil {
		x.W.Error("ERR Invalid command specified")
		return
	}
	if len(c.KeySpecs) == 0 && c.Keys == nil && c.FirstKey <= 0 {
		x.W.Error("ERR The command has no key arguments")
		return
	}
	if (c.Arity > 0 && len(args) != c.Arity) || len(args) < -c.Arity {
		x.W.Error("ERR Invalid number of arguments specified for command")
		return
	}
	refs := commandKeys(c, args)
	if len(refs) == 0 && c.Flags&FlagNoMandatoryKeys == 0 {
		x.W.Error("ERR Invalid arguments specified for command")
		return
	}
	x.W.Array(len(refs))
	for _, r := range refs {
		if !withFlags {
			x.W.Bulk(args[r.pos])
			continue
		}
		x.W.Array(2)
		x.W.Bulk(args[r.pos])
		x.W.Set(len(r.flags))
		for _, f := range r.flags {
			x.W.Simple(f)
		}
	}
}

var commandHelp = []string{
	"(no subcommand)",
	"    Every command's details (name, arity, flags, key positions, ...).",
	"COUNT",
	"    How many commands this node knows.",
	"LIST",
	"    The names of all the commands this node knows.",
	"INFO [<command-name> ...]",
	"    The details of the named commands; of every command when none is named.",
	"DOCS [<command-name> ...]",
	"    The documentation entries (summary, since, group, arguments, ...) of the",
	"    named commands; of every command when none is named.",
	"GETKEYS <full-command>",
	"    The keys that <full-command> would touch.",
	"GETKEYSANDFLAGS <full-command>",
	"    The keys that <full-command> would touch, each with its access flags.",
}

func cmdCommandHelp(x *Ctx) { writeHelp(x, "COMMAND", commandHelp...) }
