package repl

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestBacklogRing(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for round := 0; round < 200; round++ {
		size := 1 + r.IntN(64)
		start := int64(r.IntN(1000))
		b := NewBacklog(size, start)
		var all []byte
		for i := 0; i < 20; i++ {
			p := make([]byte, r.IntN(100))
			for j := range p {
				p[j] = byte(r.IntN(256))
			}
			b.Append(p)
			all = append(all, p...)
			if r.IntN(8) == 0 {
				size = 1 + r.IntN(64)
				b.Resize(size)
			}
			if b.Offset() != start+int64(len(all)) {
				t.Fatalf("offset %d want %d", b.Offset(), start+int64(len(all)))
			}
			if b.Histlen() > size || b.Histlen() > len(all) {
				t.Fatalf("histlen %d size %d all %d", b.Histlen(), size, len(all))
			}
			for from := b.First(); from <= b.Offset()+1; from++ {
				got := b.AppendFrom(nil, from)
				want := all[from-start-1:]
				if !bytes.Equal(got, want) {
					t.Fatalf("from %d: got %q want %q", from, got, want)
				}
			}
			if b.Has(b.First()-1) || b.Has(b.Offset()+2) {
				t.Fatal("Has outside the held range")
			}
		}
	}
}

func TestCanContinue(t *testing.T) {
	b := NewBacklog(100, 0)
	b.Append(make([]byte, 150)) // holds 51..150
	ids := IDs{ID: "a", ID2: "b", Second: 120}
	cases := []struct {
		id   string
		from int64
		ok   bool
	}{
		{"a", 151, true}, {"a", 51, true}, {"a", 50, false}, {"a", 152, false},
		{"b", 120, true}, {"b", 121, false}, {"c", 100, false},
	}
	for _, c := range cases {
		if got := CanContinue(ids, b, c.id, c.from); got != c.ok {
			t.Errorf("%s %d: %v", c.id, c.from, got)
		}
	}
	if CanContinue(IDs{ID: "a", Second: -1}, b, "", 100) {
		t.Error("empty id continued")
	}
}
