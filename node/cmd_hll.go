package node

import (
	"math/rand/v2"

	"github.com/slotd/slotd/node/hll"
	"github.com/slotd/slotd/node/keyspace"
)

// Reply texts of the HyperLogLog family.
const (
	errHLLType    = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errHLLCorrupt = "INVALIDOBJ Corrupted HLL object detected"
)

// defaultHLLSparseMax is redis-server's hll-sparse-max-bytes default, used
// while the configuration does not define the directive.
const defaultHLLSparseMax = 3000

func registerHLL(t Table) {
	add := func(c *Command) { c.Group = "hyperloglog"; t.Add(c) }
	add(&Command{Name: "pfadd", Arity: -2, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Step: 1,
		ACL: []string{"write", "hyperloglog", "fast"}, KeySpecs: []KeySpec{keySpecAt("RW insert", 1)}, Handler: cmdPFAdd})
	add(&Command{Name: "pfcount", Arity: -2, Flags: FlagReadonly, FirstKey: 1, LastKey: -1, Step: 1,
		ACL: []string{"read", "hyperloglog", "slow"}, KeySpecs: []KeySpec{keySpecRange("RW access", 1, -1, 1)}, Handler: cmdPFCount})
	add(&Command{Name: "pfmerge", Arity: -2, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: -1, Step: 1,
		ACL:      []string{"write", "hyperloglog", "slow"},
		KeySpecs: []KeySpec{keySpecAt("RW access insert", 1), keySpecRange("RO access", 2, -1, 1)}, Handler: cmdPFMerge})
	add(&Command{Name: "pfdebug", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagAdmin, FirstKey: 2, LastKey: 2, Step: 1,
		ACL: []string{"write", "hyperloglog", "admin", "slow", "dangerous"}, KeySpecs: []KeySpec{keySpecAt("RW access", 2)}, Handler: cmdPFDebug})
	add(&Command{Name: "pfselftest", Arity: 1, Flags: FlagAdmin,
		ACL: []string{"hyperloglog", "admin", "slow", "dangerous"}, Handler: cmdPFSelfTest})
}

func (x *Ctx) hllSparseMax() int {
	if n := x.S.Cfg.Int("hll-sparse-max-bytes"); n > 0 || x.S.Cfg.Str("hll-sparse-max-bytes") != "" {
		return int(n)
	}
	return defaultHLLSparseMax
}

// hllEntry checks that e (not nil) holds a valid HLL, replying otherwise.
func hllEntry(x *Ctx, e *keyspace.Entry) bool {
	if e.Kind != keyspace.KindString {
		x.W.Error(ErrWrongType)
		return false
	}
	if !hll.Valid(e.Bytes()) {
		x.W.Error(errHLLType)
		return false
	}
	return true
}

func cmdPFAdd(x *Ctx) {
	key := x.Args[1]
	e := x.Write(key)
	var b []byte
	updated := 0
	if e == nil {
		b = hll.New()
		updated++
	} else {
		if !hllEntry(x, e) {
			return
		}
		b = e.Bytes()
		// redis-server unshares the value: it is raw-encoded from now on.
		e.Raw = true
	}
	sparseMax := x.hllSparseMax()
	var err error
	for _, ele := range x.Args[2:] {
		var upd bool
		if b, upd, err = hll.Add(b, ele, sparseMax); err != nil {
			break
		}
		if upd {
			updated++
		}
	}
	if e == nil {
		e = &keyspace.Entry{Kind: keyspace.KindString, Raw: true}
		e.SetBytes(b)
		x.Put(key, e)
	} else {
		e.SetBytes(b)
	}
	if err != nil {
		x.W.Error(errHLLCorrupt)
		return
	}
	if updated > 0 {
		hll.Invalidate(b)
		x.Modified(key)
		x.S.dirty.Add(int64(updated - 1))
	}
	x.W.Int(int64(min(updated, 1)))
}

func cmdPFCount(x *Ctx) {
	if len(x.Args) == 2 {
		key := x.Args[1]
		e := x.Read(key)
		if e == nil {
			x.W.Int(0)
			return
		}
		if !hllEntry(x, e) {
			return
		}
		e.Raw = true
		if n, ok := hll.CachedCard(e.Bytes()); ok {
			x.W.Int(int64(n))
			return
		}
		n, err := hll.Count(e.Bytes())
		if err != nil {
			x.W.Error(errHLLCorrupt)
			return
		}
		hll.SetCachedCard(e.Bytes(), n)
		x.Modified(key)
		x.W.Int(int64(n))
		return
	}
	var regs [hll.Registers]uint8
	for _, key := range x.Args[1:] {
		e := x.Read(key)
		if e == nil {
			continue
		}
		if !hllEntry(x, e) {
			return
		}
		if hll.Merge(&regs, e.Bytes()) != nil {
			x.W.Error(errHLLCorrupt)
			return
		}
	}
	x.W.Int(int64(hll.CountRegisters(&regs)))
}

func cmdPFMerge(x *Ctx) {
	var regs [hll.Registers]uint8
	dense := false
	for _, key := range x.Args[1:] {
		e := x.Read(key)
		if e == nil {
			continue
		}
		if !hllEntry(x, e) {
			return
		}
		if hll.Encoding(e.Bytes()) == "dense" {
			dense = true
		}
		if hll.Merge(&regs, e.Bytes()) != nil {
			x.W.Error(errHLLCorrupt)
			return
		}
	}
	key := x.Args[1]
	e := x.Write(key)
	if e == nil {
		e = keyspace.WrapString(hll.New())
		x.Put(key, e)
	}
	e.Raw = true
	b := e.Bytes()
	if dense {
		var err error
		if b, err = hll.ToDense(b); err != nil {
			x.W.Error(errHLLCorrupt)
			return
		}
	}
	sparseMax := x.hllSparseMax()
	for i, v := range regs {
		if v != 0 {
			// A corrupt destination was rejected above; redis-server ignores
			// errors here too.
			b, _, _ = hll.Set(b, i, v, sparseMax)
		}
	}
	hll.Invalidate(b)
	e.SetBytes(b)
	x.Modified(key)
	x.W.OK()
}

func cmdPFDebug(x *Ctx) {
	sub, key := string(x.Args[1]), x.Args[2]
	e := x.Write(key)
	if e == nil {
		x.W.Error("ERR The specified key does not exist")
		return
	}
	if !hllEntry(x, e) {
		return
	}
	e.Raw = true
	toDense := func() bool {
		b, err := hll.ToDense(e.Bytes())
		if err != nil {
			x.W.Error(errHLLCorrupt)
			return false
		}
		e.SetBytes(b)
		x.S.dirty.Add(1)
		return true
	}
	switch lower := toLowerASCII(sub); lower {
	case "getreg":
		if hll.Encoding(e.Bytes()) == "sparse" && !toDense() {
			return
		}
		regs := hll.DenseRegisters(e.Bytes())
		x.W.Array(len(regs))
		for _, v := range regs {
			x.W.Int(int64(v))
		}
	case "decode":
		if hll.Encoding(e.Bytes()) != "sparse" {
			x.W.Error("ERR HLL encoding is not sparse")
			return
		}
		x.W.BulkString(hll.Decode(e.Bytes()))
	case "encoding":
		x.W.Simple(hll.Encoding(e.Bytes()))
	case "todense":
		if hll.Encoding(e.Bytes()) == "dense" {
			x.W.Int(0)
			return
		}
		if toDense() {
			x.W.Int(1)
		}
	default:
		x.W.Error("ERR Unknown PFDEBUG subcommand '" + sub + "'")
	}
}

func toLowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// cmdPFSelfTest checks that the sparse and dense encodings agree register
// for register and count within the expected error, on random elements.
func cmdPFSelfTest(x *Ctx) {
	if msg := hllSelfTest(); msg != "" {
		x.W.Error("TESTFAILED " + msg)
		return
	}
	x.W.OK()
}

func hllSelfTest() string {
	rng := rand.New(rand.NewPCG(1, 2))
	sparse, dense := hll.New(), hll.New()
	dense, _ = hll.ToDense(dense)
	var ele [8]byte
	for i := 1; i <= 5000; i++ {
		for j := range ele {
			ele[j] = byte(rng.Uint32())
		}
		sparse, _, _ = hll.Add(sparse, ele[:], 1<<30)
		dense, _, _ = hll.Add(dense, ele[:], 0)
		if i%500 != 0 {
			continue
		}
		cs, err1 := hll.Count(sparse)
		cd, err2 := hll.Count(dense)
		if err1 != nil || err2 != nil || cs != cd {
			return "sparse and dense counts differ"
		}
		if diff := float64(cd) - float64(i); diff > 0.05*float64(i) || diff < -0.05*float64(i) {
			return "estimate out of bounds"
		}
	}
	s, _ := hll.ToDense(sparse)
	if string(s[hll.HdrSize:]) != string(dense[hll.HdrSize:]) {
		return "sparse and dense registers differ"
	}
	return ""
}
