package e2e

import (
	"bufio"
	"reflect"
	"strings"
	"testing"
)

// The reply reader and the script parser are the ruler the diff suite
// measures with: check them on their own.

func TestReadReplyExactBytes(t *testing.T) {
	replies := []string{
		"+OK\r\n", "-ERR x\r\n", ":12\r\n", "$-1\r\n", "$0\r\n\r\n", "$4\r\na\r\nb\r\n",
		"*-1\r\n", "*0\r\n", "*2\r\n$1\r\na\r\n*1\r\n:1\r\n", "_\r\n", ",1.5\r\n", "#t\r\n",
		"(123456789012345678901234567890\r\n", "=7\r\ntxt:abc\r\n", "%1\r\n+k\r\n~2\r\n:1\r\n:2\r\n",
		">2\r\n+message\r\n$1\r\nx\r\n", "|1\r\n+a\r\n:1\r\n+OK\r\n", "!3\r\nerr\r\n",
	}
	stream := strings.Join(replies, "")
	r := bufio.NewReader(strings.NewReader(stream))
	for _, want := range replies {
		rp, err := readReply(r)
		if err != nil {
			t.Fatalf("%q: %v", want, err)
		}
		if string(rp.Raw) != want {
			t.Errorf("raw %q, want %q", rp.Raw, want)
		}
		if got := string(rp.encode(nil)); got != want {
			t.Errorf("encode %q, want %q", got, want)
		}
	}
	for _, bad := range []string{"+OK\n", "$3\r\nab\r\n", "?x\r\n", "*1\r\n", "$x\r\n"} {
		if _, err := readReply(bufio.NewReader(strings.NewReader(bad))); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestReplySortAndMask(t *testing.T) {
	read := func(s string) *reply {
		rp, err := readReply(bufio.NewReader(strings.NewReader(s)))
		if err != nil {
			t.Fatal(err)
		}
		return rp
	}
	rp := read("*3\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nb\r\n")
	rp.sortElems(1, false)
	if got := string(rp.encode(nil)); got != "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n" {
		t.Errorf("sort: %q", got)
	}
	rp = read("*4\r\n$1\r\nz\r\n$1\r\n1\r\n$1\r\na\r\n$1\r\n2\r\n")
	rp.sortElems(1, true)
	if got := string(rp.encode(nil)); got != "*4\r\n$1\r\na\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n1\r\n" {
		t.Errorf("sortpairs: %q", got)
	}
	rp = read("*2\r\n$1\r\n0\r\n*2\r\n$1\r\nb\r\n$1\r\na\r\n")
	rp.sortElems(2, false)
	if got := string(rp.encode(nil)); got != "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n" {
		t.Errorf("sort depth 2: %q", got)
	}
	rp = read("%2\r\n$2\r\nid\r\n:7\r\n$1\r\nx\r\n:1\r\n")
	rp.mask("id")
	if got := string(rp.encode(nil)); got != "%2\r\n$2\r\nid\r\n+<masked>\r\n$1\r\nx\r\n:1\r\n" {
		t.Errorf("mask: %q", got)
	}
}

func TestParseStep(t *testing.T) {
	cases := []struct {
		line string
		want step
	}{
		{`SET k "a b\r\n\x00" 'it\'s'`, step{Args: []string{"SET", "k", "a b\r\n\x00", "it's"}}},
		{`SET k ""`, step{Args: []string{"SET", "k", ""}}},
		{`@sort SMEMBERS s`, step{Args: []string{"SMEMBERS", "s"}, HasSorting: true, SortDepth: 1}},
		{`@sortpairs 2 X`, step{Args: []string{"X"}, HasSorting: true, SortDepth: 2, SortPairs: true}},
		{`@ignore "ids differ" CLIENT ID`, step{Args: []string{"CLIENT", "ID"}, Ignore: "ids differ"}},
		{`@approx 3 @mask id PTTL k`, step{Args: []string{"PTTL", "k"}, Approx: 3, HasApprox: true, Masks: []string{"id"}}},
		{`@proto 3`, step{Args: []string{"HELLO", "3"}, Masks: []string{"id"}}},
		{`@raw 2 "PING\r\nPING\r\n"`, step{Kind: stepRaw, NRaw: 2, Raw: []byte("PING\r\nPING\r\n")}},
		{`@reconnect`, step{Kind: stepReconnect}},
		{`@conn 2`, step{Kind: stepConn, Conn: 2}},
	}
	for _, c := range cases {
		got, err := parseStep(c.line)
		if err != nil {
			t.Errorf("%s: %v", c.line, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got  %+v\n want %+v", c.line, got, c.want)
		}
	}
	for _, bad := range []string{`SET "a`, `@sleep`, `@ignore`, `@sort`, `@bogus X`, `GET "a"b`} {
		if _, err := parseStep(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	st, err := parseStep("@sleep 110ms")
	if err != nil || st.Kind != stepSleep || st.Sleep.Milliseconds() != 110 {
		t.Errorf("@sleep: %+v %v", st, err)
	}
}
