package migrate

import (
	"reflect"
	"testing"
)

// Each case is a cluster state an interrupted or broken move can leave,
// named by the step of the per-slot protocol it stopped after.
func TestPlanFix(t *testing.T) {
	type V = SlotView
	cases := []struct {
		name  string
		views []V
		mode  FixMode
		want  Fix
	}{
		{"stable slot", []V{{ID: "A", Owner: "A", Keys: 3}, {ID: "B", Owner: "A"}}, FixAuto, Fix{}},
		{"after IMPORTING only", []V{{ID: "A", Owner: "A", Keys: 3}, {ID: "B", Owner: "A", Importing: "A"}}, FixAuto,
			Fix{Kind: FixClear, From: "A", Stable: []string{"B"}, Reason: "importing marks with no migrating node"}},
		{"after MIGRATING, nothing moved", []V{{ID: "A", Owner: "A", Migrating: "B", Keys: 3}, {ID: "B", Owner: "A", Importing: "A"}}, FixAuto,
			Fix{Kind: FixRollback, From: "A", To: "B", Stable: []string{"A", "B"}, Reason: "move opened but no key reached the target"}},
		{"after MIGRATING, resume", []V{{ID: "A", Owner: "A", Migrating: "B", Keys: 3}, {ID: "B", Owner: "A", Importing: "A"}}, FixResume,
			Fix{Kind: FixFinish, From: "A", To: "B", Reason: "half-moved slot"}},
		{"some keys moved", []V{{ID: "A", Owner: "A", Migrating: "B", Keys: 3}, {ID: "B", Owner: "A", Importing: "A", Keys: 2}}, FixAuto,
			Fix{Kind: FixFinish, From: "A", To: "B", Reason: "half-moved slot"}},
		{"after NODE on target", []V{{ID: "A", Owner: "A", Migrating: "B"}, {ID: "B", Owner: "B", Keys: 5}, {ID: "C", Owner: "A"}}, FixAuto,
			Fix{Kind: FixFinish, From: "A", To: "B", Reason: "half-moved slot"}},
		{"importing lost, target has keys", []V{{ID: "A", Owner: "A", Migrating: "B", Keys: 1}, {ID: "B", Owner: "A", Keys: 5}}, FixAuto,
			Fix{Kind: FixFinish, From: "A", To: "B", Reason: "half-moved slot"}},
		{"migrating alone, nothing moved", []V{{ID: "A", Owner: "A", Migrating: "B", Keys: 1}, {ID: "B", Owner: "A"}}, FixAuto,
			Fix{Kind: FixRollback, From: "A", To: "B", Stable: []string{"A"}, Reason: "move opened but no key reached the target"}},
		{"stale migrating mark", []V{{ID: "A", Owner: "B", Migrating: "B"}, {ID: "B", Owner: "B", Keys: 5}}, FixAuto,
			Fix{Kind: FixClear, To: "B", Stable: []string{"A"}, Reason: "migrating mark on a node that no longer owns the slot"}},
		{"stale migrating mark with keys", []V{{ID: "A", Owner: "B", Migrating: "B", Keys: 1}, {ID: "B", Owner: "B", Keys: 5}}, FixAuto,
			Fix{Kind: FixAssign, To: "B", Cold: []string{"A"}, Stable: []string{"A"}, Reason: "migrating mark on a node that no longer owns the slot, with keys"}},
		{"importer with keys, no migrating", []V{{ID: "A", Owner: "A", Keys: 1}, {ID: "B", Owner: "A", Importing: "A", Keys: 2}}, FixAuto,
			Fix{Kind: FixAssign, To: "A", Cold: []string{"B"}, Stable: []string{"B"}, Reason: "importing marks with keys and no migrating node"}},
		{"importer that owns", []V{{ID: "A", Owner: "B"}, {ID: "B", Owner: "B", Importing: "A", Keys: 2}}, FixAuto,
			Fix{Kind: FixClear, From: "B", Stable: []string{"B"}, Reason: "importing marks with no migrating node"}},
		{"uncovered, no keys", []V{{ID: "A"}, {ID: "B"}}, FixAuto,
			Fix{Kind: FixAssign, To: "F", Reason: "slot not covered"}},
		{"uncovered, keys", []V{{ID: "A", Keys: 1}, {ID: "B", Keys: 4}}, FixAuto,
			Fix{Kind: FixAssign, To: "B", Cold: []string{"A"}, Reason: "slot not covered"}},
		{"keys on non-owner", []V{{ID: "A", Owner: "A"}, {ID: "B", Owner: "A", Keys: 4}}, FixAuto,
			Fix{Kind: FixAssign, To: "A", Cold: []string{"B"}, Reason: "keys held by nodes that do not own the slot"}},
		{"two owners", []V{{ID: "A", Owner: "A", Keys: 1}, {ID: "B", Owner: "B", Keys: 4}}, FixAuto,
			Fix{Kind: FixAssign, To: "B", Cold: []string{"A"}, Reason: "2 nodes claim the slot"}},
		{"two migrating", []V{{ID: "A", Owner: "A", Migrating: "C"}, {ID: "B", Owner: "B", Migrating: "C"}}, FixAuto,
			Fix{Kind: FixUnfixable, Reason: "2 nodes mark the slot migrating"}},
		{"importer of another source", []V{{ID: "A", Owner: "A", Migrating: "B"}, {ID: "B", Owner: "A", Importing: "C"}}, FixAuto,
			Fix{Kind: FixUnfixable, Reason: "node B imports the slot from C while A migrates it to B"}},
		{"migrating to unknown", []V{{ID: "A", Owner: "A", Migrating: "Z"}}, FixAuto,
			Fix{Kind: FixUnfixable, Reason: "migrating to unknown node Z"}},
		{"importers with keys, no owner", []V{{ID: "A", Importing: "C", Keys: 1}}, FixAuto,
			Fix{Kind: FixUnfixable, Stable: []string{"A"}, Cold: []string{"A"}, Reason: "importing nodes hold keys and the slot has no single owner"}},
	}
	for _, c := range cases {
		got := PlanFix(7, c.views, c.mode, "F")
		c.want.Slot = 7
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

// TestResumeSequence walks one slot through every step of the protocol,
// stopping after each, and checks that PlanFix in resume mode always
// finishes towards the same target (or finds nothing to do).
func TestResumeSequence(t *testing.T) {
	type V = SlotView
	steps := [][]V{
		{{ID: "A", Owner: "A", Keys: 4}, {ID: "B", Owner: "A"}, {ID: "C", Owner: "A"}},
		{{ID: "A", Owner: "A", Keys: 4}, {ID: "B", Owner: "A", Importing: "A"}, {ID: "C", Owner: "A"}},
		{{ID: "A", Owner: "A", Migrating: "B", Keys: 4}, {ID: "B", Owner: "A", Importing: "A"}, {ID: "C", Owner: "A"}},
		{{ID: "A", Owner: "A", Migrating: "B", Keys: 2}, {ID: "B", Owner: "A", Importing: "A", Keys: 2}, {ID: "C", Owner: "A"}},
		{{ID: "A", Owner: "A", Migrating: "B"}, {ID: "B", Owner: "A", Importing: "A", Keys: 4}, {ID: "C", Owner: "A"}},
		{{ID: "A", Owner: "A", Migrating: "B"}, {ID: "B", Owner: "B", Keys: 4}, {ID: "C", Owner: "A"}},
		// Gossip told the source before slotctl did.
		{{ID: "A", Owner: "B", Migrating: "B"}, {ID: "B", Owner: "B", Keys: 4}, {ID: "C", Owner: "A"}},
		{{ID: "A", Owner: "B"}, {ID: "B", Owner: "B", Keys: 4}, {ID: "C", Owner: "A"}},
		{{ID: "A", Owner: "B"}, {ID: "B", Owner: "B", Keys: 4}, {ID: "C", Owner: "B"}},
	}
	want := []FixKind{FixNone, FixClear, FixFinish, FixFinish, FixFinish, FixFinish, FixClear, FixNone, FixNone}
	for i, v := range steps {
		f := PlanFix(0, v, FixResume, "")
		if f.Kind != want[i] {
			t.Errorf("step %d: %v (%s), want %v", i, f.Kind, f.Reason, want[i])
		}
		if f.Kind == FixFinish && (f.From != "A" || f.To != "B") {
			t.Errorf("step %d: finishes %s -> %s", i, f.From, f.To)
		}
	}
}
