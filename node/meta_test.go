package node

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

// allCommands returns every command and subcommand of the table by name.
func allCommands(t Table) []*Command {
	var out []*Command
	for _, c := range t.sortedCommands() {
		out = append(out, c)
		out = append(out, sortedSubs(c)...)
	}
	return out
}

// TestCommandMetaMatchesRedis compares, for every command slotd registers
// that redis-server 7.0 also has, the metadata COMMAND INFO reports. It
// catches registration mistakes in any command family.
func TestCommandMetaMatchesRedis(t *testing.T) {
	ref := startRedis(t).dial(t)
	tc := newTestServer(t)
	var slotdOnly []string
	for _, c := range allCommands(tc.s.cmds) {
		want := parseReply(t, ref.do(t, "COMMAND", "INFO", c.Name))
		if len(want.elems) != 1 || want.elems[0].kind == '_' {
			slotdOnly = append(slotdOnly, c.Name)
			continue
		}
		got := parseReply(t, tc.do("COMMAND", "INFO", c.Name))
		w, g := withoutNotes(want.elems[0]), got.elems[0]
		var diffs []string
		check := func(field string, gv, wv any) {
			if gs, ws := strings.TrimSpace(stringOf(gv)), strings.TrimSpace(stringOf(wv)); gs != ws {
				diffs = append(diffs, field+": slotd "+gs+", redis "+ws)
			}
		}
		check("arity", g.elems[1].num, w.elems[1].num)
		check("flags", g.elems[2].strs(), w.elems[2].strs())
		check("first key", g.elems[3].num, w.elems[3].num)
		check("last key", g.elems[4].num, w.elems[4].num)
		check("step", g.elems[5].num, w.elems[5].num)
		check("ACL categories", g.elems[6].strs(), w.elems[6].strs())
		check("tips", g.elems[7].strs(), w.elems[7].strs())
		check("key specs", g.elems[8].String(), w.elems[8].String())
		if len(diffs) > 0 {
			t.Errorf("COMMAND INFO %s differs from redis-server 7.0:\n  %s", c.Name, strings.Join(diffs, "\n  "))
		}
	}
	if len(slotdOnly) > 0 {
		t.Logf("commands redis-server 7.0 does not have: %v", slotdOnly)
	}
}

func stringOf(v any) string {
	switch v := v.(type) {
	case []string:
		return "[" + strings.Join(v, " ") + "]"
	case int64:
		return strings.TrimSpace(strings.Repeat(" ", 0) + itoa(v))
	case string:
		return v
	}
	return "?"
}

// sortSubcommands orders the subcommand entries of COMMAND INFO replies by
// name: redis-server lists them in hash table order.
func sortSubcommands(v rv) rv {
	if v.kind == '*' && len(v.elems) == 10 && v.elems[0].kind == '$' && v.elems[1].kind == ':' {
		subs := v.elems[9]
		subs.elems = slices.Clone(subs.elems)
		for i := range subs.elems {
			subs.elems[i] = sortSubcommands(subs.elems[i])
		}
		sort.Slice(subs.elems, func(i, j int) bool { return subs.elems[i].elems[0].str < subs.elems[j].elems[0].str })
		v.elems = slices.Clone(v.elems)
		v.elems[9] = subs
		return v
	}
	if v.kind == '*' {
		v.elems = slices.Clone(v.elems)
		for i := range v.elems {
			v.elems[i] = sortSubcommands(v.elems[i])
		}
	}
	return v
}

// TestCommandInfoShapes compares whole COMMAND INFO replies, types
// included, in RESP2 and RESP3.
func TestCommandInfoShapes(t *testing.T) {
	rs := startRedis(t)
	for _, proto := range []string{"2", "3"} {
		ref := rs.dial(t)
		tc := newTestServer(t)
		ref.do(t, "HELLO", proto)
		tc.do("HELLO", proto)
		for _, args := range [][]string{
			{"COMMAND", "INFO", "get", "nope", "set", "mset", "zunionstore", "watch", "multi", "exec", "ping"},
			{"COMMAND", "INFO", "command", "COMMAND|GETKEYS", "client|kill"},
			{"COMMAND", "INFO", "client"},
			{"COMMAND", "COUNT", "x"},
			{"COMMAND", "INFO"},
			{"COMMAND", "GETKEYS"},
			{"COMMAND", "GETKEYS", "nope", "a"},
			{"COMMAND", "GETKEYS", "ping", "a", "b"},
			{"COMMAND", "GETKEYS", "get", "a", "b"},
			{"COMMAND", "GETKEYS", "get", "a"},
			{"COMMAND", "GETKEYS", "mset", "a", "1", "b", "2"},
			{"COMMAND", "GETKEYSANDFLAGS", "set", "a", "b"},
			{"COMMAND", "GETKEYSANDFLAGS", "set", "a", "b", "GET"},
			{"COMMAND", "GETKEYSANDFLAGS", "watch", "a", "b"},
			{"COMMAND", "GETKEYS", "client", "kill", "a"},
			{"COMMAND", "LIST", "FILTERBY", "pattern", "CLIENT|K*"},
			{"COMMAND", "LIST", "FILTERBY", "aclcat", "TRANSACTION"},
			{"COMMAND", "LIST", "FILTERBY", "aclcat", "nope"},
			{"COMMAND", "LIST", "FILTERBY", "module", "x"},
			{"COMMAND", "LIST", "FILTERBY", "x", "y"},
			{"COMMAND", "LIST", "x"},
			{"COMMAND", "DOCS", "nope"},
			{"COMMAND", "HELP"},
			{"COMMAND", "NOPE"},
			{"CLIENT", "HELP"},
			{"CLIENT", "TRACKINGINFO"},
			{"CLIENT", "GETNAME"},
			{"CLIENT", "SETNAME", "a b"},
			{"CLIENT", "GETREDIR"},
			{"CLIENT", "LIST", "TYPE", "master"},
			{"CLIENT", "LIST", "ID", "0"},
			{"CLIENT", "KILL", "ID", "99999"},
			{"CLIENT", "KILL", "LADDR", "x", "SKIPME", "no"},
			{"CLIENT", "NOPE"},
		} {
			if missing := missingCommand(tc.s.cmds, args); missing != "" {
				t.Logf("skipping %q: slotd has no %s yet", args, missing)
				continue
			}
			rawWant, rawGot := ref.do(t, args...), tc.do(args...)
			want := sortSubcommands(withoutNotes(parseReply(t, rawWant)))
			got := sortSubcommands(parseReply(t, rawGot))
			if args[1] == "INFO" && len(args) == 2 {
				// Every command: only compare those slotd has.
				have := map[string]bool{}
				for _, e := range got.elems {
					have[e.elems[0].str] = true
				}
				var kept []rv
				for _, e := range want.elems {
					if have[e.elems[0].str] {
						kept = append(kept, e)
					}
				}
				sort.Slice(kept, func(i, j int) bool { return kept[i].elems[0].str < kept[j].elems[0].str })
				want.elems = kept
				// slotd's own commands (SLOTD.*) have no counterpart.
				inRedis := map[string]bool{}
				for _, e := range kept {
					inRedis[e.elems[0].str] = true
				}
				var ours []rv
				for _, e := range got.elems {
					if inRedis[e.elems[0].str] {
						ours = append(ours, e)
					}
				}
				got.elems = ours
			}
			if args[1] == "INFO" {
				// Subcommands slotd lacks are reported by TestCommandMetaMatchesRedis.
				got.elems = filterSubs(got.elems, want.elems)
				want.elems = filterSubs(want.elems, got.elems)
			}
			if args[1] == "HELP" {
				// slotd words its help itself: only the subcommand
				// syntax lines are facts to compare.
				want, got = helpSyntax(want), helpSyntax(got)
			}
			if args[1] == "LIST" && got.kind == '*' {
				want = commandListOf(want, got)
				got.elems = commandListOf(got, got).elems
			}
			if d := firstDiff(got, want, ""); d != "" {
				t.Errorf("RESP%s %q: %s", proto, args, d)
			}
		}
	}
}

// filterSubs keeps, in each entry of a, only the subcommands that the
// same entry of b also has.
func filterSubs(a, b []rv) []rv {
	out := slices.Clone(a)
	for i := range out {
		if i >= len(b) || out[i].kind != '*' || len(out[i].elems) != 10 || len(b[i].elems) != 10 {
			continue
		}
		have := map[string]bool{}
		for _, s := range b[i].elems[9].elems {
			have[s.elems[0].str] = true
		}
		e := out[i]
		e.elems = slices.Clone(e.elems)
		subs := e.elems[9]
		var kept []rv
		for _, s := range subs.elems {
			if have[s.elems[0].str] {
				kept = append(kept, s)
			}
		}
		subs.elems = kept
		e.elems[9] = subs
		out[i] = e
	}
	return out
}

// missingCommand names the command of args (COMMAND INFO names or a
// GETKEYS command line) that slotd does not register, if any.
func missingCommand(t Table, args []string) string {
	switch strings.ToUpper(args[1]) {
	case "INFO", "DOCS":
		for _, n := range args[2:] {
			if n != "nope" && t.lookupName(n) == nil {
				return n
			}
		}
	case "GETKEYS", "GETKEYSANDFLAGS":
		if len(args) > 2 && args[2] != "nope" && t.lookupName(args[2]) == nil {
			return args[2]
		}
	}
	return ""
}

// firstDiff describes the first place where got and want differ.
func firstDiff(got, want rv, path string) string {
	if got.kind != want.kind || got.str != want.str || got.num != want.num || len(got.elems) != len(want.elems) {
		return "at " + path + ":\n got  " + got.String() + "\n want " + want.String()
	}
	for i := range got.elems {
		if d := firstDiff(got.elems[i], want.elems[i], path+"/"+itoa(int64(i))); d != "" {
			return d
		}
	}
	return ""
}

// commandListOf keeps the names of want that got also lists, sorted, so that a
// COMMAND LIST reply can be compared when slotd has fewer commands.
// helpSyntax keeps the syntax lines of a HELP reply: the lines after the
// header that are not indented descriptions.
func helpSyntax(v rv) rv {
	if v.kind != '*' || len(v.elems) == 0 {
		return v
	}
	out := rv{kind: v.kind}
	for _, e := range v.elems[1:] {
		if !strings.HasPrefix(e.str, " ") {
			out.elems = append(out.elems, e)
		}
	}
	return out
}

func commandListOf(want, got rv) rv {
	have := map[string]bool{}
	for _, e := range got.elems {
		have[e.str] = true
	}
	var kept []rv
	for _, e := range want.elems {
		if have[e.str] {
			kept = append(kept, e)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].str < kept[j].str })
	want.elems = kept
	return want
}

// docsFacts drops the prose from a COMMAND DOCS entry (summary, history,
// replaced_by, argument summaries) and cuts complexity to its big-O head,
// leaving the facts slotd must report the same way.
func docsFacts(v rv) rv {
	if v.kind != '%' && v.kind != '*' && v.kind != '~' {
		return v
	}
	out := v
	out.elems = nil
	isMap := v.kind == '%' || (v.kind == '*' && len(v.elems)%2 == 0 && len(v.elems) > 0 && v.elems[0].kind == '$' &&
		(v.elems[0].str == "summary" || v.elems[0].str == "name" || v.elems[0].str == "since"))
	for i := 0; i < len(v.elems); i++ {
		if isMap && i%2 == 0 && i+1 < len(v.elems) {
			switch v.elems[i].str {
			case "summary", "history", "replaced_by":
				i++
				continue
			case "complexity":
				c := v.elems[i+1]
				if strings.HasPrefix(c.str, "O(") {
					c.str = c.str[:strings.Index(c.str, ")")+1]
				} else {
					c.str = "(prose)"
				}
				out.elems = append(out.elems, v.elems[i], c)
				i++
				continue
			}
		}
		out.elems = append(out.elems, docsFacts(v.elems[i]))
	}
	return out
}

// TestCommandDocsFacts compares COMMAND DOCS with redis-server's for every
// command slotd has, prose aside, in RESP2 and RESP3.
func TestCommandDocsFacts(t *testing.T) {
	rs := startRedis(t)
	for _, proto := range []string{"2", "3"} {
		ref := rs.dial(t)
		tc := newTestServer(t)
		ref.do(t, "HELLO", proto)
		tc.do("HELLO", proto)
		for _, c := range tc.s.cmds.sortedCommands() {
			want := parseReply(t, ref.do(t, "COMMAND", "DOCS", c.Name))
			if len(want.elems) == 0 {
				continue
			}
			got := parseReply(t, tc.do("COMMAND", "DOCS", c.Name))
			if len(got.elems) != 2 {
				t.Errorf("COMMAND DOCS %s: %s", c.Name, got)
				continue
			}
			if s := got.elems[1].elems[1]; s.str == "" || s.str == want.elems[1].elems[1].str {
				t.Errorf("COMMAND DOCS %s: summary %q must be slotd's own", c.Name, s.str)
			}
			g, w := docsFacts(got), docsFacts(want)
			g, w = sortDocSubs(g, w)
			if d := firstDiff(g, w, c.Name); d != "" {
				t.Errorf("RESP%s COMMAND DOCS %s", proto, d)
			}
		}
	}
}

// sortDocSubs sorts the subcommand maps of both replies by name and keeps
// only subcommands both have (DOCS lists them in hash table order).
func sortDocSubs(g, w rv) (rv, rv) {
	find := func(v rv) (int, bool) {
		doc := v.elems[1]
		for i := 0; i+1 < len(doc.elems); i += 2 {
			if doc.elems[i].str == "subcommands" {
				return i + 1, true
			}
		}
		return 0, false
	}
	gi, gok := find(g)
	wi, wok := find(w)
	if !gok || !wok {
		return g, w
	}
	pairs := func(v rv) map[string][2]rv {
		m := map[string][2]rv{}
		for i := 0; i+1 < len(v.elems); i += 2 {
			m[v.elems[i].str] = [2]rv{v.elems[i], v.elems[i+1]}
		}
		return m
	}
	gm, wm := pairs(g.elems[1].elems[gi]), pairs(w.elems[1].elems[wi])
	var names []string
	for n := range gm {
		if _, ok := wm[n]; ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	rebuild := func(v rv, idx int, m map[string][2]rv) rv {
		v.elems = slices.Clone(v.elems)
		doc := v.elems[1]
		doc.elems = slices.Clone(doc.elems)
		subs := doc.elems[idx]
		subs.elems = nil
		for _, n := range names {
			subs.elems = append(subs.elems, m[n][0], m[n][1])
		}
		doc.elems[idx] = subs
		v.elems[1] = doc
		return v
	}
	return rebuild(g, gi, gm), rebuild(w, wi, wm)
}
