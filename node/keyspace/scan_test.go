package keyspace

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestScanSlotCompleteness scans one slot in small steps while keys are
// added and removed between steps: every key present for the whole scan
// must be visited.
func TestScanSlotCompleteness(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		ks := New(1)
		db := ks.DB(0)
		const slot = 7
		live := map[string]bool{}
		for i := 0; i < 200; i++ {
			k := fmt.Sprint("k", i)
			db.Set(slot, []byte(k), NewString([]byte("v")))
			live[k] = true
		}
		stable := map[string]bool{}
		for k := range live {
			if rng.IntN(2) == 0 {
				stable[k] = true // never removed during the scan
			}
		}
		seen := map[string]bool{}
		next, n := 0, 200
		for first := true; first || next != 0; first = false {
			next = db.ScanSlot(slot, next, 1+rng.IntN(10), func(k string, _ *Entry) { seen[k] = true })
			for j := 0; j < 5; j++ {
				if rng.IntN(2) == 0 {
					k := fmt.Sprint("k", n)
					n++
					db.Set(slot, []byte(k), NewString(nil))
					live[k] = true
					continue
				}
				for k := range live {
					if !stable[k] {
						db.Delete(slot, []byte(k), 0)
						delete(live, k)
						break
					}
				}
			}
		}
		for k := range stable {
			if !seen[k] {
				t.Fatalf("seed %d: key %s present throughout was not visited", seed, k)
			}
		}
		checkInvariants(t, db, slot)
	}
}

func checkInvariants(t *testing.T, db *DB, slot int) {
	t.Helper()
	tb := db.rt(slot)
	if len(tb.order) != len(tb.keys) {
		t.Fatalf("order %d keys %d", len(tb.order), len(tb.keys))
	}
	for i, k := range tb.order {
		if e := tb.keys[k]; e == nil || int(e.pos) != i {
			t.Fatalf("order[%d]=%q out of sync", i, k)
		}
	}
	if has := db.nonEmpty[slot>>6].Load()&(1<<(slot&63)) != 0; has != (len(tb.keys) > 0) {
		t.Fatalf("nonEmpty bit %v with %d keys", has, len(tb.keys))
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
	e.Str = make([]byte, 1000)
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
