package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The resharding tests drive slot migration with the unmodified
// redis-cli --cluster (reshard, rebalance, fix, add-node, del-node,
// import) while go-redis clients keep reading and writing, and check that
// no key or update is lost.

// reshardLoad is a live load through a go-redis ClusterClient: RPUSH of
// unique increasing values to listKeys lists, INCR of counters and SET of
// strings, split among workers so that each key has a single writer (its
// order is then known).
type reshardLoad struct {
	rdb      *redis.ClusterClient
	listKeys int
	workers  int
	total    int64

	done     atomic.Int64
	stop     atomic.Bool // set to end the load early, between operations
	errs     atomic.Int64
	firstErr atomic.Value
	// Per worker: what it pushed to each of its lists (count), what it
	// added to each counter, the last value it SET.
	pushed   []map[int]int
	counted  []map[int]int64
	lastSet  []map[int]string
	finished sync.WaitGroup
}

func newReshardLoad(c *cluster, listKeys, workers int, total int64) *reshardLoad {
	l := &reshardLoad{
		rdb: redis.NewClusterClient(&redis.ClusterOptions{
			Addrs:           c.Addrs(),
			DisableIdentity: true,
			DialTimeout:     5 * time.Second,
			ReadTimeout:     10 * time.Second,
			MaxRedirects:    16,
		}),
		listKeys: listKeys, workers: workers, total: total,
	}
	for range workers {
		l.pushed = append(l.pushed, map[int]int{})
		l.counted = append(l.counted, map[int]int64{})
		l.lastSet = append(l.lastSet, map[int]string{})
	}
	return l
}

func listKey(i int) string    { return "list:" + strconv.Itoa(i) }
func counterKey(i int) string { return "ctr:" + strconv.Itoa(i) }
func stringKey(i int) string  { return "str:" + strconv.Itoa(i) }

// start runs the workers until total operations are done or ctx ends.
func (l *reshardLoad) start(ctx context.Context) {
	per := l.listKeys / l.workers
	for w := range l.workers {
		l.finished.Add(1)
		go func() {
			defer l.finished.Done()
			for i := 0; ctx.Err() == nil; i++ {
				if l.stop.Load() || l.done.Add(1) > l.total {
					return
				}
				k := w + l.workers*(i%per) // this worker's keys only
				var err error
				switch i % 4 {
				case 0, 1:
					n := l.pushed[w][k]
					err = l.rdb.RPush(ctx, listKey(k), n).Err()
					if err == nil {
						l.pushed[w][k] = n + 1
					}
				case 2:
					ck := k % 4992 // multiples of the worker counts keep keys apart
					err = l.rdb.Incr(ctx, counterKey(ck)).Err()
					if err == nil {
						l.counted[w][ck]++
					}
				case 3:
					sk := k % 9984
					v := fmt.Sprintf("w%d-i%d", w, i)
					err = l.rdb.Set(ctx, stringKey(sk), v, 0).Err()
					if err == nil {
						l.lastSet[w][sk] = v
					}
				}
				if err != nil && ctx.Err() == nil {
					if l.errs.Add(1) == 1 {
						l.firstErr.Store(fmt.Sprintf("worker %d op %d: %v", w, i, err))
					}
					// An unknown outcome breaks the bookkeeping of this key:
					// stop this worker rather than report false losses.
					return
				}
			}
		}()
	}
}

// verify checks every list, counter and string against what the workers
// were told succeeded.
func (l *reshardLoad) verify(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if n := l.errs.Load(); n > 0 {
		t.Fatalf("the client saw %d errors; first: %v", n, l.firstErr.Load())
	}
	checked := 0
	for w := range l.workers {
		pipe := l.rdb.Pipeline()
		type check struct {
			key  string
			n    int
			cmd  *redis.StringSliceCmd
			ctr  *redis.StringCmd
			want string
		}
		var cs []check
		for k, n := range l.pushed[w] {
			cs = append(cs, check{key: listKey(k), n: n, cmd: pipe.LRange(ctx, listKey(k), 0, -1)})
		}
		for k, n := range l.counted[w] {
			cs = append(cs, check{key: counterKey(k), ctr: pipe.Get(ctx, counterKey(k)), want: strconv.FormatInt(n, 10)})
		}
		for k, v := range l.lastSet[w] {
			cs = append(cs, check{key: stringKey(k), ctr: pipe.Get(ctx, stringKey(k)), want: v})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatalf("reading back: %v", err)
		}
		for _, c := range cs {
			if c.cmd != nil {
				got := c.cmd.Val()
				if len(got) != c.n {
					t.Fatalf("%s holds %d values, %d were pushed", c.key, len(got), c.n)
				}
				for i, v := range got {
					if v != strconv.Itoa(i) {
						t.Fatalf("%s[%d] = %q: values lost or out of order", c.key, i, v)
					}
				}
			} else if got := c.ctr.Val(); got != c.want {
				t.Fatalf("%s = %q, want %q", c.key, got, c.want)
			}
			checked++
		}
	}
	t.Logf("%d operations, %d keys verified", min(l.done.Load(), l.total), checked)
}

// reshardArgs is the common tail of a non-interactive reshard.
func reshardArgs(addr, from, to string, n int, more ...string) []string {
	return append([]string{"--cluster", "reshard", addr, "--cluster-from", from, "--cluster-to", to,
		"--cluster-slots", strconv.Itoa(n), "--cluster-yes"}, more...)
}

// TestReshardUnderLoad moves a third of the slots with redis-cli --cluster
// reshard while a go-redis ClusterClient performs 200,000 operations.
func TestReshardUnderLoad(t *testing.T) {
	total := int64(200000)
	if s := os.Getenv("SLOTD_E2E_RESHARD_OPS"); s != "" {
		total, _ = strconv.ParseInt(s, 10, 64)
	}
	c := newCluster(t, 3)
	c.Create()
	l := newReshardLoad(c, 50000, 16, total)
	defer l.rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l.start(ctx)
	// Let the load run a moment first so that the moving slots hold keys.
	waitFor(t, 30*time.Second, "some load before the reshard", func() (bool, string) {
		return l.done.Load() > total/10 || l.errs.Load() > 0, fmt.Sprint(l.done.Load())
	})
	from, to := c.Nodes[0].ID(t), c.Nodes[1].ID(t)
	n := 5461
	if s := os.Getenv("SLOTD_E2E_RESHARD_SLOTS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	start := time.Now()
	out, err := redisCLIRun(4*time.Minute, reshardArgs(c.Nodes[0].Addr(), from, to, n, "--cluster-pipeline", "100")...)
	if err != nil {
		t.Fatalf("reshard: %v\n%s", err, tail(out, 3000))
	}
	t.Logf("reshard of %d slots took %v, %d ops done meanwhile", n, time.Since(start).Round(time.Millisecond), l.done.Load())
	l.finished.Wait()
	l.verify(t)
	c.WaitCheck(c.Nodes[0], 20*time.Second)
	if n := mustCmd(t, c.Nodes[0].Addr(), "CLUSTER", "COUNTKEYSINSLOT", "0"); n != "0" {
		t.Errorf("slot 0 still holds %s keys on the source", n)
	}
}

// TestRebalanceAfterAddNode adds an empty master and rebalances onto it
// (weights, --cluster-use-empty-masters, threshold) under load.
func TestRebalanceAfterAddNode(t *testing.T) {
	c := newCluster(t, 3)
	c.Create()
	// Moving 6,553 slots one by one took redis-cli 25-30 ms a slot on a
	// 2-core machine with race-built nodes (each CLUSTER SETSLOT NODE
	// writes nodes.conf), about 3 minutes alone and more beside the other
	// packages' tests; four workers keep the load on without starving it.
	l := newReshardLoad(c, 6000, 4, 1<<40)
	defer l.rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	l.start(ctx)

	fresh := c.AddNode()
	out, err := redisCLIRun(30*time.Second, "--cluster", "add-node", fresh.Addr(), c.Nodes[0].Addr())
	if err != nil || !strings.Contains(out, "[OK] New node added correctly.") {
		t.Fatalf("add-node: %v\n%s", err, out)
	}
	c.WaitOK(20 * time.Second)
	c.WaitCheck(c.Nodes[0], 20*time.Second)
	// A threshold above any imbalance moves nothing.
	out, err = redisCLIRun(60*time.Second, "--cluster", "rebalance", c.Nodes[0].Addr(), "--cluster-threshold", "1000")
	if err != nil || !strings.Contains(out, "No rebalancing needed!") {
		t.Fatalf("rebalance with a high threshold: %v\n%s", err, out)
	}
	// The empty master takes a share twice as large as the others'.
	freshID := fresh.ID(t)
	out, err = redisCLIRun(8*time.Minute, "--cluster", "rebalance", c.Nodes[0].Addr(), "--cluster-use-empty-masters",
		"--cluster-weight", freshID+"=2", "--cluster-pipeline", "50")
	if err != nil {
		t.Fatalf("rebalance: %v\n%s", err, tail(out, 3000))
	}
	c.WaitCheck(c.Nodes[0], 20*time.Second)
	owners := slotOwners(t, c.Nodes[0])
	count := map[string]int{}
	for _, o := range owners {
		count[o]++
	}
	if n := count[fresh.Addr()]; n < 6400 || n > 6700 {
		t.Errorf("the new master serves %d slots, want about 6553 (weight 2 of 5): %v", n, count)
	}
	l.stop.Store(true)
	l.finished.Wait()
	l.verify(t)
}

// TestDrainAndDelNode empties a master with reshard and removes it with
// del-node while the load runs.
func TestDrainAndDelNode(t *testing.T) {
	c := newCluster(t, 4)
	c.Create()
	l := newReshardLoad(c, 6000, 4, 1<<40) // see TestRebalanceAfterAddNode
	defer l.rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	l.start(ctx)
	victim := c.Nodes[3]
	vid := victim.ID(t)
	owners := slotOwners(t, c.Nodes[0])
	n := 0
	for _, o := range owners {
		if o == victim.Addr() {
			n++
		}
	}
	// Split its slots between two others.
	half := n / 2
	for i, to := range []*clusterNode{c.Nodes[0], c.Nodes[1]} {
		cnt := half
		if i == 1 {
			cnt = n - half
		}
		out, err := redisCLIRun(3*time.Minute, reshardArgs(c.Nodes[0].Addr(), vid, to.ID(t), cnt, "--cluster-pipeline", "50")...)
		if err != nil {
			t.Fatalf("drain reshard: %v\n%s", err, tail(out, 3000))
		}
	}
	if k := mustCmd(t, victim.Addr(), "DBSIZE"); k != "0" {
		t.Fatalf("the drained node still holds %s keys", k)
	}
	// The load stops before del-node: once reset, the removed node answers
	// CLUSTER SLOTS with nothing, and a client that refreshes its slot map
	// from it (go-redis asks any node it knows) gets CLUSTERDOWN, against
	// redis-server as against slotd.
	l.stop.Store(true)
	l.finished.Wait()
	out, err := redisCLIRun(30*time.Second, "--cluster", "del-node", c.Nodes[0].Addr(), vid)
	if err != nil {
		t.Fatalf("del-node: %v\n%s", err, out)
	}
	c.Nodes = c.Nodes[:3]
	c.WaitCheck(c.Nodes[0], 20*time.Second)
	// The load's client may still use the removed node (reset, it serves
	// no slot) to refresh its slot map: read back through a new one.
	l.rdb.Close()
	l.rdb = redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), DisableIdentity: true})
	l.verify(t)
}

// TestFixHalfMigratedSlot leaves a slot half migrated (importing on one
// node, migrating on another, keys on both) and lets redis-cli --cluster
// fix repair it.
func TestFixHalfMigratedSlot(t *testing.T) {
	c := newCluster(t, 3)
	c.Create()
	owners := slotOwners(t, c.Nodes[0])
	src, dst := c.Nodes[0], c.Nodes[1]
	slot := -1
	for s, o := range owners {
		if o == src.Addr() {
			slot = s
			break
		}
	}
	tag := tagForSlot(slot)
	keys := []string{}
	for i := range 20 {
		k := fmt.Sprintf("{%s}:k%d", tag, i)
		keys = append(keys, k)
		mustCmd(t, src.Addr(), "SET", k, strconv.Itoa(i))
	}
	mustCmd(t, dst.Addr(), "CLUSTER", "SETSLOT", strconv.Itoa(slot), "IMPORTING", src.ID(t))
	mustCmd(t, src.Addr(), "CLUSTER", "SETSLOT", strconv.Itoa(slot), "MIGRATING", dst.ID(t))
	host, port, _ := strings.Cut(dst.Addr(), ":")
	args := append([]string{"MIGRATE", host, port, "", "0", "5000", "KEYS"}, keys[:10]...)
	if r := mustCmd(t, src.Addr(), args...); r != "OK" {
		t.Fatalf("MIGRATE: %s", r)
	}
	out, _ := redisCLIRun(30*time.Second, "--cluster", "check", src.Addr())
	if !strings.Contains(out, "open slot") && !strings.Contains(out, "Nodes don't agree") {
		t.Logf("check before fix:\n%s", out)
	}
	start := time.Now()
	out, err := redisCLIRun(60*time.Second, "--cluster", "fix", src.Addr(), "--cluster-yes")
	if err != nil {
		t.Fatalf("fix: %v\n%s", err, out)
	}
	t.Logf("fix took %v:\n%s", time.Since(start).Round(time.Millisecond), tail(out, 2000))
	for _, nd := range c.Nodes {
		t.Logf("%s: %s", nd.Addr(), mustCmd(t, nd.Addr(), "CLUSTER", "NODES"))
	}
	c.WaitCheck(src, 20*time.Second)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), DisableIdentity: true})
	defer rdb.Close()
	for i, k := range keys {
		if v, err := rdb.Get(context.Background(), k).Result(); err != nil || v != strconv.Itoa(i) {
			t.Fatalf("%s = %q, %v after fix", k, v, err)
		}
	}
}

// TestClusterImport copies a standalone redis-server's keys into a slotd
// cluster with redis-cli --cluster import (MIGRATE from redis-server).
func TestClusterImport(t *testing.T) {
	c := newCluster(t, 3)
	c.Create()
	rs := startRedis(t)
	const n = 3000
	for i := range n {
		mustCmd(t, rs.Addr(), "SET", "imp:"+strconv.Itoa(i), strconv.Itoa(i*7))
	}
	mustCmd(t, rs.Addr(), "RPUSH", "implist", "a", "b", "c")
	mustCmd(t, rs.Addr(), "HSET", "imphash", "f", "v")
	mustCmd(t, rs.Addr(), "ZADD", "impz", "1.5", "m")
	out, err := redisCLIRun(2*time.Minute, "--cluster", "import", c.Nodes[0].Addr(), "--cluster-from", rs.Addr(), "--cluster-copy")
	if err != nil {
		t.Fatalf("import: %v\n%s", err, tail(out, 3000))
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), DisableIdentity: true})
	defer rdb.Close()
	ctx := context.Background()
	for i := range n {
		k := "imp:" + strconv.Itoa(i)
		if v, err := rdb.Get(ctx, k).Result(); err != nil || v != strconv.Itoa(i*7) {
			t.Fatalf("%s = %q, %v after import", k, v, err)
		}
	}
	if v, err := rdb.LRange(ctx, "implist", 0, -1).Result(); err != nil || strings.Join(v, ",") != "a,b,c" {
		t.Fatalf("implist = %v, %v", v, err)
	}
	if v, err := rdb.ZScore(ctx, "impz", "m").Result(); err != nil || v != 1.5 {
		t.Fatalf("impz = %v, %v", v, err)
	}
	// Importing again without --cluster-replace: the keys exist on the
	// target, redis-cli reports the BUSYKEY error from MIGRATE.
	out, err = redisCLIRun(2*time.Minute, "--cluster", "import", c.Nodes[0].Addr(), "--cluster-from", rs.Addr(), "--cluster-copy")
	if err == nil && !strings.Contains(out, "BUSYKEY") {
		t.Errorf("second import without replace:\n%s", tail(out, 1000))
	}
	out, err = redisCLIRun(2*time.Minute, "--cluster", "import", c.Nodes[0].Addr(), "--cluster-from", rs.Addr(), "--cluster-replace")
	if err != nil {
		t.Fatalf("import with replace: %v\n%s", err, tail(out, 3000))
	}
	if k := mustCmd(t, rs.Addr(), "DBSIZE"); k != "0" {
		t.Errorf("the source keeps %s keys after a move import", k)
	}
	var total int64
	for _, nd := range c.Nodes {
		k, _ := strconv.ParseInt(mustCmd(t, nd.Addr(), "DBSIZE"), 10, 64)
		total += k
	}
	if total != n+3 {
		t.Errorf("the cluster holds %d keys, want %d", total, n+3)
	}
}
