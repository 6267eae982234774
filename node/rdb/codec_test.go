package rdb

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/node/keyspace"
)

func TestCRC64CheckValue(t *testing.T) {
	if got := CRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x", got)
	}
	// The sliced and the bytewise paths agree on every length.
	b := make([]byte, 100)
	for i := range b {
		b[i] = byte(i * 7)
	}
	for n := 0; n <= len(b); n++ {
		var want uint64
		for _, c := range b[:n] {
			want = crcTab[0][byte(want)^c] ^ want>>8
		}
		if got := CRC64(0, b[:n]); got != want {
			t.Fatalf("len %d: %#x want %#x", n, got, want)
		}
	}
}

func TestLZFRoundTrip(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	for i := 0; i < 500; i++ {
		n := r.IntN(5000)
		in := make([]byte, n)
		alpha := 1 + r.IntN(255)
		for j := range in {
			if j > 10 && r.IntN(4) == 0 { // repeats
				k := r.IntN(j)
				in[j] = in[k]
			} else {
				in[j] = byte(r.IntN(alpha))
			}
		}
		c, ok := lzfCompress(nil, in, n+n/16+64)
		if n > 0 && !ok {
			t.Fatalf("len %d: did not fit a generous bound", n)
		}
		if !ok {
			continue
		}
		out, err := lzfDecompress(nil, c, n)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("len %d alpha %d: round trip failed: %v", n, alpha, err)
		}
	}
	long := bytes.Repeat([]byte("abc"), 10000)
	c, ok := lzfCompress(nil, long, len(long)-4)
	if !ok || len(c) > len(long)/50 {
		t.Fatalf("repetitive input compressed to %d bytes (ok %v)", len(c), ok)
	}
	if _, ok := lzfCompress(nil, []byte("abcdefghijklmnopqrstuvwxyz"), 10); ok {
		t.Fatal("incompressible input fit a too small bound")
	}
}

func TestLZFDecompressRejects(t *testing.T) {
	for _, in := range [][]byte{
		{0x05, 'a'},       // literal past the end
		{0x20, 0x00},      // reference before the start
		{0x00, 'a', 0xe0}, // truncated long reference
	} {
		if _, err := lzfDecompress(nil, in, 10); err == nil {
			t.Errorf("%x: no error", in)
		}
	}
}

func TestListpackInts(t *testing.T) {
	vals := []int64{0, 1, 127, 128, -1, -4096, 4095, 4096, -4097, 32767, -32768, 32768,
		1<<23 - 1, -1 << 23, 1 << 23, 1<<31 - 1, -1 << 31, 1 << 31, math.MaxInt64, math.MinInt64}
	var lp lpBuilder
	lp.reset(nil)
	strs := []string{"", "x", strings.Repeat("y", 63), strings.Repeat("z", 64), strings.Repeat("w", 4095),
		strings.Repeat("v", 4096), "-0", "01", "+1", "9223372036854775808"}
	for _, v := range vals {
		lp.add(strconv.FormatInt(v, 10))
	}
	for _, s := range strs {
		lp.add(s)
	}
	b := lp.finish()
	var got []string
	n, err := lpWalk(b, func(e elem) error { got = append(got, e.String()); return nil })
	if err != nil || n != len(vals)+len(strs) {
		t.Fatalf("walk: %d %v", n, err)
	}
	for i, v := range vals {
		if got[i] != strconv.FormatInt(v, 10) {
			t.Errorf("int %d read back as %s", v, got[i])
		}
	}
	for i, s := range strs {
		if got[len(vals)+i] != s {
			t.Errorf("string %q read back as %q", s, got[len(vals)+i])
		}
	}
	// The size the planner predicts is the size built.
	for _, s := range append(strs, "12345", "-70000", "4294967296") {
		lp.reset(nil)
		lp.add(s)
		if got := len(lp.finish()) - 7; got != lpEntrySize(s) {
			t.Errorf("%q: entry size %d, predicted %d", s, got, lpEntrySize(s))
		}
	}
}

func TestLengthEncoding(t *testing.T) {
	for _, n := range []uint64{0, 63, 64, 16383, 16384, math.MaxUint32, math.MaxUint32 + 1, math.MaxUint64} {
		b := appendLen(nil, n)
		s := source{buf: b}
		got, enc, err := s.readLen()
		if err != nil || enc || got != n || s.remaining() != 0 {
			t.Errorf("%d: %d %v %v", n, got, enc, err)
		}
	}
}

func TestStringEncodings(t *testing.T) {
	cases := []struct {
		in   string
		want string // hex prefix of the encoding
	}{
		{"12", "c00c"},
		{"-128", "c080"},
		{"128", "c18000"},
		{"-32769", "c2ff7fffff"},
		{"2147483648", "0a"}, // beyond int32: as text
		{"012", "03"},
		{"-0", "02"},
		{strings.Repeat("a", 100), "c3"},
		{"abcdefghijklmnopqrstuvwxyz", "1a"}, // incompressible: raw
	}
	for _, c := range cases {
		b := appendString(nil, c.in, true)
		if h := fmt.Sprintf("%x", b); !strings.HasPrefix(h, c.want) {
			t.Errorf("%q encoded as %s, want prefix %s", c.in, h, c.want)
		}
		s := source{buf: b}
		got, err := s.readString()
		if err != nil || string(got) != c.in || s.remaining() != 0 {
			t.Errorf("%q read back as %q (%v)", c.in, got, err)
		}
	}
}

// describe renders an entry's kind, encoding and content canonically, so
// two entries compare equal when they hold the same data the same way.
func describe(e *keyspace.Entry) string {
	var sb strings.Builder
	switch e.Kind {
	case keyspace.KindString:
		fmt.Fprintf(&sb, "string %q", e.Bytes())
		return sb.String()
	case keyspace.KindList:
		l := e.Obj().(*keyspace.List)
		fmt.Fprintf(&sb, "list %d:", l.Len())
		for i := 0; i < l.Len(); i++ {
			fmt.Fprintf(&sb, " %q", l.Index(i))
		}
	case keyspace.KindHash:
		h := e.Obj().(*keyspace.Hash)
		var kv []string
		h.Each(func(f, v string) bool { kv = append(kv, fmt.Sprintf("%q=%q", f, v)); return true })
		if !h.IsListpack() {
			slices.Sort(kv)
		}
		fmt.Fprintf(&sb, "hash %s %s", h.Encoding(), strings.Join(kv, " "))
	case keyspace.KindSet:
		st := e.Obj().(*keyspace.Set)
		var ms []string
		st.Each(func(m []byte) bool { ms = append(ms, strconv.Quote(string(m))); return true })
		slices.Sort(ms)
		fmt.Fprintf(&sb, "set %s %s", st.Encoding(), strings.Join(ms, " "))
	case keyspace.KindZSet:
		z := e.Obj().(*keyspace.ZSet)
		fmt.Fprintf(&sb, "zset %s", z.Encoding())
		for n := z.First(); n != nil; n = n.Next() {
			fmt.Fprintf(&sb, " %q=%v", n.Member, n.Score)
		}
	}
	return sb.String()
}

// randString returns a random string: often an integer, sometimes binary,
// sometimes long and repetitive (so LZF kicks in).
func randString(r *rand.Rand, maxLen int) string {
	switch r.IntN(6) {
	case 0:
		return strconv.FormatInt(r.Int64N(300)-150, 10)
	case 1:
		return strconv.FormatInt(int64(r.Uint64()), 10)
	case 2:
		b := make([]byte, r.IntN(maxLen+1))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	case 3:
		return strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(maxLen+1))
	}
	b := make([]byte, r.IntN(min(maxLen, 24)+1))
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

func randScore(r *rand.Rand) float64 {
	switch r.IntN(6) {
	case 0:
		return float64(r.IntN(1000) - 500)
	case 1:
		return math.Inf(1 - 2*r.IntN(2))
	case 2:
		return r.NormFloat64() * 1e300
	case 3:
		return float64(r.Int64N(1<<53) - 1<<52)
	}
	return r.Float64()*200 - 100
}

// randEntry returns a random value of a random kind and size.
func randEntry(r *rand.Rand) *keyspace.Entry {
	size := r.IntN(20)
	if r.IntN(4) == 0 {
		size = r.IntN(2000)
	}
	maxLen := 30
	if r.IntN(4) == 0 {
		maxLen = 200
	}
	switch r.IntN(6) {
	case 0:
		return keyspace.NewString([]byte(randString(r, maxLen*20)))
	case 1:
		l := keyspace.NewList()
		for i := 0; i <= size; i++ {
			l.PushBack(randString(r, maxLen))
		}
		return keyspace.NewObject(l)
	case 2:
		h := keyspace.NewHash()
		for i := 0; i <= size; i++ {
			h.SetString([]byte(randString(r, maxLen)), randString(r, maxLen))
		}
		return keyspace.NewObject(h)
	case 3:
		st := keyspace.NewSet()
		for i := 0; i <= size; i++ {
			if r.IntN(10) == 0 {
				st.AddString(randString(r, maxLen))
			} else {
				st.AddString(strconv.FormatInt(r.Int64N(1<<40)-1<<39, 10))
			}
		}
		return keyspace.NewObject(st)
	case 4:
		st := keyspace.NewSet()
		for i := 0; i <= size; i++ {
			st.AddString(randString(r, maxLen))
		}
		return keyspace.NewObject(st)
	}
	z := keyspace.NewZSet()
	for i := 0; i <= size; i++ {
		m := randString(r, maxLen)
		if z.Get([]byte(m)) == nil {
			z.Insert(m, randScore(r))
		}
	}
	return keyspace.NewObject(z)
}

func TestValueRoundTrip(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 2))
	for i := 0; i < 400; i++ {
		e := randEntry(r)
		want := describe(e)
		for _, compress := range []bool{true, false} {
			b := appendValue(nil, e, compress)
			b = append(b, "tail"...)
			got, rest, err := ParseValue(b)
			if err != nil {
				t.Fatalf("seed %d case %d: %v\n%s", seed, i, err, want)
			}
			if string(rest) != "tail" {
				t.Fatalf("seed %d case %d: rest %q", seed, i, rest)
			}
			if d := describe(got); d != want {
				t.Fatalf("seed %d case %d:\n got %.300s\nwant %.300s", seed, i, d, want)
			}
		}
		p := AppendDump(nil, e)
		got, err := ParseDump(p)
		if err != nil || describe(got) != want {
			t.Fatalf("seed %d case %d: dump round trip: %v", seed, i, err)
		}
		p[r.IntN(len(p))] ^= 1 << r.IntN(8)
		if _, err := ParseDump(p); err != ErrDumpPayload {
			t.Fatalf("seed %d case %d: flipped bit: %v", seed, i, err)
		}
	}
}

func TestParseDumpErrors(t *testing.T) {
	if _, err := ParseDump([]byte("short")); err != ErrDumpPayload {
		t.Fatal(err)
	}
	p := AppendDump(nil, keyspace.NewString([]byte("v")))
	p[len(p)-10] = 11 // version 11
	if _, err := ParseDump(p); err != ErrDumpPayload {
		t.Fatal(err)
	}
	// A good footer around garbage.
	bad := []byte{99, 1, 2}
	bad = append(bad, 10, 0)
	bad = append(bad, make([]byte, 8)...)
	crc := CRC64(0, bad[:len(bad)-8])
	for i := 0; i < 8; i++ {
		bad[len(bad)-8+i] = byte(crc >> (8 * i))
	}
	if _, err := ParseDump(bad); err != ErrBadDataFormat {
		t.Fatal(err)
	}
	if ErrDumpPayload.Error() != "ERR DUMP payload version or checksum are wrong" || ErrBadDataFormat.Error() != "ERR Bad data format" {
		t.Fatal("error texts changed")
	}
}

func TestFileRoundTrip(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 3))
	var want []string
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{})
	w.Header(Info{RedisVer: "7.0.15", CTime: 1700000000, UsedMem: 1 << 40, ReplID: strings.Repeat("a", 40)})
	w.Function("#!lua name=lib\nredis.register_function('f', function() return 1 end)")
	for db := 0; db < 3; db++ {
		w.SelectDB(db, 50, 10)
		for i := 0; i < 50; i++ {
			rec := &Record{DB: db, Key: []byte(fmt.Sprintf("k%d:%d", db, i)), Entry: randEntry(r)}
			if i%5 == 0 {
				rec.Expire = 1700000000000 + int64(i)
			}
			if i%7 == 0 {
				rec.Idle, rec.HasIdle = int64(i), true
			}
			if i%11 == 0 {
				rec.Freq, rec.HasFreq = uint8(i), true
			}
			if err := w.Key(rec); err != nil {
				t.Fatal(err)
			}
			want = append(want, fmt.Sprintf("%d %s %d %v%d %v%d %s", rec.DB, rec.Key, rec.Expire,
				rec.HasIdle, rec.Idle, rec.HasFreq, rec.Freq, describe(rec.Entry)))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	var aux []string
	var funcs int
	h := func(got *[]string) Handler {
		return Handler{
			Key: func(rec *Record) error {
				*got = append(*got, fmt.Sprintf("%d %s %d %v%d %v%d %s", rec.DB, rec.Key, rec.Expire,
					rec.HasIdle, rec.Idle, rec.HasFreq, rec.Freq, describe(rec.Entry)))
				return nil
			},
			Aux:      func(k, v []byte) error { aux = append(aux, string(k)+"="+string(v)); return nil },
			Function: func([]byte) error { funcs++; return nil },
		}
	}
	var got []string
	if err := Parse(file, h(&got)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("slice parse differs (seed %d)", seed)
	}
	if strings.Join(aux, ",") != "redis-ver=7.0.15,redis-bits=64,ctime=1700000000,used-mem=1099511627776,repl-stream-db=0,repl-id="+strings.Repeat("a", 40)+",repl-offset=0,aof-base=0" {
		t.Fatalf("aux: %v", aux)
	}
	// The stream reader, fed a byte or a few at a time, sees the same.
	var got2 []string
	rd := NewReader(&trickle{b: file, r: r})
	if err := rd.Run(h(&got2)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got2, want) || funcs != 2 {
		t.Fatalf("stream parse differs (seed %d), funcs %d", seed, funcs)
	}
	// Keys read raw (cut out of a stream that trickles in, so that values
	// straddle refills of the window) and decoded apart are the same too.
	var got3 []string
	var d Decoder
	hr := h(new([]string))
	hr.Raw = func(rec *Record, typ byte, body []byte, off int64) error {
		if off <= 0 || off >= int64(len(file)) {
			t.Fatalf("offset %d", off)
		}
		e, _, err := d.Decode(typ, body)
		if err != nil {
			return err
		}
		got3 = append(got3, fmt.Sprintf("%d %s %d %v%d %v%d %s", rec.DB, rec.Key, rec.Expire,
			rec.HasIdle, rec.Idle, rec.HasFreq, rec.Freq, describe(e)))
		return nil
	}
	if err := NewReader(&trickle{b: file, r: r}).Run(hr); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got3, want) {
		t.Fatalf("raw parse differs (seed %d)", seed)
	}
	// A value cut short is refused by its framing, before any decoding.
	if err := Parse(file[:len(file)/2], hr); err == nil {
		t.Fatal("raw parse of half a file succeeded")
	}
	// Without a Function handler the file is refused; a bad checksum too.
	if err := Parse(file, Handler{Key: func(*Record) error { return nil }}); err == nil || !strings.Contains(err.Error(), "function") {
		t.Fatalf("functions: %v", err)
	}
	file[len(file)-1] ^= 1
	if err := Parse(file, h(new([]string))); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("checksum: %v", err)
	}
}

// trickle is a reader that returns a few bytes per call.
type trickle struct {
	b []byte
	r *rand.Rand
}

func (t *trickle) Read(p []byte) (int, error) {
	if len(t.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), 1+t.r.IntN(300), len(t.b))
	copy(p, t.b[:n])
	t.b = t.b[n:]
	return n, nil
}
