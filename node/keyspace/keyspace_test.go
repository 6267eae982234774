package keyspace

import (
	"sync"
	"testing"
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
	if db.Len() != 8 || ks.DB(0).tables.Load() != &emptyTables {
		t.Fatal("wrong database written")
	}
	ks.SwapDBs(0, 1)
	if ks.DB(0).Peek(3, []byte("d")) == nil || ks.DB(1).tables.Load() != &emptyTables {
		t.Fatal("swap did not move the tables")
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
