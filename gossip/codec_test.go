package gossip

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/slotd/slotd/slots"
)

// testSeed returns a seed for a random test and logs it so a failure replays.
func testSeed(t testing.TB) uint64 {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return seed
}

func randString(r *rand.Rand, max int) string {
	b := make([]byte, r.IntN(max+1))
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

func randBitmap(r *rand.Rand) slots.Bitmap {
	var bm slots.Bitmap
	switch r.IntN(4) {
	case 0:
	case 1: // one range, the common case
		a := r.IntN(slots.Count)
		b := a + r.IntN(slots.Count-a)
		for j := a; j <= b; j++ {
			bm.Set(j)
		}
	case 2: // scattered: forces the raw form
		for j := 0; j < slots.Count; j++ {
			if r.IntN(2) == 0 {
				bm.Set(j)
			}
		}
	default:
		for i := r.IntN(20); i > 0; i-- {
			bm.Set(r.IntN(slots.Count))
		}
	}
	return bm
}

func randHeader(r *rand.Rand) Header {
	h := Header{
		Cluster:      randString(r, 5),
		Sender:       RandomID(r),
		CurrentEpoch: r.Uint64() >> (1 + r.IntN(63)), // at most MaxEpoch
		ConfigEpoch:  r.Uint64() >> (1 + r.IntN(63)),
		Flags:        Flags(r.IntN(int(flagsWire) + 1)),
		ReplOffset:   int64(r.Uint64()) >> r.IntN(64),
		IP:           randString(r, 15),
		Port:         r.IntN(65536),
		CPort:        r.IntN(65536),
		Hostname:     randString(r, 10),
		State:        ClusterStatus(r.IntN(2)),
		MFlags:       uint8(r.IntN(4)),
		Slots:        randBitmap(r),
	}
	if r.IntN(2) == 0 {
		h.Master = RandomID(r)
	}
	return h
}

func randGossip(r *rand.Rand) []GossipEntry {
	n := r.IntN(5)
	if n == 0 {
		return nil
	}
	g := make([]GossipEntry, n)
	for i := range g {
		g[i] = GossipEntry{ID: RandomID(r), PingSent: r.Int64N(1 << 45), PongReceived: r.Int64N(1 << 45),
			IP: randString(r, 15), Port: r.IntN(65536), CPort: r.IntN(65536), Flags: Flags(r.IntN(int(flagsWire) + 1))}
	}
	return g
}

func randBytes(r *rand.Rand) []byte {
	if r.IntN(3) == 0 {
		return nil
	}
	b := make([]byte, 1+r.IntN(300))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func randMessage(r *rand.Rand) Message {
	h := randHeader(r)
	switch Type(r.IntN(int(numTypes))) {
	case TypePing:
		return &Ping{h, randGossip(r)}
	case TypePong:
		return &Pong{h, randGossip(r)}
	case TypeMeet:
		return &Meet{h, randGossip(r)}
	case TypeFail:
		return &Fail{h, RandomID(r)}
	case TypeUpdate:
		return &Update{h, RandomID(r), r.Uint64() >> 1, randBitmap(r)}
	case TypePublish:
		return &Publish{h, randBytes(r), randBytes(r)}
	case TypeFailoverAuthRequest:
		return &FailoverAuthRequest{h}
	case TypeFailoverAuthAck:
		return &FailoverAuthAck{h}
	default:
		return &MFStart{h}
	}
}

func TestCodecRoundTrip(t *testing.T) {
	seed := testSeed(t)
	r := rand.New(rand.NewPCG(seed, 1))
	var stream []byte
	var sent []Message
	for i := 0; i < 2000; i++ {
		m := randMessage(r)
		b := AppendMessage(nil, m)
		got, rest, err := ParseMessage(b)
		if err != nil {
			t.Fatalf("seed %d msg %d (%s): %v", seed, i, m.Type(), err)
		}
		if len(rest) != 0 {
			t.Fatalf("seed %d: %d bytes left", seed, len(rest))
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("seed %d msg %d: round trip\n got %+v\nwant %+v", seed, i, got, m)
		}
		if b2 := AppendMessage(nil, got); !bytes.Equal(b, b2) {
			t.Fatalf("seed %d msg %d: re-encoding differs", seed, i)
		}
		// Every strict prefix is short, never a wrong message.
		if cut := r.IntN(len(b)); cut > 0 {
			if _, _, err := ParseMessage(b[:cut]); !errors.Is(err, ErrShort) {
				t.Fatalf("seed %d: prefix %d/%d: %v", seed, cut, len(b), err)
			}
		}
		stream = AppendMessage(stream, m)
		sent = append(sent, m)
	}
	// Frames back to back in one stream, as on TCP.
	for i := 0; len(stream) > 0; i++ {
		m, rest, err := ParseMessage(stream)
		if err != nil || !reflect.DeepEqual(m, sent[i]) {
			t.Fatalf("seed %d: stream frame %d: %v", seed, i, err)
		}
		stream = rest
	}
}

func TestSlotsEncodingSize(t *testing.T) {
	var bm slots.Bitmap
	for j := 0; j <= 5460; j++ {
		bm.Set(j)
	}
	if n := len(AppendSlots(nil, &bm)); n > 6 {
		t.Fatalf("one range took %d bytes", n)
	}
	var all slots.Bitmap
	for j := 0; j < slots.Count; j += 2 {
		all.Set(j)
	}
	if n := len(AppendSlots(nil, &all)); n != 1+len(all) {
		t.Fatalf("scattered set took %d bytes, want raw %d", n, 1+len(all))
	}
}

func TestParseRejects(t *testing.T) {
	good := AppendMessage(nil, &Ping{Header: Header{Sender: NodeID(bytes.Repeat([]byte("ab"), 20))}})
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrShort},
		{"magic", mut(func(b []byte) []byte { b[0] = 'X'; return b }), ErrMagic},
		{"version", mut(func(b []byte) []byte { b[4] = 2; return b }), ErrVersion},
		{"too large", mut(func(b []byte) []byte { b[6] = 0xff; return b }), ErrTooLarge},
		{"length below header", mut(func(b []byte) []byte { b[6], b[7], b[8], b[9] = 0, 0, 0, 3; return b }), ErrMalformed},
		{"type", mut(func(b []byte) []byte { b[5] = 99; return b }), ErrMalformed},
		{"trailing", mut(func(b []byte) []byte {
			b = append(b, 0)
			b[9]++
			return b
		}), ErrMalformed},
		{"truncated body", mut(func(b []byte) []byte {
			b = b[:len(b)-1]
			b[9]--
			return b
		}), ErrMalformed},
	}
	// Epochs: up to MaxEpoch in the header and in an UPDATE, not one more.
	id := NodeID(bytes.Repeat([]byte("cd"), 20))
	for _, e := range []struct {
		name string
		m    Message
	}{
		{"current epoch", &Ping{Header: Header{Sender: id, CurrentEpoch: MaxEpoch + 1}}},
		{"config epoch", &Pong{Header: Header{Sender: id, ConfigEpoch: 1<<64 - 1}}},
		{"update epoch", &Update{Header: Header{Sender: id}, ID: id, ConfigEpoch: MaxEpoch + 1}},
	} {
		cases = append(cases, struct {
			name string
			b    []byte
			want error
		}{e.name, AppendMessage(nil, e.m), ErrMalformed})
	}
	for _, m := range []Message{
		&Ping{Header: Header{Sender: id, CurrentEpoch: MaxEpoch, ConfigEpoch: MaxEpoch}},
		&Update{Header: Header{Sender: id}, ID: id, ConfigEpoch: MaxEpoch},
	} {
		if _, _, err := ParseMessage(AppendMessage(nil, m)); err != nil {
			t.Errorf("%s with epochs at MaxEpoch: %v", m.Type(), err)
		}
	}
	for _, c := range cases {
		if _, _, err := ParseMessage(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v want %v", c.name, err, c.want)
		}
	}
	if _, _, err := ParseMessage(good); err != nil {
		t.Fatal(err)
	}
}

// seedFrames are real frames: what a small cluster's nodes actually sent.
func seedFrames(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 30; i++ {
		f.Add(AppendMessage(nil, randMessage(r)))
	}
	s := NewState(Config{NodeTimeout: 1000, Rand: r}, RandomID(r), "127.0.0.1", 7000, 17000)
	s.AddSlots(0, []int{0, 1, 2, 100, 5000})
	out := s.Meet(0, "127.0.0.1", 7001, 17001)
	for _, o := range out {
		if snd, ok := o.(*Send); ok {
			f.Add(AppendMessage(nil, snd.Msg))
		}
	}
}

func FuzzParseMessage(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, rest, err := ParseMessage(b)
		if err != nil {
			return
		}
		frame := b[:len(b)-len(rest)]
		if again := AppendMessage(nil, m); !bytes.Equal(again, frame) {
			t.Fatalf("accepted frame does not round-trip:\n in %x\nout %x", frame, again)
		}
	})
}

func TestSlotRangesMatchesBitmap(t *testing.T) {
	seed := testSeed(t)
	r := rand.New(rand.NewPCG(seed, 3))
	for i := 0; i < 300; i++ {
		bm := randBitmap(r)
		if got, want := slotRanges(&bm), bm.Ranges(); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: %v vs %v", seed, got, want)
		}
	}
}
