package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestTableAgainstMap runs random sets, deletes and TTL changes on a few
// slots and compares every slot with a Go map after each step: the probe
// runs stay intact through backward-shift deletions, growth and shrinking.
func TestTableAgainstMap(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	ks := New(1)
	db := ks.DB(0)
	ref := map[int]map[string]string{}
	for step := 0; step < 20000; step++ {
		slot := rng.IntN(3)
		if ref[slot] == nil {
			ref[slot] = map[string]string{}
		}
		// Up to 300 keys per slot, so that tables grow and shrink.
		k := "k" + strconv.Itoa(rng.IntN(300))
		kb := []byte(k)
		switch op := rng.IntN(10); {
		case op < 5:
			v := strconv.Itoa(step)
			var e *Entry
			if rng.IntN(2) == 0 {
				e = NewStringKey(kb, []byte(v))
			} else {
				e = NewString([]byte(v))
			}
			if rng.IntN(4) == 0 {
				db.SetWithExpire(slot, kb, e, 1e12)
			} else {
				db.Set(slot, kb, e)
			}
			ref[slot][k] = v
		case op < 9:
			_, had := ref[slot][k]
			if got := db.Delete(slot, kb, 0); got != had {
				t.Fatalf("step %d: Delete(%q) = %v, want %v", step, k, got, had)
			}
			delete(ref[slot], k)
		default:
			if e := db.Lookup(slot, kb, 0); e != nil {
				db.SetExpire(slot, kb, e, int64(rng.IntN(2))*1e12)
			}
		}
		if step%97 == 0 || step > 19900 {
			for s, m := range ref {
				checkInvariants(t, db, s)
				if db.SlotLen(s) != len(m) {
					t.Fatalf("step %d slot %d: %d keys, want %d", step, s, db.SlotLen(s), len(m))
				}
				for k, v := range m {
					e := db.Lookup(s, []byte(k), 0)
					if e == nil || string(e.Bytes()) != v {
						t.Fatalf("step %d slot %d: %q lost", step, s, k)
					}
				}
			}
		}
	}
	// Random picks come from the slot, and expiry sampling removes what
	// has expired.
	for s, m := range ref {
		if len(m) == 0 {
			continue
		}
		k, e := db.RandomInSlot(s)
		if _, ok := m[k]; !ok || db.Peek(s, []byte(k)) != e {
			t.Fatalf("RandomInSlot(%d) = %q", s, k)
		}
		for db.VolatileLen(s) > 0 {
			k, e := db.RandomVolatileInSlot(s)
			if db.Peek(s, []byte(k)) != e || !e.HasTTL() {
				t.Fatalf("RandomVolatileInSlot(%d) = %q", s, k)
			}
			db.ExpireSample(s, 5, 2e12)
			checkInvariants(t, db, s)
		}
	}
}
