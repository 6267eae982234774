package e2e

import (
	"fmt"
	"github.com/slotd/slotd/node/config"
	"os"
	"strconv"
	"strings"
	"time"
)

// A diff script is a text file, one step a line:
//
//	# comment                      (blank lines too)
//	SET k "a b\r\n" EX 10          a command; arguments are split like redis-cli:
//	                               "double quotes" take \r \n \t \a \b \" \\ \xHH,
//	                               'single quotes' are literal except \'
//	@proto 3                       HELLO 3 on both connections, id masked
//	@sleep 110ms                   wait (time.ParseDuration syntax)
//	@reconnect                     close all connections, continue on a new connection 1
//	@conn n                        continue on connection n (opened on first use;
//	                               the script starts on 1)
//	@raw [n] "bytes"               send bytes as they are, read n replies (1)
//
// Modifiers stand before a command and may be combined:
//
//	@sort [depth] CMD ...          compare with aggregate elements sorted (maps by
//	                               key); depth 2 sorts the aggregates inside the
//	                               reply instead (SCAN's key list)
//	@sortpairs [depth] CMD ...     the same for flat key/value arrays (RESP2 HGETALL)
//	@mask name CMD ...             hide the value after the field name (HELLO's id)
//	@approx n CMD ...              integer replies may differ by up to n (PTTL)
//	@ignore "reason" CMD ...       send to both, compare nothing
type step struct {
	Line  int
	Text  string
	Kind  stepKind
	Args  []string
	Raw   []byte
	NRaw  int
	Sleep time.Duration
	Conn  int

	SortDepth  int
	SortPairs  bool
	Masks      []string
	Approx     int64
	Ignore     string
	HasApprox  bool
	HasSorting bool
}

type stepKind int

const (
	stepCommand stepKind = iota
	stepSleep
	stepReconnect
	stepRaw
	stepConn
)

func parseScriptFile(path string) ([]step, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var steps []step
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		st, err := parseStep(trimmed)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		st.Line = i + 1
		st.Text = trimmed
		steps = append(steps, st)
	}
	return steps, nil
}

func parseStep(line string) (step, error) {
	// Script lines quote arguments as redis.conf does (redis-cli uses the
	// same rules).
	toks, ok := config.SplitArgs(line)
	if !ok {
		return step{}, fmt.Errorf("unbalanced quotes in %q", line)
	}
	var err error
	var st step
	for len(toks) > 0 && strings.HasPrefix(toks[0], "@") {
		d := strings.ToLower(toks[0])
		toks = toks[1:]
		switch d {
		case "@proto":
			if len(toks) != 1 {
				return st, fmt.Errorf("@proto takes one number")
			}
			st.Args = []string{"HELLO", toks[0]}
			st.Masks = append(st.Masks, "id")
			return st, nil
		case "@sleep":
			if len(toks) != 1 {
				return st, fmt.Errorf("@sleep takes one duration")
			}
			st.Kind = stepSleep
			st.Sleep, err = time.ParseDuration(toks[0])
			return st, err
		case "@conn":
			if len(toks) != 1 {
				return st, fmt.Errorf("@conn takes one number")
			}
			st.Kind = stepConn
			if st.Conn, err = strconv.Atoi(toks[0]); err != nil || st.Conn < 1 {
				return st, fmt.Errorf("@conn: bad connection number %q", toks[0])
			}
			return st, nil
		case "@reconnect":
			st.Kind = stepReconnect
			return st, nil
		case "@raw":
			st.Kind, st.NRaw = stepRaw, 1
			if len(toks) == 2 {
				if st.NRaw, err = strconv.Atoi(toks[0]); err != nil {
					return st, fmt.Errorf("@raw count: %v", err)
				}
				toks = toks[1:]
			}
			if len(toks) != 1 {
				return st, fmt.Errorf("@raw takes [count] \"bytes\"")
			}
			st.Raw = []byte(toks[0])
			return st, nil
		case "@sort", "@sortpairs":
			st.HasSorting, st.SortDepth, st.SortPairs = true, 1, d == "@sortpairs"
			if len(toks) > 0 {
				if n, err := strconv.Atoi(toks[0]); err == nil {
					st.SortDepth = n
					toks = toks[1:]
				}
			}
		case "@mask":
			if len(toks) < 1 {
				return st, fmt.Errorf("@mask needs a field name")
			}
			st.Masks = append(st.Masks, toks[0])
			toks = toks[1:]
		case "@approx":
			if len(toks) < 1 {
				return st, fmt.Errorf("@approx needs a tolerance")
			}
			if st.Approx, err = strconv.ParseInt(toks[0], 10, 64); err != nil {
				return st, fmt.Errorf("@approx: %v", err)
			}
			st.HasApprox = true
			toks = toks[1:]
		case "@ignore":
			if len(toks) < 1 || toks[0] == "" {
				return st, fmt.Errorf("@ignore needs a reason")
			}
			st.Ignore = toks[0]
			toks = toks[1:]
		default:
			return st, fmt.Errorf("unknown directive %s", d)
		}
	}
	if len(toks) == 0 {
		return st, fmt.Errorf("no command after the directives")
	}
	st.Args = toks
	return st, nil
}

// encodeCommand writes args as a RESP array of bulk strings.
func encodeCommand(dst []byte, args []string) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, "\r\n"...)
	for _, a := range args {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, "\r\n"...)
		dst = append(dst, a...)
		dst = append(dst, "\r\n"...)
	}
	return dst
}
