package node

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/slotd/slotd/node/keyspace"
)

func TestConfigCommands(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("*2|$2|hz|$2|10|", "CONFIG", "GET", "hz")
	tc.expect("*4|$2|hz|$2|10|$14|slave-priority|$3|100|", "CONFIG", "GET", "hz", "slave-priority", "hz")
	tc.expect("*0|", "CONFIG", "GET", "nosuch")
	if got := tc.do("CONFIG", "GET"); got != "-ERR wrong number of arguments for 'config|get' command\r\n" {
		t.Errorf("CONFIG GET: %q", got)
	}
	tc.expect("-ERR syntax error|", "CONFIG", "SET", "a", "b", "c")
	tc.expect("-ERR Unknown option or number of arguments for CONFIG SET - 'foo'|", "CONFIG", "SET", "foo", "bar")
	tc.expect("-ERR CONFIG SET failed (possibly related to argument 'hz') - duplicate parameter|", "CONFIG", "SET", "hz", "5", "hz", "6")
	tc.expect("+OK|", "CONFIG", "SET", "hz", "20", "maxmemory", "1mb")
	tc.expect("*4|$2|hz|$2|20|$9|maxmemory|$7|1048576|", "CONFIG", "GET", "hz", "maxmemory")
	tc.expect("-ERR The server is running without a config file|", "CONFIG", "REWRITE")
	tc.expect("+OK|", "CONFIG", "RESETSTAT")
	tc.expect("-ERR unknown subcommand 'x'. Try CONFIG HELP.|", "CONFIG", "x")
	tc.expect("*11|+CONFIG <subcommand> [<arg> ...] -- subcommands:|+GET <pattern>|+    Each parameter whose name matches the glob <pattern>, with its value.|+SET <directive> <value>|+    Changes <directive> to <value> at run time.|+RESETSTAT|+    Zeroes the counters that INFO shows.|+REWRITE|+    Writes the running configuration back to the config file.|+HELP|+    Lists these subcommands.|", "CONFIG", "HELP")
	// RESP3: CONFIG GET is a map.
	tc.c.out.Proto = 3
	tc.expect("%1|$2|hz|$2|20|", "CONFIG", "GET", "hz")
}

func TestConfigSetsEncodingLimits(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("+OK|", "CONFIG", "SET", "hash-max-ziplist-entries", "7", "zset-max-listpack-value", "9")
	l := keyspace.CurrentLimits()
	if l.HashMaxListpackEntries != 7 || l.ZSetMaxListpackValue != 9 || l.SetMaxIntsetEntries != 512 {
		t.Errorf("limits %+v", *l)
	}
	tc.expect("+OK|", "CONFIG", "SET", "hash-max-ziplist-entries", "512", "zset-max-listpack-value", "64")
}

func TestInfoSections(t *testing.T) {
	tc := newTestServer(t)
	tc.do("SET", "a", "1")
	tc.do("GET", "zz")
	tc.do("nope")
	headers := func(args ...string) string {
		out := tc.do(append([]string{"INFO"}, args...)...)
		var hs []string
		for _, l := range strings.Split(out, "\r\n") {
			if strings.HasPrefix(l, "# ") {
				hs = append(hs, l[2:])
			}
		}
		return strings.Join(hs, " ")
	}
	for _, c := range []struct{ args, want string }{
		{"", "Server Clients Memory Persistence Stats Replication CPU Modules Errorstats Cluster Keyspace"},
		{"all", "Server Clients Memory Persistence Stats Replication CPU Modules Commandstats Errorstats Latencystats Cluster Keyspace"},
		{"everything", "Server Clients Memory Persistence Stats Replication CPU Modules Commandstats Errorstats Latencystats Cluster Keyspace"},
		{"server clients", "Server Clients"},
		{"SERVER keyspace server", "Server Keyspace"},
		{"foo", ""},
	} {
		if got := headers(strings.Fields(c.args)...); got != c.want {
			t.Errorf("INFO %s: %q, want %q", c.args, got, c.want)
		}
	}
	tc.expect("$0||", "INFO", "foo")
	tc.expect("$44|# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n|", "INFO", "keyspace")
	tc.expect("$30|# Cluster\r\ncluster_enabled:0\r\n|", "INFO", "cluster")
	tc.expect("$37|# Errorstats\r\nerrorstat_ERR:count=1\r\n|", "INFO", "errorstats")
	stats := tc.do("INFO", "stats", "commandstats")
	for _, want := range []string{"keyspace_misses:1\r\n", "total_error_replies:1\r\n",
		"cmdstat_set:calls=1,usec=", "cmdstat_get:calls=1,usec="} {
		if !strings.Contains(stats, want) {
			t.Errorf("INFO stats lacks %q:\n%s", want, stats)
		}
	}
	if !regexp.MustCompile(`cmdstat_get:calls=1,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=0,failed_calls=0\r\n`).MatchString(stats) {
		t.Errorf("cmdstat line:\n%s", stats)
	}
	server := tc.do("INFO", "server")
	for _, want := range []string{"redis_version:7.0.15\r\n", "redis_mode:standalone\r\n", "run_id:" + tc.s.RunID + "\r\n", "tcp_port:6379\r\n"} {
		if !strings.Contains(server, want) {
			t.Errorf("INFO server lacks %q", want)
		}
	}
	tc.c.out.Proto = 3
	if got := tc.do("INFO", "cluster"); got != "=34\r\ntxt:# Cluster\r\ncluster_enabled:0\r\n\r\n" {
		t.Errorf("RESP3 INFO: %q", got)
	}
}

func TestDebugPermission(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("-"+errDebugNotAllowed+"|", "DEBUG", "SLEEP", "0")
	tc = newTestServer(t, "enable-debug-command", "local")
	tc.expect("+OK|", "DEBUG", "SLEEP", "0")
}

func TestDebugCommands(t *testing.T) {
	tc := newTestServer(t, "enable-debug-command", "yes")
	tc.expect("+0000000000000000000000000000000000000000|", "DEBUG", "DIGEST")
	tc.do("SET", "foo", "bar")
	// Digests taken from redis-server 7.0.15 for the same data.
	tc.expect("+d2ab4820c1be0580ea28efbfe8bfa1dc05bb802a|", "DEBUG", "DIGEST")
	tc.expect("*2|+68467c70ae30376e7ce005bcc8827f5ba7fd67dc|+0000000000000000000000000000000000000000|", "DEBUG", "DIGEST-VALUE", "foo", "nokey")
	tc.expect("+OK|", "DEBUG", "POPULATE", "3")
	tc.expect("$7|value:0|", "GET", "key:0")
	tc.expect("+OK|", "DEBUG", "POPULATE", "2", "p", "10")
	tc.expect("$10|value:1\x00\x00\x00|", "GET", "p:1")
	tc.expect("+OK|", "DEBUG", "SET-ACTIVE-EXPIRE", "0")
	tc.expect("+OK|", "DEBUG", "CHANGE-REPL-ID")
	tc.expect("-ERR unknown subcommand or wrong number of arguments for 'nosuch'. Try DEBUG HELP.|", "DEBUG", "nosuch")
	tc.expect("-ERR no such key|", "DEBUG", "OBJECT", "nokey")
	if got := tc.do("DEBUG", "OBJECT", "foo"); !regexp.MustCompile(`^\+Value at:0x[0-9a-f]+ refcount:1 encoding:embstr serializedlength:4 lru:\d+ lru_seconds_idle:\d+\r\n$`).MatchString(got) {
		t.Errorf("DEBUG OBJECT: %q", got)
	}
}

func TestSlowlog(t *testing.T) {
	tc := newTestServer(t, "slowlog-log-slower-than", "0")
	tc.expect("+OK|", "SLOWLOG", "RESET")
	tc.c.SetName("me")
	tc.do("ECHO", "hi")
	tc.expect(":2|", "SLOWLOG", "LEN")
	// SLOWLOG LEN itself is the newest entry.
	got := tc.do("SLOWLOG", "GET", "2")
	if !regexp.MustCompile(`\*6\r\n:1\r\n:\d+\r\n:\d+\r\n\*2\r\n\$4\r\nECHO\r\n\$2\r\nhi\r\n\$15\r\n127\.0\.0\.1:40000\r\n\$2\r\nme\r\n$`).MatchString(got) || !strings.HasPrefix(got, "*2\r\n") {
		t.Errorf("SLOWLOG GET: %q", got)
	}
	tc.expect("-ERR count should be greater than or equal to -1|", "SLOWLOG", "GET", "-2")
	tc.expect("-ERR unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP.|", "SLOWLOG", "GET", "1", "2")
	long := strings.Repeat("x", 200)
	tc.do("ECHO", long)
	got = tc.do("SLOWLOG", "GET", "1")
	if !strings.Contains(got, "$147\r\n"+strings.Repeat("x", 128)+"... (72 more bytes)\r\n") {
		t.Errorf("long argument: %q", got)
	}
	tc.expect("+OK|", "CONFIG", "SET", "slowlog-log-slower-than", "-1")
	tc.expect("+OK|", "SLOWLOG", "RESET")
	tc.do("ECHO", "x")
	tc.expect(":0|", "SLOWLOG", "LEN")
}

func TestLatencyAndTime(t *testing.T) {
	tc := newTestServer(t, "enable-debug-command", "yes")
	tc.expect("*0|", "LATENCY", "LATEST")
	off := "Latency monitoring is off on this node (latency-monitor-threshold is 0). Turn it on with CONFIG SET latency-monitor-threshold <milliseconds>.\n"
	tc.expectRaw(fmt.Sprintf("$%d\r\n%s\r\n", len(off), off), "LATENCY", "DOCTOR")
	tc.expect("+OK|", "CONFIG", "SET", "latency-monitor-threshold", "1")
	quiet := "No latency spike has been recorded since this node started.\n"
	tc.expectRaw(fmt.Sprintf("$%d\r\n%s\r\n", len(quiet), quiet), "LATENCY", "DOCTOR")
	tc.do("DEBUG", "SLEEP", "0.01")
	if got := tc.do("LATENCY", "DOCTOR"); !regexp.MustCompile(`^\$\d+\r\nLatency spikes recorded on this node, by event:\n\n1\. command: 1 spike\(s\), average \d+ms \(mean deviation 0ms\), one per 1\.00 s; worst \d+ms\.\n\nslotd gives no tuning advice\.\n\r\n$`).MatchString(got) {
		t.Errorf("doctor with a spike: %q", got)
	}
	if got := tc.do("LATENCY", "LATEST"); !regexp.MustCompile(`^\*1\r\n\*4\r\n\$7\r\ncommand\r\n:\d+\r\n:\d+\r\n:\d+\r\n$`).MatchString(got) {
		t.Errorf("LATEST: %q", got)
	}
	tc.expect(":1|", "LATENCY", "RESET")
	tc.expect("*0|", "LATENCY", "HISTORY", "command")
	if got := tc.do("TIME"); !regexp.MustCompile(`^\*2\r\n\$10\r\n\d{10}\r\n\$\d\r\n\d+\r\n$`).MatchString(got) {
		t.Errorf("TIME: %q", got)
	}
	if got := tc.do("LASTSAVE"); !regexp.MustCompile(`^:\d{10}\r\n$`).MatchString(got) {
		t.Errorf("LASTSAVE: %q", got)
	}
	tc.expect("-ERR syntax error|", "SHUTDOWN", "bogus")
	tc.expect("-ERR No shutdown in progress.|", "SHUTDOWN", "ABORT")
	tc.expect("+OK|", "MULTI")
	tc.expect("-ERR Command not allowed inside a transaction|", "SHUTDOWN")
	tc.expect("+OK|", "DISCARD")
}

// Patterns from clients go through the one glob matcher (node/glob), whose
// cost does not grow with the number of stars: these took 25 s (CONFIG GET)
// and 1 s (COMMAND LIST) with the backtracking matchers they replaced, and
// redis-server answers them at once.
func TestPatternsWithManyStars(t *testing.T) {
	tc := newTestServer(t)
	stars := strings.Repeat("*?", 10)
	tc.expect("*2|$23|active-defrag-cycle-max|$2|25|", "CONFIG", "GET", stars+"*X")
	tc.expect("*0|", "CONFIG", "GET", stars+"*Q")
	got := tc.do("COMMAND", "LIST", "FILTERBY", "PATTERN", stars+"*LEX")
	// Ten characters at least before "lex": zrangebylex has only eight.
	if want := "*2\r\n$14\r\nzremrangebylex\r\n$14\r\nzrevrangebylex\r\n"; got != want {
		t.Errorf("COMMAND LIST FILTERBY PATTERN %s*LEX: %q, want %q", stars, got, want)
	}
}
