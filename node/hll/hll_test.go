package hll

import (
	"fmt"
	"testing"
)

func TestMurmurKnownRegisters(t *testing.T) {
	// redis-server 7.0.15: PFADD of "a", "b", "c" decodes as
	// Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603.
	b := New()
	for _, e := range []string{"a", "b", "c"} {
		var err error
		if b, _, err = Add(b, []byte(e), 3000); err != nil {
			t.Fatal(err)
		}
	}
	if got := Decode(b); got != "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603" {
		t.Fatalf("decode: %s", got)
	}
}

func TestSparseDenseAgree(t *testing.T) {
	s, d := New(), New()
	d, _ = ToDense(d)
	for i := 0; i < 3000; i++ {
		e := []byte(fmt.Sprint("x", i))
		var u1, u2 bool
		s, u1, _ = Add(s, e, 1<<20)
		d, u2, _ = Add(d, e, 0)
		if u1 != u2 {
			t.Fatalf("element %d: sparse updated %v, dense %v", i, u1, u2)
		}
	}
	if s[4] != Sparse {
		t.Fatal("promoted despite a large sparse limit")
	}
	cs, _ := Count(s)
	cd, _ := Count(d)
	if cs != cd {
		t.Fatalf("counts differ: %d %d", cs, cd)
	}
	ds, _ := ToDense(s)
	if string(ds[HdrSize:]) != string(d[HdrSize:]) {
		t.Fatal("registers differ")
	}
}

func TestPromotionAtLimit(t *testing.T) {
	b := New()
	for i := 0; b[4] == Sparse; i++ {
		b, _, _ = Add(b, []byte(fmt.Sprint(i)), 300)
		if b[4] == Sparse && len(b) > 300 {
			t.Fatalf("sparse value of %d bytes over the limit", len(b))
		}
	}
	if len(b) != DenseSize || !Valid(b) {
		t.Fatal("bad dense value")
	}
}

func TestCorrupt(t *testing.T) {
	b := New()
	b[HdrSize+1]-- // covers one register too few
	if _, err := Count(b); err != ErrCorrupt {
		t.Fatal("short stream accepted")
	}
	if _, err := ToDense(b); err != ErrCorrupt {
		t.Fatal("short stream converted")
	}
	if Valid([]byte("HYLL\x00short")) || Valid([]byte("HYLX\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff")) {
		t.Fatal("bad header accepted")
	}
}
