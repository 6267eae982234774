package keyspace

import (
	"sync"
	"testing"
	"unsafe"
)

// TestLazyTables checks that reading a database never written leaves it
// without tables, that concurrent first writes to different slots all land
// in one array, and that Flush returns the database to the empty state.
func TestLazyTables(t *testing.T) {
	ks := New(2)
	db := ks.DB(1)
	if db.Lookup(5, []byte("k"), 0) != nil || db.SlotLen(5) != 0 || db.Delete(5, []byte("k"), 0) ||
		db.FlushSlot(5) != 0 {
		t.Fatal("empty database answered with a key")
	}
	db.ForEachInSlot(5, func(string, *Entry) bool { t.Fatal("visited a key"); return false })
	if db.tables.Load() != &emptyTables {
		t.Fatal("a read allocated the tables")
	}
	var wg sync.WaitGroup
	for s := 0; s < 8; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db.Set(s, []byte{byte('a' + s)}, NewString([]byte("v")))
		}()
	}
	wg.Wait()
	for s := 0; s < 8; s++ {
		if db.Peek(s, []byte{byte('a' + s)}) == nil {
			t.Fatalf("slot %d lost its key", s)
		}
	}
	if db.Len() != 8 || ks.DB(0).Len() != 0 || ks.DB(0).tables.Load() != &ks.locks {
		t.Fatal("wrong database written")
	}
	ks.SwapDBs(0, 1)
	if ks.DB(0).Peek(3, []byte("d")) == nil || ks.DB(1).tables.Load() != &ks.locks || ks.DB(1).Len() != 0 {
		t.Fatal("swap did not move the tables")
	}
	ks.DB(1).Set(3, []byte("e"), NewString(nil))
	ks.DB(1).Flush()
	if ks.DB(1).tables.Load() != &ks.locks || ks.DB(1).Peek(3, []byte("e")) != nil || ks.DB(1).SlotLen(3) != 0 {
		t.Fatal("flush of the lock lines' tables kept a key")
	}
	ks.DB(0).Flush()
	if ks.DB(0).tables.Load() != &emptyTables || ks.UsedMemory() != 0 || ks.DB(0).Len() != 0 {
		t.Fatal("flush kept tables, memory or keys")
	}
	ks.DB(0).Set(3, []byte("d"), NewString(nil))
	if ks.DB(0).Peek(3, []byte("d")) == nil {
		t.Fatal("write after flush lost")
	}
}

// TestEntrySize keeps Entry at 40 bytes: the key's pointer and length
// moved into it from the slot table, and one more field would move a bare
// entry to the 64-byte class.
// TestStringSharesEntryAllocation checks that a short value sits right
// after its entry and a long one has its own buffer.
func TestStringSharesEntryAllocation(t *testing.T) {
	for _, n := range []int{0, 1, 16, 17, 33, 64, 96} {
		v := make([]byte, n)
		for i := range v {
			v[i] = byte('a' + i%26)
		}
		e := NewString(v)
		if string(e.Bytes()) != string(v) {
			t.Fatalf("%d bytes: value %q", n, e.Bytes())
		}
		if got := uintptr(e.ptr) - uintptr(unsafe.Pointer(e)); got != unsafe.Sizeof(Entry{}) {
			t.Fatalf("%d bytes: value at offset %d from the entry", n, got)
		}
		if c := cap(e.Bytes()); c < n || c > n+32 {
			t.Fatalf("%d bytes: capacity %d", n, c)
		}
	}
	e := NewString(make([]byte, 97))
	if uintptr(e.ptr)-uintptr(unsafe.Pointer(e)) == unsafe.Sizeof(Entry{}) {
		t.Fatal("97 bytes: embedded")
	}
}

func TestEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(Entry{}); n > 40 {
		t.Fatalf("Entry is %d bytes, want at most 40", n)
	}
	e := NewString([]byte("abc"))
	b := e.Bytes()
	b[0] = 'x' // in place
	e.SetBytes(append(b, "def"...))
	if string(e.Bytes()) != "xbcdef" || e.Obj() != nil {
		t.Fatalf("string %q", e.Bytes())
	}
	l := NewList()
	o := NewObject(l)
	if o.Kind != KindList || o.Obj() != Object(l) || o.Bytes() != nil {
		t.Fatal("collection entry")
	}
}

// TestExpires covers the expires map: TTLs set, changed, cleared, carried
// by SetWithExpire, dropped by Set, and lazy expiry on Lookup and Delete.
func TestExpires(t *testing.T) {
	ks := New(1)
	db := ks.DB(0)
	k := []byte("k")
	db.Set(3, k, NewString(nil))
	e := db.Lookup(3, k, 100)
	if e.HasTTL() || db.ExpireOf(3, k, e) != 0 || db.Volatile() != 0 {
		t.Fatal("new key has a TTL")
	}
	db.SetExpire(3, k, e, 500)
	db.SetExpire(3, k, e, 600)
	if !e.HasTTL() || db.ExpireOf(3, k, e) != 600 || db.ExpireOfKey(3, "k", e) != 600 || db.Volatile() != 1 {
		t.Fatal("TTL not set")
	}
	if db.Lookup(3, k, 599) != e || db.Expired(3, "k", e, 599) || !db.Expired(3, "k", e, 600) {
		t.Fatal("expired early or not at all")
	}
	db.SetExpire(3, k, e, 0)
	if e.HasTTL() || db.Volatile() != 0 || db.rt(3).expires != nil {
		t.Fatal("TTL not cleared")
	}
	n := NewString([]byte("v"))
	db.SetWithExpire(3, k, n, 700)
	if db.Peek(3, k) != n || db.ExpireOf(3, k, n) != 700 || db.Volatile() != 1 {
		t.Fatal("SetWithExpire")
	}
	db.SetWithExpire(3, k, NewString(nil), 800) // replace keeping a TTL
	if e := db.Peek(3, k); db.ExpireOf(3, k, e) != 800 || db.Volatile() != 1 {
		t.Fatal("replace with TTL")
	}
	db.Set(3, k, NewString(nil)) // replace drops the TTL
	if e := db.Peek(3, k); e.HasTTL() || db.Volatile() != 0 {
		t.Fatal("Set kept the TTL")
	}
	db.SetWithExpire(3, k, NewString(nil), 900)
	if db.Lookup(3, k, 900) != nil || db.Len() != 0 || db.Volatile() != 0 || ks.ExpiredKeys.Load() != 1 {
		t.Fatal("lazy expiry")
	}
	db.SetWithExpire(3, k, NewString(nil), 900)
	if db.Delete(3, k, 901) || ks.ExpiredKeys.Load() != 2 || ks.UsedMemory() != 0 {
		t.Fatal("Delete of an expired key")
	}
	for i := 0; i < 10; i++ {
		db.SetWithExpire(3, []byte{byte(i)}, NewString(nil), int64(100+i*100))
	}
	if seen, expired := db.ExpireSample(3, 20, 500); seen != 10 || expired != 5 || db.Volatile() != 5 || db.Len() != 5 {
		t.Fatalf("ExpireSample seen %d expired %d", seen, expired)
	}
	checkInvariants(t, db, 3)
}
