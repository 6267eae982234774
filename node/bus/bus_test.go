package bus

import (
	"bytes"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

type inbox struct {
	mu     sync.Mutex
	frames [][]byte
}

func (in *inbox) add(f []byte) {
	in.mu.Lock()
	in.frames = append(in.frames, append([]byte(nil), f...))
	in.mu.Unlock()
}

func (in *inbox) wait(t *testing.T, n int, d time.Duration) [][]byte {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		in.mu.Lock()
		got := len(in.frames)
		fs := in.frames
		in.mu.Unlock()
		if got >= n {
			return fs
		}
		if time.Now().After(deadline) {
			t.Fatalf("received %d frames, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (in *inbox) count() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.frames)
}

func freePort(t *testing.T) int {
	t.Helper()
	// A port free for both TCP and UDP.
	for i := 0; i < 50; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port))
		l.Close()
		if err == nil {
			u.Close()
			return port
		}
	}
	t.Fatal("no free port")
	return 0
}

func open(t *testing.T, name, secret, label string, in *inbox) *Bus {
	t.Helper()
	b, err := Open(Config{Name: name, BindAddr: "127.0.0.1", Port: freePort(t), Secret: secret, Label: label, OnFrame: in.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestSendSmallAndLarge(t *testing.T) {
	var ia, ib inbox
	a := open(t, "a", "", "c1", &ia)
	b := open(t, "b", "", "c1", &ib)
	small := []byte("ping frame")
	large := bytes.Repeat([]byte{7}, 5000) // too big for one packet: TCP
	if err := a.Send(b.Addr(), small, false); err != nil {
		t.Fatal(err)
	}
	if err := a.Send(b.Addr(), large, false); err != nil {
		t.Fatal(err)
	}
	got := ib.wait(t, 2, 5*time.Second)
	var sawSmall, sawLarge bool
	for _, f := range got {
		sawSmall = sawSmall || bytes.Equal(f, small)
		sawLarge = sawLarge || bytes.Equal(f, large)
	}
	if !sawSmall || !sawLarge {
		t.Fatalf("frames differ: %d frames", len(got))
	}
	if s := a.Stats(); s.FramesOut != 2 || s.BytesOut != int64(len(small)+len(large)) {
		t.Fatalf("stats %+v", s)
	}
}

func TestSecretAndLabelSeparateClusters(t *testing.T) {
	var in1, in2, in3 inbox
	a := open(t, "a", "s3cret", "c1", &in1)
	b := open(t, "b", "s3cret", "c1", &in2)
	other := open(t, "x", "different", "c1", &in3)
	stranger := open(t, "y", "s3cret", "c2", &in3)
	other.Send(b.Addr(), []byte("from wrong secret"), false)
	other.Send(b.Addr(), []byte("from wrong secret, tcp"), true)
	stranger.Send(b.Addr(), []byte("from other cluster"), false)
	if err := a.Send(b.Addr(), []byte("hello"), false); err != nil {
		t.Fatal(err)
	}
	if err := a.Send(b.Addr(), []byte("hello tcp"), true); err != nil {
		t.Fatal(err)
	}
	in2.wait(t, 2, 5*time.Second)
	time.Sleep(200 * time.Millisecond)
	in2.mu.Lock()
	defer in2.mu.Unlock()
	if len(in2.frames) != 2 {
		t.Fatalf("got %d frames, want only the 2 from the same cluster", len(in2.frames))
	}
	for _, f := range in2.frames {
		if !bytes.HasPrefix(f, []byte("hello")) {
			t.Fatalf("accepted a foreign frame %q", f)
		}
	}
}

// TestGarbageOnBusPort sends random bytes to the bus port over UDP and TCP;
// the endpoint must keep working.
func TestGarbageOnBusPort(t *testing.T) {
	var ia, ib inbox
	a := open(t, "a", "", "c1", &ia)
	b := open(t, "b", "", "c1", &ib)
	garbage := [][]byte{{}, {0}, {0xff, 0xff, 0xff}, bytes.Repeat([]byte("GET / HTTP/1.1\r\n"), 100), {1, 2, 3, 4, 5, 6, 7, 8, 9}}
	for _, g := range garbage {
		if u, err := net.Dial("udp", b.Addr()); err == nil {
			u.Write(g)
			u.Close()
		}
		if c, err := net.DialTimeout("tcp", b.Addr(), time.Second); err == nil {
			c.Write(g)
			c.Close()
		}
	}
	if err := a.Send(b.Addr(), []byte("still alive"), false); err != nil {
		t.Fatal(err)
	}
	ib.wait(t, 1, 5*time.Second)
}
