package config

import "testing"

// FuzzSplitArgs: any line splits without panic, and a word quoted by Repr
// (as CONFIG REWRITE writes values) splits back to exactly that word, alone
// or after a directive name.
func FuzzSplitArgs(f *testing.F) {
	for _, s := range []string{"", "save 900 1", `"a\x4` + "", `'it\'s'`, `"\xzz"`, "a\"b\"", "\"\\\"\"x", "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		SplitArgs(s)
		q := Repr(s)
		args, ok := SplitArgs(q)
		if !ok || len(args) != 1 || args[0] != s {
			t.Fatalf("Repr(%q) = %s splits to %q, %v", s, q, args, ok)
		}
		args, ok = SplitArgs("requirepass " + q)
		if !ok || len(args) != 2 || args[1] != s {
			t.Fatalf("directive line with %s splits to %q, %v", q, args, ok)
		}
		_, _ = ParseMemory(s)
	})
}
