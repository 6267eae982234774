package ctl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Node is one member of a loaded cluster.
type Node struct {
	// ID and Addr identify the node; Addr is what slotctl connects to.
	ID   string
	Addr string
	// Entry is the entry node's line about this node.
	Entry NodeInfo
	// Conn, View and Self are set when the node answered: its connection,
	// its own CLUSTER NODES and its myself line in it.
	Conn *Conn
	View []NodeInfo
	Self *NodeInfo
	// Err says why the node could not be reached or read.
	Err error
}

// Info returns the node's own line when it answered, the entry node's
// line about it otherwise.
func (n *Node) Info() *NodeInfo {
	if n.Self != nil {
		return n.Self
	}
	return &n.Entry
}

// Cluster is a cluster's topology as read from its nodes at one moment.
type Cluster struct {
	// EntryAddr is the address the user named.
	EntryAddr string
	// Nodes lists every node the entry node knows, the entry node first.
	Nodes []*Node
	opts  *Options
}

// Load reads the topology through addr: the entry node's CLUSTER NODES,
// then a connection to every node it lists (handshake and noaddr entries
// are skipped, unreachable nodes are kept with Err set) and each one's own
// view. It fails only when the entry node itself cannot be used.
func Load(ctx context.Context, addr string, o *Options) (*Cluster, error) {
	entry, err := Dial(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	if err := requireClusterMode(ctx, entry); err != nil {
		entry.Close()
		return nil, err
	}
	view, err := entry.Nodes(ctx)
	if err != nil {
		entry.Close()
		return nil, err
	}
	c := &Cluster{EntryAddr: addr, opts: o}
	for _, line := range view {
		n := &Node{ID: line.ID, Addr: line.Addr(), Entry: line}
		if line.Has("myself") {
			n.Addr = addr
			n.Conn = entry
			c.Nodes = append([]*Node{n}, c.Nodes...)
			continue
		}
		c.Nodes = append(c.Nodes, n)
	}
	for _, n := range c.Nodes {
		if n.Conn == nil {
			if n.Entry.Has("handshake") || n.Entry.Has("noaddr") || n.Entry.IP == "" {
				n.Err = fmt.Errorf("not reachable: the entry node lists it as %s", strings.Join(n.Entry.Flags, ","))
				continue
			}
			if n.Conn, n.Err = Dial(ctx, n.Addr, o); n.Err != nil {
				continue
			}
		}
		n.readView(ctx)
	}
	return c, nil
}

func (n *Node) readView(ctx context.Context) {
	v, err := n.Conn.Nodes(ctx)
	if err != nil {
		n.Err = err
		n.View, n.Self = nil, nil
		return
	}
	n.View, n.Self, n.Err = v, Myself(v), nil
}

// Refresh rereads every reachable node's view.
func (c *Cluster) Refresh(ctx context.Context) {
	for _, n := range c.Nodes {
		if n.Conn != nil {
			n.readView(ctx)
		}
	}
}

// Close closes every connection.
func (c *Cluster) Close() {
	for _, n := range c.Nodes {
		if n.Conn != nil {
			n.Conn.Close()
		}
	}
}

// Find returns the node whose id is id or starts with it (a unique prefix
// of at least 4 characters).
func (c *Cluster) Find(id string) (*Node, error) {
	var found *Node
	for _, n := range c.Nodes {
		if n.ID == id {
			return n, nil
		}
		if len(id) >= 4 && strings.HasPrefix(n.ID, id) {
			if found != nil {
				return nil, fmt.Errorf("node id prefix %q is ambiguous (%s, %s)", id, found.ID, n.ID)
			}
			found = n
		}
	}
	if found == nil {
		return nil, fmt.Errorf("no node with id %q in the cluster", id)
	}
	return found, nil
}

// Masters returns the masters ordered by their first slot (masters without
// slots last, by address).
func (c *Cluster) Masters() []*Node {
	var ms []*Node
	for _, n := range c.Nodes {
		if n.Info().IsMaster() {
			ms = append(ms, n)
		}
	}
	sort.SliceStable(ms, func(i, j int) bool {
		a, b := ms[i].Info(), ms[j].Info()
		if (len(a.Slots) == 0) != (len(b.Slots) == 0) {
			return len(a.Slots) != 0
		}
		if len(a.Slots) != 0 && a.Slots[0].Start != b.Slots[0].Start {
			return a.Slots[0].Start < b.Slots[0].Start
		}
		return ms[i].Addr < ms[j].Addr
	})
	return ms
}

// ReplicasOf returns the nodes that say they replicate id.
func (c *Cluster) ReplicasOf(id string) []*Node {
	var rs []*Node
	for _, n := range c.Nodes {
		if i := n.Info(); i.IsReplica() && i.MasterID == id {
			rs = append(rs, n)
		}
	}
	return rs
}

// requireClusterMode checks INFO for cluster_enabled:1, as redis-cli does
// before it uses a node.
func requireClusterMode(ctx context.Context, c *Conn) error {
	info, err := c.Info(ctx)
	if err != nil {
		return err
	}
	if info["cluster_enabled"] != "1" {
		return &CmdError{Addr: c.Addr, Cmd: "INFO", Err: errors.New("cluster support is off (cluster_enabled is not 1): start it with cluster-enabled yes")}
	}
	return nil
}

// requireEmpty checks that a node may join a cluster: cluster mode on, no
// keys (no db0 line in INFO) and knowing no other node.
func requireEmpty(ctx context.Context, c *Conn) error {
	info, err := c.Info(ctx)
	if err != nil {
		return err
	}
	if info["cluster_enabled"] != "1" {
		return &CmdError{Addr: c.Addr, Cmd: "INFO", Err: errors.New("cluster support is off (cluster_enabled is not 1): start it with cluster-enabled yes")}
	}
	if v, ok := info["db0"]; ok {
		return &CmdError{Addr: c.Addr, Cmd: "INFO", Err: fmt.Errorf("node is not empty (db0:%s): flush it or use another node", v)}
	}
	ci, err := c.ClusterInfo(ctx)
	if err != nil {
		return err
	}
	if k := ci["cluster_known_nodes"]; k != "1" {
		return &CmdError{Addr: c.Addr, Cmd: "CLUSTER INFO", Err: fmt.Errorf("node already knows other nodes (cluster_known_nodes:%s): it is part of a cluster; CLUSTER RESET it first", k)}
	}
	return nil
}

// meetArgs returns the CLUSTER MEET arguments that make a node meet the
// node at addr whose bus port is bus. MEET needs an IP address, so a host
// name is resolved here; the bus port is given only when it is not the
// default port+10000, as redis-cli does.
func meetArgs(ctx context.Context, addr string, bus int) ([]any, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("bad port in %q", addr)
	}
	ip, err := resolveIP(ctx, host)
	if err != nil {
		return nil, err
	}
	args := []any{"CLUSTER", "MEET", ip, strconv.Itoa(port)}
	if bus != 0 && bus != port+10000 {
		args = append(args, strconv.Itoa(bus))
	}
	return args, nil
}

func resolveIP(ctx context.Context, host string) (string, error) {
	if ip := net.ParseIP(host); ip != nil {
		return host, nil
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %v", host, err)
	}
	for _, a := range addrs {
		if a.IP.To4() != nil {
			return a.IP.String(), nil
		}
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("resolve %s: no address", host)
	}
	return addrs[0].IP.String(), nil
}

// waitFor polls cond until it returns done, the deadline (o.Wait) passes
// or ctx ends. cond returns a progress text shown while waiting.
func waitFor(ctx context.Context, o *Options, r *Reporter, what string, cond func() (done bool, progress string)) error {
	start := time.Now()
	deadline := start.Add(o.wait())
	for {
		done, prog := cond()
		if done {
			r.endProgress()
			return nil
		}
		if r.live {
			r.Progress("Waiting for %s: %s (%ds)", what, prog, int(time.Since(start).Seconds()))
		} else {
			r.Progress("Waiting for %s: %s", what, prog)
		}
		if time.Now().After(deadline) {
			r.endProgress()
			return fmt.Errorf("timed out after %v waiting for %s: %s", o.wait(), what, prog)
		}
		select {
		case <-ctx.Done():
			r.endProgress()
			return ctx.Err()
		case <-time.After(o.poll()):
		}
	}
}

// waitingOn names the nodes a wait still waits for (up to four).
func waitingOn(addrs []string) string {
	if len(addrs) == 0 {
		return ""
	}
	if len(addrs) > 4 {
		return fmt.Sprintf(", waiting on %s and %d more", strings.Join(addrs[:4], ", "), len(addrs)-4)
	}
	return ", waiting on " + strings.Join(addrs, ", ")
}
