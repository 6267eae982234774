package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var debugArgs = []string{"--enable-debug-command", "yes"}

// TestReplSlotdReplicaOfRedis: slotd replicates a redis-server 7 master
// that takes writes before, during and after the sync, in both transfer
// modes; afterwards every key matches, the replica refuses writes, and
// link cuts from either side continue from the master's backlog.
func TestReplSlotdReplicaOfRedis(t *testing.T) {
	testReplInterop(t, true)
}

// TestReplRedisReplicaOfSlotd: a redis-server 7 replicates a slotd master
// under writes, in both transfer modes, and survives link cuts with a
// partial resync.
func TestReplRedisReplicaOfSlotd(t *testing.T) {
	testReplInterop(t, false)
}

// testReplInterop runs one master and one replica, one of them slotd and
// the other redis-server (slotdReplica says which is slotd): a full sync
// under writes in each transfer mode, then a link cut from each side under
// writes, each answered by a partial resync.
func testReplInterop(t *testing.T, slotdReplica bool) {
	for _, diskless := range []string{"no", "yes"} {
		t.Run("diskless="+diskless, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			masterArgs := []string{"--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0", "--repl-backlog-size", "100mb"}
			var m, r *server
			if slotdReplica {
				m = replRedis(t, append(debugArgs, masterArgs...)...)
			} else {
				m = replSlotd(t, masterArgs...)
			}
			mc := replClient(t, m)
			if err := mixedWrites(ctx, mc, 1, 20000); err != nil {
				t.Fatal(err)
			}
			w := startWriter(ctx, mc, 100)
			if slotdReplica {
				r = replSlotd(t, debugArgs...)
			} else {
				r = replRedis(t)
			}
			rc := replClient(t, r)
			replicate(t, ctx, rc, m)
			waitUntil(t, 30*time.Second, "writes during the stream", func() bool { return w.n.Load() > 20000 })
			w.finish(t)
			waitSynced(t, ctx, mc, rc, 30*time.Second)
			compareKeyspaces(t, ctx, mc, rc)
			if slotdReplica {
				if err := rc.Set(ctx, "x", "y", 0).Err(); err == nil || err.Error() != "READONLY You can't write against a read only replica." {
					t.Fatalf("write on replica: %v", err)
				}
				role, err := rc.Do(ctx, "ROLE").Slice()
				if err != nil || len(role) != 5 || role[0] != "slave" || role[3] != "connected" {
					t.Fatalf("ROLE = %v, %v", role, err)
				}
			}
			// Cut the link from either side under writes: the replica
			// continues from the master's backlog.
			full := replInt(ctx, mc, "stats", "sync_full")
			for i, kill := range []func(){
				func() { rc.Do(ctx, "CLIENT", "KILL", "TYPE", "master") },
				func() { mc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica") },
			} {
				w := startWriter(ctx, mc, uint64(1000+i))
				kill()
				waitUntil(t, 30*time.Second, "partial resync", func() bool {
					return replInt(ctx, mc, "stats", "sync_partial_ok") == int64(i+1)
				})
				w.finish(t)
				waitSynced(t, ctx, mc, rc, 30*time.Second)
			}
			if n := replInt(ctx, mc, "stats", "sync_full"); n != full {
				t.Fatalf("sync_full went from %d to %d", full, n)
			}
			compareKeyspaces(t, ctx, mc, rc)
		})
	}
}

// replicate points replica at master and waits for the link.
func replicate(t *testing.T, ctx context.Context, rc *redis.Client, m *server) {
	t.Helper()
	if err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", strconv.Itoa(m.Port)).Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "link up", func() bool {
		return replInfo(ctx, rc, "replication", "master_link_status") == "up"
	})
}

// TestReplSlotdPair: slotd master and slotd replica: link cuts (from
// either side, and a paused replica) continue from the backlog; a backlog
// too small for what was missed makes a full resync.
func TestReplSlotdPair(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	m := replSlotd(t, "--repl-diskless-sync-delay", "0", "--repl-backlog-size", "100mb")
	mc := replClient(t, m)
	r := replSlotd(t)
	rc := replClient(t, r)
	if err := mixedWrites(ctx, mc, 1, 20000); err != nil {
		t.Fatal(err)
	}
	replicate(t, ctx, rc, m)
	waitSynced(t, ctx, mc, rc, 30*time.Second)
	if got := replInt(ctx, mc, "stats", "sync_full"); got != 1 {
		t.Fatalf("sync_full = %d", got)
	}
	cuts := []struct {
		name string
		cut  func()
	}{
		{"replica kills its master link", func() { rc.Do(ctx, "CLIENT", "KILL", "TYPE", "master") }},
		{"master kills the replica link", func() { mc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica") }},
		{"replica paused past the master's repl-timeout", func() {
			mc.ConfigSet(ctx, "repl-timeout", "1")
			stopProc(t, r)
			// Paused until the master gives up on it.
			waitUntil(t, 20*time.Second, "master drops the paused replica", func() bool {
				return replInt(ctx, mc, "replication", "connected_slaves") == 0
			})
			syscall.Kill(r.Pid(), syscall.SIGCONT)
		}},
	}
	for i, c := range cuts {
		w := startWriter(ctx, mc, uint64(1000+i))
		waitUntil(t, 10*time.Second, "writes", func() bool { return w.n.Load() > 4000 })
		c.cut()
		waitUntil(t, 30*time.Second, "partial resync after: "+c.name, func() bool {
			return replInt(ctx, mc, "stats", "sync_partial_ok") >= int64(i+1)
		})
		w.finish(t)
		waitSynced(t, ctx, mc, rc, 30*time.Second)
	}
	mc.ConfigSet(ctx, "repl-timeout", "60")
	if got := replInt(ctx, mc, "stats", "sync_full"); got != 1 {
		t.Fatalf("sync_full = %d after the cuts", got)
	}
	compareKeyspaces(t, ctx, mc, rc)

	// Backlog too small: what the replica missed is gone, so it gets a
	// new image.
	if err := mc.ConfigSet(ctx, "repl-backlog-size", "16kb").Err(); err != nil {
		t.Fatal(err)
	}
	stopProc(t, r)
	mc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica")
	if err := mixedWrites(ctx, mc, 77, 5000); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(r.Pid(), syscall.SIGCONT)
	waitUntil(t, 30*time.Second, "full resync", func() bool {
		return replInt(ctx, mc, "stats", "sync_full") == 2
	}, func() string { return mc.Info(ctx, "stats", "replication").String() + r.Output() })
	waitSynced(t, ctx, mc, rc, 30*time.Second)
	compareKeyspaces(t, ctx, mc, rc)
}

// TestReplPromotion: two replicas of one master; one is promoted
// (REPLICAOF NO ONE) and the other follows it with +CONTINUE, no full
// sync; so does the old master. Keys whose short TTLs run out around the
// promotion are expired by the new master, and its DELs reach both.
func TestReplPromotion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m := replSlotd(t, append(debugArgs, "--repl-diskless-sync-delay", "0")...)
	mc := replClient(t, m)
	a, b := replSlotd(t, append(debugArgs, "--repl-diskless-sync-delay", "0")...), replSlotd(t, debugArgs...)
	ac, bc := replClient(t, a), replClient(t, b)
	if err := mixedWrites(ctx, mc, 3, 10000); err != nil {
		t.Fatal(err)
	}
	replicate(t, ctx, ac, m)
	replicate(t, ctx, bc, m)
	if err := mixedWrites(ctx, mc, 4, 5000); err != nil {
		t.Fatal(err)
	}
	// The old master's stream stands still from here (no expiry DELs, no
	// PINGs), so that both replicas stop at the offset where the promoted
	// one takes over: one that had taken more of it could not continue.
	// Its keys whose time runs out are left to the new master.
	if err := mc.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := mc.ConfigSet(ctx, "repl-ping-replica-period", "3600").Err(); err != nil {
		t.Fatal(err)
	}
	waitSynced(t, ctx, mc, ac, 30*time.Second)
	waitSynced(t, ctx, mc, bc, 30*time.Second)
	oldID := replInfo(ctx, mc, "replication", "master_replid")
	if err := ac.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if got := replInfo(ctx, ac, "replication", "master_replid2"); got != oldID {
		t.Fatalf("promoted replica's replid2 = %q, want the old master's %q", got, oldID)
	}
	replicate(t, ctx, bc, a)
	if full, ok := replInt(ctx, ac, "stats", "sync_full"), replInt(ctx, ac, "stats", "sync_partial_ok"); full != 0 || ok != 1 {
		t.Fatalf("promoted node: sync_full=%d sync_partial_ok=%d after the other replica followed, want 0 and 1", full, ok)
	}
	replicate(t, ctx, mc, a)
	if err := mixedWrites(ctx, ac, 5, 5000); err != nil {
		t.Fatal(err)
	}
	waitSynced(t, ctx, ac, bc, 30*time.Second)
	waitSynced(t, ctx, ac, mc, 30*time.Second)
	// The old master continued too: it wrote nothing after the promotion.
	if full, ok := replInt(ctx, ac, "stats", "sync_full"), replInt(ctx, ac, "stats", "sync_partial_ok"); full != 0 || ok != 2 {
		t.Fatalf("promoted node: sync_full=%d sync_partial_ok=%d after the old master followed, want 0 and 2", full, ok)
	}
	compareKeyspaces(t, ctx, ac, bc)
	compareKeyspaces(t, ctx, ac, mc)
	// Once the short TTLs have run out, the replicas hold exactly what the
	// new master holds: every key it expired reached them as a DEL,
	// including the keys whose time passed while it was a replica.
	waitSameData(t, ctx, ac, bc, 15*time.Second)
	waitSameData(t, ctx, ac, mc, 15*time.Second)
}

// waitSameData waits until replica has applied all of master's stream and
// both hold the same data, expired keys not yet deleted included: the same
// DBSIZE and the same DEBUG DIGEST.
func waitSameData(t *testing.T, ctx context.Context, master, replica *redis.Client, d time.Duration) {
	t.Helper()
	var last string
	waitUntil(t, d, "the same DBSIZE and DEBUG DIGEST", func() bool {
		mo := replInt(ctx, master, "replication", "master_repl_offset")
		ro := replInt(ctx, replica, "replication", "master_repl_offset")
		mn, _ := master.DBSize(ctx).Result()
		rn, _ := replica.DBSize(ctx).Result()
		md, err1 := master.Do(ctx, "DEBUG", "DIGEST").Text()
		rd, err2 := replica.Do(ctx, "DEBUG", "DIGEST").Text()
		last = fmt.Sprintf("offsets %d/%d, DBSIZE %d/%d, DIGEST %s/%s (%v, %v)", mo, ro, mn, rn, md, rd, err1, err2)
		// The offsets last: the data read before them is what they cover.
		return err1 == nil && err2 == nil && mn == rn && md == rd &&
			mo == replInt(ctx, master, "replication", "master_repl_offset") && mo == ro
	}, func() string { return last })
}

// TestReplWaitAndMinReplicas: WAIT counts the replicas that acknowledged;
// min-replicas-to-write refuses writes without enough good replicas.
func TestReplWaitAndMinReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m := replSlotd(t, "--repl-diskless-sync-delay", "0")
	mc := replClient(t, m)
	a, b := replSlotd(t), replSlotd(t)
	ac, bc := replClient(t, a), replClient(t, b)
	if n, err := mc.Do(ctx, "WAIT", "1", "100").Int(); err != nil || n != 0 {
		t.Fatalf("WAIT without replicas = %d, %v", n, err)
	}
	replicate(t, ctx, ac, m)
	replicate(t, ctx, bc, m)
	mc.Set(ctx, "k", "v", 0)
	if n, err := mc.Do(ctx, "WAIT", "2", "5000").Int(); err != nil || n != 2 {
		t.Fatalf("WAIT 2 = %d, %v", n, err)
	}
	if err := ac.Do(ctx, "WAIT", "1", "0").Err(); err == nil || err.Error()[:34] != "ERR WAIT cannot be used with repli" {
		t.Fatalf("WAIT on a replica: %v", err)
	}
	// One replica paused: WAIT 2 times out with 1.
	stopProc(t, b)
	defer syscall.Kill(b.Pid(), syscall.SIGCONT)
	mc.Set(ctx, "k", "v2", 0)
	start := time.Now()
	if n, err := mc.Do(ctx, "WAIT", "2", "500").Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 2 with one replica paused = %d, %v", n, err)
	}
	if d := time.Since(start); d < 450*time.Millisecond {
		t.Fatalf("WAIT returned after %v, before its timeout", d)
	}
	// min-replicas-to-write 2 with max lag 2 s: once the paused replica's
	// last ACK is older than that, writes are refused; reads are not.
	mc.ConfigSet(ctx, "min-replicas-max-lag", "2")
	mc.ConfigSet(ctx, "min-replicas-to-write", "2")
	waitUntil(t, 10*time.Second, "NOREPLICAS", func() bool {
		err := mc.Set(ctx, "k", "v3", 0).Err()
		return err != nil && err.Error() == "NOREPLICAS Not enough good replicas to write."
	})
	if err := mc.Get(ctx, "k").Err(); err != nil {
		t.Fatalf("GET with too few replicas: %v", err)
	}
	if got := replInt(ctx, mc, "replication", "min_slaves_good_slaves"); got != 1 {
		t.Fatalf("min_slaves_good_slaves = %d\n%s", got, mc.Info(ctx, "replication"))
	}
	syscall.Kill(b.Pid(), syscall.SIGCONT)
	waitUntil(t, 10*time.Second, "writes accepted again", func() bool {
		return mc.Set(ctx, "k", "v4", 0).Err() == nil
	})
}

// replPopulate fills a server with n string keys of 64-byte values, through
// DEBUG POPULATE when both sides have it, else by pipelined SETs.
func replPopulate(t *testing.T, ctx context.Context, c *redis.Client, n int) {
	t.Helper()
	if err := c.Do(ctx, "DEBUG", "POPULATE", n, "key", 64).Err(); err == nil {
		return
	}
	val := strings.Repeat("v", 64)
	for i := 0; i < n; i += 10000 {
		p := c.Pipeline()
		for j := i; j < min(i+10000, n); j++ {
			p.Set(ctx, "key:"+strconv.Itoa(j), val, 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReplFullSyncMillion: a replica loads a 1,000,000-key image from a
// slotd master (diskless and from a file) and then holds the same keys.
func TestReplFullSyncMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("large data set")
	}
	for _, diskless := range []string{"yes", "no"} {
		t.Run("diskless="+diskless, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			m := replSlotd(t, append(debugArgs, "--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0")...)
			mc := replClient(t, m)
			replPopulate(t, ctx, mc, 1000000)
			r := replSlotd(t, debugArgs...)
			rc := replClient(t, r)
			start := time.Now()
			replicate(t, ctx, rc, m)
			t.Logf("full sync of 1,000,000 keys took %v", time.Since(start))
			if n, _ := rc.DBSize(ctx).Result(); n != 1000000 {
				t.Fatalf("replica DBSIZE = %d", n)
			}
			// Spot-check values across the key space.
			for i := 0; i < 1000000; i += 9973 {
				k := "key:" + strconv.Itoa(i)
				a, _ := mc.Get(ctx, k).Result()
				b, _ := rc.Get(ctx, k).Result()
				if a != b || a == "" {
					t.Fatalf("%s: master %q replica %q", k, a, b)
				}
			}
		})
	}
}

// TestReplConsistencyUnderLoad: 200,000 mixed writes go to the master
// while a replica connects and syncs; afterwards both hold the same data.
func TestReplConsistencyUnderLoad(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	m := replSlotd(t, "--repl-diskless-sync-delay", "0")
	mc := replClient(t, m)
	if err := mixedWrites(ctx, mc, 9, 20000); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mixedWrites(ctx, mc, 10, 200000) }()
	r := replSlotd(t)
	rc := replClient(t, r)
	replicate(t, ctx, rc, m)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitSynced(t, ctx, mc, rc, 60*time.Second)
	compareKeyspaces(t, ctx, mc, rc)
}
