package e2e

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotd/slotd/slots"
)

// The cluster tests start real nodes (slotd, or redis-server with
// SLOTD_E2E_TARGET=redis) with cluster-enabled yes and drive them with the
// unmodified tools: redis-cli --cluster, redis-cli -c, go-redis v9's
// ClusterClient and redis-py's RedisCluster. Every wait is a poll with a
// deadline; each test builds its own cluster and takes well under a minute.

// TestClusterCreate builds clusters of 3 and 6 masters with
// `redis-cli --cluster create`, checks them with --cluster check and
// --cluster info, and follows MOVED with redis-cli -c.
func TestClusterCreate(t *testing.T) {
	for _, n := range []int{3, 6} {
		t.Run(fmt.Sprintf("%dmasters", n), func(t *testing.T) {
			c := newCluster(t, n)
			c.Create()

			// Every node sees the same n masters, all connected.
			ids := map[string]bool{}
			for _, nd := range c.Nodes {
				ids[nd.ID(t)] = true
			}
			for _, nd := range c.Nodes {
				ls, err := nd.Nodes()
				if err != nil {
					t.Fatal(err)
				}
				if len(ls) != n {
					t.Errorf("%s lists %d nodes, want %d", nd.Addr(), len(ls), n)
				}
				mine := 0
				for _, l := range ls {
					if !ids[l.ID] || !l.has("master") || l.Link != "connected" || l.Master != "-" {
						t.Errorf("%s: unexpected line %+v", nd.Addr(), l)
					}
					if l.has("myself") {
						mine++
					}
				}
				if mine != 1 {
					t.Errorf("%s: %d myself lines", nd.Addr(), mine)
				}
				info := mustCmd(t, nd.Addr(), "CLUSTER", "INFO")
				for field, want := range map[string]string{
					"cluster_state": "ok", "cluster_slots_assigned": "16384", "cluster_slots_ok": "16384",
					"cluster_known_nodes": strconv.Itoa(n), "cluster_size": strconv.Itoa(n),
				} {
					if got := infoField(info, field); got != want {
						t.Errorf("%s: CLUSTER INFO %s:%s, want %s", nd.Addr(), field, got, want)
					}
				}
			}

			// check, through every node.
			for _, nd := range c.Nodes {
				c.WaitCheck(nd, 10*time.Second)
			}

			// info: n masters, 0 keys, no replicas, all slots.
			out, err := redisCLIRun(20*time.Second, "--cluster", "info", c.Nodes[0].Addr())
			if err != nil {
				t.Fatalf("--cluster info: %v\n%s", err, out)
			}
			lines := infoLineRE.FindAllStringSubmatch(out, -1)
			total := 0
			for _, m := range lines {
				if m[3] != "0" || m[5] != "0" {
					t.Errorf("--cluster info line %q: want 0 keys and 0 slaves", m[0])
				}
				s, _ := strconv.Atoi(m[4])
				total += s
			}
			if len(lines) != n || total != slots.Count || !strings.Contains(out, fmt.Sprintf("[OK] 0 keys in %d masters.", n)) {
				t.Errorf("--cluster info: %d master lines, %d slots; want %d and %d:\n%s", len(lines), total, n, slots.Count, out)
			}

			checkRedisCLIFollowsMoved(t, c)
		})
	}
}

// checkRedisCLIFollowsMoved writes a key in each master's slots through
// another node with redis-cli -c, reads it back through a third one, and
// checks the MOVED error a plain connection gets.
func checkRedisCLIFollowsMoved(t *testing.T, c *cluster) {
	owner := slotOwners(t, c.Nodes[0])
	n := len(c.Nodes)
	for i, nd := range c.Nodes {
		slot := -1
		for s := 0; s < slots.Count; s += 97 {
			if owner[s] == nd.Addr() {
				slot = s
				break
			}
		}
		if slot < 0 {
			t.Fatalf("%s owns no slot", nd.Addr())
		}
		key := "{" + tagForSlot(slot) + "}:cli"
		via, back := c.Nodes[(i+1)%n], c.Nodes[(i+2)%n]
		val := "v-" + nd.Addr()
		out, err := redisCLIRun(10*time.Second, "-c", "-p", strconv.Itoa(via.Port), "set", key, val)
		if err != nil || strings.TrimSpace(out) != "OK" {
			t.Fatalf("redis-cli -c -p %d set %s: %v %q", via.Port, key, err, out)
		}
		out, err = redisCLIRun(10*time.Second, "-c", "-p", strconv.Itoa(back.Port), "get", key)
		if err != nil || strings.TrimSpace(out) != val {
			t.Fatalf("redis-cli -c -p %d get %s: %v %q, want %q", back.Port, key, err, out, val)
		}
		// The key lives on its owner, and the others redirect there.
		if got := mustCmd(t, nd.Addr(), "GET", key); got != val {
			t.Errorf("GET %s on its owner %s = %q", key, nd.Addr(), got)
		}
		_, err = cmd(via.Addr(), "GET", key)
		if want := fmt.Sprintf("MOVED %d %s", slot, nd.Addr()); err == nil || err.Error() != want {
			t.Errorf("GET %s on %s: %v, want %s", key, via.Addr(), err, want)
		}
	}
}

// TestClusterClients runs go-redis's ClusterClient (RESP3 and RESP2) and
// redis-py's RedisCluster over a 3-master cluster, with every read checked.
func TestClusterClients(t *testing.T) {
	c := newCluster(t, 3)
	c.Create()
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprintf("GoRedis/RESP%d", proto), func(t *testing.T) {
			goRedisWorkload(t, c, proto)
		})
	}
	t.Run("RedisPy", func(t *testing.T) {
		py := "/usr/bin/python3"
		if out, err := exec.Command(py, "-c", "import redis.cluster").CombinedOutput(); err != nil {
			t.Fatalf("%s cannot import redis.cluster (Debian package python3-redis; %s): %v\n%s", py, installHint, err, out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
		defer cancel()
		args := append([]string{"testdata/cluster_redispy.py", "1000"}, c.Addrs()...)
		out, err := exec.CommandContext(ctx, py, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-py workload: %v\n%s", err, out)
		}
		t.Logf("redis-py: %s", strings.TrimSpace(string(out)))
	})
}

func goRedisWorkload(t *testing.T, c *cluster, proto int) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:           c.Addrs(),
		Protocol:        proto,
		DisableIdentity: true, // CLIENT SETINFO is a 7.2 command
		DialTimeout:     5 * time.Second,
		ReadTimeout:     10 * time.Second,
	})
	defer rdb.Close()
	if err := rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		return m.FlushAll(ctx).Err()
	}); err != nil {
		t.Fatalf("FLUSHALL on every master: %v", err)
	}

	// Keys are placed on evenly spaced slots through hash tags, so every
	// master and the whole slot range get traffic.
	const nKeys = 600
	keyAt := func(kind string, i int) string {
		slot := (i * slots.Count / nKeys) + i%7
		return fmt.Sprintf("{%s}:%s:%d", tagForSlot(slot%slots.Count), kind, i)
	}
	strs := map[string]string{}
	counters := map[string]int64{}
	hashes := map[string]map[string]string{}
	lists := map[string][]string{}
	ops := 0
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("op %d: "+format, append([]any{ops}, args...)...)
	}
	for i := 0; ops < 3000; i++ {
		k := i % nKeys
		switch i % 5 {
		case 0:
			key, val := keyAt("s", k), fmt.Sprintf("v%d", i)
			if err := rdb.Set(ctx, key, val, 0).Err(); err != nil {
				fail("SET %s: %v", key, err)
			}
			strs[key] = val
		case 1:
			key := keyAt("s", (k+nKeys-1)%nKeys)
			want, ok := strs[key]
			got, err := rdb.Get(ctx, key).Result()
			if ok && (err != nil || got != want) || !ok && err != redis.Nil {
				fail("GET %s = %q, %v; want %q (set %v)", key, got, err, want, ok)
			}
		case 2:
			key := keyAt("c", k%50*12)
			counters[key]++
			if got, err := rdb.Incr(ctx, key).Result(); err != nil || got != counters[key] {
				fail("INCR %s = %d, %v; want %d", key, got, err, counters[key])
			}
		case 3:
			key, f := keyAt("h", k%100*6), fmt.Sprintf("f%d", i)
			if hashes[key] == nil {
				hashes[key] = map[string]string{}
			}
			hashes[key][f] = strconv.Itoa(i)
			if n, err := rdb.HSet(ctx, key, f, i).Result(); err != nil || n != 1 {
				fail("HSET %s %s = %d, %v", key, f, n, err)
			}
		case 4:
			key := keyAt("l", k%100*6+1)
			lists[key] = append([]string{strconv.Itoa(i)}, lists[key]...)
			if n, err := rdb.LPush(ctx, key, i).Result(); err != nil || n != int64(len(lists[key])) {
				fail("LPUSH %s = %d, %v; want %d", key, n, err, len(lists[key]))
			}
		}
		ops++
	}
	// Read everything back.
	for key, want := range strs {
		if got, err := rdb.Get(ctx, key).Result(); err != nil || got != want {
			fail("final GET %s = %q, %v; want %q", key, got, err, want)
		}
		ops++
	}
	for key, want := range counters {
		if got, err := rdb.Get(ctx, key).Int64(); err != nil || got != want {
			fail("final GET %s = %d, %v; want %d", key, got, err, want)
		}
		ops++
	}
	for key, want := range hashes {
		got, err := rdb.HGetAll(ctx, key).Result()
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			fail("HGETALL %s = %v, %v; want %v", key, got, err, want)
		}
		ops++
	}
	for key, want := range lists {
		got, err := rdb.LRange(ctx, key, 0, -1).Result()
		if err != nil || strings.Join(got, ",") != strings.Join(want, ",") {
			fail("LRANGE %s = %v, %v; want %v", key, got, err, want)
		}
		ops++
	}

	// Multi-key commands within one slot through hash tags.
	mkeys := 0
	for i := 0; i < 60; i++ {
		tag := tagForSlot(i * slots.Count / 60)
		a, b, cc := "{"+tag+"}:ma", "{"+tag+"}:mb", "{"+tag+"}:mc"
		if err := rdb.MSet(ctx, a, "1", b, "2", cc, strconv.Itoa(i)).Err(); err != nil {
			fail("MSET %s %s %s: %v", a, b, cc, err)
		}
		got, err := rdb.MGet(ctx, a, b, cc, "{"+tag+"}:missing").Result()
		if err != nil || fmt.Sprint(got) != fmt.Sprintf("[1 2 %d <nil>]", i) {
			fail("MGET {%s}: %v, %v", tag, got, err)
		}
		mkeys += 3
		ops += 2
	}
	// Keys of different slots in one command: CROSSSLOT.
	err := rdb.Do(ctx, "MSET", "{a}x", "1", "{b}y", "2").Err()
	if err == nil || err.Error() != "CROSSSLOT Keys in request don't hash to the same slot" {
		t.Errorf("cross-slot MSET: %v", err)
	}

	// Every master holds keys, and the keys add up: none was written twice.
	var total int64
	for _, nd := range c.Nodes {
		n, err := strconv.ParseInt(mustCmd(t, nd.Addr(), "DBSIZE"), 10, 64)
		if err != nil || n == 0 {
			t.Errorf("%s: DBSIZE %d, %v", nd.Addr(), n, err)
		}
		total += n
	}
	want := len(strs) + len(counters) + len(hashes) + len(lists) + mkeys
	if total != int64(want) {
		t.Errorf("DBSIZE over the masters = %d, want %d", total, want)
	}
	t.Logf("RESP%d: %d operations checked, %d keys on %d masters", proto, ops, total, len(c.Nodes))
}

// TestClusterAddDelNode adds a fresh node with `redis-cli --cluster
// add-node` and removes it with del-node.
func TestClusterAddDelNode(t *testing.T) {
	c := newCluster(t, 3)
	c.Create()
	old := append([]*clusterNode(nil), c.Nodes...)
	fresh := c.AddNode()
	id := fresh.ID(t)

	out, err := redisCLIRun(30*time.Second, "--cluster", "add-node", fresh.Addr(), old[0].Addr())
	if err != nil || !strings.Contains(out, "[OK] New node added correctly.") {
		t.Fatalf("--cluster add-node: %v\n%s", err, out)
	}
	d := waitFor(t, 15*time.Second, "the new node known by all, as a connected master", func() (bool, string) {
		for _, nd := range old {
			ls, err := nd.Nodes()
			if err != nil {
				return false, err.Error()
			}
			found := false
			for _, l := range ls {
				if l.ID == id {
					found = true
					if !l.has("master") || l.has("handshake") || l.Link != "connected" || len(l.Slots) != 0 {
						return false, fmt.Sprintf("%s sees %+v", nd.Addr(), l)
					}
				}
			}
			if !found {
				return false, nd.Addr() + " does not list " + id
			}
		}
		info := mustCmd(t, fresh.Addr(), "CLUSTER", "INFO")
		if n := infoField(info, "cluster_known_nodes"); n != "4" {
			return false, "new node knows " + n + " nodes"
		}
		return true, ""
	})
	t.Logf("new node known by all after %v", d.Round(time.Millisecond))
	c.WaitOK(10 * time.Second)
	c.WaitCheck(old[0], 10*time.Second)

	out, err = redisCLIRun(30*time.Second, "--cluster", "del-node", old[0].Addr(), id)
	if err != nil {
		t.Fatalf("--cluster del-node: %v\n%s", err, out)
	}
	gone := func() (bool, string) {
		for _, nd := range old {
			ls, err := nd.Nodes()
			if err != nil {
				return false, err.Error()
			}
			for _, l := range ls {
				if l.ID == id {
					return false, fmt.Sprintf("%s still lists %+v", nd.Addr(), l)
				}
			}
		}
		return true, ""
	}
	waitFor(t, 10*time.Second, "the deleted node forgotten by all", gone)
	// It must stay forgotten: gossip from a node that still knew it must
	// not bring it back while the FORGET ban holds.
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if ok, why := gone(); !ok {
			t.Fatalf("deleted node came back: %s", why)
		}
	}
	// The deleted node was reset (CLUSTER RESET SOFT) unless del-node shut
	// it down.
	if info, err := cmd(fresh.Addr(), "CLUSTER", "INFO"); err == nil {
		if n := infoField(info, "cluster_known_nodes"); n != "1" {
			t.Errorf("deleted node still knows %s nodes", n)
		}
	}
	c.Nodes = old
	c.WaitOK(10 * time.Second)
	c.WaitCheck(old[1], 10*time.Second)
}

// TestClusterKillRestart kills a master with SIGKILL, expects the others
// to mark it fail within 10 s (cluster-node-timeout 2000 ms), restarts it
// on the same nodes.conf and expects it back with the same id and slots.
func TestClusterKillRestart(t *testing.T) {
	c := newCluster(t, 3)
	c.Create()
	victim, others := c.Nodes[1], []*clusterNode{c.Nodes[0], c.Nodes[2]}
	id := victim.ID(t)
	before := victim.Myself(t)
	if len(before.Slots) == 0 {
		t.Fatalf("victim serves no slots: %+v", before)
	}

	victim.Kill9()
	flagged := func(flag string) func() (bool, string) {
		return func() (bool, string) {
			for _, nd := range others {
				ls, err := nd.Nodes()
				if err != nil {
					return false, err.Error()
				}
				l, ok := findNode(ls, id)
				if !ok {
					return false, nd.Addr() + " does not list " + id
				}
				if !l.has(flag) {
					return false, fmt.Sprintf("%s sees flags %v", nd.Addr(), l.Flags)
				}
			}
			return true, ""
		}
	}
	d := waitFor(t, 10*time.Second, "killed master flagged fail by the others", flagged("fail"))
	t.Logf("kill -9 -> fail on both other masters after %v (node timeout %d ms, bound 10 s)", d.Round(time.Millisecond), nodeTimeout)
	waitFor(t, 5*time.Second, "cluster_state:fail on the others (slots of a failed master)", func() (bool, string) {
		for _, nd := range others {
			info, err := cmd(nd.Addr(), "CLUSTER", "INFO")
			if err != nil {
				return false, err.Error()
			}
			if st := infoField(info, "cluster_state"); st != "fail" {
				return false, nd.Addr() + " cluster_state:" + st
			}
		}
		return true, ""
	})

	start := time.Now()
	victim.Restart()
	if got := victim.ID(t); got != id {
		t.Fatalf("restarted node has id %s, was %s", got, id)
	}
	if after := victim.Myself(t); strings.Join(after.Slots, " ") != strings.Join(before.Slots, " ") ||
		after.ConfigEpoch != before.ConfigEpoch {
		t.Fatalf("restarted node: slots %v epoch %s, was %v epoch %s", after.Slots, after.ConfigEpoch, before.Slots, before.ConfigEpoch)
	}
	waitFor(t, 20*time.Second, "restarted master no longer flagged fail", func() (bool, string) {
		for _, nd := range others {
			ls, err := nd.Nodes()
			if err != nil {
				return false, err.Error()
			}
			l, ok := findNode(ls, id)
			if !ok {
				return false, nd.Addr() + " does not list " + id
			}
			if l.has("fail") || l.has("fail?") || l.Link != "connected" {
				return false, fmt.Sprintf("%s sees %v %s", nd.Addr(), l.Flags, l.Link)
			}
		}
		return true, ""
	})
	c.WaitOK(20 * time.Second)
	t.Logf("restart -> cluster_state:ok everywhere after %v", time.Since(start).Round(time.Millisecond))
	c.WaitCheck(c.Nodes[0], 10*time.Second)
	checkRedisCLIFollowsMoved(t, c)
}

// TestClusterBusGarbage sends junk to a node's bus port over TCP and UDP
// and expects the node to keep serving and the cluster to stay ok.
func TestClusterBusGarbage(t *testing.T) {
	c := newCluster(t, 3)
	c.Create()
	victim := c.Nodes[0]
	bus := fmt.Sprintf("127.0.0.1:%d", victim.BusPort())
	rng := rand.New(rand.NewSource(1))
	random := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		return b
	}
	payloads := [][]byte{
		[]byte("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: e2e\r\n\r\n"),
		[]byte("*1\r\n$4\r\nPING\r\n"),
		{},
	}
	// Truncated frames: slotd's own header (gossip/doc.go) claiming more
	// bytes than follow, a whole-length frame with a junk body, a length
	// beyond the limit; redis-server's bus header ("RCmb"); and the same
	// wrapped as a memberlist user message (type 8), a memberlist push-pull
	// (type 6) with a cut msgpack header, a compound message (type 7)
	// announcing more parts than it has, and a CRC-tagged message (type 12).
	slbm := func(length uint32, body []byte) []byte {
		b := append([]byte("SLBM"), 1, 0, 0, 0, 0, 0)
		binary.BigEndian.PutUint32(b[6:], length)
		return append(b, body...)
	}
	frames := [][]byte{
		slbm(300, random(20)),
		slbm(64, random(54)),
		slbm(0xffffffff, random(8)),
		slbm(5, nil),
		append([]byte("RCmb\x00\x00\x08\x00\x00\x01"), random(30)...),
	}
	for _, f := range frames {
		payloads = append(payloads, f, append([]byte{8}, f...))
	}
	payloads = append(payloads,
		[]byte{6, 0x85, 0xa5, 'N', 'o', 'd', 'e', 's'},
		[]byte{8, 0x81, 0xaa, 'U', 's', 'e', 'r', 'M', 's', 'g', 'L', 'e', 'n', 0xcd, 0x03, 0xe8, 1, 2, 3},
		[]byte{7, 0xff, 0x00, 0x10, 0x00, 0x10},
		[]byte{12, 0xde, 0xad, 0xbe, 0xef, 8, 'x'},
		[]byte{9, 0x00, 0x01},
		[]byte{10, 1, 2, 3},
	)
	for i := 0; i < 40; i++ {
		payloads = append(payloads, random(1+rng.Intn(1400)))
	}
	payloads = append(payloads, random(64<<10))

	// Idle and half-written connections stay open during the rest.
	for i := 0; i < 4; i++ {
		conn, err := net.DialTimeout("tcp", bus, 2*time.Second)
		if err != nil {
			t.Fatalf("dial bus %s: %v", bus, err)
		}
		if i%2 == 1 {
			conn.Write(slbm(1000, random(10)))
		}
		defer conn.Close()
	}
	udp, err := net.Dial("udp", bus)
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	for round := 0; round < 3; round++ {
		for _, p := range payloads {
			conn, err := net.DialTimeout("tcp", bus, 2*time.Second)
			if err != nil {
				t.Fatalf("dial bus %s: %v (node died?)\n%s", bus, err, tail(victim.Output(), 2000))
			}
			conn.SetDeadline(time.Now().Add(2 * time.Second))
			conn.Write(p)
			conn.Close()
			if len(p) > 0 && len(p) < 65000 {
				udp.Write(p)
			}
		}
		if got, err := cmd(victim.Addr(), "PING"); err != nil || got != "PONG" {
			t.Fatalf("PING after garbage round %d: %q, %v", round, got, err)
		}
	}

	// The node keeps its place: no PFAIL from the others for two node
	// timeouts, no phantom nodes, state ok everywhere.
	id := victim.ID(t)
	for end := time.Now().Add(2 * nodeTimeout * time.Millisecond); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		for _, nd := range c.Nodes[1:] {
			ls, err := nd.Nodes()
			if err != nil {
				t.Fatal(err)
			}
			l, ok := findNode(ls, id)
			if !ok || l.has("fail?") || l.has("fail") {
				t.Fatalf("%s: garbage-fed node listed %v with flags %v", nd.Addr(), ok, l.Flags)
			}
		}
	}
	for _, nd := range c.Nodes {
		info := mustCmd(t, nd.Addr(), "CLUSTER", "INFO")
		if n := infoField(info, "cluster_known_nodes"); n != "3" {
			t.Errorf("%s: cluster_known_nodes:%s after garbage, want 3", nd.Addr(), n)
		}
	}
	c.WaitOK(10 * time.Second)
	c.WaitCheck(victim, 10*time.Second)
	checkRedisCLIFollowsMoved(t, c)
}
