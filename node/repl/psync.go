package repl

// IDs is the replication identity of a node: its current history id and
// offset, and the id of the history it continued from (after a promotion or
// a master's id change) with the offset up to which that history is shared.
type IDs struct {
	ID  string
	ID2 string
	// Second is the first offset not shared with ID2's history (-1: none).
	Second int64
}

// CanContinue decides a PSYNC: a replica that asks for history id from
// offset from (the first byte it lacks) can continue, rather than be
// resynchronised in full, when id is this node's current id, or its
// previous one and from does not go past the point where the histories
// split; and the backlog still holds everything from that offset.
func CanContinue(ids IDs, b *Backlog, id string, from int64) bool {
	if id != ids.ID && (id != ids.ID2 || ids.ID2 == "" || from > ids.Second) {
		return false
	}
	if b == nil || b.Histlen() == 0 && from != b.Offset()+1 {
		return false
	}
	return b.Has(from)
}
