package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAOFManifestRoundTrip(t *testing.T) {
	in := "file appendonly.aof.3.base.rdb seq 3 type b\nfile appendonly.aof.2.incr.aof seq 2 type h\nfile appendonly.aof.5.incr.aof seq 5 type i\nfile appendonly.aof.6.incr.aof seq 6 type i\n"
	m, err := parseManifest([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(m.encode()); got != in {
		t.Fatalf("round trip:\n%s\nwant\n%s", got, in)
	}
	if m.nextIncrSeq() != 7 {
		t.Fatalf("next incr seq %d", m.nextIncrSeq())
	}
	// Quoted names, comments, blank lines and unknown keys.
	m, err = parseManifest([]byte("# comment\n\nfile \"a b.aof\" seq 1 type i extra x\n"))
	if err != nil || len(m.incrs) != 1 || m.incrs[0].name != "a b.aof" {
		t.Fatalf("got %+v, %v", m, err)
	}
	if got := string(m.encode()); got != "file \"a b.aof\" seq 1 type i\n" {
		t.Fatalf("encode quoted: %q", got)
	}
	for _, bad := range []string{
		"", "file x seq 1", "file x seq 0 type i\n", "file x seq 1 type z\n",
		"file x seq 1 type b\nfile y seq 2 type b\n", "file ../x seq 1 type i\n", "file \"x seq 1 type i\n",
	} {
		if _, err := parseManifest([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// aofServer starts an in-process server with the AOF on in dir and loads
// what is there.
func aofServer(t *testing.T, dir string, directives ...string) (*testClient, error) {
	t.Helper()
	// The data directory is set directly: the dir directive would chdir
	// the test process.
	tc := newTestServer(t, append([]string{"appendonly", "yes"}, directives...)...)
	tc.s.rdb.dir = dir
	err := tc.s.LoadData()
	t.Cleanup(func() { tc.s.Close() })
	return tc, err
}

func mustAOFServer(t *testing.T, dir string, directives ...string) *testClient {
	t.Helper()
	tc, err := aofServer(t, dir, directives...)
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

func readManifest(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAOFFreshStartAndReload(t *testing.T) {
	dir := t.TempDir()
	tc := mustAOFServer(t, dir)
	if got, want := readManifest(t, dir), "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"; got != want {
		t.Fatalf("manifest %q, want %q", got, want)
	}
	tc.expect("+OK|", "SET", "k", "v", "EX", "1000")
	tc.expect(":3|", "RPUSH", "l", "a", "b", "c")
	tc.expect("+OK|", "SELECT", "2")
	tc.expect(":1|", "SADD", "s", "m")
	tc.expect("+OK|", "MULTI")
	tc.expect("+QUEUED|", "INCR", "n")
	tc.expect("+QUEUED|", "INCR", "n")
	tc.expect("*2|:1|:2|", "EXEC")
	tc.s.flush(tc.c) // the reply waits for the AOF
	if w := tc.s.aof.written.Load(); w < tc.c.propEnd || tc.c.propEnd == 0 {
		t.Fatalf("written %d < client's %d", w, tc.c.propEnd)
	}
	tc.s.Close()
	b, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof"))
	if !strings.Contains(string(b), "PXAT") || !strings.Contains(string(b), "MULTI") {
		t.Fatalf("incr file:\n%s", b)
	}

	tc2 := mustAOFServer(t, dir)
	tc2.expect("*3|$1|a|$1|b|$1|c|", "LRANGE", "l", "0", "-1")
	tc2.expect("$1|v|", "GET", "k")
	if ttl := tc2.do("TTL", "k"); ttl != ":1000\r\n" && ttl != ":999\r\n" {
		t.Fatalf("TTL %q", ttl)
	}
	tc2.expect("+OK|", "SELECT", "2")
	tc2.expect("$1|2|", "GET", "n")
	tc2.expect(":1|", "SISMEMBER", "s", "m")
	// The stream continues in the same incremental file.
	tc2.expect("+OK|", "SET", "after", "1")
	tc2.s.Close()
	tc3 := mustAOFServer(t, dir)
	tc3.expect("+OK|", "SELECT", "2")
	tc3.expect("$1|1|", "GET", "after")
}

func writeAOFDir(t *testing.T, dir, incr string) string {
	t.Helper()
	d := filepath.Join(dir, "appendonlydir")
	os.MkdirAll(d, 0o755)
	os.WriteFile(filepath.Join(d, "appendonly.aof.manifest"), []byte("file appendonly.aof.1.incr.aof seq 1 type i\n"), 0o644)
	p := filepath.Join(d, "appendonly.aof.1.incr.aof")
	os.WriteFile(p, []byte(strings.ReplaceAll(incr, "|", "\r\n")), 0o644)
	return p
}

const aofGood = "*2|$6|SELECT|$1|0|*3|$3|SET|$1|a|$1|1|*3|$3|SET|$1|b|$1|2|"

func TestAOFTruncatedTail(t *testing.T) {
	dir := t.TempDir()
	p := writeAOFDir(t, dir, aofGood+"*3|$3|SET|$1|c|$2|3")
	tc := mustAOFServer(t, dir)
	tc.expect("$1|2|", "GET", "b")
	tc.expect("$-1|", "GET", "c")
	if n := fileSize(p); n != int64(len(strings.ReplaceAll(aofGood, "|", "\r\n"))) {
		t.Fatalf("file not cut at the last command: %d bytes", n)
	}
	tc.expect("+OK|", "SET", "c", "new")
	tc.s.Close()
	tc2 := mustAOFServer(t, dir)
	tc2.expect("$3|new|", "GET", "c")

	// With aof-load-truncated no, the start fails.
	dir = t.TempDir()
	writeAOFDir(t, dir, aofGood+"*3|$3|SET|$1|c|$2|3")
	if _, err := aofServer(t, dir, "aof-load-truncated", "no"); err == nil || !strings.Contains(err.Error(), "Unexpected end of file") || !strings.Contains(err.Error(), "redis-check-aof --fix") {
		t.Fatalf("err %v", err)
	}
}

func TestAOFTruncatedTransactionReverted(t *testing.T) {
	dir := t.TempDir()
	p := writeAOFDir(t, dir, aofGood+"*1|$5|MULTI|*3|$3|SET|$1|c|$1|3|*3|$3|SET|$1|d|$1|4|")
	tc := mustAOFServer(t, dir)
	tc.expect("$1|2|", "GET", "b")
	tc.expect("$-1|", "GET", "c")
	if n := fileSize(p); n != int64(len(strings.ReplaceAll(aofGood, "|", "\r\n"))) {
		t.Fatalf("file not cut before MULTI: %d bytes", n)
	}
}

func TestAOFCorruptMiddleRefused(t *testing.T) {
	dir := t.TempDir()
	writeAOFDir(t, dir, aofGood+"garbage|"+aofGood)
	_, err := aofServer(t, dir)
	want := "Bad file format reading the append only file appendonly.aof.1.incr.aof at offset 77"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "redis-check-aof --fix") {
		t.Fatalf("err %v, want %q", err, want)
	}
	dir = t.TempDir()
	writeAOFDir(t, dir, aofGood+"*2|$7|NOSUCHC|$1|a|")
	if _, err := aofServer(t, dir); err == nil || !strings.Contains(err.Error(), "Unknown command 'NOSUCHC'") {
		t.Fatalf("err %v", err)
	}
}

func waitRewrite(t *testing.T, tc *testClient) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for tc.s.aof.rewriting.Load() {
		if time.Now().After(deadline) {
			t.Fatal("rewrite did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAOFRewrite(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("preamble-"+preamble, func(t *testing.T) {
			dir := t.TempDir()
			tc := mustAOFServer(t, dir, "aof-use-rdb-preamble", preamble)
			tc.expect("+OK|", "SET", "k", "v", "PX", "100000")
			tc.expect(":2|", "RPUSH", "l", "a", "b")
			tc.expect(":2|", "HSET", "h", "f", "1", "g", "2")
			tc.expect(":2|", "ZADD", "z", "1.5", "a", "-inf", "b")
			tc.expect("+OK|", "SELECT", "1")
			tc.expect(":2|", "SADD", "s", "x", "y")
			tc.expect("+Background append only file rewriting started|", "BGREWRITEAOF")
			waitRewrite(t, tc)
			tc.expect("+OK|", "SET", "after", "rewrite")
			ext := map[string]string{"yes": "rdb", "no": "aof"}[preamble]
			if got, want := readManifest(t, dir), "file appendonly.aof.2.base."+ext+" seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n"; got != want {
				t.Fatalf("manifest %q, want %q", got, want)
			}
			ents, _ := os.ReadDir(filepath.Join(dir, "appendonlydir"))
			if len(ents) != 3 {
				t.Fatalf("old files left: %v", ents)
			}
			info := tc.do("INFO", "persistence")
			for _, f := range []string{"aof_enabled:1", "aof_rewrites:1", "aof_last_bgrewrite_status:ok", "aof_base_size:", "aof_current_size:"} {
				if !strings.Contains(info, f) {
					t.Fatalf("INFO lacks %q:\n%s", f, info)
				}
			}
			tc.s.Close()
			tc2 := mustAOFServer(t, dir)
			tc2.expect("*2|$1|a|$1|b|", "LRANGE", "l", "0", "-1")
			tc2.expect("$1|v|", "GET", "k")
			tc2.expect("$1|2|", "HGET", "h", "g")
			tc2.expect("*4|$1|b|$4|-inf|$1|a|$3|1.5|", "ZRANGE", "z", "0", "-1", "WITHSCORES")
			tc2.expect("+OK|", "SELECT", "1")
			tc2.expect(":2|", "SCARD", "s")
			tc2.expect("$7|rewrite|", "GET", "after")
		})
	}
}

func TestAOFConfigSetAppendonly(t *testing.T) {
	dir := t.TempDir()
	tc := newTestServer(t)
	tc.s.rdb.dir = dir
	t.Cleanup(func() { tc.s.Close() })
	tc.expect("+OK|", "SET", "before", "1")
	tc.expect("+OK|", "CONFIG", "SET", "appendonly", "yes")
	waitRewrite(t, tc)
	if !tc.s.aof.on.Load() {
		t.Fatal("AOF not on after CONFIG SET appendonly yes")
	}
	tc.expect("+OK|", "SET", "after", "2")
	tc.expect("+OK|", "CONFIG", "SET", "appendonly", "no")
	tc.expect("+OK|", "SET", "off", "3") // not in the AOF
	tc.s.Close()
	tc2 := mustAOFServer(t, dir)
	tc2.expect("$1|1|", "GET", "before")
	tc2.expect("$1|2|", "GET", "after")
	tc2.expect("$-1|", "GET", "off")
}

func TestAOFAlwaysWaitsForFsync(t *testing.T) {
	dir := t.TempDir()
	tc := mustAOFServer(t, dir, "appendfsync", "always")
	tc.expect("+OK|", "SET", "k", "v")
	end := tc.c.propEnd
	if tc.s.aof.synced.Load() >= end && tc.s.feed.pumped.Load() < end {
		t.Fatal("synced before written")
	}
	tc.s.flush(tc.c)
	if got := tc.s.aof.synced.Load(); got < end {
		t.Fatalf("reply released with synced %d < %d", got, end)
	}
	tc.expect("+OK|", "CONFIG", "SET", "appendfsync", "everysec")
	if tc.s.aof.waitSync.Load() {
		t.Fatal("still waiting for fsync under everysec")
	}
}

func TestAOFAutoRewrite(t *testing.T) {
	dir := t.TempDir()
	tc := mustAOFServer(t, dir, "auto-aof-rewrite-min-size", "1000", "auto-aof-rewrite-percentage", "100")
	for i := 0; i < 100; i++ {
		tc.do("SET", "key", strings.Repeat("x", 50))
	}
	tc.s.flush(tc.c)
	tc.s.aofCron()
	waitRewrite(t, tc)
	if n := tc.s.aof.rewrites.Load(); n != 1 {
		t.Fatalf("%d rewrites", n)
	}
	if cur, base := tc.s.aof.curSize.Load(), tc.s.aof.baseSize.Load(); cur > 1000 || base == 0 {
		t.Fatalf("sizes after rewrite: current %d base %d", cur, base)
	}
}

func TestAOFBgrewriteWhileOff(t *testing.T) {
	dir := t.TempDir()
	tc := newTestServer(t)
	tc.s.rdb.dir = dir
	t.Cleanup(func() { tc.s.Close() })
	tc.expect("+OK|", "SET", "k", "v")
	tc.expect("+Background append only file rewriting started|", "BGREWRITEAOF")
	waitRewrite(t, tc)
	if tc.s.aof.on.Load() || tc.s.aof.f != nil {
		t.Fatal("BGREWRITEAOF turned the AOF on")
	}
	tc.s.Close()
	tc2 := mustAOFServer(t, dir)
	tc2.expect("$1|v|", "GET", "k")
}

func TestAOFUpgradeLegacyFile(t *testing.T) {
	// An old single-file AOF: commands only, then with an RDB preamble.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "appendonly.aof"), []byte(strings.ReplaceAll(aofGood, "|", "\r\n")), 0o644)
	tc := mustAOFServer(t, dir)
	tc.expect("$1|2|", "GET", "b")
	if _, err := os.Stat(filepath.Join(dir, "appendonly.aof")); err == nil {
		t.Fatal("legacy file left in dir")
	}
	if got := readManifest(t, dir); !strings.HasPrefix(got, "file appendonly.aof seq 1 type b\n") {
		t.Fatalf("manifest %q", got)
	}

	// Preamble: an RDB image of one server, then commands.
	src := mustAOFServer(t, t.TempDir())
	src.expect("+OK|", "SET", "rdbkey", "1")
	src.expect(":2|", "RPUSH", "l", "a", "b")
	var img strings.Builder
	if err := src.s.writeSnapshot(&img, nil); err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	legacy := img.String() + strings.ReplaceAll("*2|$6|SELECT|$1|0|*3|$3|SET|$4|tail|$1|x|", "|", "\r\n")
	os.WriteFile(filepath.Join(dir, "appendonly.aof"), []byte(legacy), 0o644)
	tc = mustAOFServer(t, dir)
	tc.expect("$1|1|", "GET", "rdbkey")
	tc.expect("$1|x|", "GET", "tail")
	tc.expect(":2|", "LLEN", "l")
}

func TestAOFWriteErrorDeniesWrites(t *testing.T) {
	dir := t.TempDir()
	tc := mustAOFServer(t, dir)
	// A file that refuses writes.
	tc.s.aof.fileMu.Lock()
	good := tc.s.aof.f
	ro, err := os.Open(good.Name())
	if err != nil {
		t.Fatal(err)
	}
	tc.s.aof.f = ro
	tc.s.aof.fileMu.Unlock()
	tc.expect("+OK|", "SET", "k", "v")
	tc.s.flush(tc.c)
	if !strings.HasPrefix(tc.do("SET", "k", "v"), "-MISCONF Errors writing to the AOF file: ") {
		t.Fatal("write accepted after an AOF write error")
	}
	tc.expect("$1|v|", "GET", "k")
	// The file takes writes again: what failed is written on the retry
	// and writes are accepted again.
	tc.s.aof.fileMu.Lock()
	tc.s.aof.f = good
	tc.s.aof.fileMu.Unlock()
	tc.s.aof.retryPending()
	tc.expect("+OK|", "SET", "k2", "w")
	ro.Close()
	tc.s.Close()
	tc2 := mustAOFServer(t, dir)
	tc2.expect("$1|v|", "GET", "k")
	tc2.expect("$1|w|", "GET", "k2")
}

func TestAOFAnnotationsSkipped(t *testing.T) {
	dir := t.TempDir()
	writeAOFDir(t, dir, "#TS:1700000000|"+aofGood+"#TS:1700000001|*3|$3|SET|$1|c|$1|3|")
	tc := mustAOFServer(t, dir)
	tc.expect("$1|2|", "GET", "b")
	tc.expect("$1|3|", "GET", "c")
}

func TestAOFOneBackgroundJobAtATime(t *testing.T) {
	dir := t.TempDir()
	tc := mustAOFServer(t, dir)
	// A BGSAVE runs: the rewrite waits for it.
	tc.s.rdb.mu.Lock()
	tc.s.rdb.bg = &snapshot{}
	tc.s.rdb.mu.Unlock()
	tc.expect("+Background append only file rewriting scheduled|", "BGREWRITEAOF")
	if !strings.Contains(tc.do("INFO", "persistence"), "aof_rewrite_scheduled:1") {
		t.Fatal("rewrite not shown as scheduled")
	}
	tc.s.aofCron()
	if tc.s.aof.rewriting.Load() {
		t.Fatal("rewrite started during a BGSAVE")
	}
	tc.s.rdb.mu.Lock()
	tc.s.rdb.bg = nil
	tc.s.rdb.mu.Unlock()
	tc.s.aofCron()
	waitRewrite(t, tc)
	if tc.s.aof.rewrites.Load() != 1 || tc.s.aof.scheduled.Load() {
		t.Fatal("scheduled rewrite did not run")
	}
	// A rewrite runs: BGSAVE is refused or scheduled, BGREWRITEAOF refused.
	tc.s.aof.rewriting.Store(true)
	tc.expect("-ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.|", "BGSAVE")
	tc.expect("+Background saving scheduled|", "BGSAVE", "SCHEDULE")
	tc.expect("-ERR Background append only file rewriting already in progress|", "BGREWRITEAOF")
	tc.s.aof.rewriting.Store(false)
}

func TestAOFBgrewriteInTransactionScheduled(t *testing.T) {
	tc := mustAOFServer(t, t.TempDir())
	tc.expect("+OK|", "MULTI")
	tc.expect("+QUEUED|", "BGREWRITEAOF")
	tc.expect("*1|+Background append only file rewriting scheduled|", "EXEC")
	tc.s.aofCron()
	waitRewrite(t, tc)
	if tc.s.aof.rewrites.Load() != 1 {
		t.Fatal("scheduled rewrite did not run")
	}
}

func TestAOFRestartAfterDatasetReplaced(t *testing.T) {
	dir := t.TempDir()
	tc := mustAOFServer(t, dir)
	tc.expect("+OK|", "SET", "old", "1")
	tc.s.flush(tc.c)
	// A full sync replaces the dataset and moves the offset.
	tc.s.ks.LockAll()
	tc.s.ks.DB(0).Flush()
	tc.s.ks.UnlockAll()
	tc.s.feed.pump()
	tc.s.feed.setOffset(1 << 40)
	tc.s.restartAOF()
	waitRewrite(t, tc)
	tc.expect("+OK|", "SET", "new", "2")
	tc.s.flush(tc.c)
	if w := tc.s.aof.written.Load(); w < 1<<40 || w < tc.c.propEnd {
		t.Fatalf("written %d after the offset moved", w)
	}
	tc.s.Close()
	tc2 := mustAOFServer(t, dir)
	tc2.expect("$-1|", "GET", "old")
	tc2.expect("$1|2|", "GET", "new")
}
