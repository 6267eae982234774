package node

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/slotd/slotd/node/rdb"
)

// digestDataset returns the commands that build a data set holding every
// type and encoding redis-server 7.0 has (small and large collections,
// integers, binary strings, TTLs), and the keys it creates.
func digestDataset() (cmds [][]string, keys []string) {
	r := rand.New(rand.NewPCG(7, 11))
	add := func(key string, c ...[]string) {
		cmds = append(cmds, c...)
		keys = append(keys, key)
	}
	bin := make([]byte, 256)
	for i := range bin {
		bin[i] = byte(i)
	}
	noise := make([]byte, 5000)
	for i := range noise {
		noise[i] = byte(r.IntN(256))
	}
	strs := map[string]string{
		"s:small": "hello", "s:int": "12345", "s:neg": "-7", "s:max": "9223372036854775807",
		"s:min": "-9223372036854775808", "s:zero": "0", "s:lead": "007", "s:float": "3.14", "s:empty": "",
		"s:bin": string(bin), "s:long": strings.Repeat("abcdefgh", 300), "s:noise": string(noise),
		"s:44": strings.Repeat("x", 44), "s:45": strings.Repeat("y", 45),
	}
	for _, k := range slices.Sorted(maps.Keys(strs)) {
		add(k, []string{"SET", k, strs[k]})
	}
	add("s:ttl", []string{"SET", "s:ttl", "v", "PX", "100000000"})
	add("s:incr", []string{"SET", "s:incr", "1.5"}, []string{"INCRBYFLOAT", "s:incr", "2.25"})
	add("s:append", []string{"SET", "s:append", "12"}, []string{"APPEND", "s:append", "34"})

	// Lists: one listpack, one of several quicklist nodes, integers, big
	// elements (plain nodes need > 1 GB; big ones still split nodes).
	small := []string{"RPUSH", "l:small", "a", "1", "-2", "bb", "300000", "c"}
	add("l:small", small)
	big := []string{"RPUSH", "l:big"}
	for i := 0; i < 2000; i++ {
		if i%3 == 0 {
			big = append(big, strconv.Itoa(i*7919))
		} else {
			big = append(big, fmt.Sprintf("elem-%d-%s", i, strings.Repeat("z", i%40)))
		}
	}
	add("l:big", big)
	huge := []string{"LPUSH", "l:huge"}
	for i := 0; i < 5; i++ {
		huge = append(huge, strings.Repeat(string(rune('a'+i)), 10000))
	}
	add("l:huge", huge)
	add("l:ttl", []string{"RPUSH", "l:ttl", "x"}, []string{"PEXPIRE", "l:ttl", "100000000"})

	// Sets: intset, listpack-less 7.0 hashtable, big intset turned table.
	add("set:int", []string{"SADD", "set:int", "1", "-5", "70000", "5000000000", "0"})
	add("set:str", []string{"SADD", "set:str", "a", "b", "c", "12", "x y"})
	bigInts := []string{"SADD", "set:bigint"}
	for i := 0; i < 600; i++ {
		bigInts = append(bigInts, strconv.Itoa(i*3))
	}
	add("set:bigint", bigInts)
	bigSet := []string{"SADD", "set:big"}
	for i := 0; i < 1000; i++ {
		bigSet = append(bigSet, "m"+strconv.Itoa(i))
	}
	add("set:big", bigSet)

	// Hashes: listpack and hashtable (by count and by value size).
	add("h:small", []string{"HSET", "h:small", "f1", "v1", "f2", "22", "n", "-3", "e", ""})
	bigHash := []string{"HSET", "h:big"}
	for i := 0; i < 700; i++ {
		bigHash = append(bigHash, "field"+strconv.Itoa(i), strconv.Itoa(i*i))
	}
	add("h:big", bigHash)
	add("h:longval", []string{"HSET", "h:longval", "f", strings.Repeat("v", 100), "g", "1"})

	// Sorted sets: listpack and skiplist, odd scores.
	add("z:small", []string{"ZADD", "z:small", "1", "a", "2.5", "b", "-3", "c", "0.1", "d", "inf", "e", "-inf", "f", "1e300", "g", "3", "12"})
	bigZ := []string{"ZADD", "z:big"}
	for i := 0; i < 500; i++ {
		bigZ = append(bigZ, strconv.FormatFloat(r.Float64()*1000-500, 'g', -1, 64), "member:"+strconv.Itoa(i))
	}
	add("z:big", bigZ)
	add("z:longmember", []string{"ZADD", "z:longmember", "1", strings.Repeat("q", 80), "2", "short"})
	add("z:ttl", []string{"ZADD", "z:ttl", "1", "a"}, []string{"EXPIRE", "z:ttl", "100000"})
	return cmds, keys
}

// TestDigestLikeRedis loads the same data set into redis-server and slotd
// and compares DEBUG DIGEST and every DEBUG DIGEST-VALUE.
func TestDigestLikeRedis(t *testing.T) {
	ref := startRedis(t).dial(t)
	_, addr := startTCP(t, "enable-debug-command", "yes")
	sd := (&refServer{addr: addr}).dial(t)
	cmds, keys := digestDataset()
	for _, c := range cmds {
		want := ref.do(t, c...)
		if got := sd.do(t, c...); got != want {
			t.Fatalf("%.60q: slotd %q, redis-server %q", c, got, want)
		}
	}
	same := func(args ...string) {
		t.Helper()
		want := ref.do(t, args...)
		if got := sd.do(t, args...); got != want {
			t.Fatalf("%q:\nslotd        %q\nredis-server %q", args, got, want)
		}
	}
	same("DEBUG", "DIGEST")
	for _, k := range keys {
		same("DEBUG", "DIGEST-VALUE", k)
	}
	same("DEBUG", "DIGEST-VALUE", "s:small", "missing", "z:big")
	// Database numbers are part of the digest.
	same("SELECT", "3")
	same("SET", "in3", "x")
	same("DEBUG", "DIGEST")
	same("FLUSHALL")
	same("DEBUG", "DIGEST")
}

// TestDumpRestoreInterop moves every type and encoding from redis-server
// to slotd with DUMP/RESTORE and back, checking contents by digest.
func TestDumpRestoreInterop(t *testing.T) {
	ref := startRedis(t).dial(t)
	_, addr := startTCP(t, "enable-debug-command", "yes")
	sd := (&refServer{addr: addr}).dial(t)
	cmds, keys := digestDataset()
	for _, c := range cmds {
		ref.do(t, c...)
	}
	bulk := func(raw string) string {
		t.Helper()
		v := parseReply(t, raw)
		if v.kind != '$' {
			t.Fatalf("not a bulk reply: %q", raw)
		}
		return v.str
	}
	// redis-server -> slotd, keeping TTLs.
	for _, k := range keys {
		payload := bulk(ref.do(t, "DUMP", k))
		pttl := parseReply(t, ref.do(t, "PTTL", k)).num
		if pttl < 0 {
			pttl = 0
		}
		if got := sd.do(t, "RESTORE", k, strconv.FormatInt(pttl, 10), payload); got != "+OK\r\n" {
			t.Fatalf("RESTORE %s in slotd: %q", k, got)
		}
		if a, b := sd.do(t, "DEBUG", "DIGEST-VALUE", k), ref.do(t, "DEBUG", "DIGEST-VALUE", k); a != b {
			t.Fatalf("%s differs after RESTORE in slotd: %q vs %q", k, a, b)
		}
		// A string APPEND left raw is loaded int-encoded by redis-server
		// too.
		if a, b := sd.do(t, "OBJECT", "ENCODING", k), ref.do(t, "OBJECT", "ENCODING", k); a != b && k != "s:append" {
			t.Errorf("%s encoding: slotd %q, redis-server %q", k, a, b)
		}
	}
	if a, b := sd.do(t, "DEBUG", "DIGEST"), ref.do(t, "DEBUG", "DIGEST"); a != b {
		t.Fatalf("dataset digests differ: slotd %q, redis-server %q", a, b)
	}
	want := ref.do(t, "DEBUG", "DIGEST")
	// slotd -> redis-server.
	ref.do(t, "FLUSHALL")
	for _, k := range keys {
		payload := bulk(sd.do(t, "DUMP", k))
		pttl := parseReply(t, sd.do(t, "PTTL", k)).num
		if pttl < 0 {
			pttl = 0
		}
		if got := ref.do(t, "RESTORE", k, strconv.FormatInt(pttl, 10), payload); got != "+OK\r\n" {
			t.Fatalf("RESTORE %s in redis-server: %q", k, got)
		}
	}
	if got := ref.do(t, "DEBUG", "DIGEST"); got != want {
		t.Fatalf("digest after the round trip %q, want %q", got, want)
	}
}

// TestRestoreRepliesLikeRedis runs RESTORE's options and errors on both
// servers and compares the replies byte for byte.
func TestRestoreRepliesLikeRedis(t *testing.T) {
	ref := startRedis(t).dial(t)
	_, addr := startTCP(t, "enable-debug-command", "yes")
	sd := (&refServer{addr: addr}).dial(t)
	ref.do(t, "RPUSH", "src", "a", "b", "1")
	good := parseReply(t, ref.do(t, "DUMP", "src")).str
	ref.do(t, "SET", "str", "value")
	goodStr := parseReply(t, ref.do(t, "DUMP", "str")).str
	ref.do(t, "DEL", "src", "str")
	badCRC := good[:len(good)-1] + string(good[len(good)-1]^1)
	newer := []byte(good)
	newer[len(newer)-10] = 11
	// Values that do not decode, behind a correct footer.
	forge := func(body ...byte) string {
		b := binary.LittleEndian.AppendUint16(body, 10)
		return string(binary.LittleEndian.AppendUint64(b, rdb.CRC64(0, b)))
	}
	steps := [][]string{
		{"DUMP", "nokey"},
		{"RESTORE", "k", "0", good},
		{"TYPE", "k"},
		{"LRANGE", "k", "0", "-1"},
		{"RESTORE", "k", "0", good},
		{"RESTORE", "k", "0", goodStr, "REPLACE"},
		{"GET", "k"},
		{"RESTORE", "k2", "abc", good},
		{"RESTORE", "k2", "-1", good},
		{"RESTORE", "k", "-1", good},
		{"RESTORE", "k2", "0", "short"},
		{"RESTORE", "k2", "0", ""},
		{"RESTORE", "k2", "0", badCRC},
		{"RESTORE", "k2", "0", string(newer)},
		{"RESTORE", "k2", "0", good, "FOO"},
		{"RESTORE", "k2", "0", forge(200, 1, 2)},
		{"RESTORE", "k2", "0", forge(0)},
		{"RESTORE", "k2", "0", forge(18, 0)},
		{"RESTORE", "k2", "0", forge(2, 0)},
		{"RESTORE", "k2", "0", forge(0, 0x45, 'a')},
		{"RESTORE", "k2", "0", forge(0, 1, 'a', 'b', 'c')},
		{"EXISTS", "k2"},
		{"RESTORE", "k", "0", forge(200), "REPLACE"},
		{"EXISTS", "k"},
		{"RESTORE", "k2", "0", good, "IDLETIME"},
		{"RESTORE", "k2", "0", good, "IDLETIME", "-1"},
		{"RESTORE", "k2", "0", good, "IDLETIME", "x"},
		{"RESTORE", "k2", "0", good, "FREQ", "256"},
		{"RESTORE", "k2", "0", good, "FREQ", "-1"},
		{"RESTORE", "k2", "0", good, "FREQ", "5", "IDLETIME", "10"},
		{"RESTORE", "k2", "0", good, "IDLETIME", "10", "FREQ", "5"},
		{"RESTORE", "k2", "0", good, "IDLETIME", "1000", "REPLACE"},
		{"OBJECT", "IDLETIME", "k2"},
		{"RESTORE", "k3", "0", good, "FREQ", "100"},
		{"EXISTS", "k3"},
		{"RESTORE", "k4", "1", good, "ABSTTL"},
		{"EXISTS", "k4"},
		{"RESTORE", "k", "1", good, "ABSTTL", "REPLACE"},
		{"EXISTS", "k"},
		{"RESTORE", "k5", "4000000000000", good, "ABSTTL"},
		{"PEXPIRETIME", "k5"},
		{"RESTORE", "k6", "100000", good},
		{"TTL", "k6"},
		{"RESTORE-ASKING", "k7", "0", goodStr},
		{"GET", "k7"},
		{"RESTORE", "k8", "0", good, "replace", "absttl"},
		{"RESTORE"},
		{"RESTORE", "k"},
	}
	for _, s := range steps {
		want := ref.do(t, s...)
		if got := sd.do(t, s...); got != want {
			t.Fatalf("%.80q:\nslotd        %q\nredis-server %q", s, got, want)
		}
	}
}
