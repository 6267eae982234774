package e2e

import (
	"context"
	"strconv"
	"testing"
	"time"
)

var debugArgs = []string{"--enable-debug-command", "yes"}

// TestReplSlotdReplicaOfRedis: slotd replicates a redis-server 7 master
// that takes writes before, during and after the sync, in both transfer
// modes; afterwards every key matches.
func TestReplSlotdReplicaOfRedis(t *testing.T) {
	for _, diskless := range []string{"no", "yes"} {
		t.Run("diskless="+diskless, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			m := replRedis(t, append(debugArgs, "--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0", "--repl-backlog-size", "100mb")...)
			mc := replClient(t, m)
			if err := mixedWrites(ctx, mc, 1, 20000); err != nil {
				t.Fatal(err)
			}
			w := startWriter(ctx, mc, 100)
			r := replSlotd(t, debugArgs...)
			rc := replClient(t, r)
			if err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", strconv.Itoa(m.Port)).Err(); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, 30*time.Second, "link up", func() bool {
				return replInfo(ctx, rc, "replication", "master_link_status") == "up"
			})
			waitUntil(t, 30*time.Second, "writes during the stream", func() bool { return w.n.Load() > 20000 })
			w.finish(t)
			waitSynced(t, ctx, mc, rc, 30*time.Second)
			compareKeyspaces(t, ctx, mc, rc)
			if err := rc.Set(ctx, "x", "y", 0).Err(); err == nil || err.Error() != "READONLY You can't write against a read only replica." {
				t.Fatalf("write on replica: %v", err)
			}
			role, err := rc.Do(ctx, "ROLE").Slice()
			if err != nil || len(role) != 5 || role[0] != "slave" || role[3] != "connected" {
				t.Fatalf("ROLE = %v, %v", role, err)
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
