package gossip

// The ordering rules of the cluster, each written once. Nothing else in the
// package compares epochs or ids by hand.

// adoptEpoch is the currentEpoch rule: a node adopts any larger currentEpoch it hears.
func adoptEpoch(mine, heard uint64) uint64 {
	if heard > mine {
		return heard
	}
	return mine
}

// claimWins is the slot ownership rule: a claim on a slot replaces the
// current owner only with a strictly larger config epoch. An unowned slot
// goes to any claim (owner epoch is then irrelevant: pass ownerKnown=false).
func claimWins(ownerKnown bool, ownerEpoch, claimEpoch uint64) bool {
	return !ownerKnown || claimEpoch > ownerEpoch
}

// staleClaim is the UPDATE rule: a claim is stale, and answered with the
// owner's config, when the slot's owner has a strictly larger config epoch.
func staleClaim(ownerEpoch, claimEpoch uint64) bool {
	return ownerEpoch > claimEpoch
}

// mustResolveCollision is the epoch collision rule: when two masters have the
// same config epoch, the one with the smaller node id moves to a new epoch;
// the other keeps its own.
func mustResolveCollision(myself, other NodeID, myEpoch, otherEpoch uint64) bool {
	return myEpoch == otherEpoch && myself < other
}

// newerPong is the gossip freshness rule: another node's report of a pong
// replaces ours only when it is more recent, and never from the future.
func newerPong(ours, reported, now int64) int64 {
	if reported > ours && reported <= now {
		return reported
	}
	return ours
}
