package glob

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestMatchGolden checks Match against KEYS answers recorded
// from redis-server 7.0.15: random patterns over an alphabet rich in
// special characters, each run against the same 300 keys.
func TestMatchGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "stringmatch.json"))
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
			if got := Match(c.P, s, false); got != want[i] {
				t.Errorf("Match(%q, %q) = %v, redis says %v", c.P, s, got, want[i])
			}
		}
	}
}

func TestMatchCases(t *testing.T) {
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
		// Backtracking without the skip rule takes C(60, 20) steps here.
		{"*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*X", "active-defrag-cycle-max-active-defrag-cycle-max-0123456789x", true, true},
		{"*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*Z", "active-defrag-cycle-max-active-defrag-cycle-max-0123456789x", true, false},
	} {
		if got := Match(c.p, c.s, c.nocase); got != c.want {
			t.Errorf("Match(%q, %q, %v) = %v", c.p, c.s, c.nocase, got)
		}
	}
}

// FuzzMatch checks that no pattern panics and that simple identities
// hold: a pattern without special bytes matches exactly itself, and "*"
// prefixed or suffixed to any pattern never loses a match.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"a*b", "[^a-z]x", "\\", "[", "[\\", "h?l*o", "***", "[]]"} {
		f.Add(s, "abc")
	}
	f.Fuzz(func(t *testing.T, p, s string) {
		m := Match(p, s, false)
		if m && s != "" && !Match("*"+p, s, false) {
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
		Match(p, s, true)
	})
}
