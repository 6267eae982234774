package rdb

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/slotd/slotd/node/keyspace"
)

// benchFile is a file of n keys of mixed types, mostly short strings.
func benchFile(b *testing.B, n int) []byte {
	r := rand.New(rand.NewPCG(1, 1))
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{})
	w.SelectDB(0, uint64(n), 0)
	for i := 0; i < n; i++ {
		e := smallEntry(r)
		if i%4 != 0 {
			e = newStr(fmt.Sprintf("value:%d", i))
		}
		w.Key(&Record{Key: []byte(fmt.Sprintf("key:%d", i)), Entry: e})
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func BenchmarkParseFile(b *testing.B) {
	file := benchFile(b, 20000)
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		if err := NewReader(bytes.NewReader(file)).Run(Handler{Key: func(*Record) error { return nil }}); err != nil {
			b.Fatal(err)
		}
	}
}

func newStr(s string) *keyspace.Entry { return keyspace.NewString([]byte(s)) }

func BenchmarkWriteFile(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	recs := make([]Record, 20000)
	for i := range recs {
		e := smallEntry(r)
		if i%4 != 0 {
			e = newStr(fmt.Sprintf("value:%d:with-some-longer-text", i))
		}
		recs[i] = Record{Key: []byte(fmt.Sprintf("key:%d:and-a-longer-key-name", i)), Entry: e}
	}
	b.ReportAllocs()
	for b.Loop() {
		w := NewWriter(io.Discard, Options{})
		for i := range recs {
			w.Key(&recs[i])
		}
		w.Close()
	}
}
