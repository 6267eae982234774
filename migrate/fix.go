package migrate

import "fmt"

// SlotView is what one master says about one slot: who owns it in its own
// view, its open-slot mark, and how many keys of the slot it holds.
type SlotView struct {
	ID string
	// Owner is the owner in this node's view ("" when unassigned).
	Owner string
	// Migrating is the target id when the node marks the slot migrating;
	// Importing the source id when it marks it importing.
	Migrating, Importing string
	Keys                 int
}

// FixKind says what to do with a slot.
type FixKind int

// What Fix decides.
const (
	// FixNone: the slot is fine.
	FixNone FixKind = iota
	// FixFinish: complete the move From -> To: (re)open the slot on both,
	// move the remaining keys, then SETSLOT NODE To on To, From and the
	// others.
	FixFinish
	// FixRollback: nothing reached the target; clear the marks (Stable)
	// and leave the slot with From.
	FixRollback
	// FixAssign: give the slot to To (ADDSLOTS when it has no owner, else
	// SETSLOT NODE), after moving the keys held by the Cold nodes to it.
	FixAssign
	// FixUnfixable: a state the tool does not repair; Reason says why.
	FixUnfixable
	// FixClear: the owner is already right everywhere it matters; only
	// stale marks (Stable) are left to clear.
	FixClear
)

func (k FixKind) String() string {
	return [...]string{"none", "finish", "rollback", "assign", "unfixable", "clear"}[k]
}

// Fix is the decision for one slot.
type Fix struct {
	Slot     int
	Kind     FixKind
	From, To string
	// Cold lists nodes whose keys in the slot must be moved to To first
	// (they hold keys without owning the slot).
	Cold []string
	// Stable lists nodes whose open-slot mark must be cleared.
	Stable []string
	Reason string
}

// FixMode chooses between finishing and rolling back a half-done move.
type FixMode int

const (
	// FixAuto finishes a move whose target already holds keys of the slot
	// and rolls back one that moved nothing (clearing two marks is cheaper
	// and safer than moving every key).
	FixAuto FixMode = iota
	// FixResume finishes every move that can be finished: what a rerun of
	// an interrupted reshard does.
	FixResume
)

// PlanFix decides what to do with one slot from every master's view of it.
// fallback is the master that receives an unowned slot nobody holds keys
// for. The rules, in order:
//
//   - No marks: one owner and no keys elsewhere is fine; keys on
//     non-owners are moved to the owner; no owner (or several) gives the
//     slot to the node with the most keys (the first such), or to fallback.
//   - One node migrating to T, and T importing from it or nothing else
//     importing: finish when T holds keys, T claims the slot, or mode is
//     FixResume; otherwise roll back. A migrating mark on a node that does
//     not own the slot is stale and cleared.
//   - Only importing marks: an importer that owns the slot, or holds no
//     keys, is cleared; one holding keys gives them back to the owner.
//   - A migrating mark on a node that no longer owns the slot (the others
//     took SETSLOT NODE, or gossip told it) is cleared; keys it still holds
//     go to the owner.
//   - Anything else (several migrating nodes, an importer of another
//     source) is unfixable.
func PlanFix(slot int, views []SlotView, mode FixMode, fallback string) Fix {
	f := Fix{Slot: slot}
	byID := map[string]*SlotView{}
	var owners, migrating, importing []*SlotView
	for i := range views {
		v := &views[i]
		byID[v.ID] = v
		if v.Owner == v.ID {
			owners = append(owners, v)
		}
		if v.Migrating != "" {
			migrating = append(migrating, v)
		}
		if v.Importing != "" {
			importing = append(importing, v)
		}
	}

	if len(migrating) == 0 && len(importing) == 0 {
		if len(owners) == 1 {
			o := owners[0]
			for _, v := range views {
				if v.ID != o.ID && v.Keys > 0 {
					f.Cold = append(f.Cold, v.ID)
				}
			}
			if len(f.Cold) == 0 {
				return f
			}
			f.Kind, f.To, f.Reason = FixAssign, o.ID, "keys held by nodes that do not own the slot"
			return f
		}
		best := mostKeys(views)
		switch {
		case best != nil:
			f.To = best.ID
		case len(owners) > 0:
			f.To = owners[0].ID
		default:
			f.To = fallback
		}
		if f.To == "" {
			f.Kind, f.Reason = FixUnfixable, "no master to assign the slot to"
			return f
		}
		for _, v := range views {
			if v.ID != f.To && v.Keys > 0 {
				f.Cold = append(f.Cold, v.ID)
			}
		}
		f.Kind = FixAssign
		if len(owners) == 0 {
			f.Reason = "slot not covered"
		} else {
			f.Reason = fmt.Sprintf("%d nodes claim the slot", len(owners))
		}
		return f
	}

	if len(migrating) > 1 {
		f.Kind, f.Reason = FixUnfixable, fmt.Sprintf("%d nodes mark the slot migrating", len(migrating))
		return f
	}

	if len(migrating) == 1 {
		m := migrating[0]
		if m.Owner != m.ID {
			// A stale mark: the node lost the slot (SETSLOT NODE on the
			// others went through). Clear it; importers too if they own
			// nothing. Any keys it still holds go to the owner.
			f.Stable = append(f.Stable, m.ID)
			for _, v := range importing {
				f.Stable = append(f.Stable, v.ID)
			}
			owner := ""
			if len(owners) == 1 {
				owner = owners[0].ID
			} else if t := byID[m.Migrating]; t != nil && t.Owner == t.ID {
				owner = t.ID
			}
			if m.Keys > 0 && owner != "" {
				f.Kind, f.To, f.Cold = FixAssign, owner, []string{m.ID}
				f.Reason = "migrating mark on a node that no longer owns the slot, with keys"
				return f
			}
			f.Kind, f.To, f.Reason = FixClear, owner, "migrating mark on a node that no longer owns the slot"
			return f
		}
		t := byID[m.Migrating]
		if t == nil {
			f.Kind, f.Reason = FixUnfixable, "migrating to unknown node "+m.Migrating
			return f
		}
		for _, v := range importing {
			if v.ID != t.ID || v.Importing != m.ID {
				f.Kind, f.Reason = FixUnfixable, fmt.Sprintf("node %s imports the slot from %s while %s migrates it to %s", v.ID, v.Importing, m.ID, t.ID)
				return f
			}
		}
		f.From, f.To = m.ID, t.ID
		if t.Keys > 0 || t.Owner == t.ID || mode == FixResume {
			f.Kind, f.Reason = FixFinish, "half-moved slot"
			return f
		}
		f.Kind, f.Reason = FixRollback, "move opened but no key reached the target"
		f.Stable = []string{m.ID}
		if len(importing) == 1 {
			f.Stable = append(f.Stable, t.ID)
		}
		return f
	}

	// Only importing marks.
	owner := ""
	if len(owners) == 1 {
		owner = owners[0].ID
	}
	for _, v := range importing {
		f.Stable = append(f.Stable, v.ID)
		if v.Owner != v.ID && v.Keys > 0 {
			f.Cold = append(f.Cold, v.ID)
		}
	}
	if len(f.Cold) > 0 {
		if owner == "" {
			f.Kind, f.Reason = FixUnfixable, "importing nodes hold keys and the slot has no single owner"
			return f
		}
		f.Kind, f.To, f.Reason = FixAssign, owner, "importing marks with keys and no migrating node"
		return f
	}
	f.Kind, f.From, f.Reason = FixClear, owner, "importing marks with no migrating node"
	return f
}

func mostKeys(views []SlotView) *SlotView {
	var best *SlotView
	for i := range views {
		if views[i].Keys > 0 && (best == nil || views[i].Keys > best.Keys) {
			best = &views[i]
		}
	}
	return best
}
