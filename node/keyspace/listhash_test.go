package keyspace

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func listSlice(l *List) []string {
	out := make([]string, 0, l.Len())
	if l.Len() > 0 {
		l.Range(0, l.Len()-1, func(s string) { out = append(out, s) })
	}
	return out
}

// TestListModel drives List and a plain slice with the same random
// operations and compares them after each one.
func TestListModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	l := NewList()
	var ref []string
	for step := 0; step < 20000; step++ {
		v := strconv.Itoa(rng.IntN(5))
		switch op := rng.IntN(10); {
		case op < 2:
			l.PushBack(v)
			ref = append(ref, v)
		case op < 4:
			l.PushFront(v)
			ref = append([]string{v}, ref...)
		case op < 5 && len(ref) > 0:
			if got := l.PopFront(); got != ref[0] {
				t.Fatalf("step %d PopFront %q want %q", step, got, ref[0])
			}
			ref = ref[1:]
		case op < 6 && len(ref) > 0:
			if got := l.PopBack(); got != ref[len(ref)-1] {
				t.Fatalf("step %d PopBack", step)
			}
			ref = ref[:len(ref)-1]
		case op < 7:
			i := rng.IntN(len(ref) + 1)
			l.Insert(i, v)
			ref = slices.Insert(ref, i, v)
		case op < 8 && len(ref) > 0:
			i := rng.IntN(len(ref))
			l.Set(i, v+"x")
			ref[i] = v + "x"
		case op < 9 && rng.IntN(10) == 0:
			count := rng.IntN(3)
			tail := rng.IntN(2) == 0
			want := 0
			var nref []string
			if !tail {
				for _, s := range ref {
					if s == v && (count == 0 || want < count) {
						want++
						continue
					}
					nref = append(nref, s)
				}
			} else {
				for i := len(ref) - 1; i >= 0; i-- {
					if ref[i] == v && (count == 0 || want < count) {
						want++
						continue
					}
					nref = append([]string{ref[i]}, nref...)
				}
			}
			if got := l.Remove([]byte(v), count, tail); got != want {
				t.Fatalf("step %d Remove %d want %d", step, got, want)
			}
			ref = nref
		case op == 9 && rng.IntN(20) == 0 && len(ref) > 0:
			s := rng.IntN(len(ref))
			e := s + rng.IntN(len(ref)-s)
			l.Trim(s, e)
			ref = append([]string(nil), ref[s:e+1]...)
		}
		if l.Len() != len(ref) {
			t.Fatalf("step %d len %d want %d", step, l.Len(), len(ref))
		}
		if step%97 == 0 {
			if got := listSlice(l); !slices.Equal(got, ref) {
				t.Fatalf("step %d contents %v want %v", step, got, ref)
			}
			sum := 0
			for _, s := range ref {
				sum += len(s)
			}
			if l.bytes != sum {
				t.Fatalf("step %d bytes %d want %d", step, l.bytes, sum)
			}
		}
	}
}

func TestListCloneIndependent(t *testing.T) {
	l := NewList()
	for i := 0; i < 20; i++ {
		l.PushFront(strconv.Itoa(i))
	}
	c := l.Clone().(*List)
	l.Set(0, "changed")
	l.PopBack()
	if c.Len() != 20 || c.Index(0) != "19" || c.Index(19) != "0" {
		t.Fatalf("clone changed: %v", listSlice(c))
	}
	if c.Encoding() != "quicklist" || c.MemoryUsage() <= 20*16 {
		t.Fatalf("encoding %s usage %d", c.Encoding(), c.MemoryUsage())
	}
	l.Clear()
	if l.Len() != 0 || l.MemoryUsage() > 100 {
		t.Fatalf("cleared list: len %d usage %d", l.Len(), l.MemoryUsage())
	}
}

// TestHashModel compares Hash with a map under random sets and deletes,
// across the conversion to a hashtable and compactions.
func TestHashModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	h := NewHash()
	ref := map[string]string{}
	var order []string // insertion order while listpack
	for step := 0; step < 30000; step++ {
		f := "f" + strconv.Itoa(rng.IntN(2000))
		if rng.IntN(3) > 0 && step < 20000 {
			v := strconv.Itoa(step)
			_, had := ref[f]
			if created := h.Set([]byte(f), []byte(v)); created == had {
				t.Fatalf("step %d Set created=%v", step, created)
			}
			if !had {
				order = append(order, f)
			}
			ref[f] = v
		} else {
			_, had := ref[f]
			if h.Delete([]byte(f)) != had {
				t.Fatalf("step %d Delete", step)
			}
			delete(ref, f)
			if i := slices.Index(order, f); i >= 0 {
				order = slices.Delete(order, i, i+1)
			}
		}
		if h.Len() != len(ref) {
			t.Fatalf("step %d len %d want %d", step, h.Len(), len(ref))
		}
		if step%101 == 0 {
			seen := 0
			var got []string
			h.Each(func(f, v string) bool {
				if ref[f] != v {
					t.Fatalf("step %d %s=%s want %s", step, f, v, ref[f])
				}
				got = append(got, f)
				seen++
				return true
			})
			if seen != len(ref) {
				t.Fatalf("step %d Each saw %d", step, seen)
			}
			if h.IsListpack() && !slices.Equal(got, order) {
				t.Fatalf("step %d listpack order %v want %v", step, got, order)
			}
			for f, v := range ref {
				if got, ok := h.Get([]byte(f)); !ok || got != v {
					t.Fatalf("step %d Get %s", step, f)
				}
			}
			if len(ref) > 0 {
				f, v := h.Random(rng.IntN)
				if ref[f] != v {
					t.Fatalf("step %d Random gave %s", step, f)
				}
			}
		}
	}
	if h.IsListpack() {
		t.Fatal("2000 fields should have converted the hash")
	}
}

func TestHashCloneIndependent(t *testing.T) {
	for _, n := range []int{3, 1000} {
		h := NewHash()
		for i := 0; i < n; i++ {
			h.Set([]byte("f"+strconv.Itoa(i)), []byte("v"))
		}
		c := h.Clone().(*Hash)
		h.Set([]byte("f0"), []byte("changed"))
		h.Delete([]byte("f1"))
		if v, _ := c.Get([]byte("f0")); v != "v" || !c.Has([]byte("f1")) || c.Len() != n {
			t.Fatalf("clone of %d changed", n)
		}
		if c.Encoding() != h.Encoding() {
			t.Fatalf("clone encoding %s want %s", c.Encoding(), h.Encoding())
		}
		if c.MemoryUsage() < n*4 {
			t.Fatalf("usage %d for %d fields", c.MemoryUsage(), n)
		}
	}
}
