package failover_test

import (
	"slices"
	"testing"
)

// TestFailoverTimeSim measures, on the simulated network (1 ms latency),
// the time from a master's death to its replica serving the slots, with
// cluster-node-timeout 5000, over several seeds. It guards the bound
// Redis documents (node timeout + node timeout / 2 + 1000 ms) and logs the
// median.
func TestFailoverTimeSim(t *testing.T) {
	var times []int64
	for seed := uint64(1); seed <= 15; seed++ {
		s := newSim(t, seed)
		if err := s.cluster(3, 1, 0, 5000); err != nil {
			t.Fatal(err)
		}
		// Kill at a random point of the ping schedule.
		s.runUntil(int64(seed*397)%5000, nil)
		start := s.h.Now
		s.kill(0)
		if !s.runUntil(60_000, func() bool {
			me := s.h.Members[3].State.Myself
			return me.IsMaster() && me.NumSlots > 0
		}) {
			t.Fatalf("seed %d: no failover", seed)
		}
		times = append(times, s.h.Now-start)
	}
	slices.Sort(times)
	t.Logf("kill -> replica serving, node timeout 5000: median %d ms, min %d, max %d (sim, 100 ms tick granularity)",
		times[len(times)/2], times[0], times[len(times)-1])
	if max := times[len(times)-1]; max > 5000+2500+1000 {
		t.Errorf("slowest failover %d ms is above node timeout x 1.5 + 1000", max)
	}
	// The target: at most 0.8 x redis-server's 9.2 s at this timeout.
	if med := times[len(times)/2]; med > 7360 {
		t.Errorf("median failover %d ms is above 0.8 x 9200 ms", med)
	}
}
