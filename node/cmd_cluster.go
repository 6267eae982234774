package node

import (
	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/slots"
)

const errNoCluster = "ERR This instance has cluster support disabled"

func registerCluster(t Table) {
	t.Add(metaCommand("asking", cmdAsking))
	t.Add(metaCommand("readonly", cmdReadonly))
	t.Add(metaCommand("readwrite", cmdReadwrite))
	t.Add(metaCommand("cluster", func(x *Ctx) {
		x.W.Error("ERR unknown subcommand '" + sanitize(x.Arg(1), 128) + "'. Try CLUSTER HELP.")
	}))
	for name, h := range map[string]HandlerFunc{
		"keyslot":               cmdClusterKeyslot,
		"countkeysinslot":       cmdClusterCountKeys,
		"getkeysinslot":         cmdClusterGetKeys,
		"meet":                  cmdClusterMeet,
		"addslots":              cmdClusterAddSlots,
		"addslotsrange":         cmdClusterAddSlots,
		"delslots":              cmdClusterDelSlots,
		"delslotsrange":         cmdClusterDelSlots,
		"flushslots":            cmdClusterFlushSlots,
		"setslot":               cmdClusterSetSlot,
		"nodes":                 cmdClusterNodes,
		"slots":                 cmdClusterSlots,
		"shards":                cmdClusterShards,
		"info":                  cmdClusterInfo,
		"myid":                  cmdClusterMyID,
		"forget":                cmdClusterForget,
		"reset":                 cmdClusterReset,
		"saveconfig":            cmdClusterSaveConfig,
		"set-config-epoch":      cmdClusterSetConfigEpoch,
		"bumpepoch":             cmdClusterBumpEpoch,
		"count-failure-reports": cmdClusterCountFailureReports,
		"links":                 cmdClusterLinks,
		"replicate":             cmdClusterReplicate,
		"failover":              cmdClusterFailover,
		"replicas":              cmdClusterReplicas,
		"slaves":                cmdClusterReplicas,
		"help":                  cmdClusterHelp,
	} {
		t.Add(metaCommand("cluster|"+name, h))
	}
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
