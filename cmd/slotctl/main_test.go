package main

import (
	"bytes"
	"flag"
	"reflect"
	"strings"
	"testing"
)

func TestParseInterleaved(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		pos      []string
		replicas int
		yes      bool
	}{
		{[]string{"a:1", "b:2", "c:3", "--replicas", "1", "--yes"}, []string{"a:1", "b:2", "c:3"}, 1, true},
		{[]string{"--yes", "a:1", "--replicas=2", "b:2"}, []string{"a:1", "b:2"}, 2, true},
		{[]string{"a:1", "--", "--yes"}, []string{"a:1", "--yes"}, 0, false},
		{nil, nil, 0, false},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		r := fs.Int("replicas", 0, "")
		y := fs.Bool("yes", false, "")
		pos, err := parseInterleaved(fs, tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if !reflect.DeepEqual(pos, tc.pos) || *r != tc.replicas || *y != tc.yes {
			t.Errorf("%v: pos %v replicas %d yes %v", tc.args, pos, *r, *y)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "Usage: slotctl"},
		{[]string{"--help"}, 0, "Usage: slotctl"},
		{[]string{"bogus"}, 2, `unknown command "bogus"`},
		{[]string{"check"}, 2, "want 1 arguments, got 0"},
		{[]string{"del-node", "a:1"}, 2, "want 2 arguments, got 1"},
		{[]string{"create"}, 2, "no nodes given"},
		{[]string{"check", "a:1", "--nope"}, 2, "flag provided but not defined: -nope"},
		{[]string{"check", "a:1", "--color", "pink"}, 2, "--color must be"},
		{[]string{"create", "a:1", "a:2", "--yes"}, 1, "at least 3 masters"},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &out, &errb)
		if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
			t.Errorf("%v: exit %d (want %d)\nstdout: %s\nstderr: %s", tc.args, code, tc.code, out.String(), errb.String())
		}
	}
}
