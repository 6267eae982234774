package keyspace

import (
	"testing"

	"github.com/slotd/slotd/slots"
)

func TestCaptureRunsOncePerSlotOnLock(t *testing.T) {
	ks := New(2)
	calls := map[int]int{}
	ks.LockAllQuiet()
	c := ks.StartCapture(func(slot int) { calls[slot]++ })
	ks.UnlockAll()
	if ks.Captures() != 1 {
		t.Fatal("capture not active")
	}
	ks.Lock(5)
	ks.Unlock(5)
	ks.Lock(5)
	ks.Unlock(5)
	ks.LockSlots([]int{5, 7, 9})
	ks.UnlockSlots([]int{5, 7, 9})
	ks.LockQuiet(11)
	if !c.Pending(11) {
		t.Fatal("LockQuiet captured")
	}
	c.Done(11)
	ks.Unlock(11)
	for _, s := range []int{5, 7, 9} {
		if calls[s] != 1 {
			t.Fatalf("slot %d captured %d times", s, calls[s])
		}
	}
	if calls[11] != 0 {
		t.Fatal("slot done by the owner was captured")
	}
	ks.LockAll()
	ks.UnlockAll()
	if len(calls) != slots.Count-1 {
		t.Fatalf("LockAll captured %d slots", len(calls))
	}
	ks.EndCapture(c)
	if ks.Captures() != 0 {
		t.Fatal("capture still active")
	}
}

func TestTwoCapturesAreIndependent(t *testing.T) {
	ks := New(1)
	var a, b int
	ks.LockAllQuiet()
	ca := ks.StartCapture(func(int) { a++ })
	cb := ks.StartCapture(func(int) { b++ })
	ks.UnlockAll()
	// The owner of a walks slot 3 quietly: b's mark stays.
	ks.LockQuiet(3)
	ca.Done(3)
	ks.Unlock(3)
	ks.Lock(3)
	ks.Unlock(3)
	if a != 0 || b != 1 {
		t.Fatalf("a=%d b=%d", a, b)
	}
	ks.EndCapture(ca)
	ks.Lock(4)
	ks.Unlock(4)
	if a != 0 || b != 2 {
		t.Fatalf("after ending a: a=%d b=%d", a, b)
	}
	ks.EndCapture(cb)
}

func TestReserveAndLoad(t *testing.T) {
	ks := New(1)
	db := ks.DB(0)
	db.Reserve(1_000_000, 100_000)
	if db.Len() != 0 || db.SlotHasKeys(0) {
		t.Fatal("Reserve added keys")
	}
	slot := slots.Of([]byte("k"))
	if !db.Load(slot, "k", NewString([]byte("v")), 0) {
		t.Fatal("Load of a new key failed")
	}
	if !db.Load(slots.Of([]byte("t")), "t", NewString([]byte("v")), 99) {
		t.Fatal("Load of a new key failed")
	}
	if db.Load(slot, "k", NewString([]byte("w")), 0) {
		t.Fatal("duplicate key loaded")
	}
	if db.Len() != 2 || db.Volatile() != 1 || !db.SlotHasKeys(slot) {
		t.Fatalf("len %d volatile %d", db.Len(), db.Volatile())
	}
}
