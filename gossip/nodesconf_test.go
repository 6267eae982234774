package gossip

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// realConf is a nodes.conf written by redis-server 7.0.15 (three nodes, one
// replica, a migrating and an importing slot on myself).
const realConf = `3650ddb9b58c1e551861705dc26769f09084c718 127.0.0.1:21801@21811 master - 0 1795992802681 2 connected 5001-5999
5413447bc70681b4f26425f4fa0873e8d3997a8f 127.0.0.1:21802@21812 slave 637f969abb1973ca42f904629c0d27ee9bfe77ee 0 1795992803687 0 connected
637f969abb1973ca42f904629c0d27ee9bfe77ee 127.0.0.1:21800@21810 myself,master - 0 1795992802000 0 connected 0-5000 6000 6002 [100->-3650ddb9b58c1e551861705dc26769f09084c718] [5001-<-3650ddb9b58c1e551861705dc26769f09084c718]
vars currentEpoch 2 lastVoteEpoch 0
`

// realNodes is CLUSTER NODES from the same redis-server a moment later: the
// first node has a hostname and is unreachable, and a MEET is in handshake.
const realNodes = `3650ddb9b58c1e551861705dc26769f09084c718 127.0.0.1:21801@21811,foo.example master,fail? - 1795992809212 1795992808708 2 disconnected 5001-5999
5413447bc70681b4f26425f4fa0873e8d3997a8f 127.0.0.1:21802@21812 slave 637f969abb1973ca42f904629c0d27ee9bfe77ee 0 1795992809513 0 connected
032a4c803b062d72deeb19895d98ddbc6c4c8ecd 127.0.0.1:21805@21815 handshake - 0 0 0 disconnected
637f969abb1973ca42f904629c0d27ee9bfe77ee 127.0.0.1:21800@21810 myself,master - 0 1795992809000 0 connected 0-5000 6000 6002 [100->-3650ddb9b58c1e551861705dc26769f09084c718] [5001-<-3650ddb9b58c1e551861705dc26769f09084c718]
`

func TestNodesConfRealFile(t *testing.T) {
	s, err := ParseNodesConf([]byte(realConf))
	if err != nil {
		t.Fatal(err)
	}
	if s.Myself.ID != "637f969abb1973ca42f904629c0d27ee9bfe77ee" || s.CurrentEpoch != 2 || s.LastVoteEpoch != 0 {
		t.Fatalf("myself/vars wrong: %v", s)
	}
	if s.Owner[5000] != s.Myself.ID || s.Owner[5001] != "3650ddb9b58c1e551861705dc26769f09084c718" || s.Owner[5999] == "" || s.Owner[6001] != "" {
		t.Fatal("slot owners wrong")
	}
	if s.Migrating[100] == "" || s.Importing[5001] == "" || len(s.Migrating)+len(s.Importing) != 2 {
		t.Fatal("open slots wrong")
	}
	if got := FormatNodesConf(s); string(got) != realConf {
		t.Fatalf("format differs:\n%s\nwant\n%s", got, realConf)
	}
}

func TestFormatClusterNodesMatchesRedis(t *testing.T) {
	// Build the state CLUSTER NODES above describes.
	lines := strings.Split(realNodes, "\n")
	conf := lines[0] + "\n" + lines[1] + "\n" + lines[3] + "\nvars currentEpoch 2 lastVoteEpoch 0\n"
	conf = strings.Replace(conf, "master,fail?", "master", 1)
	s, err := ParseNodesConf([]byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	s.Nodes["3650ddb9b58c1e551861705dc26769f09084c718"].Flags |= FlagPFail
	hs := &Node{ID: "032a4c803b062d72deeb19895d98ddbc6c4c8ecd", IP: "127.0.0.1", Port: 21805, CPort: 21815, Flags: FlagHandshake | FlagMeet}
	s.order = append(s.order[:2], append([]NodeID{hs.ID}, s.order[2:]...)...)
	s.Nodes[hs.ID] = hs
	if got := FormatClusterNodes(s); got != realNodes {
		t.Fatalf("CLUSTER NODES differs:\n%s\nwant\n%s", got, realNodes)
	}
	// nodes.conf never holds a handshake.
	if bytes.Contains(FormatNodesConf(s), []byte("handshake")) {
		t.Fatal("handshake node persisted")
	}
}

func TestParseNodesConfRejects(t *testing.T) {
	good := strings.Split(realConf, "\n")
	bad := map[string]string{
		"no myself":       good[0] + "\n",
		"two myself":      good[2] + "\n" + strings.Replace(good[2], "637f", "737f", 1) + "\n",
		"short line":      "637f969abb1973ca42f904629c0d27ee9bfe77ee 127.0.0.1:1@2 myself,master -\n",
		"bad id":          strings.Replace(good[2], "637f", "zz7f", 1),
		"bad flags":       strings.Replace(good[2], "myself,master", "myself,boss", 1),
		"bad slot":        strings.Replace(good[2], "6002", "16384", 1),
		"slot twice":      good[0] + "\n" + strings.Replace(good[2], "0-5000", "0-5001", 1),
		"bad vars":        good[2] + "\nvars currentEpoch x\n",
		"epoch too big":   strings.Replace(good[2], "1795992802000 0 connected", "1795992802000 9223372036854775808 connected", 1),
		"current too big": good[2] + "\nvars currentEpoch 9223372036854775808\n",
		"bad addr":        strings.Replace(good[2], "127.0.0.1:21800@21810", "127.0.0.1-21800", 1),
		"open elsewhere":  good[0] + " [7->-3650ddb9b58c1e551861705dc26769f09084c718]\n" + good[2],
		"replica slots":   strings.Replace(good[1], "connected", "connected 1", 1) + "\n" + good[2],
	}
	for name, conf := range bad {
		if _, err := ParseNodesConf([]byte(conf)); !errors.Is(err, ErrNodesConf) {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
}

func FuzzParseNodesConf(f *testing.F) {
	f.Add([]byte(realConf))
	f.Add([]byte(strings.SplitN(realNodes, "\n", 2)[0] + "\n" + strings.Split(realConf, "\n")[2] + "\n"))
	f.Add([]byte("x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseNodesConf(b)
		if err != nil {
			return
		}
		out := FormatNodesConf(s)
		s2, err := ParseNodesConf(out)
		if err != nil {
			t.Fatalf("formatted config does not parse: %v\n%s", err, out)
		}
		if out2 := FormatNodesConf(s2); !bytes.Equal(out, out2) {
			t.Fatalf("format not stable:\n%s\n%s", out, out2)
		}
	})
}

func newTestState(t *testing.T, seed uint64) *State {
	r := rand.New(rand.NewPCG(seed, 7))
	return NewState(Config{NodeTimeout: 1000, RequireFullCoverage: true, Rand: r}, RandomID(r), "10.0.0.1", 7000, 17000)
}

func TestNodesConfRoundTripOfRunningState(t *testing.T) {
	seed := testSeed(t)
	s := newTestState(t, seed)
	s.AddSlots(1, []int{1, 2, 3, 10, 16383})
	s.SetConfigEpoch(1, 9)
	s.SetSlotImporting(20, "3650ddb9b58c1e551861705dc26769f09084c718")
	conf := FormatNodesConf(s)
	s2, err := ParseNodesConf(conf)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Myself.ID != s.Myself.ID || s2.Myself.ConfigEpoch != 9 || s2.CurrentEpoch != 9 || s2.Owner != s.Owner {
		t.Fatalf("seed %d: reload differs\n%s", seed, conf)
	}
	if !bytes.Equal(FormatNodesConf(s2), conf) {
		t.Fatalf("seed %d: not stable", seed)
	}
}
