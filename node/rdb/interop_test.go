package rdb

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Ports 26010-26019 are this package's.
const (
	portDump  = 26010
	portSave  = 26011
	portWrite = 26012
)

// fixture is a key the interop tests create in redis-server; exact marks
// values whose encoded bytes are fully determined by their content (no
// hash-table order, no list built from the head, no skiplist levels),
// which slotd must then reproduce byte for byte and which a RESTORE must
// rebuild with the same memory use.
type fixture struct {
	key   string
	exact bool
}

// reencoded are strings whose in-memory encoding any load changes in
// redis-server itself (a raw string a load makes embstr or int).
var reencoded = map[string]bool{"s:hll": true, "s:append": true}

// fill creates every type and encoding in redis-server's db 0.
func fill(c *rconn) []fixture {
	var fx []fixture
	add := func(key string, exact bool, cmds ...[]any) {
		for _, cmd := range cmds {
			c.do(cmd...)
		}
		fx = append(fx, fixture{key, exact})
	}
	bin := make([]byte, 256)
	for i := range bin {
		bin[i] = byte(i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, 3000)
	for i := range noise {
		noise[i] = byte(r.IntN(256))
	}
	for k, v := range map[string]string{
		"s:small": "hello", "s:int": "12345", "s:neg": "-7", "s:i64": "9223372036854775807",
		"s:i64min": "-9223372036854775808", "s:zero": "0", "s:lead": "007", "s:float": "3.14", "s:empty": "",
		"s:bin": string(bin), "s:long": strings.Repeat("abcdefgh", 200), "s:noise": string(noise),
		"s:44": strings.Repeat("x", 44), "s:45": strings.Repeat("y", 45), "s:int32": "2147483647", "s:int33": "2147483648",
	} {
		add(k, true, []any{"SET", k, v})
	}
	add("s:hll", true, []any{"PFADD", "s:hll", "a", "b", "c"})
	add("s:append", true, []any{"SET", "s:append", "12"}, []any{"APPEND", "s:append", "34"})

	add("l:small", true, []any{"RPUSH", "l:small", "a", "1", "-2", "300", "70000", "-9000000", "5000000000", strings.Repeat("x", 100), ""})
	var big []any
	for i := 0; i < 3000; i++ {
		switch {
		case i%50 == 0:
			big = append(big, strings.Repeat(strconv.Itoa(i), 300))
		case i%2 == 0:
			big = append(big, i*7919-10000)
		default:
			big = append(big, fmt.Sprintf("item-%d", i))
		}
	}
	add("l:big", true, append([]any{"RPUSH", "l:big"}, big...))
	add("l:wide", true, []any{"RPUSH", "l:wide", "a", strings.Repeat("w", 10000), "b", strings.Repeat("v", 20000), "c"})
	add("l:lpush", false, append([]any{"LPUSH", "l:lpush"}, big[:500]...))

	add("h:small", true, []any{"HSET", "h:small", "f1", "v1", "f2", "123", "f3", "-5", "", "empty", "n", strings.Repeat("z", 64)})
	var hb []any
	for i := 0; i < 600; i++ {
		hb = append(hb, fmt.Sprintf("field:%d", i), i*31)
	}
	add("h:big", false, append([]any{"HSET", "h:big"}, hb...))
	add("h:longval", false, []any{"HSET", "h:longval", "a", "1", "b", strings.Repeat("q", 65)})

	add("set:int16", true, []any{"SADD", "set:int16", 1, 2, 3, -5, 32767})
	add("set:int32", true, []any{"SADD", "set:int32", 100000, -100000, 7})
	add("set:int64", true, []any{"SADD", "set:int64", 1, 5000000000, -9223372036854775808})
	var sb []any
	for i := 0; i < 600; i++ {
		sb = append(sb, i*3)
	}
	add("set:bigint", false, append([]any{"SADD", "set:bigint"}, sb...))
	add("set:str", false, []any{"SADD", "set:str", "a", "b", "c", strings.Repeat("long", 40)})
	add("set:mixed", false, []any{"SADD", "set:mixed", "1", "a", "-3"})

	add("z:small", true, []any{"ZADD", "z:small", 1, "a", 2.5, "b", -3, "c", "inf", "d", "-inf", "e", 0.1, "f",
		"1e300", "g", "4503599627370496", "i", "-4503599627370495", "j", "123456789012", "k", "1.5e-10", "l", 7, "123"})
	var zb []any
	for i := 0; i < 200; i++ {
		zb = append(zb, float64(i%37)*1.25, fmt.Sprintf("m%d", i))
	}
	add("z:big", true, append([]any{"ZADD", "z:big"}, zb...))
	add("z:long", true, []any{"ZADD", "z:long", 1, "a", 2, strings.Repeat("m", 65)})
	add("z:negzero", true, []any{"ZADD", "z:negzero", "-0", "a", "0", "b"})

	future := time.Now().Add(24*time.Hour).UnixMilli() / 1000 * 1000
	for i, k := range []string{"s:small", "h:small", "z:big", "l:big", "set:str"} {
		c.do("PEXPIREAT", k, future+int64(i))
	}
	return fx
}

// describeRedis renders a key as redis-server reports it, in describe's
// format.
func describeRedis(c *rconn, key string) string {
	c.t.Helper()
	switch typ := c.str("TYPE", key); typ {
	case "string":
		return fmt.Sprintf("string %q", c.str("GET", key))
	case "list":
		vs := c.strs("LRANGE", key, 0, -1)
		var sb strings.Builder
		fmt.Fprintf(&sb, "list %d:", len(vs))
		for _, v := range vs {
			fmt.Fprintf(&sb, " %q", v)
		}
		return sb.String()
	case "hash":
		enc := c.str("OBJECT", "ENCODING", key)
		vs := c.strs("HGETALL", key)
		var kv []string
		for i := 0; i+1 < len(vs); i += 2 {
			kv = append(kv, fmt.Sprintf("%q=%q", vs[i], vs[i+1]))
		}
		if enc != "listpack" {
			slices.Sort(kv)
		}
		return fmt.Sprintf("hash %s %s", enc, strings.Join(kv, " "))
	case "set":
		enc := c.str("OBJECT", "ENCODING", key)
		var ms []string
		for _, m := range c.strs("SMEMBERS", key) {
			ms = append(ms, strconv.Quote(m))
		}
		slices.Sort(ms)
		return fmt.Sprintf("set %s %s", enc, strings.Join(ms, " "))
	case "zset":
		var sb strings.Builder
		fmt.Fprintf(&sb, "zset %s", c.str("OBJECT", "ENCODING", key))
		vs := c.strs("ZRANGE", key, 0, -1, "WITHSCORES")
		for i := 0; i+1 < len(vs); i += 2 {
			f, err := strconv.ParseFloat(vs[i+1], 64)
			if err != nil {
				c.t.Fatalf("score %q: %v", vs[i+1], err)
			}
			fmt.Fprintf(&sb, " %q=%v", vs[i], f)
		}
		return sb.String()
	default:
		c.t.Fatalf("key %s has type %s", key, typ)
	}
	return ""
}

func TestRedisDumpInterop(t *testing.T) {
	c := startRedis(t, portDump, t.TempDir())
	fx := fill(c)
	for _, f := range fx {
		want := describeRedis(c, f.key)
		payload := c.str("DUMP", f.key)
		e, err := ParseDump([]byte(payload))
		if err != nil {
			t.Errorf("%s: ParseDump of redis-server's DUMP: %v", f.key, err)
			continue
		}
		if got := describe(e); got != want {
			t.Errorf("%s: parsed DUMP differs:\n got %.400s\nwant %.400s", f.key, got, want)
			continue
		}
		// slotd's payload restores into the same value, encoding and
		// memory.
		// Same key length, so MEMORY USAGE compares; same expiry, so the
		// digests do.
		back := strings.ToUpper(f.key)
		ttl, _ := c.do("PEXPIRETIME", f.key).(int64)
		if v, err := c.try("RESTORE", back, max(ttl, 0), AppendDump(nil, e), "ABSTTL"); err != nil || v != "OK" {
			t.Errorf("%s: RESTORE of slotd's payload: %v %v", f.key, v, err)
			continue
		}
		if got := describeRedis(c, back); got != want {
			t.Errorf("%s: restored copy differs:\n got %.400s\nwant %.400s", f.key, got, want)
		}
		if a, b := fmt.Sprint(c.do("DEBUG", "DIGEST-VALUE", f.key)), fmt.Sprint(c.do("DEBUG", "DIGEST-VALUE", back)); a != b {
			t.Errorf("%s: digest %s, restored %s", f.key, a, b)
		}
		if reencoded[f.key] {
			continue
		}
		if a, b := c.str("OBJECT", "ENCODING", f.key), c.str("OBJECT", "ENCODING", back); a != b {
			t.Errorf("%s: encoding %s, restored %s", f.key, a, b)
		}
		ma, mb := c.str("MEMORY", "USAGE", f.key), c.str("MEMORY", "USAGE", back)
		if ma != mb {
			if f.exact && c.str("OBJECT", "ENCODING", f.key) != "skiplist" {
				t.Errorf("%s: MEMORY USAGE %s, restored %s", f.key, ma, mb)
			} else {
				t.Logf("%s: MEMORY USAGE %s, restored %s (layout not reproducible)", f.key, ma, mb)
			}
		}
	}
	for _, f := range fx {
		// Without compression, the encodings must match byte for byte.
		e, err := ParseDump([]byte(c.str("DUMP", f.key)))
		if err == nil && f.exact {
			c.do("CONFIG", "SET", "rdbcompression", "no")
			raw := c.str("DUMP", f.key)
			c.do("CONFIG", "SET", "rdbcompression", "yes")
			if mine := appendDump(nil, e, false); !bytes.Equal(mine, []byte(raw)) {
				t.Errorf("%s: uncompressed DUMP differs:\n got %x\nwant %x", f.key, trim(mine), trim([]byte(raw)))
			}
		}
	}
	// redis-server's error for a payload slotd rejects, and the reverse.
	if _, err := c.try("RESTORE", "bad", 0, "\x00\x01a\x0b\x00xxxxxxxx"); err == nil || err.Error() != ErrDumpPayload.Error() {
		t.Errorf("redis-server on a bad footer: %v", err)
	}
}

func trim(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}

func TestRedisSaveParse(t *testing.T) {
	dir := t.TempDir()
	c := startRedis(t, portSave, dir)
	fx := fill(c)
	c.do("SELECT", 3)
	c.do("SET", "db3key", "x")
	c.do("SELECT", 0)
	want := map[string]string{"3/db3key": `string "x"`}
	exp := map[string]int64{}
	for _, f := range fx {
		want["0/"+f.key] = describeRedis(c, f.key)
		if ms, _ := c.do("PEXPIRETIME", f.key).(int64); ms > 0 {
			exp["0/"+f.key] = ms
		}
	}
	c.do("SAVE")
	file, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{false, true} {
		got := map[string]string{}
		aux := map[string]string{}
		h := Handler{
			Key: func(r *Record) error {
				k := fmt.Sprintf("%d/%s", r.DB, r.Key)
				got[k] = describe(r.Entry)
				if r.Expire != exp[k] {
					t.Errorf("%s: expire %d, want %d", k, r.Expire, exp[k])
				}
				return nil
			},
			Aux: func(k, v []byte) error { aux[string(k)] = string(v); return nil },
		}
		if stream {
			err = NewReader(bytes.NewReader(file)).Run(h)
		} else {
			err = Parse(file, h)
		}
		if err != nil {
			t.Fatalf("stream %v: %v", stream, err)
		}
		if aux["redis-ver"] != "7.0.15" || aux["redis-bits"] != "64" {
			t.Errorf("aux fields: %v", aux)
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("stream %v: %s:\n got %.300s\nwant %.300s", stream, k, got[k], w)
			}
		}
		if len(got) != len(want) {
			t.Errorf("stream %v: %d keys, want %d", stream, len(got), len(want))
		}
	}
}

func TestWriterLoadsInRedis(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 4))
	dir := t.TempDir()
	path := filepath.Join(dir, "slotd.rdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, Options{})
	w.Header(Info{RedisVer: "7.0.15", CTime: time.Now().Unix(), UsedMem: 1 << 20})
	type kv struct {
		db     int
		key    string
		desc   string
		expire int64
	}
	var all []kv
	future := time.Now().Add(time.Hour).UnixMilli()
	for db := 0; db < 3; db++ {
		n := 100 + 50*db
		w.SelectDB(db, uint64(n), 0)
		for i := 0; i < n; i++ {
			rec := &Record{DB: db, Key: []byte(fmt.Sprintf("key:%d:%d", db, i)), Entry: randEntry(r)}
			if i%4 == 0 {
				rec.Expire = future + int64(i)
			}
			if err := w.Key(rec); err != nil {
				t.Fatal(err)
			}
			all = append(all, kv{db, string(rec.Key), describe(rec.Entry), rec.Expire})
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := exec.Command("redis-check-rdb", path).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-check-rdb refuses slotd's file: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "RDB looks OK") {
		t.Errorf("redis-check-rdb: %s", out)
	}
	c := startRedis(t, portWrite, dir, "--dbfilename", "slotd.rdb")
	for _, k := range all {
		c.do("SELECT", k.db)
		if got := describeRedis(c, k.key); got != k.desc {
			t.Errorf("db %d %s:\n got %.300s\nwant %.300s", k.db, k.key, got, k.desc)
		}
		ms, _ := c.do("PEXPIRETIME", k.key).(int64)
		if k.expire == 0 && ms != -1 || k.expire != 0 && ms != k.expire {
			t.Errorf("db %d %s: PEXPIRETIME %d, want %d", k.db, k.key, ms, k.expire)
		}
		// And the value slotd reads from redis-server's DUMP is the same.
		e, err := ParseDump([]byte(c.str("DUMP", k.key)))
		if err != nil || describe(e) != k.desc {
			t.Errorf("db %d %s: DUMP read back: %v", k.db, k.key, err)
		}
	}
}
