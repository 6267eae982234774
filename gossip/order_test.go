package gossip

import "testing"

func TestAdoptEpoch(t *testing.T) {
	for _, c := range []struct{ mine, heard, want uint64 }{
		{0, 0, 0}, {3, 5, 5}, {5, 3, 5}, {7, 7, 7},
	} {
		if got := adoptEpoch(c.mine, c.heard); got != c.want {
			t.Errorf("adoptEpoch(%d,%d)=%d want %d", c.mine, c.heard, got, c.want)
		}
	}
}

func TestClaimWins(t *testing.T) {
	for _, c := range []struct {
		known        bool
		owner, claim uint64
		want         bool
	}{
		{false, 0, 0, true}, // unowned slot: any claim
		{true, 3, 4, true},
		{true, 4, 4, false}, // ties never move a slot
		{true, 5, 4, false},
	} {
		if got := claimWins(c.known, c.owner, c.claim); got != c.want {
			t.Errorf("claimWins(%v,%d,%d)=%v", c.known, c.owner, c.claim, got)
		}
	}
}

func TestStaleClaim(t *testing.T) {
	for _, c := range []struct {
		owner, claim uint64
		want         bool
	}{{5, 4, true}, {4, 4, false}, {3, 4, false}} {
		if got := staleClaim(c.owner, c.claim); got != c.want {
			t.Errorf("staleClaim(%d,%d)=%v", c.owner, c.claim, got)
		}
	}
}

func TestMustResolveCollision(t *testing.T) {
	a, b := NodeID("1111111111111111111111111111111111111111"), NodeID("2222222222222222222222222222222222222222")
	for _, c := range []struct {
		me, other NodeID
		e1, e2    uint64
		want      bool
	}{
		{a, b, 3, 3, true},  // smaller id bumps
		{b, a, 3, 3, false}, // larger id keeps its epoch
		{a, b, 3, 4, false}, // no collision
		{a, b, 0, 0, true},  // zero epochs collide too (Redis does the same)
	} {
		if got := mustResolveCollision(c.me, c.other, c.e1, c.e2); got != c.want {
			t.Errorf("mustResolveCollision(%s,%s,%d,%d)=%v", c.me[:1], c.other[:1], c.e1, c.e2, got)
		}
	}
}

func TestNewerPong(t *testing.T) {
	for _, c := range []struct{ ours, rep, now, want int64 }{
		{100, 200, 300, 200}, {200, 100, 300, 200}, {100, 400, 300, 100},
	} {
		if got := newerPong(c.ours, c.rep, c.now); got != c.want {
			t.Errorf("newerPong(%d,%d,%d)=%d", c.ours, c.rep, c.now, got)
		}
	}
}
