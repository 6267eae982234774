package node

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type discardSink struct{}

func (discardSink) feedWrite([]byte, int64) {}

// TestPauseWritesOffsetIsFinal: the offset PauseWrites returns is the last
// one while the pause lasts, even for writes that passed the pause check
// just before it began (a manual failover's replica catches up to that
// offset and then takes over: a write appended later would be acknowledged
// by the old master and missing on the new one).
func TestPauseWritesOffsetIsFinal(t *testing.T) {
	tc := newTestServer(t)
	done := make(chan struct{})
	defer close(done)
	tc.s.feed.attach(discardSink{}, done)
	h := replFailoverHooks{s: tc.s}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		c := tc.newClient()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				c.do("SET", "k"+strconv.Itoa(g)+":"+strconv.Itoa(n%64), "v")
			}
		}()
	}
	defer func() { stop.Store(true); h.ResumeWrites(); wg.Wait() }()
	for i := 0; i < 100; i++ {
		off := h.PauseWrites(time.Now().Add(10 * time.Second))
		time.Sleep(200 * time.Microsecond)
		if got := tc.s.feed.offset(); got != off {
			t.Fatalf("round %d: offset moved from %d to %d while writes were paused", i, off, got)
		}
		h.ResumeWrites()
		time.Sleep(100 * time.Microsecond)
	}
}
