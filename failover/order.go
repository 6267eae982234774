package failover

import "github.com/slotd/slotd/gossip"

// The ordering rules of elections, each written once. Nothing else in the
// package compares epochs, offsets or vote times by hand.

// requestStale is the first vote rule: a request sent with a currentEpoch
// older than ours belongs to an election that is already over.
func requestStale(requestEpoch, current uint64) bool { return requestEpoch < current }

// alreadyVoted is the one-vote-per-epoch rule.
func alreadyVoted(lastVoteEpoch, current uint64) bool { return lastVoteEpoch == current }

// claimOutdated is the slot rule of a vote: a replica claims its master's
// slots with its master's config epoch; a slot whose owner has a larger
// config epoch was already failed over (or moved), so the claim is stale.
func claimOutdated(ownerEpoch, claimEpoch uint64) bool { return ownerEpoch > claimEpoch }

// votedRecently is the rule that a master votes for replicas of the same
// master at most once per two node timeouts (0 = never voted).
func votedRecently(now, votedTime, nodeTimeout int64) bool {
	return votedTime != 0 && now-votedTime < 2*nodeTimeout
}

// ackCounts is the tally rule: an ack counts for the election with epoch
// election only when the voter sent it from that epoch or a later one.
func ackCounts(ackEpoch, election uint64) bool { return ackEpoch >= election }

// ranksBefore is the candidate order among replicas of one master: the
// larger replication offset first, equal offsets by the smaller node id.
func ranksBefore(aOffset int64, a gossip.NodeID, bOffset int64, b gossip.NodeID) bool {
	if aOffset != bOffset {
		return aOffset > bOffset
	}
	return a < b
}

// failsBefore is the order of shards failing at once: the failed master
// with the smaller id elects first (it stands for Valkey's shard id).
func failsBefore(a, b gossip.NodeID) bool { return a < b }

// nextEpoch is the epoch a node takes without consensus (TAKEOVER): one
// above every epoch it has seen.
func nextEpoch(current, maxConfig uint64) uint64 {
	return min(max(current, maxConfig), gossip.MaxEpoch-1) + 1
}
