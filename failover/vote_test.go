package failover

import (
	"strings"
	"testing"

	"github.com/slotd/slotd/gossip"
	"github.com/slotd/slotd/slots"
)

// Node ids of the vote fixtures.
var (
	idMe      = gossip.NodeID(strings.Repeat("a", 40)) // the voter: a master serving 0-5460
	idFailed  = gossip.NodeID(strings.Repeat("b", 40)) // a FAIL master serving 5461-10921
	idReplica = gossip.NodeID(strings.Repeat("c", 40)) // its replica, asking for votes
	idOther   = gossip.NodeID(strings.Repeat("d", 40)) // a master serving 10922-16383
)

// voteState is the voter's view: epoch 5, idFailed FAIL with config epoch 2.
func voteState(t *testing.T, failFlag string, lastVote uint64) *gossip.State {
	t.Helper()
	conf := string(idMe) + " 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460\n" +
		string(idFailed) + " 10.0.0.2:7001@17001 master" + failFlag + " - 0 0 2 connected 5461-10921\n" +
		string(idReplica) + " 10.0.0.3:7002@17002 slave " + string(idFailed) + " 0 0 2 connected\n" +
		string(idOther) + " 10.0.0.4:7003@17003 master - 0 0 3 connected 10922-16383\n" +
		"vars currentEpoch 5 lastVoteEpoch " + utoa(lastVote) + "\n"
	st, err := gossip.ParseNodesConf([]byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	st.Cfg.NodeTimeout = 5000
	st.Restart(1000)
	return st
}

func request(epoch, configEpoch uint64, force bool) *gossip.FailoverAuthRequest {
	r := &gossip.FailoverAuthRequest{Header: gossip.Header{Sender: idReplica, CurrentEpoch: epoch, ConfigEpoch: configEpoch,
		Flags: gossip.FlagSlave, Master: idFailed}}
	for j := 5461; j <= 10921; j++ {
		r.Slots.Set(j)
	}
	if force {
		r.MFlags = gossip.MFlagForceAck
	}
	return r
}

// outcome runs one request through the voter and reports "granted",
// "refused: why" or "silent".
func outcome(m *Machine, st *gossip.State, now int64, from gossip.NodeID, req *gossip.FailoverAuthRequest) string {
	for _, o := range m.Step(now, st, &gossip.Forward{From: from, Msg: req}) {
		switch o := o.(type) {
		case *Event:
			if o.Kind == EventVoteGranted {
				return "granted"
			}
			if o.Kind == EventVoteRefused {
				return "refused: " + o.Detail
			}
		}
	}
	return "silent"
}

func TestVoteRules(t *testing.T) {
	for _, c := range []struct {
		name     string
		fail     string // ",fail" or ""
		lastVote uint64
		req      *gossip.FailoverAuthRequest
		from     gossip.NodeID
		want     string // prefix of the outcome
	}{
		{"grant", ",fail", 4, request(5, 2, false), idReplica, "granted"},
		{"stale request epoch", ",fail", 4, request(4, 2, false), idReplica, "refused: request epoch 4 < current epoch 5"},
		{"already voted this epoch", ",fail", 5, request(5, 2, false), idReplica, "refused: already voted in epoch 5"},
		{"master not FAIL", "", 4, request(5, 2, false), idReplica, "refused: its master bbbbbbbb is not FAIL"},
		{"master not FAIL but manual (force-ack)", "", 4, request(5, 2, true), idReplica, "granted"},
		{"requester is a master", ",fail", 4, request(5, 2, false), idOther, "refused: it is a master"},
		{"claim older than the slots' owner", ",fail", 4, request(5, 1, false), idReplica, "refused: slot 5461 has config epoch 2 > claim 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := voteState(t, c.fail, c.lastVote)
			m := New(DefaultConfig(nil))
			if c.from == idOther {
				c.req.Sender, c.req.Flags, c.req.Master = idOther, gossip.FlagMaster, ""
			}
			got := outcome(m, st, 2000, c.from, c.req)
			if !strings.HasPrefix(got, c.want) {
				t.Fatalf("got %q want %q", got, c.want)
			}
			if c.want == "granted" && st.LastVoteEpoch != 5 {
				t.Fatalf("lastVoteEpoch %d after a vote in epoch 5", st.LastVoteEpoch)
			}
			if c.want != "granted" && st.LastVoteEpoch != c.lastVote {
				t.Fatalf("lastVoteEpoch moved to %d on a refusal", st.LastVoteEpoch)
			}
		})
	}
}

func TestVoteOncePerMasterPerTwoTimeouts(t *testing.T) {
	st := voteState(t, ",fail", 4)
	m := New(DefaultConfig(nil))
	if got := outcome(m, st, 2000, idReplica, request(5, 2, false)); got != "granted" {
		t.Fatal(got)
	}
	st.CurrentEpoch = 6
	if got := outcome(m, st, 2000+9999, idReplica, request(6, 2, false)); !strings.HasPrefix(got, "refused: voted for a replica of bbbbbbbb") {
		t.Fatalf("second vote within 2 x node timeout: %s", got)
	}
	st.CurrentEpoch = 7
	if got := outcome(m, st, 2000+10000, idReplica, request(7, 2, false)); got != "granted" {
		t.Fatalf("vote after 2 x node timeout: %s", got)
	}
}

func TestReplicaDoesNotVote(t *testing.T) {
	st := voteState(t, ",fail", 4)
	// Make the voter a replica: it has no say.
	outs, err := st.Replicate(2000, idOther)
	if err != nil || outs == nil {
		t.Fatal(err)
	}
	m := New(DefaultConfig(nil))
	if got := outcome(m, st, 2000, idReplica, request(5, 2, false)); got != "silent" {
		t.Fatalf("a replica answered: %s", got)
	}
}

// The ack counting: only from slot masters, each once, from the election's
// epoch on; a majority of the slot masters wins at once.
func TestAcksWinWithMajority(t *testing.T) {
	conf := string(idReplica) + " 10.0.0.3:7002@17002 myself,slave " + string(idFailed) + " 0 0 0 connected\n" +
		string(idMe) + " 10.0.0.1:7000@17000 master - 0 0 1 connected 0-5460\n" +
		string(idFailed) + " 10.0.0.2:7001@17001 master,fail - 0 0 2 connected 5461-10921\n" +
		string(idOther) + " 10.0.0.4:7003@17003 master - 0 0 3 connected 10922-16383\n" +
		"vars currentEpoch 5 lastVoteEpoch 0\n"
	st, err := gossip.ParseNodesConf([]byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	st.Cfg.NodeTimeout = 5000
	st.Restart(1000)
	m := New(DefaultConfig(fixedRand(0)))
	now := int64(100_000)
	var started bool
	for i := 0; i < 40 && !started; i++ {
		now += 100
		for _, o := range m.Tick(now, st) {
			if e, ok := o.(*Event); ok && e.Kind == EventElectionStarted {
				started = true
			}
		}
	}
	if !started || st.CurrentEpoch != 6 {
		t.Fatalf("no election started (epoch %d)", st.CurrentEpoch)
	}
	ack := func(from gossip.NodeID, epoch uint64) []Output {
		return m.Step(now, st, &gossip.Forward{From: from, Msg: &gossip.FailoverAuthAck{Header: gossip.Header{Sender: from, CurrentEpoch: epoch}}})
	}
	if outs := ack(idMe, 5); len(outs) != 0 || len(m.votes) != 0 {
		t.Fatal("an ack from an older epoch counted")
	}
	ack(idMe, 6)
	ack(idMe, 6)
	if len(m.votes) != 1 {
		t.Fatalf("%d votes after two acks of one master", len(m.votes))
	}
	var promoted bool
	for _, o := range ack(idOther, 6) {
		if p, ok := o.(*Promote); ok && p.Epoch == 6 {
			promoted = true
		}
	}
	if !promoted || !st.Myself.IsMaster() || st.Myself.ConfigEpoch != 6 || st.Owner[5461] != idReplica {
		t.Fatalf("not promoted with epoch 6: %v %s", promoted, st.Myself.Flags)
	}
	var want slots.Bitmap
	for j := 5461; j <= 10921; j++ {
		want.Set(j)
	}
	if st.Myself.Slots != want {
		t.Fatal("the winner does not serve exactly its master's slots")
	}
}

type fixedRand uint64

func (r fixedRand) Uint64() uint64 { return uint64(r) }

// Two masters FAIL together: the replica of the one with the larger id
// waits 500 ms more (failed-master rank 1), the other does not.
func TestFailedMasterRank(t *testing.T) {
	e := gossip.NodeID(strings.Repeat("e", 40))
	f := gossip.NodeID(strings.Repeat("f", 40))
	for _, c := range []struct {
		me, master gossip.NodeID
		want       string
		minDelay   int64
	}{
		{e, idMe, "failed-master rank 0", 500},      // replica of aaaa...: first
		{f, idFailed, "failed-master rank 1", 1000}, // replica of bbbb...: after it
	} {
		var conf string
		for _, l := range []struct {
			id    gossip.NodeID
			rest  string
			slots string
		}{
			{idMe, "10.0.0.1:7000@17000 master,fail - 0 0 1 connected", " 0-5460"},
			{idFailed, "10.0.0.2:7001@17001 master,fail - 0 0 2 connected", " 5461-10921"},
			{idOther, "10.0.0.4:7003@17003 master - 0 0 3 connected", " 10922-16383"},
		} {
			conf += string(l.id) + " " + l.rest + l.slots + "\n"
		}
		for _, r := range []gossip.NodeID{e, f} {
			flags, master := "slave", idMe
			if r == f {
				master = idFailed
			}
			if r == c.me {
				flags = "myself,slave"
			}
			ip := "10.0.0.5:7004@17004"
			if r == f {
				ip = "10.0.0.6:7005@17005"
			}
			conf += string(r) + " " + ip + " " + flags + " " + string(master) + " 0 0 0 connected\n"
		}
		conf += "vars currentEpoch 3 lastVoteEpoch 0\n"
		st, err := gossip.ParseNodesConf([]byte(conf))
		if err != nil {
			t.Fatal(err)
		}
		st.Cfg.NodeTimeout = 5000
		st.Restart(1000)
		for _, id := range []gossip.NodeID{idMe, idFailed} {
			st.Nodes[id].FailTime = 100_000
		}
		m := New(DefaultConfig(fixedRand(0)))
		var detail string
		for _, o := range m.Tick(100_000, st) {
			if ev, ok := o.(*Event); ok && ev.Kind == EventElectionScheduled {
				detail = ev.Detail
			}
		}
		if !strings.Contains(detail, c.want) || m.authTime-100_000 < c.minDelay {
			t.Fatalf("replica of %s: %q, delay %d", c.master[:4], detail, m.authTime-100_000)
		}
	}
}
