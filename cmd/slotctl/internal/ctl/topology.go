package ctl

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/slotd/slotd/slots"
)

// NodeInfo is one line of CLUSTER NODES: what one node believes about
// another (or, with the myself flag, about itself).
type NodeInfo struct {
	ID       string
	IP       string // may be empty for a noaddr node
	Port     int
	BusPort  int
	Hostname string
	Flags    []string
	// MasterID is the master's id for a replica, "" for a master.
	MasterID    string
	PingSent    int64
	PongRecv    int64
	ConfigEpoch uint64
	Connected   bool
	Slots       []slots.Range
	// SlotTokens are the slot fields as printed (ranges only, no open-slot
	// marks); the agreement signature uses them verbatim.
	SlotTokens []string
	// Migrating maps a slot to the target node id; Importing to the source.
	// Only the myself line carries them.
	Migrating map[int]string
	Importing map[int]string
}

// Addr returns ip:port, the address clients use.
func (n *NodeInfo) Addr() string { return net.JoinHostPort(n.IP, strconv.Itoa(n.Port)) }

// Has reports whether the node carries flag f.
func (n *NodeInfo) Has(f string) bool {
	for _, x := range n.Flags {
		if x == f {
			return true
		}
	}
	return false
}

// IsMaster reports whether the node is a master.
func (n *NodeInfo) IsMaster() bool { return n.Has("master") }

// IsReplica reports whether the node is a replica ("slave" in the flags).
func (n *NodeInfo) IsReplica() bool { return n.Has("slave") }

// Failing reports whether the line marks the node as failed or suspected.
func (n *NodeInfo) Failing() bool { return n.Has("fail") || n.Has("fail?") }

// SlotCount returns how many slots the line says the node serves.
func (n *NodeInfo) SlotCount() int {
	c := 0
	for _, r := range n.Slots {
		c += r.End - r.Start + 1
	}
	return c
}

// ParseNodes parses the text of CLUSTER NODES. It accepts what redis-server
// 7 prints, including hostnames after the address, open-slot marks on the
// myself line and a missing final newline.
func ParseNodes(text string) ([]NodeInfo, error) {
	var out []NodeInfo
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		n, err := parseNodeLine(line)
		if err != nil {
			return nil, fmt.Errorf("CLUSTER NODES line %d %q: %w", i+1, line, err)
		}
		out = append(out, n)
	}
	return out, nil
}

func parseNodeLine(line string) (NodeInfo, error) {
	f := strings.Fields(line)
	if len(f) < 8 {
		return NodeInfo{}, fmt.Errorf("%d fields, want at least 8", len(f))
	}
	n := NodeInfo{ID: f[0]}
	addr := f[1]
	if a, host, ok := strings.Cut(addr, ","); ok {
		addr, n.Hostname = a, host
	}
	hostport, bus, _ := strings.Cut(addr, "@")
	if bus != "" {
		p, err := strconv.Atoi(bus)
		if err != nil {
			return NodeInfo{}, fmt.Errorf("bad bus port %q", bus)
		}
		n.BusPort = p
	}
	// A noaddr node prints ":0@0"; net.SplitHostPort copes with IPv6.
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return NodeInfo{}, fmt.Errorf("bad address %q", hostport)
	}
	n.IP = host
	if n.Port, err = strconv.Atoi(port); err != nil {
		return NodeInfo{}, fmt.Errorf("bad port %q", port)
	}
	n.Flags = strings.Split(f[2], ",")
	if f[3] != "-" {
		n.MasterID = f[3]
	}
	if n.PingSent, err = strconv.ParseInt(f[4], 10, 64); err != nil {
		return NodeInfo{}, fmt.Errorf("bad ping-sent %q", f[4])
	}
	if n.PongRecv, err = strconv.ParseInt(f[5], 10, 64); err != nil {
		return NodeInfo{}, fmt.Errorf("bad pong-recv %q", f[5])
	}
	if n.ConfigEpoch, err = strconv.ParseUint(f[6], 10, 64); err != nil {
		return NodeInfo{}, fmt.Errorf("bad config epoch %q", f[6])
	}
	n.Connected = f[7] == "connected"
	for _, tok := range f[8:] {
		if strings.HasPrefix(tok, "[") {
			if err := n.parseOpenSlot(tok); err != nil {
				return NodeInfo{}, err
			}
			continue
		}
		r, ok := slots.ParseRange(tok)
		if !ok {
			return NodeInfo{}, fmt.Errorf("bad slot range %q", tok)
		}
		n.Slots = append(n.Slots, r)
		n.SlotTokens = append(n.SlotTokens, tok)
	}
	return n, nil
}

// parseOpenSlot reads "[N->-id]" (migrating to id) or "[N-<-id]" (importing
// from id).
func (n *NodeInfo) parseOpenSlot(tok string) error {
	body := strings.TrimSuffix(strings.TrimPrefix(tok, "["), "]")
	var sep string
	var dst *map[int]string
	if strings.Contains(body, "->-") {
		sep, dst = "->-", &n.Migrating
	} else if strings.Contains(body, "-<-") {
		sep, dst = "-<-", &n.Importing
	} else {
		return fmt.Errorf("bad open slot %q", tok)
	}
	s, id, _ := strings.Cut(body, sep)
	slot, err := strconv.Atoi(s)
	if err != nil || slot < 0 || slot >= slots.Count || id == "" {
		return fmt.Errorf("bad open slot %q", tok)
	}
	if *dst == nil {
		*dst = make(map[int]string)
	}
	(*dst)[slot] = id
	return nil
}

// Myself returns the line flagged myself, or nil.
func Myself(view []NodeInfo) *NodeInfo {
	for i := range view {
		if view[i].Has("myself") {
			return &view[i]
		}
	}
	return nil
}

// ConfigSignature is the string two nodes must share for redis-cli to say
// "All nodes agree about slots configuration": for every line that lists
// slots, "<id>:<slot tokens sorted>", the entries sorted and joined with
// "|". Open-slot marks do not count, so a slot being migrated does not make
// nodes disagree.
func ConfigSignature(view []NodeInfo) string {
	var parts []string
	for _, n := range view {
		if len(n.SlotTokens) == 0 {
			continue
		}
		toks := append([]string(nil), n.SlotTokens...)
		sort.Strings(toks)
		parts = append(parts, n.ID+":"+strings.Join(toks, ","))
	}
	sort.Strings(parts)
	return strings.Join(parts, "|")
}

// FormatSlots prints ranges as redis-cli does in its node listing:
// "[0-99],[101-5460]".
func FormatSlots(rs []slots.Range) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = "[" + r.String() + "]"
	}
	return strings.Join(parts, ",")
}
