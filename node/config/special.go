package config

import (
	"errors"
	"os"
	"strconv"
	"strings"
)

// special is the parser and printer of a directive whose value is not a
// single scalar.
type special struct {
	// set validates args (the words after the name) and returns the new
	// canonical value. loading is true while reading the start-up
	// configuration; first is true for the first line of this directive
	// in it (save lines accumulate after the first).
	set func(c *Config, args []string, cur string, loading, first bool) (string, error)
	// rewrite returns the lines CONFIG REWRITE writes and, for each,
	// whether it must be written even when the file does not mention the
	// directive.
	rewrite func(d *Directive, val string) (lines []string, force []bool)
}

func errText(s string) error { return errors.New(s) }

var spDir = &special{
	set: func(c *Config, args []string, cur string, loading, first bool) (string, error) {
		if len(args) != 1 {
			return "", errText("wrong number of arguments")
		}
		if err := os.Chdir(args[0]); err != nil {
			return "", errText(strerror(err))
		}
		wd, err := os.Getwd()
		if err != nil {
			return "", errText(strerror(err))
		}
		return wd, nil
	},
	rewrite: func(d *Directive, val string) ([]string, []bool) {
		return []string{d.Name + " " + Repr(val)}, []bool{true}
	},
}

// strerror renders an OS error the way C's strerror words it.
func strerror(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	s := err.Error()
	if s != "" && 'a' <= s[0] && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

var spSave = &special{
	set: func(c *Config, args []string, cur string, loading, first bool) (string, error) {
		if len(args) == 1 && args[0] == "" {
			args = nil
		}
		if len(args)%2 != 0 {
			return "", errText("Invalid save parameters")
		}
		for i, a := range args {
			v, ok := strtoll(a)
			if !ok || (i%2 == 0 && v < 1) || (i%2 == 1 && v < 0) {
				return "", errText("Invalid save parameters")
			}
		}
		var parts []string
		if loading && !first && cur != "" {
			parts = append(parts, cur)
		}
		for i := 0; i < len(args); i += 2 {
			sec, _ := strtoll(args[i])
			chg, _ := strtoll(args[i+1])
			parts = append(parts, strconv.FormatInt(sec, 10)+" "+strconv.FormatInt(int64(int32(chg)), 10))
		}
		return strings.Join(parts, " "), nil
	},
	rewrite: func(d *Directive, val string) ([]string, []bool) {
		f := strings.Fields(val)
		if len(f) == 0 {
			return []string{`save ""`}, []bool{true}
		}
		var lines []string
		var force []bool
		for i := 0; i+1 < len(f); i += 2 {
			lines = append(lines, "save "+f[i]+" "+f[i+1])
			force = append(force, true)
		}
		return lines, force
	},
}

// strtoll accepts what C's strtoll accepts when the whole string must be
// consumed: optional leading spaces and sign, then decimal digits. Out of
// range values saturate, as strtoll does.
func strtoll(s string) (int64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	if t == "" {
		// strtoll converts nothing: only the empty string is consumed.
		return 0, s == ""
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			if t[0] == '-' {
				return -1 << 63, true
			}
			return 1<<63 - 1, true
		}
		return 0, false
	}
	return v, true
}

var obufClasses = []string{"normal", "slave", "pubsub"}

func obufClass(name string) int {
	switch strings.ToLower(name) {
	case "normal":
		return 0
	case "slave", "replica":
		return 1
	case "pubsub":
		return 2
	}
	return -1
}

var spObuf = &special{
	set: func(c *Config, args []string, cur string, loading, first bool) (string, error) {
		if len(args)%4 != 0 {
			return "", errText("Wrong number of arguments in buffer limit configuration.")
		}
		vals := strings.Fields(cur)
		for i := 0; i < len(args); i += 4 {
			class := obufClass(args[i])
			if class < 0 {
				return "", errText("Invalid client class specified in buffer limit configuration.")
			}
			hard, err1 := memtoull(args[i+1])
			soft, err2 := memtoull(args[i+2])
			secs, ok := strtoll(args[i+3])
			if err1 != nil || err2 != nil || !ok || int32(secs) < 0 {
				return "", errText("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
			}
			vals[class*4+1] = strconv.FormatUint(hard, 10)
			vals[class*4+2] = strconv.FormatUint(soft, 10)
			vals[class*4+3] = strconv.FormatInt(int64(int32(secs)), 10)
		}
		return strings.Join(vals, " "), nil
	},
	rewrite: func(d *Directive, val string) ([]string, []bool) {
		f := strings.Fields(val)
		def := strings.Fields(d.Default)
		var lines []string
		var force []bool
		for cl := 0; cl < 3; cl++ {
			name := obufClasses[cl]
			if name == "slave" {
				name = "replica"
			}
			hard, _ := strconv.ParseUint(f[cl*4+1], 10, 64)
			soft, _ := strconv.ParseUint(f[cl*4+2], 10, 64)
			lines = append(lines, d.Name+" "+name+" "+FormatMemory(hard)+" "+FormatMemory(soft)+" "+f[cl*4+3])
			changed := false
			for k := 1; k < 4; k++ {
				changed = changed || f[cl*4+k] != def[cl*4+k]
			}
			force = append(force, changed)
		}
		return lines, force
	},
}

var spOOM = &special{
	set: func(c *Config, args []string, cur string, loading, first bool) (string, error) {
		if len(args) != 3 {
			return "", errText("wrong number of arguments")
		}
		out := make([]string, 3)
		for i, a := range args {
			v, ok := strtoll(a)
			if !ok || v < -2000 || v > 2000 {
				return "", errText("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")
			}
			out[i] = strconv.FormatInt(v, 10)
		}
		return strings.Join(out, " "), nil
	},
	rewrite: func(d *Directive, val string) ([]string, []bool) {
		return []string{d.Name + " " + val}, []bool{val != d.Default}
	},
}

// Keyspace notification classes in the order redis-server prints them.
const notifyAll = "g$lshzxetd"

var spNotify = &special{
	set: func(c *Config, args []string, cur string, loading, first bool) (string, error) {
		if len(args) != 1 {
			return "", errText("wrong number of arguments")
		}
		v, ok := NormalizeNotify(args[0])
		if !ok {
			return "", errText("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
		}
		return v, nil
	},
	rewrite: func(d *Directive, val string) ([]string, []bool) {
		return []string{d.Name + " " + Repr(val)}, []bool{val != ""}
	},
}

// NormalizeNotify parses notify-keyspace-events flags and returns them in
// redis-server's canonical spelling ("A" for all classes, then K, E, m).
func NormalizeNotify(s string) (string, bool) {
	set := map[byte]bool{}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == 'A':
			for j := 0; j < len(notifyAll); j++ {
				set[notifyAll[j]] = true
			}
		case strings.IndexByte(notifyAll+"nKEm", c) >= 0:
			set[c] = true
		default:
			return "", false
		}
	}
	var sb strings.Builder
	all := true
	for j := 0; j < len(notifyAll); j++ {
		all = all && set[notifyAll[j]]
	}
	if all {
		sb.WriteByte('A')
	} else {
		// 'n' is not part of "A" yet redis-server only prints it when
		// some class is missing; the same quirk is kept here.
		for _, c := range []byte(notifyAll + "n") {
			if set[c] {
				sb.WriteByte(c)
			}
		}
	}
	for _, c := range []byte("KEm") {
		if set[c] {
			sb.WriteByte(c)
		}
	}
	return sb.String(), true
}

var spBind = &special{
	set: func(c *Config, args []string, cur string, loading, first bool) (string, error) {
		if len(args) > 16 {
			return "", errText("Too many bind addresses specified.")
		}
		if len(args) == 1 && args[0] == "" {
			args = nil
		}
		return strings.Join(args, " "), nil
	},
	rewrite: func(d *Directive, val string) ([]string, []bool) {
		if val == d.Default {
			return nil, nil
		}
		if val == "" {
			val = `""`
		}
		return []string{d.Name + " " + val}, []bool{true}
	},
}

var spReplicaOf = &special{
	set: func(c *Config, args []string, cur string, loading, first bool) (string, error) {
		if len(args) != 2 {
			return "", errText("wrong number of arguments")
		}
		if strings.EqualFold(args[0], "no") && strings.EqualFold(args[1], "one") {
			return "", nil
		}
		p, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil || p < 0 || p > 65535 {
			return "", errText("Invalid master port")
		}
		return args[0] + " " + strconv.FormatInt(p, 10), nil
	},
	rewrite: func(d *Directive, val string) ([]string, []bool) {
		if val == "" {
			return nil, nil
		}
		return []string{d.Name + " " + val}, []bool{true}
	},
}

var spPercentiles = &special{
	set: func(c *Config, args []string, cur string, loading, first bool) (string, error) {
		if len(args) == 1 && args[0] == "" {
			return "", nil
		}
		out := make([]string, len(args))
		for i, a := range args {
			f, err := strconv.ParseFloat(a, 64)
			if err != nil || a == "" || strings.ContainsAny(a, " \t") {
				return "", errText("Invalid latency-tracking-info-percentiles parameters")
			}
			if f > 100 || f < 0 {
				return "", errText("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
			}
			out[i] = trimDouble(strconv.FormatFloat(f, 'f', 6, 64))
		}
		return strings.Join(out, " "), nil
	},
	rewrite: func(d *Directive, val string) ([]string, []bool) {
		if val == "" {
			return []string{d.Name + ` ""`}, []bool{true}
		}
		return []string{d.Name + " " + val}, []bool{true}
	},
}

// trimDouble drops trailing zeros and a trailing dot from a %f rendering.
func trimDouble(s string) string {
	if strings.IndexByte(s, '.') < 0 {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

func checkBaseName(pathErr, emptyErr string) func(string) error {
	return func(v string) error {
		if v == "" && emptyErr != "" {
			return errText(emptyErr)
		}
		if strings.ContainsRune(v, '/') {
			return errText(pathErr)
		}
		return nil
	}
}

func checkHostname(v string) error {
	if len(v) >= 256 {
		return errText("Hostnames must be less than 256 characters")
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return errText("Hostnames may only contain alphanumeric characters, hyphens or dots")
		}
	}
	return nil
}

var procTitleVars = []string{"{title}", "{listen-addr}", "{server-mode}", "{port}", "{tls-port}", "{unixsocket}", "{config-file}"}

func checkProcTitle(v string) error {
	rest := v
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return errText("template format is invalid or contains unknown variables")
		}
		ok := false
		for _, pv := range procTitleVars {
			if rest[i:i+j+1] == pv {
				ok = true
			}
		}
		if !ok {
			return errText("template format is invalid or contains unknown variables")
		}
		rest = rest[i+j+1:]
	}
	if !strings.Contains(v, "{title}") {
		return errText("template format is invalid or contains unknown variables")
	}
	return nil
}

var shutdownFlagNames = []string{"default", "save", "nosave", "now", "force"}

var spShutdownFlags = &special{
	set: func(c *Config, args []string, cur string, loading, first bool) (string, error) {
		set := map[string]bool{}
		for _, a := range args {
			a = strings.ToLower(a)
			ok := false
			for _, n := range shutdownFlagNames {
				ok = ok || a == n
			}
			if !ok {
				return "", errText("argument(s) must be one of the following: " + strings.Join(shutdownFlagNames, ", "))
			}
			set[a] = true
		}
		if set["save"] && set["nosave"] {
			return "", errText("shutdown options SAVE and NOSAVE can't be used simultaneously")
		}
		var out []string
		for _, n := range shutdownFlagNames[1:] {
			if set[n] {
				out = append(out, n)
			}
		}
		if len(out) == 0 {
			return "default", nil
		}
		return strings.Join(out, " "), nil
	},
	rewrite: func(d *Directive, val string) ([]string, []bool) {
		return []string{d.Name + " " + val}, []bool{val != d.Default}
	},
}
