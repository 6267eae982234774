package rdb

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/slotd/slotd/node/keyspace"
)

// smallEntry is a random entry that encodes in under 1 KB: the fuzzer
// minimizes every new input it finds, which takes too long on big ones.
func smallEntry(r *rand.Rand) *keyspace.Entry {
	for {
		if e := randEntry(r); len(AppendValue(nil, e)) < 1024 {
			return e
		}
	}
}

// Fuzz seeds: values of every kind and encoding as slotd writes them, and
// the older encodings.
func fuzzSeeds() [][]byte {
	r := rand.New(rand.NewPCG(7, 7))
	var seeds [][]byte
	for i := 0; i < 30; i++ {
		e := smallEntry(r)
		if i%3 == 0 {
			seeds = append(seeds, appendValue(nil, e, false))
		} else {
			seeds = append(seeds, AppendValue(nil, e))
		}
	}
	for _, c := range oldValues {
		b, _ := hex.DecodeString(c.hex)
		seeds = append(seeds, b)
	}
	return seeds
}

// checkEntry walks a decoded entry, so that a structurally broken value
// (not just a wrong one) shows up, and re-encodes it.
func checkEntry(t *testing.T, e *keyspace.Entry) {
	d := describe(e)
	got, _, err := ParseValue(AppendValue(nil, e))
	if err != nil {
		t.Fatalf("re-encoded value does not parse: %v", err)
	}
	if describe(got) != d {
		t.Fatalf("re-encoding changed the value:\n%s\n%s", describe(got), d)
	}
}

func FuzzParseValue(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, rest, err := ParseValue(b)
		if err != nil {
			return
		}
		if len(rest) > len(b) {
			t.Fatal("rest longer than input")
		}
		checkEntry(t, e)
	})
}

func FuzzParseDump(f *testing.F) {
	r := rand.New(rand.NewPCG(8, 8))
	for i := 0; i < 20; i++ {
		f.Add(AppendDump(nil, smallEntry(r)))
	}
	f.Add([]byte("\x00\xc0\n\n\x00n\x9fWE\x0e\xaec\xbb"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseDump(b)
		if err != nil {
			if err != ErrDumpPayload && err != ErrBadDataFormat {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		checkEntry(t, e)
	})
}

func FuzzReader(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 9))
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{})
	w.Header(Info{RedisVer: "7.0.15", CTime: 1, UsedMem: 2})
	w.SelectDB(0, 3, 1)
	for i := 0; i < 3; i++ {
		w.Key(&Record{Key: []byte{'k', byte('0' + i)}, Entry: smallEntry(r), Expire: int64(i)})
	}
	w.Close()
	f.Add(buf.Bytes())
	f.Add(oldFile("0004", "fe00"+"00016b0176"))
	f.Add(oldFile("0006", "fe00"+"fd00e1f505"+"00016b0176"))
	f.Add(oldFile("0009", "f7813c4d6f6f4d4f440002020501780207"+"00"+"fe00"+"00016b0176"))
	f.Add(oldFile("0010", "f80a"+"f905"+"0a016b1b"+zlListHex))
	f.Fuzz(func(t *testing.T, b []byte) {
		h := Handler{
			Key:       func(r *Record) error { checkEntry(t, r.Entry); return nil },
			Function:  func([]byte) error { return nil },
			ModuleAux: func(string) error { return nil },
		}
		errSlice := Parse(b, h)
		errStream := NewReader(bytes.NewReader(b)).Run(h)
		if (errSlice == nil) != (errStream == nil) {
			t.Fatalf("slice and stream readers disagree: %v / %v", errSlice, errStream)
		}
	})
}

// A length field that claims gigabytes must cost nothing until the bytes
// are really there.
func TestHugeLengthsDoNotAllocate(t *testing.T) {
	cases := [][]byte{
		{TypeString, 0x80, 0xff, 0xff, 0xff, 0xff, 'a'},
		{TypeString, 0x81, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 'a'},
		{TypeString, 0xc3, 0x80, 0xff, 0xff, 0xff, 0xff, 0x80, 0xff, 0xff, 0xff, 0xff, 0, 'a'},
		{TypeString, 0xc3, 0x02, 0x80, 0xff, 0xff, 0xff, 0xff, 0, 'a'},
		{TypeList, 0x80, 0xff, 0xff, 0xff, 0xff, 0x01, 'a'},
		{TypeHashListpack, 0x10, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff},
		{TypeSetIntset, 0x0c, 8, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4},
	}
	var ms runtime.MemStats
	for i, c := range cases {
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		if _, _, err := ParseValue(c); err == nil {
			t.Errorf("case %d accepted", i)
		}
		file := append([]byte("REDIS0010\xfe\x00"), c[0], 1, 'k')
		file = append(file, c[1:]...)
		if err := NewReader(bytes.NewReader(file)).Run(Handler{Key: func(*Record) error { return nil }}); err == nil {
			t.Errorf("case %d accepted by the stream reader", i)
		}
		runtime.ReadMemStats(&ms)
		if d := ms.TotalAlloc - before; d > 4<<20 {
			t.Errorf("case %d allocated %d bytes", i, d)
		}
	}
}
