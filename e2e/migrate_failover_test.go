package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestFixAfterFailoverMidMigration: a slot is half moved from a source to
// a target when one of them fails over to its replica (CLUSTER FAILOVER).
// The promoted replica still has the slot open (SETSLOT reached it), so
// redis-cli --cluster fix (or slotctl fix) finishes the move, and no key
// is lost.
func TestFixAfterFailoverMidMigration(t *testing.T) {
	for _, tool := range []string{"redis-cli", "slotctl"} {
		for _, side := range []string{"source", "target"} {
			t.Run(tool+"/"+side, func(t *testing.T) { testFixAfterFailover(t, side == "target", tool == "slotctl") })
		}
	}
}

func testFixAfterFailover(t *testing.T, target, useSlotctl bool) {
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
	s := strconv.Itoa(slot)
	// A replica for the side that fails over.
	master := src
	if target {
		master = dst
	}
	rep := c.AddNode()
	mustCmd(t, rep.Addr(), "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(master.Port))
	waitFor(t, 15*time.Second, "the new node to know the master", func() (bool, string) {
		ls, err := rep.Nodes()
		if err != nil {
			return false, err.Error()
		}
		l, ok := findNode(ls, master.ID(t))
		return ok && !l.has("handshake"), fmt.Sprint(ls)
	})
	mustCmd(t, rep.Addr(), "CLUSTER", "REPLICATE", master.ID(t))
	waitFor(t, 20*time.Second, "the replica to sync", func() (bool, string) {
		info := mustCmd(t, rep.Addr(), "INFO", "replication")
		return infoField(info, "master_link_status") == "up", info
	})

	tag := tagForSlot(slot)
	var keys []string
	for i := range 20 {
		k := fmt.Sprintf("{%s}:k%d", tag, i)
		keys = append(keys, k)
		mustCmd(t, src.Addr(), "SET", k, strconv.Itoa(i))
	}
	if r := mustCmd(t, dst.Addr(), "CLUSTER", "SETSLOT", s, "IMPORTING", src.ID(t)); r != "OK" {
		t.Fatalf("IMPORTING: %s", r)
	}
	if r := mustCmd(t, src.Addr(), "CLUSTER", "SETSLOT", s, "MIGRATING", dst.ID(t)); r != "OK" {
		t.Fatalf("MIGRATING: %s", r)
	}
	mark := "[" + s + "->-" + dst.ID(t) + "]"
	if target {
		mark = "[" + s + "-<-" + src.ID(t) + "]"
	}
	if l := rep.Myself(t); !strings.Contains(strings.Join(l.Slots, " "), mark) {
		t.Fatalf("the replica's own line lacks %s: %v", mark, l)
	}
	host, port, _ := strings.Cut(dst.Addr(), ":")
	args := append([]string{"MIGRATE", host, port, "", "0", "5000", "KEYS"}, keys[:10]...)
	if r := mustCmd(t, src.Addr(), args...); r != "OK" {
		t.Fatalf("MIGRATE: %s", r)
	}
	waitFor(t, 10*time.Second, "the replica to have the moved keys' state", func() (bool, string) {
		n := mustCmd(t, rep.Addr(), "DBSIZE")
		return n == "10", n
	})

	if r := mustCmd(t, rep.Addr(), "CLUSTER", "FAILOVER"); r != "OK" {
		t.Fatalf("CLUSTER FAILOVER: %s", r)
	}
	waitFor(t, 15*time.Second, "the replica to be promoted", func() (bool, string) {
		l := rep.Myself(t)
		return l.has("master"), fmt.Sprint(l)
	})
	if l := rep.Myself(t); !strings.Contains(strings.Join(l.Slots, " "), mark) {
		t.Fatalf("the promoted replica lost %s: %v", mark, l)
	}
	// The promoted node serves the open slot as its old master did.
	errText := func(addr string, args ...string) string {
		_, err := cmd(addr, args...)
		if err == nil {
			return ""
		}
		return err.Error()
	}
	if target {
		if r := errText(rep.Addr(), "GET", keys[0]); !strings.HasPrefix(r, "MOVED "+s+" ") {
			t.Fatalf("GET on the new target without ASKING: %q", r)
		}
	} else {
		if r := errText(rep.Addr(), "GET", keys[0]); r != "ASK "+s+" "+dst.Addr() {
			t.Fatalf("GET of a moved key on the new source: %q", r)
		}
		if r := mustCmd(t, rep.Addr(), "GET", keys[15]); r != "15" {
			t.Fatalf("GET of a kept key on the new source: %q", r)
		}
	}

	start := time.Now()
	var out string
	var err error
	if useSlotctl {
		out, err = slotctl(t, time.Minute, "fix", rep.Addr(), "--yes")
	} else {
		out, err = redisCLIRun(60*time.Second, "--cluster", "fix", rep.Addr(), "--cluster-yes")
	}
	if err != nil {
		t.Fatalf("fix: %v\n%s", err, out)
	}
	t.Logf("fix took %v:\n%s", time.Since(start).Round(time.Millisecond), tail(out, 2000))
	out = c.WaitCheck(rep, 20*time.Second)
	if strings.Contains(out, "slots are open") || strings.Contains(out, "[WARNING]") {
		t.Fatalf("check after fix:\n%s", out)
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), DisableIdentity: true})
	defer rdb.Close()
	for i, k := range keys {
		if v, err := rdb.Get(context.Background(), k).Result(); err != nil || v != strconv.Itoa(i) {
			t.Fatalf("%s = %q, %v after fix", k, v, err)
		}
	}
}
