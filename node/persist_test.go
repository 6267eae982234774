package node

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/node/rdb"
	"github.com/slotd/slotd/slots"
)

// newPersistServer is newTestServer with the data directory in a
// temporary directory (the dir directive would chdir the test process).
func newPersistServer(t *testing.T, dir string, directives ...string) *testClient {
	t.Helper()
	tc := newTestServer(t, "enable-debug-command", "yes")
	tc.s.rdb.dir = dir
	for i := 0; i+1 < len(directives); i += 2 {
		tc.expect("+OK|", "CONFIG", "SET", directives[i], directives[i+1])
	}
	return tc
}

// fillMixed writes a mix of types into tc's server.
func fillMixed(tc *testClient, n int) {
	for i := 0; i < n; i++ {
		k := strconv.Itoa(i)
		switch i % 6 {
		case 0:
			tc.do("SET", "s:"+k, "value-"+k)
		case 1:
			tc.do("SET", "i:"+k, k)
			tc.do("PEXPIRE", "i:"+k, "1000000")
		case 2:
			tc.do("RPUSH", "l:"+k, "a", "b", k)
		case 3:
			tc.do("HSET", "h:"+k, "f", k, "g", "x")
		case 4:
			tc.do("SADD", "set:"+k, "1", "2", k)
		case 5:
			tc.do("ZADD", "z:"+k, "1.5", "a", k, "b")
		}
	}
}

// dumpAll renders every key of every database with its type, value digest
// and TTL state, sorted, for comparing two keyspaces.
func dumpAll(s *Server) string {
	var lines []string
	s.ks.LockAllQuiet()
	defer s.ks.UnlockAll()
	for i := 0; i < s.ks.NumDBs(); i++ {
		db := s.ks.DB(i)
		for slot := 0; slot < slots.Count; slot++ {
			db.ForEachInSlot(slot, func(k string, e *keyspace.Entry) bool {
				d := contentDigest(e)
				lines = append(lines, fmt.Sprintf("%d %q %s %x %d", i, k, e.Kind, d, db.ExpireOfKey(slot, k, e)))
				return true
			})
		}
	}
	sortStrings(lines)
	return strings.Join(lines, "\n")
}

func sortStrings(a []string) { slices.Sort(a) }

// contentDigest identifies a value by its RDB encoding (deterministic for
// the small collections these tests write).
func contentDigest(e *keyspace.Entry) [20]byte { return sha1.Sum(rdb.AppendValueUncompressed(nil, e)) }

func TestSaveAndLoad(t *testing.T) {
	dir := t.TempDir()
	tc := newPersistServer(t, dir)
	fillMixed(tc, 600)
	tc.do("SELECT", "3")
	tc.do("SET", "in-db3", "x")
	tc.do("SELECT", "0")
	if got := tc.do("INFO", "persistence"); !strings.Contains(got, "rdb_changes_since_last_save:") || strings.Contains(got, "rdb_changes_since_last_save:0\r\n") {
		t.Fatalf("dirty not counted: %s", got)
	}
	tc.expect("+OK|", "SAVE")
	if got := tc.do("INFO", "persistence"); !strings.Contains(got, "rdb_changes_since_last_save:0\r\n") || !strings.Contains(got, "rdb_saves:1\r\n") {
		t.Fatalf("after SAVE: %s", got)
	}
	want := dumpAll(tc.s)

	tc2 := newPersistServer(t, dir)
	if err := tc2.s.LoadData(); err != nil {
		t.Fatal(err)
	}
	if got := dumpAll(tc2.s); got != want {
		t.Fatalf("loaded keyspace differs")
	}
	if got := tc2.do("INFO", "persistence"); !strings.Contains(got, "rdb_last_load_keys_loaded:601\r\n") {
		t.Fatalf("INFO after load: %s", got)
	}
	// DEBUG RELOAD keeps the content.
	tc2.expect("+OK|", "DEBUG", "RELOAD")
	if got := dumpAll(tc2.s); got != want {
		t.Fatalf("DEBUG RELOAD changed the keyspace")
	}
	tc2.expect("-ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.|", "DEBUG", "RELOAD", "x")
}

func TestLoadDropsExpiredKeys(t *testing.T) {
	dir := t.TempDir()
	tc := newPersistServer(t, dir)
	tc.do("SET", "a", "1")
	tc.do("SET", "b", "2", "PX", "30")
	tc.expect("+OK|", "SAVE")
	time.Sleep(40 * time.Millisecond)
	tc2 := newPersistServer(t, dir)
	if err := tc2.s.LoadData(); err != nil {
		t.Fatal(err)
	}
	tc2.expect(":1|", "DBSIZE")
	if got := tc2.do("INFO", "persistence"); !strings.Contains(got, "rdb_last_load_keys_expired:1\r\n") {
		t.Fatalf("%s", got)
	}
}

func TestBgsaveCommands(t *testing.T) {
	dir := t.TempDir()
	tc := newPersistServer(t, dir)
	fillMixed(tc, 100)
	tc.expect("-ERR syntax error|", "BGSAVE", "x")
	tc.expect("-ERR syntax error|", "BGSAVE", "SCHEDULE", "x")
	before := tc.do("LASTSAVE")
	time.Sleep(1100 * time.Millisecond)
	tc.expect("+Background saving started|", "BGSAVE")
	waitBgsave(t, tc)
	if after := tc.do("LASTSAVE"); after == before {
		t.Fatalf("LASTSAVE did not move: %s", after)
	}
	info := tc.do("INFO", "persistence")
	for _, f := range []string{"rdb_bgsave_in_progress:0", "rdb_last_bgsave_status:ok", "rdb_saves:1", "rdb_last_bgsave_time_sec:0"} {
		if !strings.Contains(info, f+"\r\n") {
			t.Fatalf("missing %s in %s", f, info)
		}
	}
	// In a transaction BGSAVE is scheduled; the cron starts it.
	tc.expect("+OK|", "MULTI")
	tc.expect("+QUEUED|", "BGSAVE")
	tc.expect("*1|+Background saving scheduled|", "EXEC")
	tc.s.persistCron(time.Now())
	waitBgsave(t, tc)
	if info := tc.do("INFO", "persistence"); !strings.Contains(info, "rdb_saves:2\r\n") {
		t.Fatalf("scheduled BGSAVE did not run: %s", info)
	}
	tc.expect("+OK|", "MULTI")
	tc.expect("-ERR Command not allowed inside a transaction|", "SAVE")
	tc.do("DISCARD")
}

func waitBgsave(t *testing.T, tc *testClient) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for tc.s.bgsaveRunning() {
		if time.Now().After(deadline) {
			t.Fatal("BGSAVE did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestBgsaveErrorDeniesWrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	tc := newPersistServer(t, dir, "save", "100 1")
	tc.do("SET", "a", "1")
	tc.expect("-ERR|", "SAVE")
	tc.expect("+Background saving started|", "BGSAVE")
	waitBgsave(t, tc)
	if info := tc.do("INFO", "persistence"); !strings.Contains(info, "rdb_last_bgsave_status:err\r\n") {
		t.Fatalf("%s", info)
	}
	tc.expect("-"+errMisconf+"|", "SET", "a", "2")
	tc.expect("-"+errMisconf+"|", "PING")
	tc.expect("$1|1|", "GET", "a")
	tc.expect("+OK|", "CONFIG", "SET", "stop-writes-on-bgsave-error", "no")
	tc.expect("+OK|", "SET", "a", "2")
	tc.expect("+OK|", "CONFIG", "SET", "stop-writes-on-bgsave-error", "yes")
	tc.expect("-"+errMisconf+"|", "SET", "a", "2")
	os.MkdirAll(dir, 0o755)
	tc.expect("+Background saving started|", "BGSAVE")
	waitBgsave(t, tc)
	tc.expect("+OK|", "SET", "a", "3")
}

func TestSaveRulesInCron(t *testing.T) {
	dir := t.TempDir()
	tc := newPersistServer(t, dir, "save", "1 3")
	tc.do("SET", "a", "1")
	tc.do("SET", "b", "1")
	tc.s.ext.lastSave.Store(time.Now().Unix() - 5)
	tc.s.persistCron(time.Now())
	if tc.s.bgsaveRunning() {
		t.Fatal("saved with 2 changes of 3")
	}
	tc.do("SET", "c", "1")
	tc.s.persistCron(time.Now())
	waitBgsave(t, tc)
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatal(err)
	}
	if info := tc.do("INFO", "persistence"); !strings.Contains(info, "rdb_changes_since_last_save:0\r\n") {
		t.Fatalf("%s", info)
	}
}

func TestFlushAllSavesWithRules(t *testing.T) {
	dir := t.TempDir()
	tc := newPersistServer(t, dir, "save", "100 1")
	tc.do("SET", "a", "1")
	tc.expect("+OK|", "FLUSHALL")
	tc2 := newPersistServer(t, dir)
	if err := tc2.s.LoadData(); err != nil {
		t.Fatal(err)
	}
	tc2.expect(":0|", "DBSIZE")
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatal(err)
	}
	tc3 := newPersistServer(t, t.TempDir(), "save", "")
	tc3.do("SET", "a", "1")
	tc3.expect("+OK|", "FLUSHALL")
	if _, err := os.Stat(filepath.Join(tc3.s.rdb.dir, "dump.rdb")); err == nil {
		t.Fatal("FLUSHALL saved without save rules")
	}
}

// TestSnapshotPointInTime writes while a snapshot runs and checks that the
// image is the keyspace at the snapshot's start: a transaction-like
// writer appends the same counter value to keys in many slots under their
// locks, and the image must hold one value everywhere.
func TestSnapshotPointInTime(t *testing.T) {
	tc := newPersistServer(t, t.TempDir())
	const nkeys = 200
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i*7919)
		tc.do("SET", keys[i], "0")
	}
	fillMixed(tc, 3000)
	tc.do("SELECT", "2")
	fillMixed(tc, 300)
	tc.do("SELECT", "0")

	var stop atomic.Bool
	var wg sync.WaitGroup
	var atStart atomic.Int64
	counter := atomic.Int64{}
	for w := 0; w < 2; w++ {
		wc := tc.newClient()
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"MSET"}
			for !stop.Load() {
				// MSET locks every key's slot at once: one atomic write.
				v := strconv.FormatInt(counter.Add(1), 10)
				args = args[:1]
				for _, k := range keys {
					args = append(args, k, v)
				}
				wc.do(args...)
				wc.do("DEL", "s:"+v)
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	var buf bytes.Buffer
	var seen string
	err := tc.s.writeSnapshot(&slowWriter{w: &buf, counter: &counter}, func() {
		atStart.Store(1)
		// Every lock is held: the keyspace is what the image must hold.
		seen = dumpAllLocked(tc.s)
	})
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	tc2 := newPersistServer(t, t.TempDir())
	if _, err := tc2.s.loadRDBFrom(&buf); err != nil {
		t.Fatal(err)
	}
	if got := dumpAll(tc2.s); got != seen {
		t.Fatalf("image differs from the keyspace at its start")
	}
	v := tc2.do("GET", keys[0])
	for _, k := range keys {
		if got := tc2.do("GET", k); got != v {
			t.Fatalf("key %s = %q, key %s = %q: not one point in time", keys[0], v, k, got)
		}
	}
	if tc.s.ks.Captures() != 0 {
		t.Fatal("capture left active")
	}
	t.Logf("writes during the snapshot: %d", counter.Load())
}

// slowWriter holds the snapshot's first flush (64 KB in, about the middle
// of the data) until the writers have made more transactions, so that they
// overtake it.
type slowWriter struct {
	w       *bytes.Buffer
	counter *atomic.Int64
	waited  bool
}

func (s *slowWriter) Write(p []byte) (int, error) {
	if !s.waited {
		s.waited = true
		want := s.counter.Load() + 50
		deadline := time.Now().Add(5 * time.Second)
		for s.counter.Load() < want && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	return s.w.Write(p)
}

func dumpAllLocked(s *Server) string {
	var lines []string
	for i := 0; i < s.ks.NumDBs(); i++ {
		db := s.ks.DB(i)
		for slot := 0; slot < slots.Count; slot++ {
			db.ForEachInSlot(slot, func(k string, e *keyspace.Entry) bool {
				d := contentDigest(e)
				lines = append(lines, fmt.Sprintf("%d %q %s %x %d", i, k, e.Kind, d, db.ExpireOfKey(slot, k, e)))
				return true
			})
		}
	}
	sortStrings(lines)
	return strings.Join(lines, "\n")
}

func BenchmarkWriteSnapshot(b *testing.B) {
	tc := newTestServer(&testing.T{}, "enable-debug-command", "yes")
	fillMixed(tc, 100000)
	b.ResetTimer()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := tc.s.writeSnapshot(io.Discard, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadRDB(b *testing.B) {
	tc := newTestServer(&testing.T{}, "enable-debug-command", "yes")
	fillMixed(tc, 200000)
	var buf bytes.Buffer
	if err := tc.s.writeSnapshot(&buf, nil); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.ResetTimer()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s2 := newTestServer(&testing.T{}).s
		b.StartTimer()
		if _, err := s2.loadRDBFrom(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestActiveExpireCapturesOnlyOnDelete: the expire cycle visits slots
// during a snapshot without copying them unless it deletes a key.
func TestActiveExpireCapturesOnlyOnDelete(t *testing.T) {
	tc := newPersistServer(t, t.TempDir())
	for i := 0; i < 2000; i++ {
		tc.do("SET", "k"+strconv.Itoa(i), "v", "EX", "1000")
	}
	tc.do("SET", "gone", "v", "PX", "1")
	time.Sleep(5 * time.Millisecond)
	tc.s.ks.LockAllQuiet()
	sn := tc.s.beginSnapshot(true)
	tc.s.ks.UnlockAll()
	defer sn.end()
	tc.s.activeExpire(time.Now().UnixMilli(), time.Second)
	slot := slots.Of([]byte("gone"))
	tc.s.ks.LockQuiet(slot)
	pending := sn.capt.Pending(slot)
	tc.s.ks.Unlock(slot)
	if pending {
		t.Fatal("slot with an expired key not captured before the deletion")
	}
	if got := sn.buffered.Load(); got <= 0 || got > 2000 {
		t.Fatalf("captured %d bytes: want the one slot that changed", got)
	}
	var buf bytes.Buffer
	if err := sn.write(&buf, false); err != nil {
		t.Fatal(err)
	}
	tc2 := newPersistServer(t, t.TempDir())
	res, err := tc2.s.loadRDB(&buf, loadOpts{keepExpired: true})
	if err != nil || res.Loaded != 2001 {
		t.Fatalf("loaded %d keys, err %v", res.Loaded, err)
	}
}

// TestLoadStopsAtFirstBadKey: the parallel loader reports the first bad
// key of the stream (a value that does not decode, a key met twice) as
// reading key by key would, with every key before it loaded.
func TestLoadStopsAtFirstBadKey(t *testing.T) {
	const n, bad = 20000, 13000
	file := func(badKey func(w *rdb.Writer)) []byte {
		var buf bytes.Buffer
		w := rdb.NewWriter(&buf, rdb.Options{})
		w.SelectDB(0, n, 0)
		for i := 0; i < n; i++ {
			if i == bad {
				badKey(w)
			}
			h := keyspace.NewHash()
			h.Set([]byte("f"), []byte(strconv.Itoa(i)))
			e := keyspace.NewObject(h)
			if i%2 == 0 {
				e = keyspace.NewString([]byte("v" + strconv.Itoa(i)))
			}
			w.Key(&rdb.Record{Key: []byte("k" + strconv.Itoa(i)), Entry: e})
		}
		w.Close()
		return buf.Bytes()
	}
	for _, c := range []struct {
		name, want string
		badKey     func(w *rdb.Writer)
	}{
		{"duplicate", `duplicated key "k7" in database 0`, func(w *rdb.Writer) {
			w.Key(&rdb.Record{Key: []byte("k7"), Entry: keyspace.NewString([]byte("x"))})
		}},
		{"corrupt", `key "bad": rdb: corrupt data`, func(w *rdb.Writer) {
			// A hash listpack whose blob is no listpack.
			w.Records([]byte{rdb.TypeHashListpack, 3, 'b', 'a', 'd', 3, 'x', 'y', 'z'})
		}},
	} {
		tc := newTestServer(t)
		res, err := tc.s.loadRDB(bytes.NewReader(file(c.badKey)), loadOpts{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: error %v, want %q", c.name, err, c.want)
		}
		if res.Loaded != bad || tc.s.ks.DB(0).Len() != bad {
			t.Fatalf("%s: loaded %d (%d keys), want %d", c.name, res.Loaded, tc.s.ks.DB(0).Len(), bad)
		}
	}
}
