package node

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/slotd/slotd/node/config"
)

// TestLoadFileProfile loads the RDB file named by SLOTD_LOAD_FILE (a
// benchmark's dump.rdb) the way a start does, for profiling:
//
//	SLOTD_LOAD_FILE=/path/dump.rdb go test ./node -run LoadFileProfile -cpuprofile cpu.out
func TestLoadFileProfile(t *testing.T) {
	path := os.Getenv("SLOTD_LOAD_FILE")
	if path == "" {
		t.Skip("SLOTD_LOAD_FILE not set")
	}
	cfg, err := config.Load([]string{"--cluster-enabled", "yes", "--save", ""})
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, nil)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	res, err := s.loadRDB(f, loadOpts{held: true})
	if err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("loaded %d keys in %v (cpu %v); heap %d MB, %d GCs, total alloc %d MB, mallocs %d", res.Loaded, el, cpu, ms.HeapAlloc>>20, ms.NumGC, ms.TotalAlloc>>20, ms.Mallocs)
}
