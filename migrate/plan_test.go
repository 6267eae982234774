package migrate

import (
	"errors"
	"reflect"
	"testing"
)

func span(a, b int) []int {
	var out []int
	for i := a; i <= b; i++ {
		out = append(out, i)
	}
	return out
}

func three() []Master {
	return []Master{{ID: "A", Slots: span(0, 5460)}, {ID: "B", Slots: span(5461, 10922)}, {ID: "C", Slots: span(10923, 16383)}}
}

// ranges groups moves by source into [from, first, last, count] runs.
type run struct {
	From        string
	First, Last int
	N           int
}

func runs(ms []Move) []run {
	var out []run
	for _, m := range ms {
		if n := len(out); n > 0 && out[n-1].From == m.From && out[n-1].Last+1 == m.Slot {
			out[n-1].Last = m.Slot
			out[n-1].N++
			continue
		}
		out = append(out, run{m.From, m.Slot, m.Slot, 1})
	}
	return out
}

func TestReshard(t *testing.T) {
	withD := append(three(), Master{ID: "D"})
	cases := []struct {
		name    string
		masters []Master
		to      string
		from    []string
		n       int
		want    []run
		err     string
	}{
		// redis-cli gives a new node 5461-6826, 0-1364, 10923-12287 for
		// 4096 slots from all: B (most slots) first, rounded up.
		{"all to new", withD, "D", nil, 4096, []run{{"B", 5461, 6826, 1366}, {"A", 0, 1364, 1365}, {"C", 10923, 12287, 1365}}, ""},
		{"one source", three(), "C", []string{"A"}, 100, []run{{"A", 0, 99, 100}}, ""},
		{"whole node", three(), "B", []string{"A"}, 5461, []run{{"A", 0, 5460, 5461}}, ""},
		{"third of slots", three(), "B", []string{"A"}, 5461, []run{{"A", 0, 5460, 5461}}, ""},
		{"two sources", three(), "C", []string{"A", "B"}, 10, []run{{"B", 5461, 5466, 6}, {"A", 0, 3, 4}}, ""},
		{"too many", three(), "C", []string{"A"}, 6000, nil, "asked for 6000 slots, the sources hold 5461"},
		{"zero", three(), "C", nil, 0, nil, ErrBadCount.Error()},
		{"unknown target", three(), "X", nil, 1, nil, "target X: no such master"},
		{"unknown source", three(), "A", []string{"X"}, 1, nil, "source X: no such master"},
		{"target among sources", three(), "A", []string{"A"}, 1, nil, "target node A is also listed among the source nodes"},
		{"no sources", []Master{{ID: "A"}, {ID: "B"}}, "A", nil, 1, nil, ErrNoSources.Error()},
	}
	for _, c := range cases {
		got, err := Reshard(c.masters, c.to, c.from, c.n)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: err %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if r := runs(got); !reflect.DeepEqual(r, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, r, c.want)
		}
		for _, m := range got {
			if m.To != c.to {
				t.Errorf("%s: move %v not to %s", c.name, m, c.to)
			}
		}
	}
}

func stepSummary(steps []Step) []run {
	var out []run
	for _, s := range steps {
		r := runs(s.Moves)
		for i := range r {
			r[i].From = s.From + ">" + s.To
		}
		out = append(out, r...)
	}
	return out
}

func TestRebalance(t *testing.T) {
	withD := append(three(), Master{ID: "D"})
	cases := []struct {
		name    string
		masters []Master
		o       RebalanceOptions
		want    []run
		err     error
	}{
		// redis-cli --cluster rebalance --cluster-use-empty-masters after
		// add-node: "Moving 1366 slots from B", then C, then A.
		{"use empty", withD, RebalanceOptions{Threshold: 2, UseEmpty: true},
			[]run{{"B>D", 5461, 6826, 1366}, {"C>D", 10923, 12287, 1365}, {"A>D", 0, 1364, 1365}}, nil},
		{"empty left out", withD, RebalanceOptions{Threshold: 2}, nil, nil},
		{"balanced", three(), RebalanceOptions{Threshold: 2}, nil, nil},
		// Weight 0 drains a master; C (needing the most) is served first.
		{"weight zero", three(), RebalanceOptions{Threshold: 2, Weights: map[string]float64{"A": 0}},
			[]run{{"A>C", 0, 2730, 2731}, {"A>B", 2731, 5460, 2730}}, nil},
		// float32: expected 3276 for weight 1 and 6553 for 2; the 3 slots
		// of rounding go to D, the only receiver.
		{"weight two", withD, RebalanceOptions{Threshold: 2, UseEmpty: true, Weights: map[string]float64{"D": 2}},
			[]run{{"B>D", 5461, 7646, 2186}, {"C>D", 10923, 13107, 2185}, {"A>D", 0, 2184, 2185}}, nil},
		{"unbalanced within threshold", []Master{{ID: "A", Slots: span(0, 8200)}, {ID: "B", Slots: span(8201, 16383)}}, RebalanceOptions{Threshold: 2}, nil, nil},
		{"unbalanced past threshold", []Master{{ID: "A", Slots: span(0, 9000)}, {ID: "B", Slots: span(9001, 16383)}}, RebalanceOptions{Threshold: 2},
			[]run{{"A>B", 0, 808, 809}}, nil},
		{"all zero", three(), RebalanceOptions{Weights: map[string]float64{"A": 0, "B": 0, "C": 0}}, nil, ErrZeroWeight},
		{"unknown weight", three(), RebalanceOptions{Weights: map[string]float64{"X": 1}}, nil, ErrUnknownNode},
	}
	for _, c := range cases {
		steps, err := Rebalance(c.masters, c.o)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%s: err %v, want %v", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := stepSummary(steps); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
		// The input is not changed.
		if len(c.masters) > 0 && len(c.masters[0].Slots) > 0 && c.masters[0].Slots[0] != 0 {
			t.Errorf("%s: input modified", c.name)
		}
	}
}

func TestDrain(t *testing.T) {
	ms := []Master{{ID: "A", Slots: span(0, 9)}, {ID: "B", Slots: span(10, 12)}, {ID: "C", Slots: span(13, 13)}}
	got, err := Drain(ms, "A", nil)
	if err != nil {
		t.Fatal(err)
	}
	counts := Counts(ms, got)
	if counts["A"] != 0 || counts["B"]+counts["C"] != 14 || counts["B"] != 7 || counts["C"] != 7 {
		t.Errorf("counts %v", counts)
	}
	if got[0] != (Move{0, "A", "C"}) || got[1] != (Move{1, "A", "C"}) || got[2] != (Move{2, "A", "B"}) {
		t.Errorf("first moves %v", got[:3])
	}
	if _, err := Drain(ms, "A", []string{"A"}); err == nil {
		t.Error("drain into itself accepted")
	}
	if _, err := Drain(ms, "X", nil); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("unknown victim: %v", err)
	}
	if _, err := Drain([]Master{{ID: "A", Slots: []int{1}}}, "A", nil); err == nil {
		t.Error("drain with no receiver accepted")
	}
	only, _ := Drain(ms, "A", []string{"C"})
	if c := Counts(ms, only); c["C"] != 11 || c["B"] != 3 {
		t.Errorf("drain to C: %v", c)
	}
}
