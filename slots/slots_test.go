package slots

import (
	"testing"
)

func TestOfKnownValues(t *testing.T) {
	// Values as printed by CLUSTER KEYSLOT on a real redis-server.
	cases := map[string]int{
		"":              0,
		"foo":           12182,
		"bar":           5061,
		"123456789":     12739,
		"{user1000}.a":  OfString("user1000"),
		"{}foo":         OfString("{}foo"),
		"foo{}{bar}":    OfString("foo{}{bar}"),
		"foo{{bar}}zap": OfString("{bar"),
		"foo{bar}{zap}": OfString("bar"),
		"{unclosed":     OfString("{unclosed"),
		"a{b}c":         OfString("b"),
	}
	for k, want := range cases {
		if got := OfString(k); got != want {
			t.Errorf("Of(%q)=%d want %d", k, got, want)
		}
	}
	if OfString("{user1000}.following") != OfString("{user1000}.followers") {
		t.Fatal("hash tags must map to one slot")
	}
}

func TestBitmapRanges(t *testing.T) {
	var b Bitmap
	for _, s := range []int{0, 1, 2, 5, 16383, 100, 101} {
		b.Set(s)
	}
	if got := FormatRanges(b.Ranges()); got != "0-2 5 100-101 16383" {
		t.Fatalf("got %q", got)
	}
	if b.Count() != 7 || !b.Has(5) || b.Has(6) {
		t.Fatal("count/has wrong")
	}
	b.Clear(5)
	if b.Has(5) || b.Count() != 6 {
		t.Fatal("clear failed")
	}
}

func TestParseRange(t *testing.T) {
	good := map[string]Range{"0": {0, 0}, "0-5460": {0, 5460}, "16383": {16383, 16383}}
	for s, want := range good {
		if r, ok := ParseRange(s); !ok || r != want {
			t.Errorf("ParseRange(%q)=%v,%v", s, r, ok)
		}
	}
	for _, s := range []string{"", "-", "16384", "5-4", "a", "1-", "-1", "1-2-3", "99999"} {
		if _, ok := ParseRange(s); ok {
			t.Errorf("ParseRange(%q) accepted", s)
		}
	}
}

func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"0", "0-5460", "16383", "1-", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, ok := ParseRange(s)
		if !ok {
			return
		}
		if r.Start < 0 || r.End >= Count || r.Start > r.End {
			t.Fatalf("bad range %v from %q", r, s)
		}
		if r2, ok := ParseRange(r.String()); !ok || r2 != r {
			t.Fatalf("round trip %v", r)
		}
	})
}
