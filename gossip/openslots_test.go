package gossip_test

import (
	"testing"

	"github.com/slotd/slotd/gossip"
)

// Open slots follow a failover: a migration from A (slot 5) to B is under
// way when A1, A's replica, takes over. B's importing mark must come to
// name A1, and B must let A1 take slot 5 (an importing slot is otherwise
// moved only by SETSLOT). The same for the source's migrating mark when
// the target's replica takes over. With the old master failed (rule: a
// replica promoted in place of a failing master) or handing over and
// following (rule: a master that turns replica of another).
func TestOpenSlotsFollowFailover(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target bool // the target fails over, not the source
		crash  bool // the old master dies instead of following
	}{
		{"source-handover", false, false},
		{"source-crash", false, true},
		{"target-handover", true, false},
		{"target-crash", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHub(t)
			ids := h.Add(5, 2000) // A, B, C masters; A1 (replica of A), B1 (replica of B)
			slotted(t, h, ids[:3], true)
			meetChain(h, ids)
			if !h.RunUntil(30_000, func() bool { return converged(h) && allOK(h) }) {
				t.Fatalf("seed %d: %v", h.Seed, convergedErr(h))
			}
			A, B, A1, B1 := h.Members[0], h.Members[1], h.Members[3], h.Members[4]
			do(t, h, 3)(A1.State.Replicate(h.Now, h.ID(0)))
			do(t, h, 4)(B1.State.Replicate(h.Now, h.ID(1)))
			h.Run(3000)
			const slot = 5
			if A.State.Owner[slot] != h.ID(0) {
				t.Fatalf("slot %d is not A's", slot)
			}
			// The slot is open on the masters and (replicated) on their replicas.
			B.State.SetSlotImporting(slot, h.ID(0))
			B1.State.SetSlotImporting(slot, h.ID(0))
			A.State.SetSlotMigrating(slot, h.ID(1))
			A1.State.SetSlotMigrating(slot, h.ID(1))

			old, heir, heirIdx, oldIdx := A, A1, 3, 0
			if tc.target {
				old, heir, heirIdx, oldIdx = B, B1, 4, 1
			}
			if tc.crash {
				h.Kill(oldIdx)
				if !h.RunUntil(20_000, func() bool {
					n := h.Members[2].State.Nodes[h.ID(oldIdx)]
					return n != nil && n.Flags&gossip.FlagFail != 0 && heir.State.Nodes[h.ID(oldIdx)].Flags&gossip.FlagFail != 0
				}) {
					t.Fatalf("seed %d: the old master is not failed", h.Seed)
				}
			}
			seen := make([]int, len(h.Members))
			for i, m := range h.Members {
				seen[i] = len(m.Events)
			}
			h.Apply(heirIdx, heir.State.Promote(h.Now, 10))
			if !tc.crash {
				// The old master follows its heir once it hears that it lost its slots.
				if !h.RunUntil(10_000, func() bool { return old.State.Myself.Master == h.ID(heirIdx) }) {
					t.Fatalf("seed %d: the old master does not follow", h.Seed)
				}
			}
			if !tc.target {
				ok := h.RunUntil(10_000, func() bool {
					return B.State.Importing[slot] == h.ID(heirIdx) && B.State.Owner[slot] == h.ID(heirIdx)
				})
				if !ok {
					t.Fatalf("seed %d: B importing from %q, owner %q; want A1 %q", h.Seed, B.State.Importing[slot], B.State.Owner[slot], h.ID(heirIdx))
				}
				if A1.State.Migrating[slot] != h.ID(1) {
					t.Fatalf("seed %d: A1 lost its migrating mark", h.Seed)
				}
			} else {
				ok := h.RunUntil(10_000, func() bool { return A.State.Migrating[slot] == h.ID(heirIdx) })
				if !ok {
					t.Fatalf("seed %d: A migrating to %q; want B1 %q", h.Seed, A.State.Migrating[slot], h.ID(heirIdx))
				}
				if B1.State.Importing[slot] != h.ID(0) {
					t.Fatalf("seed %d: B1 lost its importing mark", h.Seed)
				}
			}
			if !tc.crash {
				// A handover keeps every slot served: the heir's claim takes
				// the open slot too, before the old master's heartbeat as a
				// replica frees what it still has.
				h.Run(3000)
				for i, m := range h.Members {
					for _, e := range m.Events[seen[i]:] {
						if e.Kind == gossip.EventStateChanged && e.Detail == "fail" {
							t.Fatalf("seed %d: node %d went to cluster_state:fail during the handover", h.Seed, i)
						}
					}
				}
			}
			// A bystander has no open slots to follow.
			if c := h.Members[2].State; len(c.Migrating)+len(c.Importing) != 0 {
				t.Fatalf("C has open slots")
			}
		})
	}
}
