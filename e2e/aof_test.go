package e2e

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The AOF tests use ports from SLOTD_E2E_AOF_PORTS (default 26500-26999).
var aofPorts = &portPool{env: "SLOTD_E2E_AOF_PORTS", lo: 26500, hi: 26999}

func aofPort(t *testing.T) int { t.Helper(); return aofPorts.take(t) }

// launchAOFIn starts bin in dir on a port of the AOF range without waiting.
func launchAOFIn(t *testing.T, name, bin, dir string, args ...string) *server {
	t.Helper()
	port := aofPort(t)
	s := &server{Name: name, Port: port, out: &lockedBuffer{}, done: make(chan struct{})}
	full := append([]string{"--bind", "127.0.0.1", "--dir", dir, "--port", strconv.Itoa(port)}, args...)
	s.cmd = exec.Command(bin, full...)
	s.cmd.Dir = dir
	s.cmd.Stdout = s.out
	s.cmd.Stderr = s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// startAOFIn starts bin in dir and waits until it answers.
func startAOFIn(t *testing.T, name, bin, dir string, args ...string) *server {
	t.Helper()
	s := launchAOFIn(t, name, bin, dir, args...)
	if err := s.waitReady(30 * time.Second); err != nil {
		t.Fatalf("%s did not start: %v", name, err)
	}
	return s
}

// waitExit waits for a process that should stop by itself.
func (s *server) waitExit(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(d):
		t.Fatalf("%s still running after %v:\n%s", s.Name, d, s.Output())
	}
}

// shutdown stops a server gracefully and waits for it.
func (s *server) shutdown(t *testing.T) {
	t.Helper()
	syscall.Kill(s.cmd.Process.Pid, syscall.SIGTERM)
	s.waitExit(t, 30*time.Second)
}

// ackWriter sets keys w<id>:<n> = n one at a time, each acknowledged before
// the next, and remembers the last acknowledged n.
type ackWriter struct {
	id    int
	acked atomic.Int64 // last acknowledged n, -1 for none
}

func runWriters(t *testing.T, addr string, n int, stop <-chan struct{}) ([]*ackWriter, *sync.WaitGroup) {
	t.Helper()
	ws := make([]*ackWriter, n)
	var wg sync.WaitGroup
	for i := range ws {
		w := &ackWriter{id: i}
		w.acked.Store(-1)
		ws[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer conn.Close()
			r := bufio.NewReader(conn)
			for k := int64(0); ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				v := strconv.FormatInt(k, 10)
				conn.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := conn.Write(encodeCommand(nil, []string{"SET", fmt.Sprintf("w%d:%d", w.id, k), v})); err != nil {
					return
				}
				line, err := r.ReadString('\n')
				if err != nil || line != "+OK\r\n" {
					return
				}
				w.acked.Store(k)
			}
		}()
	}
	return ws, &wg
}

// waitAcked waits until the writers have n acknowledged writes in all.
func waitAcked(t *testing.T, ws []*ackWriter, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got int64
		for _, w := range ws {
			got += w.acked.Load() + 1
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d writes acknowledged", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// missing counts the acknowledged keys a server does not have.
func missing(t *testing.T, addr string, ws []*ackWriter) (lost, total int) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for _, w := range ws {
		last := w.acked.Load()
		total += int(last + 1)
		// Pipelined in batches.
		for from := int64(0); from <= last; from += 500 {
			to := min(from+500, last+1)
			var buf []byte
			for k := from; k < to; k++ {
				buf = encodeCommand(buf, []string{"EXISTS", fmt.Sprintf("w%d:%d", w.id, k)})
			}
			conn.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := conn.Write(buf); err != nil {
				t.Fatal(err)
			}
			for k := from; k < to; k++ {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				if line != ":1\r\n" {
					lost++
				}
			}
		}
	}
	return lost, total
}

func aofKillTest(t *testing.T, policy string) (lost, total int, rate float64) {
	bin := slotdBinary(t)
	dir := t.TempDir()
	args := []string{"--appendonly", "yes", "--appendfsync", policy, "--loglevel", "warning"}
	srv := startAOFIn(t, "slotd", bin, dir, args...)
	stop := make(chan struct{})
	ws, wg := runWriters(t, srv.Addr(), 8, stop)
	start := time.Now()
	// Let the load run, then kill the process in the middle of it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int64
		for _, w := range ws {
			n += w.acked.Load() + 1
		}
		if time.Since(start) > 1500*time.Millisecond && n > 500 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d writes acknowledged in 10s", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	srv.kill()
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	srv2 := startAOFIn(t, "slotd", bin, dir, args...)
	lost, total = missing(t, srv2.Addr(), ws)
	rate = float64(total) / elapsed.Seconds()
	t.Logf("appendfsync %s: %d acknowledged writes in %v (%.0f/s), %d lost after kill -9", policy, total, elapsed, rate, lost)
	return lost, total, rate
}

func TestAOFKill9AlwaysLosesNothing(t *testing.T) {
	lost, _, _ := aofKillTest(t, "always")
	if lost != 0 {
		t.Fatalf("%d acknowledged writes lost with appendfsync always", lost)
	}
}

func TestAOFKill9EverysecBounded(t *testing.T) {
	lost, _, rate := aofKillTest(t, "everysec")
	// The promise is about one second of writes (two, with the fsync of
	// the last second in flight). A process kill, as here, loses nothing
	// that reached the OS, and replies wait for the write.
	if float64(lost) > 2*rate {
		t.Fatalf("%d acknowledged writes lost, more than 2 s of writes (%.0f/s)", lost, rate)
	}
	if lost != 0 {
		t.Logf("note: %d writes lost", lost)
	}
}

func incrPath(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	if err != nil {
		t.Fatal(err)
	}
	var name string
	for _, ln := range strings.Split(string(b), "\n") {
		if f := strings.Fields(ln); len(f) == 6 && f[5] == "i" {
			name = f[1]
		}
	}
	if name == "" {
		t.Fatalf("no incr file in manifest:\n%s", b)
	}
	return filepath.Join(dir, "appendonlydir", name)
}

func TestAOFTornTailLoadsWithWarning(t *testing.T) {
	bin := slotdBinary(t)
	dir := t.TempDir()
	args := []string{"--appendonly", "yes", "--loglevel", "warning"}
	srv := startAOFIn(t, "slotd", bin, dir, args...)
	for i := 0; i < 100; i++ {
		mustCmd(t, srv.Addr(), "SET", "k"+strconv.Itoa(i), "v")
	}
	srv.shutdown(t)
	p := incrPath(t, dir)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("*3\r\n$3\r\nSET\r\n$4\r\ntorn\r\n$5\r\nval")
	f.Close()
	srv2 := startAOFIn(t, "slotd", bin, dir, args...)
	if got := mustCmd(t, srv2.Addr(), "DBSIZE"); got != "100" {
		t.Fatalf("DBSIZE %s after a torn tail", got)
	}
	out := srv2.Output()
	for _, want := range []string{"short read while loading the AOF file", "Truncating the AOF", "loaded anyway because aof-load-truncated is enabled"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q:\n%s", want, out)
		}
	}
}

func TestAOFCorruptMiddleRefusesStart(t *testing.T) {
	bin := slotdBinary(t)
	dir := t.TempDir()
	args := []string{"--appendonly", "yes", "--loglevel", "warning"}
	srv := startAOFIn(t, "slotd", bin, dir, args...)
	for i := 0; i < 10; i++ {
		mustCmd(t, srv.Addr(), "SET", "k"+strconv.Itoa(i), "v")
	}
	srv.shutdown(t)
	p := incrPath(t, dir)
	b, _ := os.ReadFile(p)
	mid := len(b) / 2
	for mid < len(b) && b[mid] != '*' {
		mid++
	}
	bad := append(append(append([]byte(nil), b[:mid]...), "garbage\r\n"...), b[mid:]...)
	os.WriteFile(p, bad, 0o644)
	srv2 := launchAOFIn(t, "slotd", bin, dir, args...)
	srv2.waitExit(t, 30*time.Second)
	out := srv2.Output()
	for _, want := range []string{"Bad file format reading the append only file", "at offset " + strconv.Itoa(mid), "redis-check-aof --fix"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
}

// fillTypes writes keys of every type, with and without TTLs.
func fillTypes(t *testing.T, addr string) {
	t.Helper()
	big := make([]string, 0, 300)
	for i := 0; i < 300; i++ {
		big = append(big, "m"+strconv.Itoa(i))
	}
	mustCmd(t, addr, "SET", "str", "hello")
	mustCmd(t, addr, "SET", "int", "12345")
	mustCmd(t, addr, "SET", "ttl", "x", "EX", "10000")
	mustCmd(t, addr, "RPUSH", "list", "a", "b", "c")
	mustCmd(t, addr, append([]string{"RPUSH", "biglist"}, big...)...)
	mustCmd(t, addr, "SADD", "iset", "1", "2", "3")
	mustCmd(t, addr, append([]string{"SADD", "set"}, big...)...)
	mustCmd(t, addr, "HSET", "hash", "f1", "v1", "f2", "v2")
	mustCmd(t, addr, "ZADD", "zset", "1.5", "a", "2", "b", "-3", "c")
	mustCmd(t, addr, "INCRBYFLOAT", "float", "1.25")
	mustCmd(t, addr, "SELECT", "3") // a new connection each call: db 0 only
}

var typeKeys = []string{"str", "int", "ttl", "list", "biglist", "iset", "set", "hash", "zset", "float", "after1", "after2", "ex1"}

// contents renders the keys of typeKeys as comparable text.
func contents(t *testing.T, addr string) string {
	t.Helper()
	var out []string
	for _, k := range typeKeys {
		typ := mustCmd(t, addr, "TYPE", k)
		var v string
		switch typ {
		case "string":
			v = mustCmd(t, addr, "GET", k)
		case "list":
			v = mustCmd(t, addr, "LRANGE", k, "0", "-1")
		case "set":
			v = sortedLines(mustCmd(t, addr, "SMEMBERS", k))
		case "hash":
			v = sortedLines(mustCmd(t, addr, "HGETALL", k))
		case "zset":
			v = mustCmd(t, addr, "ZRANGE", k, "0", "-1", "WITHSCORES")
		}
		ttl := mustCmd(t, addr, "TTL", k)
		if n, _ := strconv.Atoi(ttl); n > 0 {
			ttl = "ttl>0"
		}
		out = append(out, k+" "+typ+" "+ttl+" "+v)
	}
	return strings.Join(out, "\n")
}

func sortedLines(s string) string {
	l := strings.Split(s, "\r\n")
	sort.Strings(l)
	return strings.Join(l, "|")
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	os.MkdirAll(to, 0o755)
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(to, e.Name()), b, 0o644)
	}
}

func TestAOFDirectoryInterop(t *testing.T) {
	slotd := slotdBinary(t)
	redis := redisServerBinary(t)
	for _, preamble := range []string{"yes", "no"} {
		args := []string{"--appendonly", "yes", "--aof-use-rdb-preamble", preamble, "--loglevel", "warning"}
		rargs := append([]string{"--save", ""}, args...)
		t.Run("slotd-to-redis-preamble-"+preamble, func(t *testing.T) {
			dir := t.TempDir()
			s := startAOFIn(t, "slotd", slotd, dir, args...)
			fillTypes(t, s.Addr())
			mustCmd(t, s.Addr(), "BGREWRITEAOF")
			waitRewriteDone(t, s.Addr())
			incrOps(t, s.Addr())
			want := contents(t, s.Addr())
			s.shutdown(t)
			check := needTool(t, "redis-check-aof")
			out, err := exec.Command(check, filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest")).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "All AOF files and manifest are valid") {
				t.Fatalf("redis-check-aof on slotd's directory: %v\n%s", err, out)
			}
			rdir := t.TempDir()
			copyDir(t, filepath.Join(dir, "appendonlydir"), filepath.Join(rdir, "appendonlydir"))
			r := startAOFIn(t, "redis-server", redis, rdir, rargs...)
			if got := contents(t, r.Addr()); got != want {
				t.Fatalf("redis-server loaded:\n%s\nslotd had:\n%s", got, want)
			}
		})
		t.Run("redis-to-slotd-preamble-"+preamble, func(t *testing.T) {
			rdir := t.TempDir()
			r := startAOFIn(t, "redis-server", redis, rdir, rargs...)
			fillTypes(t, r.Addr())
			mustCmd(t, r.Addr(), "BGREWRITEAOF")
			waitRewriteDone(t, r.Addr())
			incrOps(t, r.Addr())
			want := contents(t, r.Addr())
			r.shutdown(t)
			dir := t.TempDir()
			copyDir(t, filepath.Join(rdir, "appendonlydir"), filepath.Join(dir, "appendonlydir"))
			s := startAOFIn(t, "slotd", slotd, dir, args...)
			if got := contents(t, s.Addr()); got != want {
				t.Fatalf("slotd loaded:\n%s\nredis-server had:\n%s", got, want)
			}
		})
	}
}

// incrOps runs writes whose propagated form differs from the command
// (relative TTLs, random pops, float increments), so that the incremental
// file holds each rewritten form.
func incrOps(t *testing.T, addr string) {
	t.Helper()
	mustCmd(t, addr, "SET", "after1", "in-incr")
	mustCmd(t, addr, "SET", "after2", "x", "PX", "100000")
	mustCmd(t, addr, "SETEX", "ex1", "1000", "v")
	mustCmd(t, addr, "EXPIRE", "str", "5000")
	mustCmd(t, addr, "EXPIRE", "int", "-1")
	mustCmd(t, addr, "GETEX", "ttl", "PERSIST")
	mustCmd(t, addr, "GETDEL", "ex1")
	mustCmd(t, addr, "INCRBYFLOAT", "float", "0.1")
	mustCmd(t, addr, "HINCRBYFLOAT", "hash", "f3", "2.5")
	mustCmd(t, addr, "SPOP", "iset")
	mustCmd(t, addr, "SPOP", "set", "10")
	mustCmd(t, addr, "LMPOP", "1", "biglist", "RIGHT", "COUNT", "7")
	mustCmd(t, addr, "ZMPOP", "1", "zset", "MAX")
}

func TestAOFTimestampAnnotationsFromRedis(t *testing.T) {
	slotd := slotdBinary(t)
	redis := redisServerBinary(t)
	rdir := t.TempDir()
	r := startAOFIn(t, "redis-server", redis, rdir, "--save", "", "--appendonly", "yes", "--aof-timestamp-enabled", "yes", "--loglevel", "warning")
	fillTypes(t, r.Addr())
	incrOps(t, r.Addr())
	want := contents(t, r.Addr())
	r.shutdown(t)
	b, _ := os.ReadFile(incrPath(t, rdir))
	if !strings.Contains(string(b), "#TS:") {
		t.Fatal("redis-server wrote no annotations")
	}
	dir := t.TempDir()
	copyDir(t, filepath.Join(rdir, "appendonlydir"), filepath.Join(dir, "appendonlydir"))
	s := startAOFIn(t, "slotd", slotd, dir, "--appendonly", "yes", "--loglevel", "warning")
	if got := contents(t, s.Addr()); got != want {
		t.Fatalf("slotd loaded:\n%s\nredis-server had:\n%s", got, want)
	}
}

func waitRewriteDone(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info := mustCmd(t, addr, "INFO", "persistence")
		if infoField(info, "aof_rewrite_in_progress") == "0" && infoField(info, "aof_rewrite_scheduled") == "0" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("rewrite still running:\n%s", info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAOFRewriteUnderLoadKeepsData(t *testing.T) {
	bin := slotdBinary(t)
	dir := t.TempDir()
	args := []string{"--appendonly", "yes", "--loglevel", "warning"}
	srv := startAOFIn(t, "slotd", bin, dir, args...)
	stop := make(chan struct{})
	ws, wg := runWriters(t, srv.Addr(), 4, stop)
	// Each rewrite starts once the load has written some more.
	for i := 0; i < 3; i++ {
		waitAcked(t, ws, int64(i+1)*1000)
		mustCmd(t, srv.Addr(), "BGREWRITEAOF")
		waitRewriteDone(t, srv.Addr())
	}
	waitAcked(t, ws, 4000)
	close(stop)
	wg.Wait()
	info := mustCmd(t, srv.Addr(), "INFO", "persistence")
	if infoField(info, "aof_rewrites") != "3" || infoField(info, "aof_last_bgrewrite_status") != "ok" {
		t.Fatalf("INFO after three rewrites:\n%s", info)
	}
	srv.kill() // no clean shutdown: the files alone must hold everything
	srv2 := startAOFIn(t, "slotd", bin, dir, args...)
	lost, total := missing(t, srv2.Addr(), ws)
	if lost != 0 {
		t.Fatalf("%d of %d writes lost across rewrites", lost, total)
	}
	t.Logf("%d writes, 3 rewrites, none lost", total)
}

// TestAOFRewriteExactSwitchPoint checks that a rewrite moves the stream to
// the new file exactly at the snapshot's point: counters incremented while
// rewrites run come back with exactly the acknowledged value (or one more,
// for an increment written but not yet answered when the process died). A
// command both in the new base and in the new file would count twice.
func TestAOFRewriteExactSwitchPoint(t *testing.T) {
	bin := slotdBinary(t)
	dir := t.TempDir()
	args := []string{"--appendonly", "yes", "--loglevel", "warning"}
	srv := startAOFIn(t, "slotd", bin, dir, args...)
	const n = 4
	var acked [n]atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", srv.Addr())
			if err != nil {
				return
			}
			defer conn.Close()
			r := bufio.NewReader(conn)
			cmd := encodeCommand(nil, []string{"INCR", "counter:" + strconv.Itoa(i)})
			for {
				select {
				case <-stop:
					return
				default:
				}
				conn.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := conn.Write(cmd); err != nil {
					return
				}
				line, err := r.ReadString('\n')
				if err != nil || line[0] != ':' {
					return
				}
				v, _ := strconv.ParseInt(strings.TrimSpace(line[1:]), 10, 64)
				acked[i].Store(v)
			}
		}()
	}
	total := func() int64 {
		var s int64
		for i := range acked {
			s += acked[i].Load()
		}
		return s
	}
	deadline := time.Now().Add(60 * time.Second)
	for r := 1; r <= 4; r++ {
		for total() < int64(r)*1500 {
			if time.Now().After(deadline) {
				t.Fatalf("load too slow: %d increments", total())
			}
			time.Sleep(10 * time.Millisecond)
		}
		mustCmd(t, srv.Addr(), "BGREWRITEAOF")
		waitRewriteDone(t, srv.Addr())
	}
	srv.kill()
	close(stop)
	wg.Wait()
	srv2 := startAOFIn(t, "slotd", bin, dir, args...)
	for i := 0; i < n; i++ {
		got, _ := strconv.ParseInt(mustCmd(t, srv2.Addr(), "GET", "counter:"+strconv.Itoa(i)), 10, 64)
		if a := acked[i].Load(); got != a && got != a+1 {
			t.Fatalf("counter:%d is %d after restart, %d were acknowledged", i, got, a)
		}
	}
	t.Logf("%d increments across 4 rewrites, every counter exact", total())
}

func TestAOFConfigSetAppendonlyAtRuntime(t *testing.T) {
	bin := slotdBinary(t)
	dir := t.TempDir()
	srv := startAOFIn(t, "slotd", bin, dir, "--save", "", "--loglevel", "warning")
	mustCmd(t, srv.Addr(), "SET", "before", "1")
	mustCmd(t, srv.Addr(), "CONFIG", "SET", "appendonly", "yes")
	waitRewriteDone(t, srv.Addr())
	mustCmd(t, srv.Addr(), "SET", "after", "2")
	info := mustCmd(t, srv.Addr(), "INFO", "persistence")
	if infoField(info, "aof_enabled") != "1" || infoField(info, "aof_current_size") == "" {
		t.Fatalf("INFO after CONFIG SET appendonly yes:\n%s", info)
	}
	srv.kill()
	srv2 := startAOFIn(t, "slotd", bin, dir, "--save", "", "--appendonly", "yes", "--loglevel", "warning")
	if a, b := mustCmd(t, srv2.Addr(), "GET", "before"), mustCmd(t, srv2.Addr(), "GET", "after"); a != "1" || b != "2" {
		t.Fatalf("after restart: before=%q after=%q", a, b)
	}
}

// TestAOFReplicaFullSyncRestartsAOF: a replica with the AOF on that loads
// its master's RDB starts its AOF over from the new data, so that after a
// crash it comes back with both what the sync brought and what streamed
// after it.
func TestAOFReplicaFullSyncRestartsAOF(t *testing.T) {
	bin := slotdBinary(t)
	master := startAOFIn(t, "master", bin, t.TempDir(), "--save", "", "--loglevel", "warning")
	for i := 0; i < 100; i++ {
		mustCmd(t, master.Addr(), "SET", "synced:"+strconv.Itoa(i), "v")
	}
	rdir := t.TempDir()
	rargs := []string{"--save", "", "--appendonly", "yes", "--loglevel", "warning", "--replicaof", "127.0.0.1", strconv.Itoa(master.Port)}
	replica := startAOFIn(t, "replica", bin, rdir, rargs...)
	waitKey := func(key string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			if v, err := cmd(replica.Addr(), "GET", key); err == nil && v != "" {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica never got %s:\n%s", key, replica.Output())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitKey("synced:99")
	mustCmd(t, master.Addr(), "SET", "streamed", "after-sync")
	waitKey("streamed")
	waitRewriteDone(t, replica.Addr())
	replica.kill()
	master.kill()
	replica2 := startAOFIn(t, "replica", bin, rdir, rargs...)
	for _, k := range []string{"synced:0", "synced:99", "streamed"} {
		if v, err := cmd(replica2.Addr(), "GET", k); err != nil || v == "" {
			t.Fatalf("after the crash the replica lacks %s (%q, %v)", k, v, err)
		}
	}
}
