package config

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadFatalErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--port", "21402", "--maxmemory", "abc"}, "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line 3\n>>> 'maxmemory \"abc\"'\nargument must be a memory value"},
		{[]string{"--port", "1", "--port"}, "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line 3\n>>> 'port'\nwrong number of arguments"},
		{[]string{"--bogus", "1", "2"}, "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line 2\n>>> 'bogus \"1\" \"2\"'\nBad directive or wrong number of arguments"},
		{[]string{"--loglevel", "x"}, "argument(s) must be one of the following: debug, verbose, notice, warning"},
		{[]string{"--maxclients", "0"}, "argument must be between 1 and 4294967295 inclusive"},
		{[]string{"--hash-max-listpack-entries", "-1"}, "argument must be between 0 and 9223372036854775807 inclusive"},
		{[]string{"--save", "1"}, "Invalid save parameters"},
		{[]string{"--client-output-buffer-limit", "master", "1", "1", "1"}, "Invalid client class specified in buffer limit configuration."},
		{[]string{"--notify-keyspace-events", "Q"}, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."},
		{[]string{"--dir", "/nonexistent-dir"}, "\n>>> 'dir \"/nonexistent-dir\"'\nNo such file or directory"},
		{[]string{"--logfile", "/nonexistent-dir/x"}, "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nCan't open the log file: No such file or directory"},
	} {
		_, err := Load(tc.args)
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want suffix %q", tc.args, err, tc.want)
		}
	}
}

func TestLoadFileAndOptions(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.conf")
	os.WriteFile(f, []byte("# c\nport 7001\nsave 10 1\nsave 20 2\nslave-priority 5\nhash-max-ziplist-entries 7\n"), 0o644)
	c, err := Load([]string{f, "--port", "7002", "--maxmemory", "1mb"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"port": "7002", "save": "10 1 20 2", "replica-priority": "5",
		"hash-max-listpack-entries": "7", "maxmemory": "1048576"} {
		if got := c.Str(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	os.WriteFile(f, []byte("port 1\nport \"abc\n"), 0o644)
	_, err = Load([]string{f})
	if err == nil || !strings.HasSuffix(err.Error(), "at line 2\n>>> 'port \"abc'\nUnbalanced quotes in configuration line") {
		t.Errorf("got %v", err)
	}
	if c, err := Load([]string{"--save"}); err != nil || c.Str("save") != "" {
		t.Errorf("--save alone: %v %q", err, c.Str("save"))
	}
}

func TestSetMulti(t *testing.T) {
	c := New()
	for _, tc := range []struct {
		pairs []string
		want  string
	}{
		{[]string{"foo", "bar"}, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"},
		{[]string{"port", "abc"}, "ERR CONFIG SET failed (possibly related to argument 'port') - argument couldn't be parsed into an integer"},
		{[]string{"hz", "5", "maxmemory", "abc"}, "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"},
		{[]string{"hz", "5", "HZ", "6"}, "ERR CONFIG SET failed (possibly related to argument 'HZ') - duplicate parameter"},
		{[]string{"daemonize", "no"}, "ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config"},
		{[]string{"dir", "/tmp"}, "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config"},
		{[]string{"maxmemory", "-1"}, "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"},
		{[]string{"save", "1"}, "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"},
		{[]string{"shutdown-on-sigint", "save nosave"}, "ERR CONFIG SET failed (possibly related to argument 'shutdown-on-sigint') - shutdown options SAVE and NOSAVE can't be used simultaneously"},
	} {
		err := c.SetMulti(tc.pairs, true)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %q", tc.pairs, err, tc.want)
		}
	}
	if c.Str("hz") != "10" {
		t.Errorf("failed CONFIG SET changed hz to %s", c.Str("hz"))
	}
	for _, tc := range [][3]string{
		{"maxmemory", "1gb", "1073741824"},
		{"notify-keyspace-events", "KEA", "AKE"},
		{"notify-keyspace-events", "Elgx", "glxE"},
		{"maxmemory-clients", "10%", "10%"},
		{"slave-priority", "5", "5"},
		{"client-output-buffer-limit", "pubsub 1mb 2 3", "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 2 3"},
		{"shutdown-on-sigint", "force now save", "save now force"},
		{"save", "", ""},
	} {
		if err := c.Set(tc[0], tc[1]); err != nil {
			t.Fatal(err)
		}
		d := c.Lookup(tc[0])
		if got := c.Str(d.Name); got != tc[2] {
			t.Errorf("%s %q -> %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}

func TestMatch(t *testing.T) {
	c := New()
	got := c.Match([]string{"maxmemory*", "hz", "hz", "slave-priority", "nosuch"})
	var names []string
	for _, p := range got {
		names = append(names, p[0])
	}
	want := "maxmemory-policy maxmemory-samples maxmemory-eviction-tenacity maxmemory maxmemory-clients hz slave-priority"
	if strings.Join(names, " ") != want {
		t.Errorf("got %q", names)
	}
	if len(c.Match([]string{"use-exit-on-panic"})) != 1 || len(c.Match([]string{"use-exit-on-pani*"})) != 0 {
		t.Error("hidden directives must match only by exact name")
	}
	if n := len(c.Match([]string{"*"})); n != 192 {
		t.Errorf("CONFIG GET * has %d entries, redis-server 7.0.15 has 192", n)
	}
}

func TestRewriteKeepsComments(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "r.conf")
	os.WriteFile(f, []byte("# top comment\nport 21403\n\n\n# another\nmaxmemory 100mb\nsave 100 1\nsave 200 2\nrename-command flushall \"\"\nslave-priority 50\n"), 0o644)
	c, err := Load([]string{f})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"hz", "20"}, {"maxmemory", "3gb"}, {"save", "30 1"}, {"masterauth", `a"b`}, {"client-output-buffer-limit", "pubsub 1mb 2 3"}} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Rewrite(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f)
	wd, _ := os.Getwd()
	want := "# top comment\nport 21403\n\n# another\nmaxmemory 3gb\nsave 30 1\n\nrename-command flushall \"\"\nreplica-priority 50\n\n" +
		"# Generated by CONFIG REWRITE\nmasterauth \"a\\\"b\"\nhz 20\ndir \"" + wd + "\"\n" +
		"client-output-buffer-limit pubsub 1mb 2 3\nlatency-tracking-info-percentiles 50 99 99.9\nuser default on nopass ~* &* +@all\n"
	if string(data) != want {
		t.Errorf("rewritten file:\n%s\nwant:\n%s", data, want)
	}
	if err := New().Rewrite(); err == nil || err.Error() != "The server is running without a config file" {
		t.Errorf("no file: %v", err)
	}
}

// TestBinaryFatalExit runs the real slotd binary on bad configurations:
// it must print the fatal block on stderr and exit with status 1.
func TestBinaryFatalExit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "slotd")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/slotd/slotd/cmd/slotd").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	conf := filepath.Join(t.TempDir(), "bad.conf")
	os.WriteFile(conf, []byte("port 21402\nfoo bar\n"), 0o644)
	cmd := exec.Command(bin, conf)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v", err)
	}
	want := "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line 2\n>>> 'foo bar'\nBad directive or wrong number of arguments\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}
