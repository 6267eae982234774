package config

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Kind is how a directive's value is parsed.
type Kind uint8

// Directive kinds.
const (
	KindString Kind = iota
	KindBool
	KindInt
	KindMemory // accepts 1k, 1kb, 1m, 1mb, 1g, 1gb
	KindEnum
)

// Directive describes one configuration directive.
type Directive struct {
	Name      string
	Kind      Kind
	Default   string
	Enum      []string
	Min, Max  int64
	Immutable bool // cannot be changed by CONFIG SET
}

var table = []Directive{
	{Name: "port", Kind: KindInt, Default: "6379", Min: 0, Max: 65535, Immutable: true},
	{Name: "bind", Kind: KindString, Default: "* -::*"},
	{Name: "databases", Kind: KindInt, Default: "16", Min: 1, Max: 1 << 31, Immutable: true},
	{Name: "requirepass", Kind: KindString, Default: ""},
	{Name: "protected-mode", Kind: KindBool, Default: "yes"},
	{Name: "maxclients", Kind: KindInt, Default: "10000", Min: 1, Max: 1 << 31},
	{Name: "timeout", Kind: KindInt, Default: "0", Min: 0, Max: 1 << 31},
	{Name: "client-query-buffer-limit", Kind: KindMemory, Default: "1073741824", Min: 1024 * 1024, Max: 1 << 62},
	{Name: "client-output-buffer-limit", Kind: KindString, Default: "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"},
	{Name: "proto-max-bulk-len", Kind: KindMemory, Default: "536870912", Min: 1024 * 1024, Max: 1 << 62},
	{Name: "hz", Kind: KindInt, Default: "10", Min: 0, Max: 1 << 31},
	{Name: "cluster-enabled", Kind: KindBool, Default: "no", Immutable: true},
	{Name: "loglevel", Kind: KindEnum, Default: "notice", Enum: []string{"debug", "verbose", "notice", "warning", "nothing"}},
	{Name: "logfile", Kind: KindString, Default: "", Immutable: true},
	{Name: "dir", Kind: KindString, Default: ""},
	{Name: "maxmemory", Kind: KindMemory, Default: "0", Min: 0, Max: 1<<63 - 1},
	{Name: "maxmemory-policy", Kind: KindEnum, Default: "noeviction", Enum: []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}},
	{Name: "maxmemory-samples", Kind: KindInt, Default: "5", Min: 1, Max: 1<<31 - 1},
	{Name: "maxmemory-eviction-tenacity", Kind: KindInt, Default: "10", Min: 0, Max: 100},
	{Name: "lfu-log-factor", Kind: KindInt, Default: "10", Min: 0, Max: 1<<31 - 1},
	{Name: "lfu-decay-time", Kind: KindInt, Default: "1", Min: 0, Max: 1<<31 - 1},
	{Name: "enable-debug-command", Kind: KindEnum, Default: "no", Enum: []string{"no", "yes", "local"}, Immutable: true},
}

// Config is a node's configuration. It is safe for concurrent use.
type Config struct {
	mu       sync.RWMutex
	byName   map[string]*Directive
	vals     map[string]string
	file     string
	onChange []func(name string)
}

// New returns a configuration holding the defaults.
func New() *Config {
	c := &Config{byName: map[string]*Directive{}, vals: map[string]string{}}
	for i := range table {
		d := &table[i]
		c.byName[d.Name] = d
		c.vals[d.Name] = d.Default
	}
	return c
}

// Load builds a configuration as redis-server does from its command line:
// an optional config file path first, then "--name value..." pairs.
func Load(args []string) (*Config, error) {
	c := New()
	if len(args) > 0 && !strings.HasPrefix(args[0], "--") {
		c.file = args[0]
		data, err := os.ReadFile(args[0])
		if err != nil {
			return nil, fmt.Errorf("Fatal error, can't open config file '%s': %v", args[0], err)
		}
		if err := c.parse(string(data), args[0]); err != nil {
			return nil, err
		}
		args = args[1:]
	}
	var sb strings.Builder
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "--") {
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(a[2:])
			continue
		}
		sb.WriteByte(' ')
		sb.WriteString(quoteArg(a))
	}
	if err := c.parse(sb.String(), "(command line)"); err != nil {
		return nil, err
	}
	return c, nil
}

func quoteArg(a string) string {
	if a == "" || strings.ContainsAny(a, " \t\"'") {
		return strconv.Quote(a)
	}
	return a
}

func (c *Config) parse(text, source string) error {
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Fields(line)
		name := strings.ToLower(fields[0])
		val := strings.Join(fields[1:], " ")
		if err := c.set(name, unquote(val), true); err != nil {
			return fmt.Errorf("*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line %d\n>>> '%s'\n%v", n+1, line, err)
		}
	}
	_ = source
	return nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		if u, err := strconv.Unquote(`"` + s[1:len(s)-1] + `"`); err == nil {
			return u
		}
		return s[1 : len(s)-1]
	}
	return s
}

// ErrUnknown is returned for a directive this node does not know.
var ErrUnknown = errors.New("Bad directive or wrong number of arguments")

func (c *Config) set(name, val string, startup bool) error {
	d := c.byName[name]
	if d == nil {
		return ErrUnknown
	}
	if d.Immutable && !startup {
		return fmt.Errorf("can't set immutable config")
	}
	v, err := normalize(d, val)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.vals[name] = v
	hooks := c.onChange
	c.mu.Unlock()
	for _, h := range hooks {
		h(name)
	}
	return nil
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
		return "", fmt.Errorf("argument must be 'yes' or 'no'")
	case KindInt, KindMemory:
		n, err := ParseMemory(val)
		if err != nil || (d.Kind == KindInt && strings.ContainsAny(val, "kKmMgGbB")) {
			return "", fmt.Errorf("argument couldn't be parsed into an integer")
		}
		if n < d.Min || n > d.Max {
			return "", fmt.Errorf("argument must be between %d and %d inclusive", d.Min, d.Max)
		}
		return strconv.FormatInt(n, 10), nil
	case KindEnum:
		for _, e := range d.Enum {
			if strings.EqualFold(e, val) {
				return e, nil
			}
		}
		return "", fmt.Errorf("argument(s) must be one of the following: %s", strings.Join(d.Enum, ", "))
	}
	return val, nil
}

// ParseMemory parses an integer with an optional unit (k, kb, m, mb, g, gb).
func ParseMemory(s string) (int64, error) {
	l := strings.ToLower(s)
	mul := int64(1)
	for _, u := range []struct {
		suffix string
		mul    int64
	}{{"kb", 1024}, {"mb", 1024 * 1024}, {"gb", 1024 * 1024 * 1024}, {"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000}, {"b", 1}} {
		if strings.HasSuffix(l, u.suffix) {
			l = strings.TrimSuffix(l, u.suffix)
			mul = u.mul
			break
		}
	}
	n, err := strconv.ParseInt(l, 10, 64)
	if err != nil {
		return 0, err
	}
	return n * mul, nil
}

// Set changes a directive at run time (CONFIG SET).
func (c *Config) Set(name, val string) error { return c.set(strings.ToLower(name), val, false) }

// Str returns a directive's value.
func (c *Config) Str(name string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.vals[name]
}

// Int returns an integer or memory directive's value.
func (c *Config) Int(name string) int64 {
	n, _ := strconv.ParseInt(c.Str(name), 10, 64)
	return n
}

// Bool returns a yes/no directive's value.
func (c *Config) Bool(name string) bool { return c.Str(name) == "yes" }

// OnChange registers fn to run after any directive changes.
func (c *Config) OnChange(fn func(name string)) {
	c.mu.Lock()
	c.onChange = append(c.onChange, fn)
	c.mu.Unlock()
}

// File returns the path of the config file, or "".
func (c *Config) File() string { return c.file }
