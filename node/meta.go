package node

// metaEntry is what redis-server 7.0 reports about one command: the facts
// COMMAND INFO prints and the documentation facts of COMMAND DOCS. The
// table in meta_gen.go is produced by internal/cmdmetagen from a running
// redis-server; the prose (summaries) is slotd's own, in meta_summaries.go.
type metaEntry struct {
	Arity                   int
	Flags                   Flag
	FirstKey, LastKey, Step int
	ACL                     []string
	Tips                    []string
	KeySpecs                []KeySpec
	Group, Since            string
	// Complexity is the big-O part of the real server's text, or a short
	// phrase of slotd's own where the real text is prose.
	Complexity      string
	DocFlags        []string
	DeprecatedSince string
	Args            []*DocArg
}

// DocArg is one argument of a command as COMMAND DOCS describes it.
type DocArg struct {
	Name, Type, DisplayText, Token string
	// KeySpecIndex is the index of the argument's key spec plus one; 0
	// means the argument is not a key.
	KeySpecIndex    int
	Since           string
	Flags           []string
	DeprecatedSince string
	Value           string
	Args            []*DocArg
}

// applyMeta fills the documentation data (key specs, tips, group, since,
// summary) of every registered command from redisMeta. Registrations keep
// what they set themselves; arity, flags and key positions are never
// overridden here (the conformance test checks them instead).
func applyMeta(t Table) {
	for _, c := range t {
		applyMetaTo(c)
		for _, s := range c.Subs {
			applyMetaTo(s)
		}
	}
}

func applyMetaTo(c *Command) {
	if c.Summary == "" {
		c.Summary = summaries[c.Name]
	}
	m := redisMeta[c.Name]
	if m == nil {
		return
	}
	if c.Tips == nil {
		c.Tips = m.Tips
	}
	if c.KeySpecs == nil {
		c.KeySpecs = m.KeySpecs
	}
	if c.Group == "" {
		c.Group = m.Group
	}
	if c.Since == "" {
		c.Since = m.Since
	}
}
