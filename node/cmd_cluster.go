package node

import (
	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/slots"
)

const errNoCluster = "ERR This instance has cluster support disabled"

func registerCluster(t Table) {
	t.Add(&Command{Name: "asking", Arity: 1, Flags: FlagFast, ACL: []string{"fast", "connection"}, Handler: cmdAsking})
	t.Add(&Command{Name: "readonly", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, ACL: []string{"fast", "connection"}, Handler: cmdReadonly})
	t.Add(&Command{Name: "readwrite", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, ACL: []string{"fast", "connection"}, Handler: cmdReadwrite})
	t.Add(&Command{Name: "cluster", Arity: -2, ACL: []string{"slow"}, Handler: func(x *Ctx) {
		x.W.Error("ERR unknown subcommand '" + sanitize(x.Arg(1), 128) + "'. Try CLUSTER HELP.")
	}})
	t.Add(&Command{Name: "cluster|keyslot", Arity: 3, Flags: FlagStale, ACL: []string{"slow"}, Handler: cmdClusterKeyslot})
	t.Add(&Command{Name: "cluster|countkeysinslot", Arity: 3, Flags: FlagStale, ACL: []string{"slow"}, Handler: cmdClusterCountKeys})
	t.Add(&Command{Name: "cluster|getkeysinslot", Arity: 4, Flags: FlagStale, ACL: []string{"slow"}, Handler: cmdClusterGetKeys})
}

func (s *Server) clusterEnabled() bool { return s.Cfg.Bool("cluster-enabled") }

func cmdAsking(x *Ctx) {
	if !x.S.clusterEnabled() {
		x.W.Error(errNoCluster)
		return
	}
	x.C.Flags |= ClientAsking
	x.W.OK()
}

func cmdReadonly(x *Ctx) {
	if !x.S.clusterEnabled() {
		x.W.Error(errNoCluster)
		return
	}
	x.C.Flags |= ClientReadonly
	x.W.OK()
}

func cmdReadwrite(x *Ctx) {
	if !x.S.clusterEnabled() {
		x.W.Error(errNoCluster)
		return
	}
	x.C.Flags &^= ClientReadonly
	x.W.OK()
}

// clusterOnly replies the standalone error and returns false when cluster
// mode is off.
func clusterOnly(x *Ctx) bool {
	if !x.S.clusterEnabled() {
		x.W.Error(errNoCluster)
		return false
	}
	return true
}

func cmdClusterKeyslot(x *Ctx) {
	if clusterOnly(x) {
		x.W.Int(int64(slots.Of(x.Args[2])))
	}
}

// parseSlotArg parses a slot number argument: not an integer -> the
// integer error; outside 0..16383 -> "ERR Invalid slot".
func parseSlotArg(x *Ctx, i int) (int, bool) {
	n, ok := x.Int(i)
	if !ok {
		return 0, false
	}
	if n < 0 || n >= slots.Count {
		x.W.Error("ERR Invalid slot")
		return 0, false
	}
	return int(n), true
}

// The per-slot commands read one slot's table under that slot's lock.
func cmdClusterCountKeys(x *Ctx) {
	if !clusterOnly(x) {
		return
	}
	slot, ok := parseSlotArg(x, 2)
	if !ok {
		return
	}
	x.S.ks.Lock(slot)
	n := x.S.ks.DB(0).SlotLen(slot)
	x.S.ks.Unlock(slot)
	x.W.Int(int64(n))
}

func cmdClusterGetKeys(x *Ctx) {
	if !clusterOnly(x) {
		return
	}
	n, ok1 := ParseInt(x.Args[2])
	count, ok2 := ParseInt(x.Args[3])
	if !ok1 || !ok2 {
		x.W.Error(ErrNotInt)
		return
	}
	if n < 0 || n >= slots.Count || count < 0 {
		x.W.Error("ERR Invalid slot or number of keys")
		return
	}
	slot := int(n)
	var keys []string
	x.S.ks.Lock(slot)
	x.S.ks.DB(0).ForEachInSlot(slot, func(k string, _ *keyspace.Entry) bool {
		if int64(len(keys)) >= count {
			return false
		}
		keys = append(keys, k)
		return true
	})
	x.S.ks.Unlock(slot)
	x.W.Array(len(keys))
	for _, k := range keys {
		x.W.BulkString(k)
	}
}
