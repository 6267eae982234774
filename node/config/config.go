package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/slotd/slotd/node/glob"
)

// Version is the redis-server version whose configuration this package
// mirrors; it appears in the fatal error block.
const Version = "7.0.15"

// Config is a node's configuration. Reads are lock-free (a copy-on-write
// map); writes are serialized.
type Config struct {
	mu       sync.Mutex // serializes writers
	vals     atomic.Pointer[map[string]string]
	byName   map[string]*Directive // primary names and aliases
	file     string
	onChange []func(name string)
	appliers map[string]func(old, new string) error
	// Deferred holds start-up directives that this package accepts but
	// other parts of the node act on (rename-command, user, loadmodule).
	Deferred [][]string
}

// New returns a configuration holding the defaults.
func New() *Config {
	c := &Config{byName: map[string]*Directive{}, appliers: map[string]func(string, string) error{}}
	vals := make(map[string]string, len(table))
	for i := range table {
		d := &table[i]
		c.byName[d.Name] = d
		if d.Alias != "" {
			c.byName[d.Alias] = d
		}
		vals[d.Name] = d.Default
	}
	if wd, err := os.Getwd(); err == nil {
		vals["dir"] = wd
	}
	c.vals.Store(&vals)
	return c
}

// Directives returns the table of known directives.
func Directives() []Directive { return table }

// Lookup returns the directive called name (or one of its aliases),
// ignoring case.
func (c *Config) Lookup(name string) *Directive { return c.byName[strings.ToLower(name)] }

// FatalError is a start-up configuration error, printed as redis-server
// prints it before exiting with status 1.
type FatalError struct {
	Line int    // 1-based; 0 when the error is not about one line
	Text string // the offending line, trimmed
	Msg  string
	// Plain errors (unreadable file) are printed as Msg alone.
	Plain bool
}

func (e *FatalError) Error() string {
	if e.Plain {
		return e.Msg
	}
	var sb strings.Builder
	sb.WriteString("\n*** FATAL CONFIG FILE ERROR (Redis " + Version + ") ***\n")
	if e.Line > 0 {
		fmt.Fprintf(&sb, "Reading the configuration file, at line %d\n>>> '%s'\n", e.Line, e.Text)
	}
	sb.WriteString(e.Msg)
	return sb.String()
}

// Load builds a configuration as redis-server does from its command line:
// an optional config file path first (an argument not starting with '-'),
// then "--name value..." options, appended to the file's text as lines.
func Load(args []string) (*Config, error) {
	c := New()
	text := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		data, err := os.ReadFile(args[0])
		if err != nil {
			return nil, &FatalError{Plain: true, Msg: fmt.Sprintf("Fatal error, can't open config file '%s': %s", args[0], strerror(err))}
		}
		if abs, err := filepath.Abs(args[0]); err == nil {
			c.file = abs
		} else {
			c.file = args[0]
		}
		text = string(data)
		args = args[1:]
	}
	text += "\n" + OptionsText(args)
	st := &loadState{seen: map[string]bool{}}
	if err := c.loadString(text, st); err != nil {
		return nil, err
	}
	if f := c.Str("logfile"); f != "" {
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, &FatalError{Msg: "Can't open the log file: " + strerror(err)}
		}
		fh.Close()
	}
	if c.Bool("cluster-enabled") && c.Str("replicaof") != "" {
		return nil, &FatalError{Msg: "replicaof directive not allowed in cluster mode"}
	}
	return c, nil
}

// OptionsText turns "--name value ..." command line arguments into
// configuration lines, with redis-server's rules: every "--name" starts a
// line, other arguments are quoted values, and a bare --save means save "".
func OptionsText(args []string) string {
	var sb strings.Builder
	lastHasArg := true
	for j, a := range args {
		if lastHasArg && strings.HasPrefix(a, "--") {
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(a[2:])
			sb.WriteByte(' ')
			words, _ := SplitArgs(a)
			if len(words) == 1 {
				lastHasArg = false
				nextIsOpt := j+1 < len(args) && strings.HasPrefix(args[j+1], "--")
				if strings.EqualFold(a, "--save") && (nextIsOpt || j == len(args)-1) {
					sb.WriteString(`""`)
					lastHasArg = nextIsOpt
				}
			} else {
				lastHasArg = true
			}
			continue
		}
		sb.WriteString(Repr(a))
		sb.WriteByte(' ')
		lastHasArg = true
	}
	return sb.String()
}

type loadState struct {
	seen map[string]bool // multi-line directives already met (save)
}

func (c *Config) loadString(text string, st *loadState) error {
	lines := strings.Split(text, "\n")
	for i, raw := range lines {
		line := strings.Trim(raw, " \t\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		fail := func(msg string) error { return &FatalError{Line: i + 1, Text: line, Msg: msg} }
		argv, ok := SplitArgs(line)
		if !ok {
			return fail("Unbalanced quotes in configuration line")
		}
		if len(argv) == 0 {
			continue
		}
		name := strings.ToLower(argv[0])
		if d := c.byName[name]; d != nil {
			if !d.MultiArg && len(argv) != 2 {
				return fail("wrong number of arguments")
			}
			first := !st.seen[d.Name]
			st.seen[d.Name] = true
			vals := *c.vals.Load()
			v, err := c.parse(d, argv[1:], vals[d.Name], true, first)
			if err != nil {
				return fail(err.Error())
			}
			c.store(map[string]string{d.Name: v})
			continue
		}
		switch {
		case (name == "list-max-ziplist-entries" || name == "list-max-ziplist-value" || name == "lua-replicate-commands") && len(argv) == 2:
			// Deprecated and ignored, as redis-server does.
		case name == "include" && len(argv) == 2:
			data, err := os.ReadFile(argv[1])
			if err != nil {
				return &FatalError{Plain: true, Msg: fmt.Sprintf("Fatal error, can't open config file '%s': %s", argv[1], strerror(err))}
			}
			if err := c.loadString(string(data), st); err != nil {
				return err
			}
		case name == "rename-command" && len(argv) == 3,
			name == "user" && len(argv) >= 2,
			name == "loadmodule" && len(argv) >= 2:
			c.Deferred = append(c.Deferred, argv)
		case strings.Contains(name, "."):
			if len(argv) != 2 {
				return fail("Module config specified without value")
			}
			c.Deferred = append(c.Deferred, argv)
		case name == "sentinel":
			if len(argv) != 1 {
				return fail("sentinel directive while not in sentinel mode")
			}
		default:
			return fail("Bad directive or wrong number of arguments")
		}
	}
	return nil
}

// parse validates args for d and returns the canonical value.
func (c *Config) parse(d *Directive, args []string, cur string, loading, first bool) (string, error) {
	if d.Kind == KindSpecial {
		return d.sp.set(c, args, cur, loading, first)
	}
	return normalize(d, args[0])
}

func normalize(d *Directive, val string) (string, error) {
	switch d.Kind {
	case KindBool:
		switch strings.ToLower(val) {
		case "yes":
			return "yes", nil
		case "no":
			return "no", nil
		}
		return "", errText("argument must be 'yes' or 'no'")
	case KindEnum:
		for _, e := range d.Enum {
			if strings.EqualFold(e, val) {
				return e, nil
			}
		}
		return "", errText("argument(s) must be one of the following: " + strings.Join(d.Enum, ", "))
	case KindInt:
		return normalizeInt(d, val)
	}
	if d.check != nil {
		if err := d.check(val); err != nil {
			return "", err
		}
	}
	return val, nil
}

func normalizeInt(d *Directive, val string) (string, error) {
	var n int64
	parsed := false
	if d.Num&NumMemory != 0 {
		if u, err := memtoull(val); err == nil {
			n, parsed = int64(u), true
		}
	}
	if !parsed && d.Num&NumPercent != 0 && len(val) > 1 && val[len(val)-1] == '%' {
		if p, ok := string2ll(val[:len(val)-1]); ok && p >= 0 {
			n, parsed = -p, true
		}
	}
	if !parsed && d.Num&NumOctal != 0 {
		if p, err := strconv.ParseInt(val, 8, 64); err == nil {
			n, parsed = p, true
		}
	}
	if !parsed && d.Num == 0 {
		n, parsed = string2ll(val)
	}
	if !parsed {
		switch {
		case d.Num&NumMemory != 0 && d.Num&NumPercent != 0:
			return "", errText("argument must be a memory or percent value")
		case d.Num&NumMemory != 0:
			return "", errText("argument must be a memory value")
		case d.Num&NumOctal != 0:
			return "", errText("argument couldn't be parsed as an octal number")
		}
		return "", errText("argument couldn't be parsed into an integer")
	}
	if d.Unsigned {
		umax := d.UMax
		if umax == 0 {
			umax = uint64(d.Max)
		}
		if uint64(n) > umax || uint64(n) < uint64(d.Min) {
			if d.Num&NumOctal != 0 {
				return "", fmt.Errorf("argument must be between %o and %o inclusive", d.Min, umax)
			}
			return "", fmt.Errorf("argument must be between %d and %d inclusive", uint64(d.Min), umax)
		}
		if d.Num&NumOctal != 0 {
			return strconv.FormatInt(n, 8), nil
		}
		return strconv.FormatUint(uint64(n), 10), nil
	}
	if d.Num&NumPercent != 0 && n < 0 {
		if n < d.Min {
			return "", fmt.Errorf("percentage argument must be less or equal to %d", -d.Min)
		}
		return strconv.FormatInt(-n, 10) + "%", nil
	}
	if n > d.Max || n < d.Min {
		return "", fmt.Errorf("argument must be between %d and %d inclusive", d.Min, d.Max)
	}
	return strconv.FormatInt(n, 10), nil
}

// string2ll is redis-server's strict integer parser: no spaces, no '+',
// no leading zeros.
func string2ll(s string) (int64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	if s == "0" {
		return 0, true
	}
	t := s
	if t[0] == '-' {
		t = t[1:]
	}
	if t == "" || t[0] < '1' || t[0] > '9' {
		return 0, false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// memtoull parses a memory amount: digits and an optional unit among b,
// k (1000), kb (1024), m, mb, g, gb, in any case.
func memtoull(s string) (uint64, error) {
	l := strings.ToLower(s)
	mul := uint64(1)
	for _, u := range []struct {
		suffix string
		mul    uint64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"b", 1}, {"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000}} {
		if strings.HasSuffix(l, u.suffix) {
			l = l[:len(l)-len(u.suffix)]
			mul = u.mul
			break
		}
	}
	if l == "" {
		return 0, nil
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return 0, errors.New("not a memory value")
		}
	}
	v, err := strconv.ParseUint(l, 10, 64)
	if err != nil {
		return 0, err
	}
	if v != 0 && mul > math.MaxUint64/v {
		return 0, errors.New("overflow")
	}
	return v * mul, nil
}

// ParseMemory parses a memory amount as redis.conf writes them (1k, 5mb).
func ParseMemory(s string) (int64, error) {
	v, err := memtoull(s)
	if err != nil || v > math.MaxInt64 {
		return 0, errors.New("invalid memory value")
	}
	return int64(v), nil
}

// FormatMemory writes bytes with the largest exact unit among gb, mb, kb,
// as CONFIG REWRITE does.
func FormatMemory(v uint64) string {
	switch {
	case v != 0 && v%(1<<30) == 0:
		return strconv.FormatUint(v>>30, 10) + "gb"
	case v != 0 && v%(1<<20) == 0:
		return strconv.FormatUint(v>>20, 10) + "mb"
	case v != 0 && v%(1<<10) == 0:
		return strconv.FormatUint(v>>10, 10) + "kb"
	}
	return strconv.FormatUint(v, 10)
}

// store publishes new values (a copy of the map with upd applied).
func (c *Config) store(upd map[string]string) {
	old := *c.vals.Load()
	nv := make(map[string]string, len(old))
	for k, v := range old {
		nv[k] = v
	}
	for k, v := range upd {
		nv[k] = v
	}
	c.vals.Store(&nv)
}

// SetError is a CONFIG SET failure; Error renders redis-server's reply.
type SetError struct {
	Arg     string
	Msg     string
	Unknown bool
}

func (e *SetError) Error() string {
	if e.Unknown {
		return "ERR Unknown option or number of arguments for CONFIG SET - '" + e.Arg + "'"
	}
	if e.Msg == "" {
		return "ERR CONFIG SET failed (possibly related to argument '" + e.Arg + "')"
	}
	return "ERR CONFIG SET failed (possibly related to argument '" + e.Arg + "') - " + e.Msg
}

// SetMulti applies CONFIG SET name value [name value ...] atomically:
// either every pair is valid and applied, or nothing changes. local tells
// whether the client is on a loopback connection (for protected configs).
func (c *Config) SetMulti(pairs []string, local bool) error {
	c.mu.Lock()
	var changed []string
	err := func() error {
		var ds []*Directive
		var firstErr *SetError
		for i := 0; i+1 < len(pairs); i += 2 {
			d := c.byName[strings.ToLower(pairs[i])]
			if d == nil {
				return &SetError{Arg: pairs[i], Unknown: true}
			}
			if firstErr != nil {
				continue
			}
			if d.Immutable {
				firstErr = &SetError{Arg: pairs[i], Msg: "can't set immutable config"}
				continue
			}
			if d.Protected && !c.allowProtected(local) {
				firstErr = &SetError{Arg: pairs[i], Msg: "can't set protected config"}
				continue
			}
			for _, p := range ds {
				if p == d {
					firstErr = &SetError{Arg: pairs[i], Msg: "duplicate parameter"}
				}
			}
			ds = append(ds, d)
		}
		if firstErr != nil {
			return firstErr
		}
		vals := *c.vals.Load()
		upd := map[string]string{}
		for i, d := range ds {
			raw := pairs[2*i+1]
			args := []string{raw}
			if d.MultiArg {
				args = strings.Split(raw, " ")
			}
			v, err := c.parse(d, args, vals[d.Name], false, false)
			if err != nil {
				return &SetError{Arg: d.Name, Msg: err.Error()}
			}
			if v != vals[d.Name] {
				upd[d.Name] = v
			}
		}
		if len(upd) == 0 {
			return nil
		}
		c.store(upd)
		for _, d := range ds {
			if _, ok := upd[d.Name]; !ok {
				continue
			}
			if ap := c.appliers[d.Name]; ap != nil {
				if err := ap(vals[d.Name], upd[d.Name]); err != nil {
					c.vals.Store(&vals)
					return &SetError{Arg: d.Name, Msg: err.Error()}
				}
			}
			changed = append(changed, d.Name)
		}
		return nil
	}()
	hooks := c.onChange
	c.mu.Unlock()
	if err != nil {
		return err
	}
	for _, name := range changed {
		for _, h := range hooks {
			h(name)
		}
	}
	return nil
}

func (c *Config) allowProtected(local bool) bool {
	switch c.Str("enable-protected-configs") {
	case "yes":
		return true
	case "local":
		return local
	}
	return false
}

// Set changes one directive at run time (CONFIG SET name value) from a
// local client.
func (c *Config) Set(name, val string) error { return c.SetMulti([]string{name, val}, true) }

// Match returns the (name, value) pairs CONFIG GET prints for patterns:
// exact names (aliases included, hidden ones too) and glob patterns over
// every visible name and alias, each name once, in table order.
func (c *Config) Match(patterns []string) [][2]string {
	vals := *c.vals.Load()
	var out [][2]string
	seen := map[string]bool{}
	add := func(name string, d *Directive) {
		if seen[name] {
			return
		}
		seen[name] = true
		out = append(out, [2]string{name, vals[d.Name]})
	}
	for _, p := range patterns {
		if !strings.ContainsAny(p, "[*?") {
			if d := c.byName[p]; d != nil {
				add(p, d)
			}
			continue
		}
		for i := range table {
			d := &table[i]
			if d.Hidden {
				continue
			}
			if glob.Match(p, d.Name, true) {
				add(d.Name, d)
			}
			if d.Alias != "" && glob.Match(p, d.Alias, true) {
				add(d.Alias, d)
			}
		}
	}
	return out
}

// Str returns a directive's canonical value ("" for unknown names).
func (c *Config) Str(name string) string { return (*c.vals.Load())[name] }

// Int returns an integer directive's value (percentages are negative, as
// redis-server stores them; values beyond int64 saturate).
func (c *Config) Int(name string) int64 {
	v := c.Str(name)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	if strings.HasSuffix(v, "%") {
		n, _ := strconv.ParseInt(v[:len(v)-1], 10, 64)
		return -n
	}
	if _, err := strconv.ParseUint(v, 10, 64); err == nil {
		return math.MaxInt64
	}
	return 0
}

// Bool returns a yes/no directive's value.
func (c *Config) Bool(name string) bool { return c.Str(name) == "yes" }

// OnChange registers fn to run after a directive changes at run time.
func (c *Config) OnChange(fn func(name string)) {
	c.mu.Lock()
	c.onChange = append(c.onChange, fn)
	c.mu.Unlock()
}

// SetApplier registers fn to put a new value of name into effect during
// CONFIG SET (rebinding a port, say). When fn fails the whole CONFIG SET
// is undone and fails with fn's message.
func (c *Config) SetApplier(name string, fn func(old, new string) error) {
	c.mu.Lock()
	c.appliers[name] = fn
	c.mu.Unlock()
}

// File returns the absolute path of the config file, or "".
func (c *Config) File() string { return c.file }
