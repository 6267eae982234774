package keyspace

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

type refEntry struct {
	m string
	s float64
}

func refSorted(ref map[string]float64) []refEntry {
	var out []refEntry
	for m, s := range ref {
		out = append(out, refEntry{m, s})
	}
	slices.SortFunc(out, func(a, b refEntry) int {
		if c := cmp.Compare(a.s, b.s); c != 0 {
			return c
		}
		return cmp.Compare(a.m, b.m)
	})
	return out
}

// TestZSetAgainstReference drives the skiplist with random adds, score
// changes and removals and checks order, ranks, index lookups and ranges
// against a sorted slice after every step.
func TestZSetAgainstReference(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	z := NewZSet()
	ref := map[string]float64{}
	for step := 0; step < 3000; step++ {
		m := fmt.Sprintf("m%d", r.IntN(200))
		switch r.IntN(3) {
		case 0, 1:
			s := float64(r.IntN(50))
			added := z.Add([]byte(m), s)
			_, had := ref[m]
			if added == had {
				t.Fatalf("step %d: Add(%s) = %v, had %v", step, m, added, had)
			}
			ref[m] = s
		case 2:
			_, had := ref[m]
			if z.Remove([]byte(m)) != had {
				t.Fatalf("step %d: Remove(%s) wrong", step, m)
			}
			delete(ref, m)
		}
		if step%50 != 0 && step < 2900 {
			continue
		}
		want := refSorted(ref)
		if z.Len() != len(want) {
			t.Fatalf("len %d want %d", z.Len(), len(want))
		}
		i := 0
		var prev *ZNode
		for n := z.First(); n != nil; n = n.Next() {
			if n.Member != want[i].m || n.Score != want[i].s {
				t.Fatalf("step %d: pos %d = %s/%g want %s/%g", step, i, n.Member, n.Score, want[i].m, want[i].s)
			}
			if n.Prev() != prev {
				t.Fatalf("bad back link at %d", i)
			}
			if z.Rank(n) != i {
				t.Fatalf("rank of %s = %d want %d", n.Member, z.Rank(n), i)
			}
			if z.ByRank(i) != n {
				t.Fatalf("ByRank(%d) wrong", i)
			}
			prev = n
			i++
		}
		if z.Last() != prev {
			t.Fatal("bad tail")
		}
		lo, hi := float64(r.IntN(50)), float64(r.IntN(50))
		sr := ScoreRange{Min: lo, Max: hi, MinEx: r.IntN(2) == 0, MaxEx: r.IntN(2) == 0}
		var first, last *refEntry
		for k := range want {
			if sr.Contains(want[k].s) {
				if first == nil {
					first = &want[k]
				}
				last = &want[k]
			}
		}
		f, l := z.FirstInScore(&sr), z.LastInScore(&sr)
		if (first == nil) != (f == nil) || (first != nil && f.Member != first.m) {
			t.Fatalf("FirstInScore %+v wrong", sr)
		}
		if (last == nil) != (l == nil) || (last != nil && l.Member != last.m) {
			t.Fatalf("LastInScore %+v wrong", sr)
		}
	}
}

func TestZSetEncodingAndScan(t *testing.T) {
	z := NewZSet()
	for i := 0; i < 128; i++ {
		z.Add([]byte(fmt.Sprint(i)), float64(i))
	}
	if z.Encoding() != "listpack" {
		t.Fatal(z.Encoding())
	}
	z.Add([]byte("x"), 1)
	if z.Encoding() != "skiplist" {
		t.Fatal(z.Encoding())
	}
	seen := map[string]int{}
	var cur uint64
	for {
		cur = z.Scan(cur, 10, func(n *ZNode) { seen[n.Member]++ })
		if cur == 0 {
			break
		}
	}
	if len(seen) != 129 {
		t.Fatalf("scan saw %d", len(seen))
	}
	c := z.Clone().(*ZSet)
	z.Remove([]byte("x"))
	if c.Len() != 129 || c.Encoding() != "skiplist" {
		t.Fatal("clone not deep")
	}
}

func TestSetEncoding(t *testing.T) {
	s := NewSet()
	for _, m := range []string{"3", "1", "2", "1"} {
		s.Add([]byte(m))
	}
	var got []string
	s.Each(func(m []byte) bool { got = append(got, string(m)); return true })
	if fmt.Sprint(got) != "[1 2 3]" || s.Encoding() != "intset" {
		t.Fatal(got, s.Encoding())
	}
	s.Add([]byte("01"))
	if s.Encoding() != "hashtable" || !s.Has([]byte("1")) || !s.Has([]byte("01")) || s.Len() != 4 {
		t.Fatal("conversion")
	}
	big := NewSet()
	for i := 0; i < 513; i++ {
		big.Add([]byte(fmt.Sprint(i)))
	}
	if big.Encoding() != "hashtable" || big.Len() != 513 {
		t.Fatal(big.Encoding())
	}
	c := big.Clone().(*Set)
	for i := 0; i < 513; i += 2 {
		big.Remove([]byte(fmt.Sprint(i)))
	}
	if c.Len() != 513 || big.Len() != 256 {
		t.Fatal("clone")
	}
	for i := 1; i < 513; i += 2 {
		if !big.Has([]byte(fmt.Sprint(i))) {
			t.Fatal("lost", i)
		}
	}
}
