//go:build linux

package node

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
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
		req := respCmd("INCR", key)
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

// TestPollerWritesAfterBatch checks that a connection woken with others
// lets them run before it writes its replies: beforeWrite yields to a
// runnable goroutine when the last poll woke several connections and not
// when it woke one, and a burst on several connections goes through it.
func TestPollerWritesAfterBatch(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	s, addr := startTCP(t)
	p := s.poll.Load()
	if p == nil {
		t.Fatal("no poller on Linux")
	}
	// With one proc a new goroutine runs only when this one yields. The
	// scheduler takes its global queue first once in 61 turns (and the
	// race detector reorders on purpose), hence a share, not every time.
	ranFirst := func(batch int32) int {
		n := 0
		for i := 0; i < 100; i++ {
			p.batch.Store(batch)
			var ran atomic.Bool
			done := make(chan struct{})
			go func() { ran.Store(true); close(done) }()
			p.beforeWrite()
			if ran.Load() {
				n++
			}
			<-done
		}
		return n
	}
	if n := ranFirst(2); n < 80 {
		t.Fatalf("batch of 2: the other goroutine ran before the write %d times in 100, want nearly all", n)
	}
	if n := ranFirst(1); n > 20 {
		t.Fatalf("batch of 1: beforeWrite yielded %d times in 100, want (nearly) never", n)
	}
	const n = 8
	cs := make([]*tcpClient, n)
	for i := range cs {
		cs[i] = dialTCP(t, addr)
		cs[i].expectReply("PING\r\n", "+PONG\r\n")
	}
	before := p.yields.Load()
	for round := 0; round < 5; round++ {
		time.Sleep(20 * time.Millisecond)
		for _, c := range cs {
			c.send(respCmd("INCR", "burst"))
		}
		for _, c := range cs {
			if r := c.reply(); !strings.HasPrefix(r, ":") {
				t.Fatalf("INCR replied %q", r)
			}
		}
	}
	if p.yields.Load() == before {
		t.Fatal("five bursts on 8 connections: no connection yielded before writing")
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

// TestPollerNoLostWakeups drives many connections with pipelines of
// random sizes, some arguments larger than a read, from both one and two
// procs: every reply must come back (a lost signal shows as a stall).
func TestPollerNoLostWakeups(t *testing.T) {
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			_, addr := startTCP(t)
			conns, rounds := 40, 60
			if raceOn {
				rounds = 10
			}
			errs := make(chan error, conns)
			for i := 0; i < conns; i++ {
				go func(i int) {
					errs <- pollerClient(addr, i, rounds)
				}(i)
			}
			for i := 0; i < conns; i++ {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// pollerClient sends rounds of pipelined SET/GET pairs on one connection
// and checks each GET's reply.
func pollerClient(addr string, id, rounds int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	r := bufio.NewReader(c)
	rng := rand.New(rand.NewPCG(uint64(id), 7))
	for round := 0; round < rounds; round++ {
		depth := 1 + rng.IntN(16)
		var req bytes.Buffer
		vals := make([]string, depth)
		for j := range vals {
			size := rng.IntN(64)
			if rng.IntN(8) == 0 {
				size = 16*1024 + rng.IntN(200*1024)
			}
			vals[j] = strings.Repeat(string(rune('a'+j)), size)
			key := fmt.Sprintf("k%d:%d", id, j)
			req.WriteString(respCmd("SET", key, vals[j]))
			req.WriteString(respCmd("GET", key))
		}
		// Sometimes in pieces, so that a command spans several reads;
		// written beside the reading, so that neither side's socket
		// buffer fills while the other waits.
		b := req.Bytes()
		cut := make([]int, 0, 4)
		for rest := len(b); rest > 0; {
			n := rest
			if rng.IntN(3) == 0 {
				n = 1 + rng.IntN(n)
			}
			cut = append(cut, n)
			rest -= n
		}
		wrote := make(chan error, 1)
		go func() {
			for _, n := range cut {
				if _, err := c.Write(b[:n]); err != nil {
					wrote <- err
					return
				}
				b = b[n:]
			}
			wrote <- nil
		}()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for j := range vals {
			line, err := r.ReadString('\n')
			if err != nil || line != "+OK\r\n" {
				return fmt.Errorf("conn %d round %d: SET reply %q, %v", id, round, line, err)
			}
			want := fmt.Sprintf("$%d\r\n%s\r\n", len(vals[j]), vals[j])
			got := make([]byte, len(want))
			if _, err := io.ReadFull(r, got); err != nil || string(got) != want {
				return fmt.Errorf("conn %d round %d: GET reply wrong (%v)", id, round, err)
			}
		}
		if err := <-wrote; err != nil {
			return err
		}
	}
	return nil
}
