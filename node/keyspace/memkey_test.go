package keyspace

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/slotd/slotd/slots"
)

// TestHeapPerKey measures the live heap per key after loading 1,000,000
// 16-byte keys holding 64-byte strings, the load docs/BENCHMARKS.md
// compares with redis-server. It is slow, so it runs only when
// SLOTD_HEAP_PROFILE names a file for the heap profile
// (go tool pprof -sample_index=inuse_space -top <file>).
func TestHeapPerKey(t *testing.T) {
	out := os.Getenv("SLOTD_HEAP_PROFILE")
	if out == "" {
		t.Skip("set SLOTD_HEAP_PROFILE=<file> to run")
	}
	runtime.MemProfileRate = 4096
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ks := New(16)
	db := ks.DB(0)
	v := make([]byte, 64)
	const n = 1000000
	for i := 0; i < n; i++ {
		k := []byte(fmt.Sprintf("key:%012d", i))
		db.Set(slots.Of(k), k, NewStringKey(k, v)) // as SET stores it
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
	t.Logf("live heap %.1f B/key (%d keys)", float64(after.HeapAlloc-before.HeapAlloc)/n, db.Len())
	runtime.KeepAlive(ks)
}
