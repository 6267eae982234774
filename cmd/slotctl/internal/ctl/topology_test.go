package ctl

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/slotd/slotd/slots"
)

// Captured from redis-server 7.0.15 (three masters, one slot migrating).
const nodes7015 = "0f07e53aae1e3765526e3ed9c2a039a74652384e 127.0.0.1:23002@33002 master - 0 1795994144278 2 connected 5461-10922\n" +
	"7f0160c72e6b3cfc2aa9804c79f7ad5511c4420b 127.0.0.1:23003@33003 master - 0 1795994143272 3 connected 10923-16383\n" +
	"6f745d1dbea856b58de6799d986cbd2f5894e3aa 127.0.0.1:23001@33001 myself,master - 0 1795994146000 1 connected 0-5460 [200->-0f07e53aae1e3765526e3ed9c2a039a74652384e]\n"

func TestParseNodes(t *testing.T) {
	view, err := ParseNodes(nodes7015)
	if err != nil {
		t.Fatal(err)
	}
	if len(view) != 3 {
		t.Fatalf("got %d lines", len(view))
	}
	me := Myself(view)
	if me == nil || me.ID != "6f745d1dbea856b58de6799d986cbd2f5894e3aa" {
		t.Fatalf("myself = %+v", me)
	}
	if me.Addr() != "127.0.0.1:23001" || me.BusPort != 33001 || me.ConfigEpoch != 1 || !me.Connected || !me.IsMaster() {
		t.Errorf("myself fields: %+v", me)
	}
	if !reflect.DeepEqual(me.Slots, []slots.Range{{Start: 0, End: 5460}}) || me.SlotCount() != 5461 {
		t.Errorf("slots %v", me.Slots)
	}
	if me.Migrating[200] != "0f07e53aae1e3765526e3ed9c2a039a74652384e" || len(me.Importing) != 0 {
		t.Errorf("open slots: migrating %v importing %v", me.Migrating, me.Importing)
	}
	if view[0].PongRecv != 1795994144278 || view[0].Has("myself") {
		t.Errorf("line 0: %+v", view[0])
	}
}

func TestParseNodesVariants(t *testing.T) {
	text := "" +
		// replica with a hostname, showing its master's epoch
		"e4ff9811f6a280b4e5ddb8a586efc946ed1c7b79 10.0.0.4:7004@17004,node-4.example slave 750436a1453e08c6ed5ccb3c80b6891d8c2f86dc 0 1795994144278 1 connected\n" +
		// failed master in noaddr state
		"aaaa9811f6a280b4e5ddb8a586efc946ed1c7b79 :0@0 master,fail,noaddr - 1795994144000 1795994143000 4 disconnected\n" +
		// importing, several ranges, IPv6, no final newline
		"bbbb9811f6a280b4e5ddb8a586efc946ed1c7b79 [::1]:7000@17000 myself,master - 0 0 5 connected 1 3-4 [7-<-e4ff9811f6a280b4e5ddb8a586efc946ed1c7b79]"
	view, err := ParseNodes(text)
	if err != nil {
		t.Fatal(err)
	}
	r := view[0]
	if !r.IsReplica() || r.MasterID != "750436a1453e08c6ed5ccb3c80b6891d8c2f86dc" || r.Hostname != "node-4.example" || r.Addr() != "10.0.0.4:7004" || r.BusPort != 17004 {
		t.Errorf("replica: %+v", r)
	}
	f := view[1]
	if !f.Failing() || !f.Has("noaddr") || f.Connected || f.IP != "" {
		t.Errorf("failed: %+v", f)
	}
	m := view[2]
	if m.Addr() != "[::1]:7000" || m.SlotCount() != 3 || m.Importing[7] != "e4ff9811f6a280b4e5ddb8a586efc946ed1c7b79" {
		t.Errorf("ipv6 importer: %+v", m)
	}
}

func TestParseNodesErrors(t *testing.T) {
	for _, text := range []string{
		"abc 127.0.0.1:1@2 master - 0 0\n",                         // too few fields
		"abc 127.0.0.1:1@2 master - x 0 1 connected\n",             // bad ping
		"abc 127.0.0.1:1@2 master - 0 0 1 connected 5-3\n",         // reversed range
		"abc 127.0.0.1:1@2 master - 0 0 1 connected 16384\n",       // out of range
		"abc 127.0.0.1:1@2 master - 0 0 1 connected [5-?-zz]\n",    // bad open slot
		"abc 127.0.0.1:1@2 master - 0 0 1 connected [99999->-a]\n", // open slot out of range
		"abc nohostport master - 0 0 1 connected\n",                // bad address
	} {
		if _, err := ParseNodes(text); err == nil {
			t.Errorf("no error for %q", text)
		}
	}
}

func TestConfigSignature(t *testing.T) {
	a, _ := ParseNodes(nodes7015)
	// The same configuration seen from another node: other order, no
	// open-slot mark, other ping times.
	b, _ := ParseNodes("6f745d1dbea856b58de6799d986cbd2f5894e3aa 127.0.0.1:23001@33001 master - 0 5 1 connected 0-5460\n" +
		"7f0160c72e6b3cfc2aa9804c79f7ad5511c4420b 127.0.0.1:23003@33003 master - 0 6 3 connected 10923-16383\n" +
		"0f07e53aae1e3765526e3ed9c2a039a74652384e 127.0.0.1:23002@33002 myself,master - 0 0 2 connected 5461-10922\n" +
		"e4ff9811f6a280b4e5ddb8a586efc946ed1c7b79 127.0.0.1:23004@33004 slave 0f07e53aae1e3765526e3ed9c2a039a74652384e 0 0 2 connected\n")
	if ConfigSignature(a) != ConfigSignature(b) {
		t.Errorf("signatures differ:\n%s\n%s", ConfigSignature(a), ConfigSignature(b))
	}
	// One slot less on one line: disagreement.
	c, _ := ParseNodes(strings.Replace(nodes7015, "0-5460", "0-99 101-5460", 1))
	if ConfigSignature(a) == ConfigSignature(c) {
		t.Error("a missing slot did not change the signature")
	}
}

func TestPlanCreateSlots(t *testing.T) {
	addrs := func(n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, "127.0.0.1:"+strconv.Itoa(7000+i))
		}
		return out
	}
	for _, tc := range []struct {
		n, replicas int
		want        []slots.Range
	}{
		// The boundaries redis-cli 7.0.15 --cluster create picks.
		{3, 0, []slots.Range{{Start: 0, End: 5460}, {Start: 5461, End: 10922}, {Start: 10923, End: 16383}}},
		{6, 1, []slots.Range{{Start: 0, End: 5460}, {Start: 5461, End: 10922}, {Start: 10923, End: 16383}}},
		{6, 0, []slots.Range{{Start: 0, End: 2730}, {Start: 2731, End: 5460}, {Start: 5461, End: 8191}, {Start: 8192, End: 10922}, {Start: 10923, End: 13652}, {Start: 13653, End: 16383}}},
	} {
		p, err := PlanCreate(addrs(tc.n), tc.replicas)
		if err != nil {
			t.Fatal(err)
		}
		var got []slots.Range
		total := 0
		for _, m := range p.Masters {
			got = append(got, m.Slots)
			total += m.Slots.End - m.Slots.Start + 1
			if len(m.Replicas) != tc.replicas {
				t.Errorf("n=%d: master %s has %d replicas", tc.n, m.Addr, len(m.Replicas))
			}
		}
		if !reflect.DeepEqual(got, tc.want) || total != slots.Count {
			t.Errorf("n=%d r=%d: slots %v (total %d), want %v", tc.n, tc.replicas, got, total, tc.want)
		}
	}
	for n := 3; n <= 200; n++ {
		p, err := PlanCreate(addrs(n), 0)
		if err != nil {
			t.Fatal(err)
		}
		next := 0
		for _, m := range p.Masters {
			if m.Slots.Start != next || m.Slots.End < m.Slots.Start {
				t.Fatalf("n=%d: ranges not contiguous at %v", n, m.Slots)
			}
			next = m.Slots.End + 1
		}
		if next != slots.Count {
			t.Fatalf("n=%d: ends at %d", n, next)
		}
	}
}

func TestPlanCreateReplicasAvoidMasterHost(t *testing.T) {
	// Two hosts, three nodes each: masters spread over both hosts, and each
	// replica lands on the other host than its master's when it can.
	addrs := []string{"10.0.0.1:7000", "10.0.0.1:7001", "10.0.0.1:7002", "10.0.0.2:7000", "10.0.0.2:7001", "10.0.0.2:7002"}
	p, err := PlanCreate(addrs, 1)
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]int{}
	for _, m := range p.Masters {
		hosts[hostOf(m.Addr)]++
		if len(m.Replicas) != 1 {
			t.Fatalf("master %s: replicas %v", m.Addr, m.Replicas)
		}
	}
	if hosts["10.0.0.1"] == 0 || hosts["10.0.0.2"] == 0 {
		t.Errorf("masters all on one host: %+v", p.Masters)
	}
	mismatch := 0
	for _, m := range p.Masters {
		if hostOf(m.Replicas[0]) == hostOf(m.Addr) {
			mismatch++
		}
	}
	// 2 masters on one host and 1 on the other leave one replica that
	// must share a host.
	if mismatch > 1 {
		t.Errorf("%d replicas on their master's host: %+v", mismatch, p.Masters)
	}

	// Seven nodes with one replica each: the extra node becomes a second
	// replica of some master.
	p, err = PlanCreate(append(addrs, "10.0.0.3:7000"), 1)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range p.Masters {
		n += len(m.Replicas)
	}
	if len(p.Masters) != 3 || n != 4 {
		t.Errorf("7 nodes: %d masters, %d replicas", len(p.Masters), n)
	}
}

func TestPlanCreateErrors(t *testing.T) {
	for _, tc := range []struct {
		addrs    []string
		replicas int
		want     string
	}{
		{[]string{"a:1", "a:2"}, 0, "at least 3 masters"},
		{[]string{"a:1", "a:2", "a:3", "a:4", "a:5"}, 1, "at least 3 masters"},
		{[]string{"a:1", "a:2", "a:1"}, 0, "given twice"},
		{[]string{"a:1", "a2", "a:3"}, 0, "bad address"},
		{[]string{"a:1", "a:2", "a:3"}, -1, "--replicas"},
	} {
		_, err := PlanCreate(tc.addrs, tc.replicas)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v r=%d: err %v, want %q", tc.addrs, tc.replicas, err, tc.want)
		}
	}
}
