package e2e

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotd/slotd/slots"
)

// Persistence tests: RDB files exchanged with a real redis-server 7.0 in
// both directions, BGSAVE under a write load, a cluster node's restart.
// Their servers listen on ports from SLOTD_E2E_PERSIST_PORTS (default
// 23000-23499).

var persistPorts = &portPool{env: "SLOTD_E2E_PERSIST_PORTS", lo: 23000, hi: 23499}

func persistPort(t *testing.T) int { t.Helper(); return persistPorts.take(t) }

// startIn starts bin in dir (its working directory and --dir) on port, and
// registers its termination.
func startIn(t *testing.T, name, bin, dir string, port int, args ...string) *server {
	t.Helper()
	s := &server{Name: name, Port: port, out: &lockedBuffer{}, done: make(chan struct{})}
	full := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir}, args...)
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
	if err := s.waitReady(60 * time.Second); err != nil {
		t.Fatalf("%s did not start: %v", name, err)
	}
	return s
}

func client(s *server) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true, Protocol: 2, ReadTimeout: 30 * time.Second})
}

// populate writes a data set covering every type and encoding
// redis-server 7.0 keeps: int, embstr and raw strings (binary, long,
// compressible), small (listpack, intset) and large (quicklist, hashtable,
// skiplist) collections, TTLs, and keys in several databases.
func populate(t *testing.T, c *redis.Client) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	bin := make([]byte, 300)
	for i := range bin {
		bin[i] = byte(rng.IntN(256))
	}
	strs := map[string]string{
		"int:0": "0", "int:neg": "-1", "int:127": "127", "int:128": "128", "int:32767": "32767", "int:32768": "32768",
		"int:big": "2147483648", "int:huge": "4611686018427387904", "int:min": "-9223372036854775808",
		"notint:lead0": "007", "notint:float": "3.14", "empty": "", "bin:short": "\x00\xff\r\n",
		"bin:long": string(bin), "raw:compressible": strings.Repeat("abc", 1000), "raw:44": strings.Repeat("x", 44),
		"raw:45": strings.Repeat("y", 45),
	}
	for k, v := range strs {
		must(c.Set(ctx, k, v, 0).Err())
	}
	must(c.Append(ctx, "raw:appended", "short").Err())
	must(c.IncrByFloat(ctx, "float:incr", 1.5).Err())
	// Lists.
	must(c.RPush(ctx, "list:small", "a", "1", "-5", "hello", string(bin[:10])).Err())
	for i := 0; i < 2000; i++ {
		must(c.RPush(ctx, "list:large", "element-"+strconv.Itoa(i)).Err())
	}
	for i := 0; i < 50; i++ {
		must(c.RPush(ctx, "list:bigitems", strings.Repeat(strconv.Itoa(i), 200)).Err())
	}
	// Hashes.
	must(c.HSet(ctx, "hash:small", "f1", "v1", "f2", "2", "f3", string(bin[:20])).Err())
	for i := 0; i < 300; i++ {
		must(c.HSet(ctx, "hash:large", "field"+strconv.Itoa(i), strconv.Itoa(i*i)).Err())
	}
	must(c.HSet(ctx, "hash:longvalue", "f", strings.Repeat("v", 100)).Err())
	// Sets.
	must(c.SAdd(ctx, "set:intset", 1, 2, 3, -100, 1<<40).Err())
	for i := 0; i < 600; i++ {
		must(c.SAdd(ctx, "set:bigints", i*3).Err())
	}
	must(c.SAdd(ctx, "set:strings", "a", "b", "c").Err())
	for i := 0; i < 300; i++ {
		must(c.SAdd(ctx, "set:large", "m"+strconv.Itoa(i)).Err())
	}
	// Sorted sets.
	must(c.ZAdd(ctx, "zset:small", redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: -2, Member: "b"},
		redis.Z{Score: 1e300, Member: "c"}).Err())
	must(c.Do(ctx, "ZADD", "zset:inf", "inf", "top", "-inf", "bottom", "0", "zero").Err())
	for i := 0; i < 300; i++ {
		must(c.ZAdd(ctx, "zset:large", redis.Z{Score: float64(i) / 7, Member: "member" + strconv.Itoa(i)}).Err())
	}
	must(c.ZAdd(ctx, "zset:longmember", redis.Z{Score: 1, Member: strings.Repeat("m", 100)}).Err())
	// TTLs.
	must(c.Set(ctx, "ttl:string", "v", 0).Err())
	must(c.PExpireAt(ctx, "ttl:string", time.Now().Add(time.Hour)).Err())
	must(c.RPush(ctx, "ttl:list", "x").Err())
	must(c.ExpireAt(ctx, "ttl:list", time.Now().Add(48*time.Hour)).Err())
	must(c.HSet(ctx, "ttl:hash", "a", "b").Err())
	must(c.PExpire(ctx, "ttl:hash", 10*time.Minute).Err())
	// Many plain keys, and other databases.
	pipe := c.Pipeline()
	for i := 0; i < 5000; i++ {
		pipe.Set(ctx, "plain:"+strconv.Itoa(i), "value-"+strconv.Itoa(i), 0)
	}
	_, err := pipe.Exec(ctx)
	must(err)
	for _, db := range []int{1, 5} {
		pipe := c.Pipeline()
		pipe.Select(ctx, db)
		pipe.Set(ctx, "db"+strconv.Itoa(db)+":key", "in db "+strconv.Itoa(db), 0)
		pipe.RPush(ctx, "db"+strconv.Itoa(db)+":list", "1", "2")
		pipe.Set(ctx, "shared", "db"+strconv.Itoa(db), time.Hour)
		pipe.Select(ctx, 0)
		_, err := pipe.Exec(ctx)
		must(err)
	}
}

// snapshotOf reads every key of every database: type, encoding, content
// (collections sorted where they have no order) and absolute expiry time.
func snapshotOf(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for db := 0; db < 16; db++ {
		conn := c.Conn()
		if err := conn.Select(ctx, db).Err(); err != nil {
			t.Fatal(err)
		}
		var cursor uint64
		for {
			keys, next, err := conn.Scan(ctx, cursor, "*", 1000).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				out[strconv.Itoa(db)+"/"+k] = describeKey(t, conn, k)
			}
			if next == 0 {
				break
			}
			cursor = next
		}
		conn.Close()
	}
	return out
}

func describeKey(t *testing.T, c *redis.Conn, k string) string {
	t.Helper()
	ctx := context.Background()
	typ := c.Type(ctx, k).Val()
	enc := c.ObjectEncoding(ctx, k).Val()
	exp := c.PExpireTime(ctx, k).Val()
	var content string
	switch typ {
	case "string":
		content = fmt.Sprintf("%q", c.Get(ctx, k).Val())
	case "list":
		content = fmt.Sprintf("%q", c.LRange(ctx, k, 0, -1).Val())
	case "hash":
		m := c.HGetAll(ctx, k).Val()
		var kv []string
		for f, v := range m {
			kv = append(kv, fmt.Sprintf("%q=%q", f, v))
		}
		slices.Sort(kv)
		content = strings.Join(kv, ",")
	case "set":
		m := c.SMembers(ctx, k).Val()
		slices.Sort(m)
		content = fmt.Sprintf("%q", m)
	case "zset":
		content = fmt.Sprint(c.Do(ctx, "ZRANGE", k, 0, -1, "WITHSCORES").Val())
	}
	return fmt.Sprintf("%s %s exp=%d %s", typ, enc, exp, content)
}

func compareSnapshots(t *testing.T, want, got map[string]string, wantName, gotName string) {
	t.Helper()
	bad := 0
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("key %s missing in %s", k, gotName)
		} else if g != w {
			t.Errorf("key %s:\n %s: %.300s\n %s: %.300s", k, wantName, w, gotName, g)
		} else {
			continue
		}
		if bad++; bad > 10 {
			t.Fatal("too many differences")
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("key %s only in %s", k, gotName)
		}
	}
	if len(want) < 5000 {
		t.Fatalf("data set too small: %d keys", len(want))
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPersistRedisRDBLoadsInSlotd: redis-server 7.0 SAVEs the data set;
// slotd started on that dump.rdb holds the same keys, values, encodings
// and expiry times.
func TestPersistRedisRDBLoadsInSlotd(t *testing.T) {
	rdir, sdir := t.TempDir(), t.TempDir()
	r := startIn(t, "redis-server", redisServerBinary(t), rdir, persistPort(t), "--save", "", "--appendonly", "no")
	rc := client(r)
	defer rc.Close()
	populate(t, rc)
	if err := rc.Save(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	want := snapshotOf(t, rc)
	copyFile(t, filepath.Join(rdir, "dump.rdb"), filepath.Join(sdir, "dump.rdb"))
	s := startIn(t, "slotd", slotdBinary(t), sdir, persistPort(t), "--save", "")
	sc := client(s)
	defer sc.Close()
	got := snapshotOf(t, sc)
	compareSnapshots(t, want, got, "redis-server", "slotd")
	info := sc.Info(context.Background(), "persistence").Val()
	if !strings.Contains(info, fmt.Sprintf("rdb_last_load_keys_loaded:%d\r\n", len(want))) {
		t.Errorf("INFO persistence after load:\n%s", info)
	}
}

// TestPersistSlotdRDBLoadsInRedis: slotd SAVEs the data set; redis-check-rdb
// accepts the file and redis-server loads the same content.
func TestPersistSlotdRDBLoadsInRedis(t *testing.T) {
	rdir, sdir := t.TempDir(), t.TempDir()
	s := startIn(t, "slotd", slotdBinary(t), sdir, persistPort(t), "--save", "")
	sc := client(s)
	defer sc.Close()
	populate(t, sc)
	if err := sc.Save(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	want := snapshotOf(t, sc)
	file := filepath.Join(sdir, "dump.rdb")
	out, err := exec.Command(needTool(t, "redis-check-rdb"), file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "RDB looks OK!") {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	copyFile(t, file, filepath.Join(rdir, "dump.rdb"))
	r := startIn(t, "redis-server", redisServerBinary(t), rdir, persistPort(t), "--save", "", "--appendonly", "no")
	rc := client(r)
	defer rc.Close()
	got := snapshotOf(t, rc)
	compareSnapshots(t, want, got, "slotd", "redis-server")
}

// TestPersistBgsaveConsistentUnderLoad runs BGSAVE while writers run
// transactions that increment a counter and every key of a group spread
// over many slots (standalone MULTI spans slots), and a reader measures
// its worst latency. The file, loaded into a second slotd, must hold the
// same value in every key of the group and the counter: one point in
// time. The same load runs on redis-server for the latency figure.
func TestPersistBgsaveConsistentUnderLoad(t *testing.T) {
	const group = 64
	keys := make([]string, group)
	for i := range keys {
		keys[i] = "member:" + strconv.Itoa(i*131)
	}
	run := func(name, bin string, extra ...string) (dir string, before int64) {
		dir = t.TempDir()
		s := startIn(t, name, bin, dir, persistPort(t), append([]string{"--save", "", "--enable-debug-command", "yes"}, extra...)...)
		sc := client(s)
		defer sc.Close()
		ctx := context.Background()
		// Bulk so that the BGSAVE takes a while.
		if err := sc.Do(ctx, "DEBUG", "POPULATE", "300000", "bulk", "100").Err(); err != nil {
			t.Fatal(err)
		}
		var stop atomic.Bool
		var txns atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < 2; w++ {
			wc := client(s)
			defer wc.Close()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					_, err := wc.TxPipelined(ctx, func(p redis.Pipeliner) error {
						p.Incr(ctx, "counter")
						for _, k := range keys {
							p.Incr(ctx, k)
						}
						return nil
					})
					if err != nil {
						if !stop.Load() {
							t.Error(err)
						}
						return
					}
					txns.Add(1)
				}
			}()
		}
		var maxLat atomic.Int64
		rc := client(s)
		defer rc.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				start := time.Now()
				if err := rc.Get(ctx, "bulk:"+strconv.Itoa(rand.IntN(300000))).Err(); err != nil && err != redis.Nil {
					t.Error(err)
					return
				}
				if d := int64(time.Since(start)); d > maxLat.Load() {
					maxLat.Store(d)
				}
			}
		}()
		deadline := time.Now().Add(20 * time.Second)
		for txns.Load() < 50 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		baseLat := time.Duration(maxLat.Load())
		maxLat.Store(0)
		before = txns.Load()
		if got := sc.BgSave(ctx).Val(); got != "Background saving started" {
			t.Fatalf("%s BGSAVE: %q", name, got)
		}
		start := time.Now()
		deadline = time.Now().Add(60 * time.Second)
		for {
			info := sc.Info(ctx, "persistence").Val()
			if strings.Contains(info, "rdb_bgsave_in_progress:0") {
				if !strings.Contains(info, "rdb_last_bgsave_status:ok") {
					t.Fatalf("%s BGSAVE failed:\n%s", name, info)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: BGSAVE did not finish", name)
			}
			time.Sleep(10 * time.Millisecond)
		}
		took := time.Since(start)
		during := txns.Load() - before
		bgLat := time.Duration(maxLat.Load())
		stop.Store(true)
		wg.Wait()
		t.Logf("%s: BGSAVE of %d keys took %v; %d transactions ran meanwhile; worst GET latency %v during BGSAVE (%v in the second before)",
			name, sc.DBSize(ctx).Val(), took.Round(time.Millisecond), during, bgLat.Round(time.Microsecond), baseLat.Round(time.Microsecond))
		if during == 0 {
			t.Errorf("%s: no transaction completed during the BGSAVE", name)
		}
		if bgLat > time.Second {
			t.Errorf("%s: a client waited %v during BGSAVE", name, bgLat)
		}
		return dir, before
	}
	dir, before := run("slotd", slotdBinary(t))
	if os.Getenv("SLOTD_E2E_SKIP_REDIS_COMPARE") == "" {
		run("redis-server", redisServerBinary(t), "--appendonly", "no")
	}

	ctx := context.Background()
	dir2 := t.TempDir()
	copyFile(t, filepath.Join(dir, "dump.rdb"), filepath.Join(dir2, "dump.rdb"))
	s2 := startIn(t, "slotd", slotdBinary(t), dir2, persistPort(t), "--save", "")
	c2 := client(s2)
	defer c2.Close()
	counter := c2.Get(ctx, "counter").Val()
	if counter == "" {
		t.Fatal("counter missing from the image")
	}
	n, _ := strconv.ParseInt(counter, 10, 64)
	if n < before {
		t.Errorf("image counter %d is older than the BGSAVE (%d transactions before it)", n, before)
	}
	for _, k := range keys {
		if v := c2.Get(ctx, k).Val(); v != counter {
			t.Fatalf("image: counter=%s but %s=%s: not one point in time", counter, k, v)
		}
	}
	if got := c2.DBSize(ctx).Val(); got != int64(300000+group+1) {
		t.Errorf("image has %d keys", got)
	}
}

// TestPersistClusterNodeRestart: a cluster node that serves every slot
// keeps its id, its slots and its keys across SHUTDOWN and start.
func TestPersistClusterNodeRestart(t *testing.T) {
	dir := t.TempDir()
	port := persistPort(t)
	cport := port + 250 // the bus port stays in the test's range
	args := []string{"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(cport),
		"--cluster-config-file", filepath.Join(dir, "nodes.conf")}
	bin := slotdBinary(t)
	s := startIn(t, "slotd", bin, dir, port, args...)
	c := client(s)
	ctx := context.Background()
	if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err(); err != nil {
		t.Fatal(err)
	}
	id := c.Do(ctx, "CLUSTER", "MYID").Val()
	waitClusterOK := func(c *redis.Client) {
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(c.ClusterInfo(ctx).Val(), "cluster_state:ok") {
			if time.Now().After(deadline) {
				t.Fatalf("cluster_state not ok: %s", c.ClusterInfo(ctx).Val())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitClusterOK(c)
	for i := 0; i < 1000; i++ {
		if err := c.Set(ctx, "{"+strconv.Itoa(i)+"}k", i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c.Do(ctx, "SHUTDOWN")
	c.Close()
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		t.Fatal("slotd did not exit after SHUTDOWN")
	}
	// The bus port may linger a moment after the exit.
	s2 := startIn(t, "slotd", bin, dir, port, args...)
	c2 := client(s2)
	defer c2.Close()
	if got := c2.Do(ctx, "CLUSTER", "MYID").Val(); got != id {
		t.Fatalf("id %v after restart, was %v", got, id)
	}
	waitClusterOK(c2)
	if n := c2.DBSize(ctx).Val(); n != 1000 {
		t.Fatalf("%d keys after restart, want 1000", n)
	}
	if v := c2.Get(ctx, "{999}k").Val(); v != "999" {
		t.Fatalf("{999}k = %q", v)
	}
	if n := c2.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(slots.Of([]byte("{5}k")))).Val(); n != int64(1) {
		t.Fatalf("COUNTKEYSINSLOT: %v", n)
	}
}
