package failover

import (
	"testing"

	"github.com/slotd/slotd/gossip"
)

func TestOrderRules(t *testing.T) {
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"stale request", requestStale(4, 5), true},
		{"current request", requestStale(5, 5), false},
		{"newer request", requestStale(6, 5), false},
		{"voted this epoch", alreadyVoted(5, 5), true},
		{"voted before", alreadyVoted(4, 5), false},
		{"owner newer", claimOutdated(7, 6), true},
		{"owner same", claimOutdated(6, 6), false},
		{"owner older", claimOutdated(5, 6), false},
		{"never voted", votedRecently(100, 0, 5000), false},
		{"voted 9.9s ago", votedRecently(20000, 10100, 5000), true},
		{"voted 10s ago", votedRecently(20000, 10000, 5000), false},
		{"ack same epoch", ackCounts(8, 8), true},
		{"ack later epoch", ackCounts(9, 8), true},
		{"ack older epoch", ackCounts(7, 8), false},
		{"larger offset first", ranksBefore(10, "b", 9, "a"), true},
		{"smaller offset after", ranksBefore(9, "a", 10, "b"), false},
		{"tie: smaller id first", ranksBefore(10, "a", 10, "b"), true},
		{"tie: larger id after", ranksBefore(10, "b", 10, "a"), false},
		{"same node not before itself", ranksBefore(10, "a", 10, "a"), false},
		{"smaller failed master first", failsBefore(gossip.NodeID("1"), gossip.NodeID("2")), true},
		{"larger failed master after", failsBefore(gossip.NodeID("2"), gossip.NodeID("1")), false},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v want %v", c.name, c.got, c.want)
		}
	}
}
