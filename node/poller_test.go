//go:build linux

package node

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// TestPollerServesInArrivalOrder sends one INCR on each of several
// connections, in order, while the server is waiting for input on all of
// them: the counter's values must follow the order the requests arrived in
// (Go's netpoller alone runs such a batch last-first).
func TestPollerServesInArrivalOrder(t *testing.T) {
	if raceOn {
		// `make test` runs this test once more without the detector.
		t.Skip("the race detector shuffles the scheduler's run queue on purpose")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	s, addr := startTCP(t)
	if s.poll.Load() == nil {
		t.Fatal("no poller on Linux")
	}
	const n = 8
	cs := make([]*tcpClient, n)
	for i := range cs {
		cs[i] = dialTCP(t, addr)
		cs[i].expectReply("PING\r\n", "+PONG\r\n")
	}
	for round := 0; round < 5; round++ {
		// Let every connection's goroutine go back to waiting.
		time.Sleep(20 * time.Millisecond)
		key := fmt.Sprintf("order%d", round)
		req := fmt.Sprintf("*2\r\n$4\r\nINCR\r\n$%d\r\n%s\r\n", len(key), key)
		for _, c := range cs {
			c.send(req)
		}
		got := make([]string, n)
		for i, c := range cs {
			got[i] = c.reply()
		}
		for i := range got {
			if want := fmt.Sprintf(":%d\r\n", i+1); got[i] != want {
				t.Fatalf("round %d: replies in connection order %q, want :1 .. :%d", round, got, n)
			}
		}
	}
}

// TestPollerKillWakesReader checks that CLIENT KILL reaches a connection
// waiting in the poller, and that an idle timeout still applies there.
func TestPollerKillWakesReader(t *testing.T) {
	_, addr := startTCP(t, "timeout", "1")
	a := dialTCP(t, addr)
	a.expectReply("CLIENT ID\r\n", ":1\r\n")
	b := dialTCP(t, addr)
	b.expectReply("CLIENT KILL ID 1\r\n", ":1\r\n")
	a.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := a.c.Read(make([]byte, 1)); err == nil {
		t.Fatalf("killed connection read %d bytes, want EOF", n)
	}
	// b sends nothing more: timeout 1 closes it after a second or two.
	start := time.Now()
	b.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := b.c.Read(make([]byte, 1)); err == nil {
		t.Fatal("idle connection got data, want close")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("idle connection closed after %v, want about 1 s", d)
	}
}
