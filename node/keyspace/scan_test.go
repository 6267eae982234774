package keyspace

import (
	"fmt"
	"testing"
)

// TestRandomInSlot checks that random picks reach every key of a slot
// and that RandomVolatileInSlot picks only keys with a TTL.
func TestRandomInSlot(t *testing.T) {
	ks := New(1)
	db := ks.DB(0)
	const slot = 9
	if k, e := db.RandomInSlot(slot); k != "" || e != nil {
		t.Fatal("empty slot gave a key")
	}
	for i := 0; i < 40; i++ {
		db.Set(slot, []byte(fmt.Sprint("k", i)), NewString(nil))
	}
	e := db.Peek(slot, []byte("k7"))
	db.SetExpire(slot, []byte("k7"), e, 1<<40)
	seen := map[string]int{}
	for i := 0; i < 20000; i++ {
		k, e := db.RandomInSlot(slot)
		if e == nil || db.Peek(slot, []byte(k)) != e {
			t.Fatalf("pick %q not in the slot", k)
		}
		seen[k]++
		if k, _ := db.RandomVolatileInSlot(slot); k != "k7" {
			t.Fatalf("volatile pick %q", k)
		}
	}
	if len(seen) != 40 {
		t.Fatalf("only %d of 40 keys ever picked", len(seen))
	}
	checkInvariants(t, db, slot)
}

func checkInvariants(t *testing.T, db *DB, slot int) {
	t.Helper()
	tb := db.rt(slot)
	for e := range tb.expires {
		if tb.get([]byte(e.key())) != e || !e.ttl {
			t.Fatalf("expires holds %q, keys does not", e.key())
		}
	}
	n := 0
	tb.each(func(e *Entry) bool {
		n++
		if tb.get([]byte(e.key())) != e {
			t.Fatalf("key %q not found by its hash", e.key())
		}
		if _, ok := tb.expires[e]; ok != e.ttl {
			t.Fatalf("key %q: ttl flag %v, in expires %v", e.key(), e.ttl, ok)
		}
		return true
	})
	if n != int(tb.n) {
		t.Fatalf("table counts %d keys, holds %d", tb.n, n)
	}
	if has := db.nonEmpty[slot>>6].Load()&(1<<(slot&63)) != 0; has != (tb.n > 0) {
		t.Fatalf("nonEmpty bit %v with %d keys", has, tb.n)
	}
}

func TestMemoryAccounting(t *testing.T) {
	ks := New(2)
	db := ks.DB(0)
	if ks.UsedMemory() != 0 {
		t.Fatal("not zero")
	}
	db.Set(1, []byte("a"), NewString(make([]byte, 100)))
	db.Set(2, []byte("b"), NewString(make([]byte, 10)))
	want := EstimateSize(1, NewString(make([]byte, 100))) + EstimateSize(1, NewString(make([]byte, 10)))
	if got := ks.UsedMemory(); got != want {
		t.Fatalf("used %d want %d", got, want)
	}
	db.Set(1, []byte("a"), NewString(nil)) // overwrite refunds the old charge
	db.Delete(2, []byte("b"), 0)
	if got, want := ks.UsedMemory(), EstimateSize(1, NewString(nil)); got != want {
		t.Fatalf("used %d want %d", got, want)
	}
	e := db.Peek(1, []byte("a"))
	e.SetBytes(make([]byte, 1000))
	db.Recharge(1, []byte("a"))
	if got, want := ks.UsedMemory(), EstimateSize(1, e); got != want {
		t.Fatalf("after recharge %d want %d", got, want)
	}
	ks.SwapDBs(0, 1)
	ks.DB(1).Flush()
	if ks.UsedMemory() != 0 || ks.DB(1).NextNonEmpty(0, true) != -1 {
		t.Fatal("flush left memory or bits")
	}
}

func TestNextNonEmpty(t *testing.T) {
	ks := New(1)
	db := ks.DB(0)
	if db.NextNonEmpty(0, true) != -1 {
		t.Fatal("empty")
	}
	db.Set(100, []byte("x"), NewString(nil))
	db.Set(16383, []byte("y"), NewString(nil))
	for _, c := range []struct {
		from int
		wrap bool
		want int
	}{{0, false, 100}, {100, false, 100}, {101, false, 16383}, {16384, false, -1}, {16384, true, 100}} {
		if got := db.NextNonEmpty(c.from, c.wrap); got != c.want {
			t.Errorf("NextNonEmpty(%d,%v)=%d want %d", c.from, c.wrap, got, c.want)
		}
	}
	db.Delete(16383, []byte("y"), 0)
	if got := db.NextNonEmpty(101, true); got != 100 {
		t.Errorf("wrap: %d", got)
	}
	checkInvariants(t, db, 100)
	checkInvariants(t, db, 16383)
}
