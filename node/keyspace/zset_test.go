package keyspace

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
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
		checkLinks(t, z)
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
		sp := z.ScoreSpan(&sr)
		if sp.First != f || sp.Last != l {
			t.Fatalf("ScoreSpan %+v nodes differ from First/LastInScore", sr)
		}
		if first != nil && (sp.FirstRank != z.Rank(f) || sp.LastRank != z.Rank(l) || sp.Len() != z.Rank(l)-z.Rank(f)+1) {
			t.Fatalf("ScoreSpan %+v ranks %d..%d", sr, sp.FirstRank, sp.LastRank)
		}
		if first == nil && sp.Len() != 0 {
			t.Fatalf("ScoreSpan %+v not empty", sr)
		}
		if (first == nil) != (f == nil) || (first != nil && f.Member != first.m) {
			t.Fatalf("FirstInScore %+v wrong", sr)
		}
		if (last == nil) != (l == nil) || (last != nil && l.Member != last.m) {
			t.Fatalf("LastInScore %+v wrong", sr)
		}
	}
}

// TestZSetLexSpan compares LexSpan with a sorted slice on sets whose scores
// are all equal, below and above the listpack limit.
func TestZSetLexSpan(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	for _, size := range []int{5, 100, 1000} {
		z := NewZSet()
		var ms []string
		for len(ms) < size {
			m := fmt.Sprintf("%03x", r.IntN(4096))
			if z.Add([]byte(m), 1) {
				ms = append(ms, m)
			}
		}
		slices.Sort(ms)
		bound := func() LexBound {
			switch r.IntN(8) {
			case 0:
				return LexBound{Inf: -1}
			case 1:
				return LexBound{Inf: 1}
			}
			return LexBound{Value: fmt.Sprintf("%03x", r.IntN(4096)), Ex: r.IntN(2) == 0}
		}
		for k := 0; k < 300; k++ {
			lr := LexRange{Min: bound(), Max: bound()}
			lo, hi := -1, -1
			for i, m := range ms {
				if lr.Contains(m) {
					if lo < 0 {
						lo = i
					}
					hi = i
				}
			}
			sp := z.LexSpan(&lr)
			if lo < 0 {
				if sp.Len() != 0 {
					t.Fatalf("size %d %+v: %d members, want none", size, lr, sp.Len())
				}
				continue
			}
			if sp.FirstRank != lo || sp.LastRank != hi || sp.First.Member != ms[lo] || sp.Last.Member != ms[hi] {
				t.Fatalf("size %d %+v: ranks %d..%d want %d..%d", size, lr, sp.FirstRank, sp.LastRank, lo, hi)
			}
		}
	}
}

// checkLinks verifies every link of levels 1 and up: it leads to the next
// node at least that tall, and its span is the level-0 distance there (for
// links to a node; links to the end are never read).
func checkLinks(t *testing.T, z *ZSet) {
	t.Helper()
	rank := map[*ZNode]int{z.head: 0}
	i := 1
	for n := z.First(); n != nil; n = n.Next() {
		rank[n] = i
		i++
		if n.h < 1 || int(n.h) > z.level {
			t.Fatalf("%s: height %d, list level %d", n.Member, n.h, z.level)
		}
	}
	for lv := 1; lv < int(z.head.h); lv++ {
		if lv >= z.level {
			if z.head.up(lv).next != nil {
				t.Fatalf("head link above list level %d", lv)
			}
			continue
		}
		x := z.head
		for {
			l := x.up(lv)
			// The next node of height > lv after x, walking level 0.
			var want *ZNode
			for y := x.next; y != nil; y = y.next {
				if int(y.h) > lv {
					want = y
					break
				}
			}
			if l.next != want {
				t.Fatalf("level %d after rank %d: link to wrong node", lv, rank[x])
			}
			if want == nil {
				break
			}
			if l.span != rank[want]-rank[x] {
				t.Fatalf("level %d after rank %d: span %d want %d", lv, rank[x], l.span, rank[want]-rank[x])
			}
			x = want
		}
	}
}

// TestZNodeClasses checks that every allocation class keeps the links of
// levels 1 and up right after the node, where ZNode.up looks for them.
func TestZNodeClasses(t *testing.T) {
	offs := []uintptr{
		unsafe.Offsetof(zNode2{}.up), unsafe.Offsetof(zNode4{}.up), unsafe.Offsetof(zNode8{}.up),
		unsafe.Offsetof(zNode16{}.up), unsafe.Offsetof(zNode32{}.up),
	}
	for _, o := range offs {
		if o != zNodeSize {
			t.Fatalf("links at offset %d, node size %d", o, zNodeSize)
		}
	}
	if zNodeSize != 48 {
		t.Errorf("ZNode is %d bytes; 48 fits the smallest class", zNodeSize)
	}
	for h := 1; h <= zMaxLevel; h++ {
		n := newZNode("m", h)
		for i := 1; i < h; i++ {
			if l := n.up(i); l.next != nil || l.span != 0 {
				t.Fatalf("height %d level %d not zero", h, i)
			}
		}
	}
	var n ZNode
	n.setIndex(1<<40 + 5)
	if n.index() != 1<<40+5 {
		t.Fatal(n.index())
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
