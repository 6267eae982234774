package node

import (
	"errors"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/slotd/slotd/failover"
	"github.com/slotd/slotd/gossip"
	"github.com/slotd/slotd/slots"
)

// withCluster runs fn on the cluster loop with the state machine; it
// replies the standalone error when cluster mode is off.
func withCluster(x *Ctx, fn func(cn *clusterNode, st *gossip.State, now int64)) {
	if !clusterOnly(x) {
		return
	}
	cn := x.S.cl
	if cn == nil {
		x.W.Error("ERR the cluster bus is not running")
		return
	}
	cn.do(func() { fn(cn, cn.st, time.Now().UnixMilli()) })
}

// replyOutputs applies the outputs of a command and replies OK, or the
// command's error.
func replyOutputs(x *Ctx, cn *clusterNode, outs []gossip.Output, err error) {
	if err != nil {
		x.W.Error(err.Error())
		return
	}
	cn.apply(outs)
	x.W.OK()
}

// clusterSubcommandError answers a CLUSTER subcommand whose argument count
// passed the table's arity but fits none of its forms: redis-server names
// the subcommand as the client typed it.

func cmdClusterMeet(x *Ctx) {
	if len(x.Args) > 5 {
		subcommandError(x)
		return
	}
	ip := x.Arg(2)
	port, ok := ParseInt(x.Args[3])
	if !ok {
		x.W.Error("ERR Invalid TCP base port specified: " + x.Arg(3))
		return
	}
	cport := port + 10000
	if len(x.Args) == 5 {
		if cport, ok = ParseInt(x.Args[4]); !ok {
			x.W.Error("ERR Invalid TCP bus port specified: " + x.Arg(4))
			return
		}
	}
	if net.ParseIP(ip) == nil || port <= 0 || port > 65535 || cport <= 0 || cport > 65535 {
		x.W.Error("ERR Invalid node address specified: " + ip + ":" + x.Arg(3))
		return
	}
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		cn.apply(st.Meet(now, ip, int(port), int(cport)))
		x.W.OK()
	})
}

// parseSlotList reads ADDSLOTS/DELSLOTS slot lists, or the start/end pairs
// of the *RANGE forms.
func parseSlotList(x *Ctx) ([]int, bool) {
	args := x.Args[2:]
	isRange := strings.HasSuffix(strings.ToLower(x.Arg(1)), "range")
	if isRange && len(args)%2 != 0 {
		x.W.Error(errArity(x.Cmd.Name))
		return nil, false
	}
	parse := func(b []byte) (int, bool) {
		n, ok := ParseInt(b)
		if !ok || n < 0 || n >= slots.Count {
			x.W.Error("ERR Invalid or out of range slot")
			return 0, false
		}
		return int(n), true
	}
	var list []int
	if !isRange {
		for _, a := range args {
			n, ok := parse(a)
			if !ok {
				return nil, false
			}
			list = append(list, n)
		}
		return list, true
	}
	for i := 0; i < len(args); i += 2 {
		lo, ok := parse(args[i])
		if !ok {
			return nil, false
		}
		hi, ok := parse(args[i+1])
		if !ok {
			return nil, false
		}
		if lo > hi {
			x.W.Error("ERR start slot number " + itoa(lo) + " is greater than end slot number " + itoa(hi))
			return nil, false
		}
		for s := lo; s <= hi; s++ {
			list = append(list, s)
		}
	}
	return list, true
}

func cmdClusterAddSlots(x *Ctx) {
	list, ok := parseSlotList(x)
	if !ok {
		return
	}
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		outs, err := st.AddSlots(now, list)
		replyOutputs(x, cn, outs, err)
	})
}

func cmdClusterDelSlots(x *Ctx) {
	list, ok := parseSlotList(x)
	if !ok {
		return
	}
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		outs, err := st.DelSlots(now, list)
		replyOutputs(x, cn, outs, err)
	})
}

func cmdClusterFlushSlots(x *Ctx) {
	if x.S.ks.DB(0).Len() != 0 {
		x.W.Error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.")
		return
	}
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		var mine []int
		for s, id := range st.Owner {
			if id == st.Myself.ID {
				mine = append(mine, s)
			}
		}
		outs, err := st.DelSlots(now, mine)
		replyOutputs(x, cn, outs, err)
	})
}

func cmdClusterSetSlot(x *Ctx) {
	n, ok := ParseInt(x.Args[2])
	if !ok || n < 0 || n >= slots.Count {
		x.W.Error("ERR Invalid or out of range slot")
		return
	}
	slot := int(n)
	action := strings.ToLower(x.Arg(3))
	base := 5
	switch action {
	case "stable":
		base = 4
	case "migrating", "importing", "node":
	default:
		base = -1
	}
	// An optional TIMEOUT <ms> bounds the wait for the replicas' ACK.
	timeout := setSlotDefaultTimeout
	if base > 0 && len(x.Args) == base+2 && strings.EqualFold(x.Arg(base), "timeout") {
		ms, ok := x.TimeoutMs(base + 1)
		if !ok {
			return
		}
		timeout = time.Duration(ms) * time.Millisecond
	} else if len(x.Args) != base {
		x.W.Error("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
		return
	}
	var id gossip.NodeID
	if action != "stable" {
		id = gossip.NodeID(x.Arg(4))
	}
	var msg string
	var waitOff int64
	ran := false
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		ran = true
		if x.master {
			// From this replica's master: its view follows.
			cn.apply(applyReplicatedSetSlot(st, now, slot, action, id))
			if err := persistSlotChange(cn, st); err != nil {
				cn.log.Error("cannot write the cluster config", zap.Error(err))
			}
			return
		}
		if st.Myself.IsReplica() {
			msg = "ERR Please use SETSLOT only with masters."
			return
		}
		// redis-server checks ownership before it looks the node up.
		switch {
		case action == "migrating" && st.Owner[slot] != st.Myself.ID:
			msg = "ERR I'm not the owner of hash slot " + itoa(slot)
			return
		case action == "importing" && st.Owner[slot] == st.Myself.ID:
			msg = "ERR I'm already the owner of hash slot " + itoa(slot)
			return
		}
		var target *gossip.Node
		if action != "stable" {
			target = st.Nodes[id]
			if target == nil {
				if action == "node" {
					msg = "ERR Unknown node " + x.Arg(4)
				} else {
					msg = "ERR I don't know about node " + x.Arg(4)
				}
				return
			}
			if target.IsReplica() {
				msg = "ERR Target node is not a master"
				return
			}
		}
		outs, m := applySetSlot(x, st, now, slot, action, target)
		if m != "" {
			msg = m
			return
		}
		cn.apply(outs)
		if err := persistSlotChange(cn, st); err != nil {
			msg = "ERR error saving the cluster node config: " + err.Error()
			return
		}
		args := [][]byte{[]byte("CLUSTER"), []byte("SETSLOT"), []byte(itoa(slot)), []byte(strings.ToUpper(action))}
		if action != "stable" {
			args = append(args, []byte(id))
		}
		waitOff = replicateSlotChange(x, st, args...)
	})
	switch {
	case !ran:
	case msg != "":
		x.W.Error(msg)
	case waitOff > 0 && !x.S.waitReplicaAcks(x.C, waitOff, timeout):
		x.W.Error(errSlotNoReplicaAck)
	default:
		x.W.OK()
	}
}

// applySetSlot carries out one CLUSTER SETSLOT action on the cluster state
// (on the cluster loop) and returns the outputs to apply and the error text
// to reply, or "". The caller applies the outputs and persists the config.
// SLOTD.MIGRATE SETSLOTS applies it to many slots under one persist.
func applySetSlot(x *Ctx, st *gossip.State, now int64, slot int, action string, target *gossip.Node) ([]gossip.Output, string) {
	db := x.S.ks.DB(0)
	switch action {
	case "migrating":
		if st.Owner[slot] != st.Myself.ID {
			return nil, "ERR I'm not the owner of hash slot " + itoa(slot)
		}
		st.SetSlotMigrating(slot, target.ID)
	case "importing":
		if st.Owner[slot] == st.Myself.ID {
			return nil, "ERR I'm already the owner of hash slot " + itoa(slot)
		}
		st.SetSlotImporting(slot, target.ID)
	case "stable":
		st.SetSlotStable(slot)
	case "node":
		if st.Owner[slot] == st.Myself.ID && target != st.Myself && db.SlotHasKeys(slot) {
			return nil, "ERR Can't assign hashslot " + itoa(slot) + " to a different node while I still hold keys for this hash slot."
		}
		if _, migrating := st.Migrating[slot]; migrating && !db.SlotHasKeys(slot) {
			st.SetSlotStable(slot)
			if imp, ok := st.Importing[slot]; ok {
				st.SetSlotImporting(slot, imp)
			}
		}
		outs, err := st.SetSlotNode(now, slot, target.ID)
		if err != nil {
			return nil, err.Error()
		}
		return outs, ""
	}
	return nil, ""
}

func cmdClusterNodes(x *Ctx) {
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		x.W.Verbatim(gossip.FormatClusterNodes(st))
	})
}

func cmdClusterInfo(x *Ctx) {
	if !clusterOnly(x) {
		return
	}
	if x.S.cl == nil {
		x.W.Error("ERR the cluster bus is not running")
		return
	}
	x.W.Verbatim(*x.S.cl.info.Load())
}

func cmdClusterMyID(x *Ctx) {
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		x.W.BulkString(string(st.Myself.ID))
	})
}

// replicasOf lists the replicas of master that are not failing.
func replicasOf(st *gossip.State, master gossip.NodeID, includeFailing bool) []*gossip.Node {
	var out []*gossip.Node
	for _, id := range st.Order() {
		n := st.Nodes[id]
		if n != nil && n.IsReplica() && n.Master == master && (includeFailing || !n.Failing()) {
			out = append(out, n)
		}
	}
	return out
}

// writeSlotNode writes one node of a CLUSTER SLOTS entry: preferred
// endpoint, port, id and a map of the other known addresses.
func writeSlotNode(x *Ctx, cn *clusterNode, n *gossip.Node) {
	pref := x.S.Cfg.Str("cluster-preferred-endpoint-type")
	x.W.Array(4)
	x.W.BulkString(cn.endpoint(n))
	x.W.Int(int64(n.Port))
	x.W.BulkString(string(n.ID))
	extra := 0
	if pref != "ip" {
		extra++
	}
	if pref != "hostname" && n.Hostname != "" {
		extra++
	}
	x.W.Map(extra)
	if pref != "ip" {
		x.W.BulkString("ip")
		x.W.BulkString(n.IP)
	}
	if pref != "hostname" && n.Hostname != "" {
		x.W.BulkString("hostname")
		x.W.BulkString(n.Hostname)
	}
}

func cmdClusterSlots(x *Ctx) {
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		type run struct {
			start, end int
			owner      *gossip.Node
		}
		var runs []run
		for s := 0; s < slots.Count; s++ {
			id := st.Owner[s]
			if id == "" {
				continue
			}
			if len(runs) > 0 && runs[len(runs)-1].owner.ID == id && runs[len(runs)-1].end == s-1 {
				runs[len(runs)-1].end = s
				continue
			}
			if n := st.Nodes[id]; n != nil {
				runs = append(runs, run{s, s, n})
			}
		}
		x.W.Array(len(runs))
		for _, r := range runs {
			// Replicas show once they hold data (a non-zero replication
			// offset), as on redis-server.
			reps := slices.DeleteFunc(replicasOf(st, r.owner.ID, false), func(n *gossip.Node) bool { return n.ReplOffset == 0 })
			x.W.Array(3 + len(reps))
			x.W.Int(int64(r.start))
			x.W.Int(int64(r.end))
			writeSlotNode(x, cn, r.owner)
			for _, rep := range reps {
				writeSlotNode(x, cn, rep)
			}
		}
	})
}

func cmdClusterShards(x *Ctx) {
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		var masters []*gossip.Node
		for _, id := range st.Order() {
			if n := st.Nodes[id]; n != nil && n.IsMaster() && !n.InHandshake() {
				masters = append(masters, n)
			}
		}
		x.W.Array(len(masters))
		for _, m := range masters {
			x.W.Map(2)
			x.W.BulkString("slots")
			var bounds []int
			for _, r := range m.Slots.Ranges() {
				bounds = append(bounds, r.Start, r.End)
			}
			x.W.Array(len(bounds))
			for _, b := range bounds {
				x.W.Int(int64(b))
			}
			x.W.BulkString("nodes")
			nodes := append([]*gossip.Node{m}, replicasOf(st, m.ID, true)...)
			x.W.Array(len(nodes))
			for _, n := range nodes {
				writeShardNode(x, cn, n)
			}
		}
	})
}

func writeShardNode(x *Ctx, cn *clusterNode, n *gossip.Node) {
	fields := 7
	if n.Hostname != "" {
		fields++
	}
	x.W.Map(fields)
	x.W.BulkString("id")
	x.W.BulkString(string(n.ID))
	x.W.BulkString("port")
	x.W.Int(int64(n.Port))
	x.W.BulkString("ip")
	x.W.BulkString(n.IP)
	x.W.BulkString("endpoint")
	x.W.BulkString(cn.endpoint(n))
	if n.Hostname != "" {
		x.W.BulkString("hostname")
		x.W.BulkString(n.Hostname)
	}
	x.W.BulkString("role")
	if n.IsReplica() {
		x.W.BulkString("replica")
	} else {
		x.W.BulkString("master")
	}
	x.W.BulkString("replication-offset")
	x.W.Int(n.ReplOffset)
	x.W.BulkString("health")
	if n.Flags&gossip.FlagFail != 0 {
		x.W.BulkString("fail")
	} else if n.IsReplica() && n.ReplOffset == 0 {
		x.W.BulkString("loading")
	} else {
		x.W.BulkString("online")
	}
}

func cmdClusterForget(x *Ctx) {
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		outs, err := st.Forget(now, gossip.NodeID(x.Arg(2)))
		replyOutputs(x, cn, outs, err)
	})
}

func cmdClusterReset(x *Ctx) {
	hard := false
	if len(x.Args) == 3 {
		switch strings.ToLower(x.Arg(2)) {
		case "hard":
			hard = true
		case "soft":
		default:
			x.W.Error(ErrSyntax)
			return
		}
	} else if len(x.Args) > 3 {
		subcommandError(x)
		return
	}
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		if st.Myself.IsMaster() && x.S.ks.DB(0).Len() != 0 {
			x.W.Error("ERR CLUSTER RESET can't be called with master nodes containing keys")
			return
		}
		cn.apply(st.Reset(now, hard))
		if err := cn.persist(st.Saved()); err != nil {
			x.W.Error("ERR error saving the cluster node config: " + err.Error())
			return
		}
		x.W.OK()
	})
}

func cmdClusterSaveConfig(x *Ctx) {
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		st.Saved()
		if err := cn.persist(true); err != nil {
			x.W.Error("ERR error saving the cluster node config: " + err.Error())
			return
		}
		x.W.OK()
	})
}

func cmdClusterSetConfigEpoch(x *Ctx) {
	n, ok := ParseInt(x.Args[2])
	if !ok {
		x.W.Error(ErrNotInt)
		return
	}
	if n < 0 {
		x.W.Error("ERR Invalid config epoch specified: " + x.Arg(2))
		return
	}
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		outs, err := st.SetConfigEpoch(now, uint64(n))
		replyOutputs(x, cn, outs, err)
	})
}

func cmdClusterBumpEpoch(x *Ctx) {
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		outs, bumped, epoch := st.BumpEpoch(now)
		cn.apply(outs)
		if bumped {
			x.W.Simple("BUMPED " + strconv.FormatUint(epoch, 10))
		} else {
			x.W.Simple("STILL " + strconv.FormatUint(epoch, 10))
		}
	})
}

func cmdClusterCountFailureReports(x *Ctx) {
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		n := st.Nodes[gossip.NodeID(x.Arg(2))]
		if n == nil {
			x.W.Error("ERR Unknown node " + x.Arg(2))
			return
		}
		valid := 0
		for _, at := range n.FailReports {
			if now-at <= 2*st.Cfg.NodeTimeout {
				valid++
			}
		}
		x.W.Int(int64(valid))
	})
}

// cmdClusterLinks lists one outbound and one inbound link per peer: the bus
// is connectionless (memberlist packets), so the links are logical and
// their buffers are always empty.
func cmdClusterLinks(x *Ctx) {
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		var peers []*gossip.Node
		for _, id := range st.Order() {
			if n := st.Nodes[id]; n != nil && n != st.Myself && !n.InHandshake() {
				peers = append(peers, n)
			}
		}
		x.W.Array(2 * len(peers))
		for _, n := range peers {
			for _, dir := range []string{"to", "from"} {
				x.W.Map(6)
				x.W.BulkString("direction")
				x.W.BulkString(dir)
				x.W.BulkString("node")
				x.W.BulkString(string(n.ID))
				x.W.BulkString("create-time")
				x.W.Int(n.Created)
				x.W.BulkString("events")
				if dir == "to" {
					x.W.BulkString("rw")
				} else {
					x.W.BulkString("r")
				}
				x.W.BulkString("send-buffer-allocated")
				x.W.Int(0)
				x.W.BulkString("send-buffer-used")
				x.W.Int(0)
			}
		}
	})
}

func cmdClusterReplicate(x *Ctx) {
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		target := st.Nodes[gossip.NodeID(x.Arg(2))]
		if target == nil {
			x.W.Error("ERR Unknown node " + x.Arg(2))
			return
		}
		if st.Myself.IsMaster() && target != st.Myself && target.IsMaster() &&
			(st.Myself.NumSlots != 0 || x.S.ks.DB(0).Len() != 0) {
			x.W.Error("ERR To set a master the node must be empty and without assigned slots.")
			return
		}
		outs, err := st.Replicate(now, target.ID)
		var une *gossip.UnknownNodeError
		if errors.As(err, &une) {
			err = errors.New("ERR Unknown node " + une.ID)
		}
		replyOutputs(x, cn, outs, err)
	})
}

// cmdClusterFailover is CLUSTER FAILOVER [FORCE|TAKEOVER], run on a replica.
func cmdClusterFailover(x *Ctx) {
	if !clusterOnly(x) {
		return
	}
	if len(x.Args) > 3 {
		subcommandError(x)
		return
	}
	mode := failover.ModeDefault
	if len(x.Args) == 3 {
		switch strings.ToLower(x.Arg(2)) {
		case "force":
			mode = failover.ModeForce
		case "takeover":
			mode = failover.ModeTakeover
		default:
			x.W.Error(ErrSyntax)
			return
		}
	}
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		outs, err := cn.fo.Manual(now, st, mode)
		if err != nil {
			x.W.Error(err.Error())
			return
		}
		cn.applyFailover(now, outs)
		x.W.OK()
	})
}

func cmdClusterReplicas(x *Ctx) {
	withCluster(x, func(cn *clusterNode, st *gossip.State, now int64) {
		n := st.Nodes[gossip.NodeID(x.Arg(2))]
		if n == nil {
			x.W.Error("ERR Unknown node " + x.Arg(2))
			return
		}
		if !n.IsMaster() {
			x.W.Error("ERR The specified node is not a master")
			return
		}
		lines := strings.Split(strings.TrimSuffix(gossip.FormatClusterNodes(st), "\n"), "\n")
		var out []string
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) > 3 && f[3] == string(n.ID) {
				out = append(out, l)
			}
		}
		sort.Strings(out)
		x.W.Array(len(out))
		for _, l := range out {
			x.W.BulkString(l)
		}
	})
}

func cmdClusterHelp(x *Ctx) {
	writeHelp(x, "CLUSTER",
		"ADDSLOTS <slot> [<slot> ...] | ADDSLOTSRANGE <start> <end> [...]",
		"    Serve these slots from this node.",
		"DELSLOTS <slot> [<slot> ...] | DELSLOTSRANGE <start> <end> [...]",
		"    Stop serving these slots (they become unassigned here).",
		"FLUSHSLOTS",
		"    Unassign every slot of this node (its database must be empty).",
		"SETSLOT <slot> IMPORTING <id> | MIGRATING <id> | STABLE | NODE <id> [TIMEOUT <ms>]",
		"    Open, close or hand over a slot during a migration; replies once this",
		"    master's replicas have it too (within TIMEOUT, 2000 ms by default).",
		"MEET <ip> <port> [<bus-port>]",
		"    Join the node at that address to this cluster.",
		"FORGET <id>",
		"    Drop a node from this node's view (and ban it for 60 seconds).",
		"REPLICATE <id>",
		"    Become a replica of the master <id>.",
		"FAILOVER [FORCE|TAKEOVER]",
		"    Promote this replica: after catching up with its master (default), without",
		"    waiting for the master (FORCE), or without an election (TAKEOVER).",
		"REPLICAS <id> | SLAVES <id>",
		"    The CLUSTER NODES lines of the replicas of <id>.",
		"NODES | SLOTS | SHARDS | INFO | MYID | LINKS",
		"    This node's view: nodes, slot map, shards, state, own id, bus links.",
		"KEYSLOT <key> | COUNTKEYSINSLOT <slot> | GETKEYSINSLOT <slot> <count>",
		"    The slot of a key; the keys this node holds in a slot.",
		"COUNT-FAILURE-REPORTS <id>",
		"    How many masters currently report <id> as failing.",
		"SET-CONFIG-EPOCH <epoch> | BUMPEPOCH",
		"    Set the first config epoch of a new node; take a new one.",
		"SAVECONFIG | RESET [HARD|SOFT]",
		"    Write the cluster config to disk; forget the cluster.",
	)
}
