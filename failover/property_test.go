package failover_test

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/slotd/slotd/failover"
)

// TestRandomSchedules runs random schedules of kills, restarts, partitions,
// heals, writes and manual failovers (default and FORCE; TAKEOVER is
// unsafe by design and left out) on a 3 x 2 cluster. Throughout, no slot
// may have two masters claiming it with the same config epoch, and every
// currentEpoch must stay at least every config epoch; after a final heal
// and restart of every node the cluster must converge to one owner per
// slot. Each schedule logs its seed; FAILOVER_SEED replays one.
func TestRandomSchedules(t *testing.T) {
	runs := 6
	if testing.Short() {
		runs = 2
	}
	base := simSeed(t, uint64(time.Now().UnixNano()))
	for r := 0; r < runs; r++ {
		seed := base + uint64(r)
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) { randomSchedule(t, seed) })
		if t.Failed() {
			return
		}
	}
}

// TestRandomScheduleRegressions replays schedules that once failed.
func TestRandomScheduleRegressions(t *testing.T) {
	for _, seed := range []uint64{
		35,                  // a node restarted with an old view kept a master's lost slots under its new epoch (gossip dropUnclaimed)
		1796044728312837204, // the same, when that epoch came first on an UPDATE's header (gossip Node.ClaimEpoch)
	} {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) { randomSchedule(t, seed) })
	}
}

func randomSchedule(t *testing.T, seed uint64) {
	s := newSim(t, seed)
	if err := s.cluster(3, 2, 0, 2000); err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	rng := rand.New(rand.NewPCG(seed, 0xfa11))
	n := len(s.h.Members)
	var log []string
	note := func(f string) { log = append(log, "t="+strconv.FormatInt(s.h.Now, 10)+" "+f) }
	down := func() []int {
		var d []int
		for i, m := range s.h.Members {
			if m.Down {
				d = append(d, i)
			}
		}
		return d
	}
	for step := 0; step < 40; step++ {
		switch rng.IntN(7) {
		case 0, 1:
			if len(down()) < 3 {
				i := rng.IntN(n)
				if !s.h.Members[i].Down {
					s.kill(i)
					note("kill n" + strconv.Itoa(i))
				}
			}
		case 2:
			if d := down(); len(d) > 0 {
				i := d[rng.IntN(len(d))]
				if err := s.restart(i); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				note("restart n" + strconv.Itoa(i))
			}
		case 3:
			perm := rng.Perm(n)
			k := 1 + rng.IntN(n/2)
			s.h.Partition(perm[:k])
			note("partition " + strconv.Itoa(k) + " nodes: " + sliceString(perm[:k]))
		case 4:
			s.h.Heal()
			note("heal")
		case 5:
			for i := 0; i < n; i++ {
				s.write(i, 10)
			}
		case 6:
			i := rng.IntN(n)
			if !s.h.Members[i].Down {
				mode := failover.ModeDefault
				if rng.IntN(2) == 0 {
					mode = failover.ModeForce
				}
				outs, err := s.fm[i].Manual(s.h.Now, s.h.Members[i].State, mode)
				if err == nil {
					s.apply(i, outs)
				}
				note("failover n" + strconv.Itoa(i) + " " + mode.String())
			}
		}
		s.runUntil(200+rng.Int64N(8000), nil)
		if s.violation != "" {
			for _, l := range log {
				t.Log(l)
			}
			t.Fatalf("seed %d: %s", seed, s.violation)
		}
	}
	s.h.Heal()
	for _, i := range down() {
		if err := s.restart(i); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	note("heal, restart all")
	if !s.runUntil(180_000, s.converged) || s.violation != "" {
		for _, l := range log {
			t.Log(l)
		}
		s.dumpTo(t)
		t.Fatalf("seed %d: no convergence within 180 s after the last heal: %v %s", seed, s.convergedErr(), s.violation)
	}
	var won, lost, manual int
	for i := range s.h.Members {
		won += s.countEvents(i, "election-won")
		lost += s.countEvents(i, "election-lost")
		manual += s.countEvents(i, "manual-failover-started")
	}
	t.Logf("seed %d: %d elections won, %d lost, %d manual failovers; converged at t=%d", seed, won, lost, manual, s.h.Now)
}

func sliceString(v []int) string {
	b := ""
	for i, x := range v {
		if i > 0 {
			b += ","
		}
		b += "n" + strconv.Itoa(x)
	}
	return b
}
