package node

import (
	"strings"

	"github.com/slotd/slotd/node/keyspace"
)

// Flag is a command property, as COMMAND reports it.
type Flag uint32

// Command flags (the names COMMAND prints).
const (
	FlagWrite Flag = 1 << iota
	FlagReadonly
	FlagDenyOOM
	FlagModule
	FlagAdmin
	FlagPubSub
	FlagNoScript
	FlagBlocking
	FlagLoading
	FlagStale
	FlagSkipMonitor
	FlagSkipSlowlog
	FlagAsking
	FlagFast
	FlagNoAuth
	FlagMayReplicate
	FlagNoMandatoryKeys
	FlagNoMulti
	FlagAllowBusy
	FlagMovableKeys // derived: set when Keys is not nil
	FlagNoAsyncLoading
)

var flagNames = []string{"write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript",
	"blocking", "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth",
	"may_replicate", "no_mandatory_keys", "no_multi", "allow_busy", "movablekeys", "no_async_loading"}

// Names returns the flag names in COMMAND's order.
func (f Flag) Names() []string {
	var out []string
	for i, n := range flagNames {
		if f&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// LockMode says which slot locks the dispatcher takes for a command.
type LockMode uint8

const (
	// LockKeys locks the slots of the command's keys (none if it has none).
	LockKeys LockMode = iota
	// LockAll locks every slot: the command sees the whole keyspace.
	LockAll
	// LockSelf takes no lock before the call: the handler walks the slots
	// and locks each itself with Ctx.LockSlot (SCAN, RANDOMKEY), so that it
	// costs O(work) rather than 16384 lock operations. Where the command
	// runs inside a transaction (or anywhere but directly from the
	// dispatcher) the caller must hold every slot lock instead, and
	// Ctx.LockSlot does nothing.
	LockSelf
)

// HandlerFunc runs one command.
type HandlerFunc func(x *Ctx)

// Command is one entry of the command table, with the metadata COMMAND
// reports and the dispatcher uses to find keys.
type Command struct {
	Name  string // lower case; "config|get" for a subcommand
	Arity int    // as in COMMAND: negative means "at least -Arity"
	Flags Flag
	// FirstKey, LastKey, Step: COMMAND's legacy key positions.
	FirstKey, LastKey, Step int
	// Keys returns the positions of the keys in args for commands whose key
	// positions depend on their arguments (movable keys). It must tolerate
	// any args that passed the arity check.
	Keys     func(args [][]byte) []int
	ACL      []string // ACL categories without '@'
	Tips     []string
	KeySpecs []KeySpec
	Lock     LockMode
	// NeedsAll, when set, says from the arguments that this call touches
	// keys it cannot name in advance and must hold every slot lock.
	NeedsAll func(args [][]byte) bool
	Handler  HandlerFunc
	Subs     map[string]*Command
	// Group and Since feed COMMAND DOCS.
	Group   string
	Since   string
	Summary string

	Stats CommandStats
}

// KeySpec is one key specification of COMMAND's 7.0 format.
type KeySpec struct {
	Flags []string
	// BeginSearch: Index > 0 means "index"; Keyword != "" means "keyword".
	BeginIndex   int
	BeginKeyword string
	KeywordStart int
	// FindKeys: Range (LastKey, KeyStep, Limit) or KeyNum (KeyNumIdx, FirstKey, KeyStep).
	RangeLast   int
	KeyStep     int
	Limit       int
	KeyNum      bool
	KeyNumIdx   int
	KeyNumFirst int
	Unknown     bool
}

// CommandStats are the counters INFO commandstats prints.
type CommandStats struct {
	Calls         keyspace.Counter
	Usec          keyspace.Counter
	RejectedCalls keyspace.Counter
	FailedCalls   keyspace.Counter
}

// Table maps lower-case command names to commands.
type Table map[string]*Command

// Add registers a command; a name with '|' adds a subcommand to its parent.
func (t Table) Add(c *Command) {
	if c.Keys != nil {
		c.Flags |= FlagMovableKeys
	}
	if parent, sub, ok := strings.Cut(c.Name, "|"); ok {
		p := t[parent]
		if p == nil {
			panic("node: subcommand before its parent: " + c.Name)
		}
		if p.Subs == nil {
			p.Subs = map[string]*Command{}
		}
		p.Subs[sub] = c
		return
	}
	t[c.Name] = c
}

// lookup finds a command by name, ignoring case, without allocating for
// names up to 32 bytes.
func (t Table) lookup(name []byte) *Command {
	var buf [32]byte
	if len(name) > len(buf) {
		return t[strings.ToLower(string(name))]
	}
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return t[string(buf[:len(name)])]
}

// keyPositions appends the positions of the keys in args to dst.
func (c *Command) keyPositions(args [][]byte, dst []int) []int {
	if c.Keys != nil {
		return append(dst, c.Keys(args)...)
	}
	if c.FirstKey <= 0 {
		return dst
	}
	last := c.LastKey
	if last < 0 {
		last = len(args) + last
	}
	step := c.Step
	if step <= 0 {
		step = 1
	}
	for i := c.FirstKey; i <= last && i < len(args); i += step {
		dst = append(dst, i)
	}
	return dst
}
