package migrate

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/slotd/slotd/slots"
)

// Master is one master as the planners see it.
type Master struct {
	ID string
	// Slots are the slots it serves, in increasing order.
	Slots []int
}

// Move is one slot to move from one master to another.
type Move struct {
	Slot     int
	From, To string
}

// Errors a planner returns for impossible requests.
var (
	// ErrUnknownNode means an id given to a planner is not one of the masters.
	ErrUnknownNode = errors.New("no such master")
	// ErrBadCount means the number of slots asked for is out of range.
	ErrBadCount = errors.New("number of slots must be between 1 and 16384")
	// ErrNoSources means no master is left to take slots from.
	ErrNoSources = errors.New("no source master with slots")
	// ErrZeroWeight means every master involved in a rebalance weighs 0.
	ErrZeroWeight = errors.New("total weight of the masters is 0")
)

// index returns the position of id among ms, or -1.
func index(ms []Master, id string) int {
	for i := range ms {
		if ms[i].ID == id {
			return i
		}
	}
	return -1
}

// table picks numSlots slots from sources the way redis-cli's reshard
// table does: sources sorted by slot count (most first, ties in the given
// order), each giving its share numSlots*count/total (rounded up for the
// first, down for the others), lowest slots first. The result may hold
// fewer than numSlots slots when rounding down leaves some over.
func table(sources []Master, numSlots int, to string) []Move {
	sorted := append([]Master(nil), sources...)
	sort.SliceStable(sorted, func(i, j int) bool { return len(sorted[i].Slots) > len(sorted[j].Slots) })
	total := 0
	for _, s := range sorted {
		total += len(s.Slots)
	}
	var out []Move
	if total == 0 {
		return nil
	}
	for i, s := range sorted {
		n := float32(numSlots) / float32(total) * float32(len(s.Slots))
		if i == 0 {
			n = float32(math.Ceil(float64(n)))
		} else {
			n = float32(math.Floor(float64(n)))
		}
		limit := int(n)
		count := 0
		for _, slot := range s.Slots {
			if count >= limit || len(out) >= numSlots {
				break
			}
			out = append(out, Move{Slot: slot, From: s.ID, To: to})
			count++
		}
	}
	return out
}

// Reshard plans moving numSlots slots to the master to. With from empty,
// every other master with slots is a source (redis-cli's "all"); otherwise
// the masters named. Slots are taken from each source in proportion to its
// slot count, lowest slots first, as redis-cli does.
func Reshard(masters []Master, to string, from []string, numSlots int) ([]Move, error) {
	if numSlots < 1 || numSlots > slots.Count {
		return nil, ErrBadCount
	}
	if index(masters, to) < 0 {
		return nil, fmt.Errorf("target %s: %w", to, ErrUnknownNode)
	}
	var sources []Master
	if len(from) == 0 {
		for _, m := range masters {
			if m.ID != to && len(m.Slots) > 0 {
				sources = append(sources, m)
			}
		}
	} else {
		seen := map[string]bool{}
		for _, id := range from {
			i := index(masters, id)
			if i < 0 {
				return nil, fmt.Errorf("source %s: %w", id, ErrUnknownNode)
			}
			if id == to {
				return nil, fmt.Errorf("target node %s is also listed among the source nodes", id)
			}
			if !seen[id] {
				seen[id] = true
				sources = append(sources, masters[i])
			}
		}
	}
	have := 0
	for _, s := range sources {
		have += len(s.Slots)
	}
	if have == 0 {
		return nil, ErrNoSources
	}
	if numSlots > have {
		return nil, fmt.Errorf("asked for %d slots, the sources hold %d", numSlots, have)
	}
	return table(sources, numSlots, to), nil
}

// RebalanceOptions are redis-cli's rebalance options.
type RebalanceOptions struct {
	// Weights maps master ids to weights; a master not listed weighs 1.
	Weights map[string]float64
	// Threshold is the imbalance in percent below which nothing moves
	// (redis-cli's default is 2). 0 always rebalances.
	Threshold float64
	// UseEmpty includes masters without slots (otherwise they are left
	// out, whatever their weight).
	UseEmpty bool
}

// Step is one source -> destination pass of a rebalance.
type Step struct {
	From, To string
	Moves    []Move
}

// Rebalance plans moving slots so that every involved master serves a
// share proportional to its weight, with redis-cli's arithmetic: expected
// = int(float32(16384)/totalWeight*weight); nodes past the threshold
// trigger the rebalance; rounding surplus is absorbed by the receivers in
// order; then the most-needy receiver is paired with the most-loaded giver
// until all balances are 0. It returns no steps when every node is within
// the threshold.
func Rebalance(masters []Master, o RebalanceOptions) ([]Step, error) {
	type node struct {
		Master
		weight  float32
		balance int
		order   int
	}
	for id := range o.Weights {
		if index(masters, id) < 0 {
			return nil, fmt.Errorf("weight for %s: %w", id, ErrUnknownNode)
		}
	}
	var involved []*node
	var total float32
	for i, m := range masters {
		w := float32(1)
		if v, ok := o.Weights[m.ID]; ok {
			w = float32(v)
		}
		if !o.UseEmpty && len(m.Slots) == 0 {
			continue
		}
		total += w
		involved = append(involved, &node{Master: Master{ID: m.ID, Slots: append([]int(nil), m.Slots...)}, weight: w, order: i})
	}
	if len(involved) == 0 {
		return nil, nil
	}
	if total <= 0 {
		return nil, ErrZeroWeight
	}
	threshold := float32(o.Threshold)
	reached := false
	sum := 0
	for _, n := range involved {
		expected := int(float32(slots.Count) / total * n.weight)
		n.balance = len(n.Slots) - expected
		sum += n.balance
		over := false
		if threshold > 0 {
			if len(n.Slots) > 0 {
				errPerc := float32(math.Abs(float64(100 - float32(100.0*float64(expected)/float64(len(n.Slots))))))
				over = errPerc > threshold
			} else if expected > 1 {
				over = true
			}
		} else {
			over = n.balance != 0
		}
		if over {
			reached = true
		}
	}
	if !reached {
		return nil, nil
	}
	for sum > 0 {
		for _, n := range involved {
			if n.balance <= 0 && sum > 0 {
				n.balance--
				sum--
			}
		}
	}
	sort.SliceStable(involved, func(i, j int) bool { return involved[i].balance < involved[j].balance })
	var steps []Step
	dst, src := 0, len(involved)-1
	for dst < src {
		d, s := involved[dst], involved[src]
		num := min(abs(d.balance), abs(s.balance))
		if num > 0 {
			moves := table([]Master{s.Master}, num, d.ID)
			if len(moves) != num {
				return nil, fmt.Errorf("internal: reshard table gave %d slots, want %d", len(moves), num)
			}
			steps = append(steps, Step{From: s.ID, To: d.ID, Moves: moves})
			// Later steps see the slots as moved (redis-cli updates its
			// view after each move).
			gone := map[int]bool{}
			for _, mv := range moves {
				gone[mv.Slot] = true
			}
			kept := s.Slots[:0]
			for _, sl := range s.Slots {
				if !gone[sl] {
					kept = append(kept, sl)
				}
			}
			s.Slots = kept
			for _, mv := range moves {
				d.Slots = insertSorted(d.Slots, mv.Slot)
			}
		}
		d.balance += num
		s.balance -= num
		if d.balance == 0 {
			dst++
		}
		if s.balance == 0 {
			src--
		}
	}
	return steps, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func insertSorted(xs []int, v int) []int {
	i := sort.SearchInts(xs, v)
	xs = append(xs, 0)
	copy(xs[i+1:], xs[i:])
	xs[i] = v
	return xs
}

// Drain plans moving every slot of victim to the other masters (to, or
// every other master when to is empty), each slot going to the receiver
// that then serves the fewest slots (ties in the given order), so the
// receivers end as even as their starting counts allow. Slots go in
// increasing order.
func Drain(masters []Master, victim string, to []string) ([]Move, error) {
	vi := index(masters, victim)
	if vi < 0 {
		return nil, fmt.Errorf("node %s: %w", victim, ErrUnknownNode)
	}
	type recv struct {
		id    string
		count int
	}
	var rs []*recv
	if len(to) == 0 {
		for _, m := range masters {
			if m.ID != victim {
				rs = append(rs, &recv{m.ID, len(m.Slots)})
			}
		}
	} else {
		for _, id := range to {
			i := index(masters, id)
			if i < 0 {
				return nil, fmt.Errorf("target %s: %w", id, ErrUnknownNode)
			}
			if id == victim {
				return nil, fmt.Errorf("node %s cannot be drained into itself", id)
			}
			rs = append(rs, &recv{id, len(masters[i].Slots)})
		}
	}
	if len(rs) == 0 {
		return nil, errors.New("no other master to move the slots to")
	}
	var out []Move
	for _, slot := range masters[vi].Slots {
		best := rs[0]
		for _, r := range rs[1:] {
			if r.count < best.count {
				best = r
			}
		}
		best.count++
		out = append(out, Move{Slot: slot, From: victim, To: best.id})
	}
	return out, nil
}

// Counts returns how many slots each master serves after moves are
// applied, in the masters' order; a plan printout shows it.
func Counts(masters []Master, moves []Move) map[string]int {
	c := map[string]int{}
	for _, m := range masters {
		c[m.ID] = len(m.Slots)
	}
	for _, mv := range moves {
		c[mv.From]--
		c[mv.To]++
	}
	return c
}
