package rdb

import (
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"
)

// Encodings redis-server 7.0 still loads but no longer writes, spelled out
// byte by byte from the format description (so they do not depend on this
// package's writers).
var oldValues = []struct {
	name, hex, want string
}{
	{"list as ziplist", "0a1b" + zlListHex, `list 4: "a" "5" "300" "hello"`},
	{"quicklist of ziplists", "0e011b" + zlListHex, `list 4: "a" "5" "300" "hello"`},
	{"quicklist 2, plain node", "120101036162" + "63", `list 1: "abc"`},
	{"plain list", "010201" + "61" + "c005", `list 2: "a" "5"`},
	{"plain set", "0202016101" + "62", `set hashtable "a" "b"`},
	{"plain set of ints", "020201" + "31" + "c0ff", `set intset "-1" "1"`},
	{"zset with text scores", "030201610331" + "2e35" + "0162fe", `zset listpack "a"=1.5 "b"=+Inf`},
	{"zset text NaN score is refused", "0301016101fd", ""},
	{"zipmap hash", "0912" + "0203666f6f0300626172" + "016e02013132" + "78ff", `hash listpack "foo"="bar" "n"="12"`},
	{"zset as ziplist", "0c18" + "18000000120000000400" + "000161" + "03f2" + "020162" + "0303322e35" + "ff", `zset listpack "a"=1 "b"=2.5`},
	{"hash as ziplist", "0d11" + "110000000d0000000200" + "000166" + "030176" + "ff", `hash listpack "f"="v"`},
	{"hash as ziplist, duplicate field", "0d17" + "17000000130000000400" + "000166" + "030176" + "030166" + "030177" + "ff", ""},
	{"7.2 set listpack", "140f" + "0f0000000300" + "8161" + "02" + "8162" + "02" + "0701ff", `set hashtable "7" "a" "b"`},
	{"empty ziplist list", "0a0b" + "0b0000000a0000000000ff", ""},
}

// A ziplist of "a", 5 (4-bit immediate), 300 (int16) and "hello".
const zlListHex = "1b000000130000000400" + "000161" + "03f6" + "02c02c01" + "040568656c6c6f" + "ff"

func TestOldEncodings(t *testing.T) {
	for _, c := range oldValues {
		b, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		e, rest, err := ParseValue(b)
		if c.want == "" {
			if err == nil {
				t.Errorf("%s: accepted: %s", c.name, describe(e))
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if len(rest) != 0 {
			t.Errorf("%s: %d bytes left", c.name, len(rest))
		}
		if got := describe(e); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// oldFile builds a file of the given version around body, with the CRC
// trailer from version 5 on.
func oldFile(version string, body string) []byte {
	b, _ := hex.DecodeString(body)
	f := append([]byte("REDIS"+version), b...)
	f = append(f, opEOF)
	if version >= "0005" {
		f = binary.LittleEndian.AppendUint64(f, CRC64(0, f))
	}
	return f
}

func TestOldFiles(t *testing.T) {
	// Version 4: no checksum; version 6: expiry in seconds.
	for _, f := range [][]byte{
		oldFile("0004", "fe00"+"00016b0176"),
		oldFile("0006", "fe00"+"fd00e1f505"+"00016b0176"),
	} {
		var got []string
		err := Parse(f, Handler{Key: func(r *Record) error {
			got = append(got, string(r.Key)+" "+describe(r.Entry))
			return nil
		}})
		if err != nil || len(got) != 1 || got[0] != `k string "v"` {
			t.Errorf("%q: %v %v", f[:9], got, err)
		}
	}
	var exp int64
	Parse(oldFile("0006", "fe00"+"fd00e1f505"+"00016b0176"), Handler{Key: func(r *Record) error { exp = r.Expire; return nil }})
	if exp != 100000000*1000 {
		t.Errorf("seconds expiry read as %d ms", exp)
	}
	// Module auxiliary data: refused by default, skipped on request; a
	// zero checksum is not checked.
	mod := "f7" + "81" + "3c4d6f6f4d4f4400" + "02" + "02" + "05" + "0178" + "02" + "07" + "00" + "fe00" + "00016b0176"
	f := oldFile("0009", mod)
	if err := Parse(f, Handler{Key: func(*Record) error { return nil }}); err == nil || !strings.Contains(err.Error(), "module") {
		t.Errorf("module aux: %v", err)
	}
	var names []string
	n := 0
	err := Parse(f, Handler{Key: func(*Record) error { n++; return nil }, ModuleAux: func(m string) error { names = append(names, m); return nil }})
	if err != nil || n != 1 || len(names) != 1 {
		t.Errorf("module aux skipped: %v %d %v", err, n, names)
	}
	f = oldFile("0009", "fe00"+"00016b0176")
	clear(f[len(f)-8:])
	if err := Parse(f, Handler{Key: func(*Record) error { return nil }}); err != nil {
		t.Errorf("zero checksum: %v", err)
	}
	if err := Parse([]byte("REDIS0012\xff"), Handler{}); err == nil {
		t.Error("version 12 accepted")
	}
}
