package failover_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/slotd/slotd/failover"
	"github.com/slotd/slotd/gossip"
	"github.com/slotd/slotd/slots"
)

// TestStories replays every story in testdata: one file per story, one
// command per line (see runStory for the commands). A story's seed line
// fixes its schedule; FAILOVER_SEED overrides it to try others.
func TestStories(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no stories: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			runStory(t, f, string(data))
		})
	}
}

type line struct {
	no   int
	args []string
}

// runStory executes a story. Commands:
//
//	seed N                                  the schedule's seed (first line)
//	cluster masters=M replicas=R [extra=X] timeout=MS
//	                                         build and converge; nodes are n0..: masters
//	                                         first, then replicas (replica k follows
//	                                         master k%M), then X more replicas of n0
//	config nX key=value ...                  validity-factor, migration-barrier, allow-migration, nofailover
//	run DURATION                             advance time (invariants checked every 100 ms)
//	wait DURATION COND                       run until COND holds, fail if it does not in time
//	expect COND                              COND must hold now
//	kill NODE | restart NODE                 stop a node / restart it from its persisted config
//	partition nA,nB nC,nD                    split the network (unlisted nodes form one more group)
//	heal                                     remove every partition
//	write NODE BYTES -> ok|rejected          a client write to NODE
//	freeze NODE                              NODE's replication stops (its data ages)
//	offset NODE N                            set NODE's replication offset
//	failover NODE [force|takeover] -> REPLY  CLUSTER FAILOVER on NODE: OK or the error text
//	repeat N ... end                         repeat the lines in between
//
// master, replica and owner check the views of the nodes in the same
// partition as the node named. NODE is nX, owner:SLOT (the slot's owner as the first live node sees
// it) or last (the node last killed). COND is one of
//
//	master NODE | replica NODE of=NODE | owner RANGE NODE | state NODE ok|fail
//	converged | one-owner | epochs | event NODE KIND | no-event NODE|* KIND
//	count NODE KIND N | served SLOT | replicas NODE N
func runStory(t *testing.T, file, text string) {
	var lines []line
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		lines = append(lines, line{i + 1, strings.Fields(l)})
	}
	var s *sim
	seed := uint64(1)
	if len(lines) > 0 && lines[0].args[0] == "seed" {
		v, err := strconv.ParseUint(lines[0].args[1], 10, 64)
		if err != nil {
			t.Fatalf("%s:%d: bad seed", file, lines[0].no)
		}
		seed = v
		lines = lines[1:]
	}
	seed = simSeed(t, seed)
	fail := func(l line, format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if s != nil {
			s.dumpTo(t)
		}
		t.Fatalf("%s:%d: %s: %s (seed %d)", file, l.no, strings.Join(l.args, " "), msg, seed)
	}
	var exec func(ls []line)
	exec = func(ls []line) {
		for k := 0; k < len(ls); k++ {
			l := ls[k]
			a := l.args
			if s == nil && a[0] != "cluster" {
				fail(l, "the first command must be cluster")
			}
			if s != nil && s.violation != "" {
				fail(l, "invariant broken before this line: %s", s.violation)
			}
			switch a[0] {
			case "cluster":
				kv := keyvals(a[1:])
				m, _ := strconv.Atoi(kv["masters"])
				r, _ := strconv.Atoi(kv["replicas"])
				x, _ := strconv.Atoi(kv["extra"])
				to, _ := parseMS(kv["timeout"])
				s = newSim(t, seed)
				s.verbose = testing.Verbose()
				if err := s.cluster(m, r, x, to); err != nil {
					fail(l, "%v", err)
				}
			case "config":
				i := s.node(l, a[1], fail)
				for k, v := range keyvals(a[2:]) {
					c := &s.fm[i].Cfg
					switch k {
					case "validity-factor":
						c.ValidityFactor, _ = strconv.ParseInt(v, 10, 64)
					case "migration-barrier":
						c.MigrationBarrier, _ = strconv.Atoi(v)
					case "allow-migration":
						c.AllowReplicaMigration = v == "yes"
					case "nofailover":
						st := s.h.Members[i].State
						s.h.Apply(i, st.SetNoFailover(s.h.Now, v == "yes"))
					default:
						fail(l, "unknown config %s", k)
					}
				}
			case "run":
				d, err := parseMS(a[1])
				if err != nil {
					fail(l, "bad duration")
				}
				s.runUntil(d, nil)
			case "wait":
				d, err := parseMS(a[1])
				if err != nil {
					fail(l, "bad duration")
				}
				var why error
				if !s.runUntil(d, func() bool { why = s.cond(l, a[2:], fail); return why == nil }) {
					fail(l, "not within %s: %v", a[1], why)
				}
			case "expect":
				if err := s.cond(l, a[1:], fail); err != nil {
					fail(l, "%v", err)
				}
			case "kill":
				s.kill(s.node(l, a[1], fail))
			case "restart":
				if err := s.restart(s.node(l, a[1], fail)); err != nil {
					fail(l, "%v", err)
				}
			case "partition":
				var groups [][]int
				for _, g := range a[1:] {
					var grp []int
					for _, n := range nodeList(g) {
						grp = append(grp, s.node(l, n, fail))
					}
					groups = append(groups, grp)
				}
				s.h.Partition(groups...)
			case "heal":
				s.h.Heal()
			case "write":
				i := s.node(l, a[1], fail)
				n, _ := strconv.ParseInt(a[2], 10, 64)
				got := "rejected"
				if s.write(i, n) {
					got = "ok"
				}
				if len(a) >= 5 && a[3] == "->" && a[4] != got {
					fail(l, "write %s", got)
				}
			case "freeze":
				i := s.node(l, a[1], fail)
				s.frozen[i] = true
			case "offset":
				i := s.node(l, a[1], fail)
				s.off[i], _ = strconv.ParseInt(a[2], 10, 64)
				s.h.Members[i].State.SetReplOffset(s.off[i])
			case "failover":
				i := s.node(l, a[1], fail)
				mode := failover.ModeDefault
				rest := a[2:]
				if len(rest) > 0 && rest[0] != "->" {
					switch rest[0] {
					case "force":
						mode = failover.ModeForce
					case "takeover":
						mode = failover.ModeTakeover
					default:
						fail(l, "unknown mode")
					}
					rest = rest[1:]
				}
				outs, err := s.fm[i].Manual(s.h.Now, s.h.Members[i].State, mode)
				got := "OK"
				if err != nil {
					got = err.Error()
				} else {
					s.apply(i, outs)
				}
				if len(rest) >= 2 && rest[0] == "->" {
					if want := strings.Join(rest[1:], " "); want != got {
						fail(l, "got %q want %q", got, want)
					}
				}
			case "repeat":
				n, _ := strconv.Atoi(a[1])
				depth, end := 1, -1
				for j := k + 1; j < len(ls); j++ {
					switch ls[j].args[0] {
					case "repeat":
						depth++
					case "end":
						depth--
					}
					if depth == 0 {
						end = j
						break
					}
				}
				if end < 0 {
					fail(l, "repeat without end")
				}
				for r := 0; r < n; r++ {
					exec(ls[k+1 : end])
				}
				k = end
			default:
				fail(l, "unknown command")
			}
			if s != nil && s.violation != "" {
				fail(l, "invariant broken: %s", s.violation)
			}
		}
	}
	exec(lines)
}

func keyvals(args []string) map[string]string {
	kv := map[string]string{}
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		kv[k] = v
	}
	return kv
}

type failFunc func(l line, format string, args ...any)

// node resolves a node reference of a story line.
func (s *sim) node(l line, ref string, fail failFunc) int {
	switch {
	case ref == "last":
		if s.lastKill < 0 {
			fail(l, "no node killed yet")
		}
		return s.lastKill
	case strings.HasPrefix(ref, "owner:"):
		j, err := strconv.Atoi(ref[6:])
		if err != nil || j < 0 || j >= slots.Count {
			fail(l, "bad slot")
		}
		live := s.live()
		if len(live) == 0 {
			fail(l, "no live node")
		}
		i := s.index(live[0].State.Owner[j])
		if i < 0 {
			fail(l, "slot %d has no owner", j)
		}
		return i
	case strings.HasPrefix(ref, "n"):
		i, err := strconv.Atoi(ref[1:])
		if err == nil && i >= 0 && i < len(s.h.Members) {
			return i
		}
	}
	fail(l, "bad node %q", ref)
	return -1
}

// cond evaluates a condition; nil means it holds.
func (s *sim) cond(l line, a []string, fail failFunc) error {
	if len(a) == 0 {
		fail(l, "missing condition")
	}
	h := s.h
	switch a[0] {
	case "converged":
		return s.convergedErr()
	case "one-owner":
		return s.oneOwnerErr()
	case "epochs":
		for _, m := range s.live() {
			for _, n := range m.State.Nodes {
				if n.ConfigEpoch > m.State.CurrentEpoch {
					return fmt.Errorf("n%d: currentEpoch %d < config epoch %d of %s", m.Index, m.State.CurrentEpoch, n.ConfigEpoch, s.name(n.ID))
				}
			}
		}
		return nil
	case "served":
		j, err := strconv.Atoi(a[1])
		if err != nil || j < 0 || j >= slots.Count {
			fail(l, "bad slot")
		}
		live := s.live()
		o := live[0].State.Owner[j]
		for _, m := range live {
			if m.State.Owner[j] != o {
				return fmt.Errorf("n%d and n%d disagree on slot %d", m.Index, live[0].Index, j)
			}
		}
		if i := s.index(o); i < 0 || h.Members[i].Down || !h.Members[i].State.Myself.Slots.Has(j) {
			return fmt.Errorf("slot %d: owner %s is down or does not serve it", j, s.name(o))
		}
		return nil
	case "replicas":
		i := s.node(l, a[1], fail)
		want, _ := strconv.Atoi(a[2])
		got := 0
		for _, m := range s.live() {
			me := m.State.Myself
			if me.IsReplica() && me.Master == h.ID(i) {
				got++
			}
		}
		if got != want {
			return fmt.Errorf("n%d has %d live replicas, want %d", i, got, want)
		}
		return nil
	case "master":
		i := s.node(l, a[1], fail)
		me := h.Members[i].State.Myself
		if !me.IsMaster() || me.NumSlots == 0 {
			return fmt.Errorf("n%d is %s with %d slots", i, me.Flags, me.NumSlots)
		}
		for _, m := range s.live() {
			if !h.CanReach(m.Index, i) {
				continue
			}
			if n := m.State.Nodes[me.ID]; n == nil || !n.IsMaster() {
				return fmt.Errorf("n%d does not see n%d as master", m.Index, i)
			}
		}
		return nil
	case "replica":
		i := s.node(l, a[1], fail)
		of := s.node(l, strings.TrimPrefix(a[2], "of="), fail)
		me := h.Members[i].State.Myself
		if !me.IsReplica() || me.Master != h.ID(of) {
			return fmt.Errorf("n%d is %s of %s", i, me.Flags, s.name(me.Master))
		}
		for _, m := range s.live() {
			if !h.CanReach(m.Index, i) {
				continue
			}
			if n := m.State.Nodes[me.ID]; n == nil || !n.IsReplica() || n.Master != h.ID(of) {
				return fmt.Errorf("n%d does not see n%d as replica of n%d", m.Index, i, of)
			}
		}
		return nil
	case "owner":
		r, ok := slots.ParseRange(a[1])
		if !ok {
			fail(l, "bad range %q", a[1])
		}
		i := s.node(l, a[2], fail)
		for _, m := range s.live() {
			if !h.CanReach(m.Index, i) {
				continue
			}
			for j := r.Start; j <= r.End; j++ {
				if m.State.Owner[j] != h.ID(i) {
					return fmt.Errorf("n%d says slot %d belongs to %s", m.Index, j, s.name(m.State.Owner[j]))
				}
			}
		}
		return nil
	case "state":
		i := s.node(l, a[1], fail)
		if got := h.Members[i].State.Status.String(); got != a[2] {
			return fmt.Errorf("n%d cluster state %s", i, got)
		}
		return nil
	case "event":
		i := s.node(l, a[1], fail)
		if !s.hasEvent(i, a[2]) {
			return fmt.Errorf("n%d has no %s event", i, a[2])
		}
		return nil
	case "no-event":
		var who []int
		if a[1] == "*" {
			for i := range h.Members {
				who = append(who, i)
			}
		} else {
			who = []int{s.node(l, a[1], fail)}
		}
		for _, i := range who {
			if s.hasEvent(i, a[2]) {
				return fmt.Errorf("n%d has a %s event", i, a[2])
			}
		}
		return nil
	case "count":
		i := s.node(l, a[1], fail)
		want, _ := strconv.Atoi(a[3])
		if got := s.countEvents(i, a[2]); got != want {
			return fmt.Errorf("n%d has %d %s events, want %d", i, got, a[2], want)
		}
		return nil
	}
	fail(l, "unknown condition %q", a[0])
	return nil
}

// dumpTo logs every node's view and failover events, for a failed story.
func (s *sim) dumpTo(t *testing.T) {
	t.Helper()
	for i, m := range s.h.Members {
		state := "up"
		if m.Down {
			state = "DOWN"
		}
		t.Logf("--- n%d (%s) %s offset=%d", i, state, m.State, s.off[i])
		t.Logf("%s", gossip.FormatClusterNodes(m.State))
		for _, e := range s.events[i] {
			t.Logf("    %s %s %s", e.Kind, s.name(e.Node), e.Detail)
		}
	}
}
