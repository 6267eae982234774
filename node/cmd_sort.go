package node

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/slotd/slotd/node/keyspace"
)

func registerSort(t Table) {
	t.Add(&Command{Name: "sort", Arity: -2, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1,
		ACL: []string{"write", "set", "sortedset", "list", "slow", "dangerous"}, Keys: sortKeys, NeedsAll: sortReadsPatterns,
		Handler: func(x *Ctx) { cmdSort(x, false) }})
	t.Add(&Command{Name: "sort_ro", Arity: -2, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1,
		ACL: []string{"read", "set", "sortedset", "list", "slow", "dangerous"}, Keys: func([][]byte) []int { return []int{1} },
		NeedsAll: sortReadsPatterns, Handler: func(x *Ctx) { cmdSort(x, true) }})
}

// sortKeys finds the sorted key and the STORE destination, skipping the
// arguments of the other options (the last STORE wins, as in redis-server).
func sortKeys(args [][]byte) []int {
	keys := []int{1}
	for i := 2; i < len(args); i++ {
		switch strings.ToLower(string(args[i])) {
		case "limit":
			i += 2
		case "get", "by":
			i++
		case "store":
			if i+1 < len(args) {
				if len(keys) == 1 {
					keys = append(keys, i+1)
				} else {
					keys[1] = i + 1
				}
			}
			i++
		}
	}
	return keys
}

// sortReadsPatterns reports whether BY or GET name other keys through a
// pattern: those keys are unknown before the sort runs, so the call holds
// every slot lock. In cluster mode such patterns are refused anyway.
func sortReadsPatterns(args [][]byte) bool {
	for i := 2; i+1 < len(args); i++ {
		switch strings.ToLower(string(args[i])) {
		case "by":
			if bytes.IndexByte(args[i+1], '*') >= 0 {
				return true
			}
			i++
		case "get":
			if string(args[i+1]) != "#" {
				return true
			}
			i++
		case "limit":
			i += 2
		}
	}
	return false
}

type sortItem struct {
	elem  string
	score float64
	cmp   *string // the BY value for ALPHA sorting; nil when the key is missing
}

func cmdSort(x *Ctx, readonly bool) {
	args := x.Args
	var (
		desc, alpha, dontsort  bool
		limitStart, limitCount int64 = 0, -1
		sortBy                 []byte
		gets                   [][]byte
		storeKey               []byte
	)
	cluster := x.S.clusterEnabled()
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		switch opt := strings.ToLower(string(args[j])); {
		case opt == "asc":
			desc = false
		case opt == "desc":
			desc = true
		case opt == "alpha":
			alpha = true
		case opt == "limit" && left >= 2:
			s, ok1 := ParseInt(args[j+1])
			c, ok2 := ParseInt(args[j+2])
			if !ok1 || !ok2 {
				x.W.Error(ErrNotInt)
				return
			}
			limitStart, limitCount = s, c
			j += 2
		case opt == "store" && left >= 1 && !readonly:
			storeKey = args[j+1]
			j++
		case opt == "by" && left >= 1:
			sortBy = args[j+1]
			if bytes.IndexByte(sortBy, '*') < 0 {
				dontsort = true
			} else if cluster {
				x.W.Error("ERR BY option of SORT denied in Cluster mode.")
				return
			}
			j++
		case opt == "get" && left >= 1:
			if cluster {
				x.W.Error("ERR GET option of SORT denied in Cluster mode.")
				return
			}
			gets = append(gets, args[j+1])
			j++
		default:
			x.W.Error(ErrSyntax)
			return
		}
	}
	e := x.Read(args[1])
	if e != nil && e.Kind != keyspace.KindList && e.Kind != keyspace.KindSet && e.Kind != keyspace.KindZSet {
		x.W.Error(ErrWrongType)
		return
	}
	// A set has no order of its own: sorting it for STORE keeps the stored
	// result the same everywhere (redis-server does the same).
	if dontsort && e != nil && e.Kind == keyspace.KindSet && storeKey != nil {
		dontsort, alpha, sortBy = false, true, nil
	}
	items := sortLoad(e, dontsort && desc)
	n := int64(len(items))
	start := limitStart
	if start < 0 {
		start = 0
	}
	end := n - 1
	if limitCount >= 0 {
		end = start + limitCount - 1
	}
	if start >= n {
		start, end = n-1, n-2
	}
	if end >= n {
		end = n - 1
	}
	if !dontsort {
		if !sortScores(x, items, sortBy, alpha) {
			return
		}
		sortItems(items, alpha, sortBy != nil, storeKey != nil, desc)
	}
	var out []sortItem
	if start <= end && start >= 0 {
		out = items[start : end+1]
	}
	if storeKey == nil {
		if len(gets) == 0 {
			x.W.Array(len(out))
			for _, it := range out {
				x.W.BulkString(it.elem)
			}
			return
		}
		x.W.Array(len(out) * len(gets))
		for _, it := range out {
			for _, g := range gets {
				if v, ok := sortLookup(x, g, it.elem); ok {
					x.W.BulkString(v)
				} else {
					x.W.Null()
				}
			}
		}
		return
	}
	l := keyspace.NewList()
	for _, it := range out {
		if len(gets) == 0 {
			l.PushBack(it.elem)
			continue
		}
		for _, g := range gets {
			v, _ := sortLookup(x, g, it.elem)
			l.PushBack(v)
		}
	}
	if l.Len() == 0 {
		x.Del(storeKey)
	} else {
		x.Put(storeKey, keyspace.NewObject(l))
	}
	x.W.Int(int64(l.Len()))
}

// sortLoad lists the elements in the value's own order (reversed for a
// sorted set read with BY nosort DESC, as redis-server does).
func sortLoad(e *keyspace.Entry, reverse bool) []sortItem {
	if e == nil {
		return nil
	}
	var items []sortItem
	switch o := e.Obj().(type) {
	case *keyspace.List:
		items = make([]sortItem, 0, o.Len())
		o.Range(0, o.Len()-1, func(s string) { items = append(items, sortItem{elem: s}) })
	case *keyspace.Set:
		items = make([]sortItem, 0, o.Len())
		for i := 0; i < o.Len(); i++ {
			items = append(items, sortItem{elem: o.StringAt(i)})
		}
	case *keyspace.ZSet:
		items = make([]sortItem, 0, o.Len())
		if reverse {
			for n := o.Last(); n != nil; n = n.Prev() {
				items = append(items, sortItem{elem: n.Member})
			}
		} else {
			for n := o.First(); n != nil; n = n.Next() {
				items = append(items, sortItem{elem: n.Member})
			}
		}
	}
	return items
}

// sortScores fills the sort weights: the BY value (or the element itself)
// parsed as a double, or kept as a string for ALPHA. It replies and returns
// false when a weight is not a number.
func sortScores(x *Ctx, items []sortItem, by []byte, alpha bool) bool {
	for i := range items {
		it := &items[i]
		val := it.elem
		if by != nil {
			v, ok := sortLookup(x, by, it.elem)
			if !ok {
				continue
			}
			val = v
		}
		if alpha {
			if by != nil {
				it.cmp = &val
			}
			continue
		}
		f, ok := parseStrtod(val)
		if !ok {
			x.W.Error("ERR One or more scores can't be converted into double")
			return false
		}
		it.score = f
	}
	return true
}

// parseStrtod parses s as C's strtod over the whole string (leading
// blanks allowed, "inf"/"nan" words, hex floats); NaN and overflow fail.
func parseStrtod(s string) (float64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	if t == "" {
		// strtod consumes nothing and the end pointer is at the NUL.
		return 0, s == ""
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func sortItems(items []sortItem, alpha, byPattern, store, desc bool) {
	slices.SortStableFunc(items, func(a, b sortItem) int {
		var c int
		switch {
		case !alpha:
			switch {
			case a.score > b.score:
				c = 1
			case a.score < b.score:
				c = -1
			default:
				c = strings.Compare(a.elem, b.elem)
			}
		case byPattern:
			switch {
			case a.cmp == nil && b.cmp == nil:
				c = 0
			case a.cmp == nil:
				c = -1
			case b.cmp == nil:
				c = 1
			default:
				c = strings.Compare(*a.cmp, *b.cmp)
			}
		default:
			c = strings.Compare(a.elem, b.elem)
		}
		if desc {
			return -c
		}
		return c
	})
}

// sortLookup resolves a BY/GET pattern for one element: "#" is the element
// itself; otherwise the first '*' is replaced by the element and the result
// names a string key, or a hash field when the pattern has "->field" after
// the '*'. ok is false when the key, field or '*' is missing or the key
// holds another type.
func sortLookup(x *Ctx, pattern []byte, elem string) (string, bool) {
	if len(pattern) == 1 && pattern[0] == '#' {
		return elem, true
	}
	star := bytes.IndexByte(pattern, '*')
	if star < 0 {
		return "", false
	}
	var field []byte
	keyPat := pattern
	if arrow := bytes.Index(pattern[star+1:], []byte("->")); arrow >= 0 && star+1+arrow+2 < len(pattern) {
		field = pattern[star+1+arrow+2:]
		keyPat = pattern[:star+1+arrow]
	}
	key := make([]byte, 0, len(keyPat)+len(elem))
	key = append(key, keyPat[:star]...)
	key = append(key, elem...)
	key = append(key, keyPat[star+1:]...)
	e := x.Read(key)
	if e == nil {
		return "", false
	}
	if field != nil {
		if e.Kind != keyspace.KindHash {
			return "", false
		}
		return hashOf(e).Get(field)
	}
	if e.Kind != keyspace.KindString {
		return "", false
	}
	return string(e.Bytes()), true
}
