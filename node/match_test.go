package node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// stringMatchGolden is resolved before any test runs: the in-process
// cluster tests start nodes with --dir, which changes the process's working
// directory.
var stringMatchGolden, _ = filepath.Abs("testdata/stringmatch.json")

// TestStringMatchGolden checks StringMatch against KEYS answers recorded
// from redis-server 7.0.15: random patterns over an alphabet rich in
// special characters, each run against the same 300 keys.
func TestStringMatchGolden(t *testing.T) {
	data, err := os.ReadFile(stringMatchGolden)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Strings []string
		Cases   []struct {
			P string
			M []int
		}
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	for _, c := range g.Cases {
		want := map[int]bool{}
		for _, i := range c.M {
			want[i] = true
		}
		for i, s := range g.Strings {
			if got := StringMatch([]byte(c.P), []byte(s), false); got != want[i] {
				t.Errorf("StringMatch(%q, %q) = %v, redis says %v", c.P, s, got, want[i])
			}
		}
	}
}

func TestStringMatchCases(t *testing.T) {
	for _, c := range []struct {
		p, s   string
		nocase bool
		want   bool
	}{
		{"*", "", false, false}, // callers special-case a lone "*", as redis-server does
		{"", "", false, true},
		{"a", "", false, false},
		{"h?llo", "hello", false, true},
		{"h*llo", "heeeello", false, true},
		{"h[ae]llo", "hallo", false, true},
		{"h[^e]llo", "hello", false, false},
		{"h[^e]llo", "hbllo", false, true},
		{"h[a-b]llo", "hbllo", false, true},
		{"h[b-a]llo", "hbllo", false, true},
		{"h\\*llo", "h*llo", false, true},
		{"h\\*llo", "hello", false, false},
		{"[abc", "c", false, true},
		{"[a-", "-", false, true},
		{"a\\", "a\\", false, true},
		{"HELLO", "hello", true, true},
		{"[A-Z]", "q", true, true},
		{"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false, false},
	} {
		if got := StringMatch([]byte(c.p), []byte(c.s), c.nocase); got != c.want {
			t.Errorf("StringMatch(%q, %q, %v) = %v", c.p, c.s, c.nocase, got)
		}
	}
}

// FuzzStringMatch checks that no pattern panics and that simple identities
// hold: a pattern without special bytes matches exactly itself, and "*"
// prefixed or suffixed to any pattern never loses a match.
func FuzzStringMatch(f *testing.F) {
	for _, s := range []string{"a*b", "[^a-z]x", "\\", "[", "[\\", "h?l*o", "***", "[]]"} {
		f.Add(s, "abc")
	}
	f.Fuzz(func(t *testing.T, p, s string) {
		m := StringMatch([]byte(p), []byte(s), false)
		if m && s != "" && !StringMatch([]byte("*"+p), []byte(s), false) {
			t.Fatalf("%q matches %q but *%q does not", p, s, p)
		}
		plain := true
		for i := 0; i < len(p); i++ {
			switch p[i] {
			case '*', '?', '[', '\\':
				plain = false
			}
		}
		if plain && m != (p == s) {
			t.Fatalf("plain %q vs %q: %v", p, s, m)
		}
		StringMatch([]byte(p), []byte(s), true)
	})
}
