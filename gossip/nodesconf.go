package gossip

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/slotd/slotd/slots"
)

// ErrNodesConf is wrapped by every nodes.conf parse error; a node refuses to
// start on a corrupt file instead of silently starting afresh.
var ErrNodesConf = errors.New("nodes.conf")

// FormatClusterNodes renders CLUSTER NODES: one line per known node (those
// in handshake too), each ending in "\n", in the state's stable order.
func FormatClusterNodes(s *State) string {
	return string(appendNodes(nil, s, true))
}

// FormatNodesConf renders the cluster config file in redis-server's format:
// the CLUSTER NODES lines without handshake nodes, then the vars line.
func FormatNodesConf(s *State) []byte {
	b := appendNodes(nil, s, false)
	b = append(b, "vars currentEpoch "...)
	b = strconv.AppendUint(b, s.CurrentEpoch, 10)
	b = append(b, " lastVoteEpoch "...)
	b = strconv.AppendUint(b, s.LastVoteEpoch, 10)
	return append(b, '\n')
}

func appendNodes(b []byte, s *State, handshake bool) []byte {
	for _, id := range s.order {
		n := s.Nodes[id]
		if n.InHandshake() && !handshake {
			continue
		}
		b = appendNodeLine(b, s, n)
	}
	return b
}

func appendNodeLine(b []byte, s *State, n *Node) []byte {
	b = append(b, n.ID...)
	b = append(b, ' ')
	b = append(b, n.IP...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(n.Port), 10)
	b = append(b, '@')
	b = strconv.AppendInt(b, int64(n.CPort), 10)
	if n.Hostname != "" {
		b = append(b, ',')
		b = append(b, n.Hostname...)
	}
	b = append(b, ' ')
	b = append(b, (n.Flags & flagsWire).String()...)
	b = append(b, ' ')
	if n.Master != "" {
		b = append(b, n.Master...)
	} else {
		b = append(b, '-')
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, n.PingSent, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, n.PongReceived, 10)
	b = append(b, ' ')
	epoch := n.ConfigEpoch
	if m := s.Nodes[n.Master]; n.Master != "" && m != nil {
		// A replica shows the epoch of the config it follows.
		epoch = m.ConfigEpoch
	}
	b = strconv.AppendUint(b, epoch, 10)
	if n.Connected || n == s.Myself {
		b = append(b, " connected"...)
	} else {
		b = append(b, " disconnected"...)
	}
	if n.NumSlots > 0 {
		for _, r := range slotRanges(&n.Slots) {
			b = append(b, ' ')
			b = append(b, r.String()...)
		}
	}
	if n == s.Myself {
		b = appendOpenSlots(b, s)
	}
	return append(b, '\n')
}

func appendOpenSlots(b []byte, s *State) []byte {
	if len(s.Migrating) == 0 && len(s.Importing) == 0 {
		return b
	}
	open := make([]int, 0, len(s.Migrating)+len(s.Importing))
	for j := range s.Migrating {
		open = append(open, j)
	}
	for j := range s.Importing {
		if _, ok := s.Migrating[j]; !ok {
			open = append(open, j)
		}
	}
	sort.Ints(open)
	for _, j := range open {
		b = append(b, " ["...)
		b = strconv.AppendInt(b, int64(j), 10)
		if id, ok := s.Migrating[j]; ok {
			b = append(b, "->-"...)
			b = append(b, id...)
		} else {
			b = append(b, "-<-"...)
			b = append(b, s.Importing[j]...)
		}
		b = append(b, ']')
	}
	return b
}

// ParseNodesConf reads a config file written by FormatNodesConf or by
// redis-server. The result has a zero Cfg: set Cfg, then call Restart.
func ParseNodesConf(data []byte) (*State, error) {
	s := newEmpty(Config{})
	seenVars := false
	for lineNo, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%w: line %d: %s", ErrNodesConf, lineNo+1, fmt.Sprintf(format, a...))
		}
		f := strings.Fields(line)
		if f[0] == "vars" {
			if seenVars {
				return nil, bad("second vars line")
			}
			seenVars = true
			if len(f)%2 != 1 {
				return nil, bad("vars need name value pairs")
			}
			for i := 1; i < len(f); i += 2 {
				v, err := strconv.ParseUint(f[i+1], 10, 64)
				if err != nil || v > MaxEpoch && (f[i] == "currentEpoch" || f[i] == "lastVoteEpoch") {
					return nil, bad("bad %s value %q", f[i], f[i+1])
				}
				switch f[i] {
				case "currentEpoch":
					s.CurrentEpoch = v
				case "lastVoteEpoch":
					s.LastVoteEpoch = v
				}
			}
			continue
		}
		if len(f) < 8 {
			return nil, bad("expected at least 8 fields, got %d", len(f))
		}
		if !ValidID(f[0]) {
			return nil, bad("bad node id %q", f[0])
		}
		id := NodeID(f[0])
		if s.Nodes[id] != nil {
			return nil, bad("node %s listed twice", id)
		}
		n := &Node{ID: id}
		if !parseNodeAddr(f[1], n) {
			return nil, bad("bad address %q", f[1])
		}
		fl, ok := parseFlags(f[2])
		if !ok {
			return nil, bad("bad flags %q", f[2])
		}
		n.Flags = fl
		if fl&FlagHandshake != 0 {
			return nil, bad("handshake node in config")
		}
		if f[3] != "-" {
			if !ValidID(f[3]) {
				return nil, bad("bad master id %q", f[3])
			}
			n.Master = NodeID(f[3])
		}
		var err1, err2, err3 error
		n.PingSent, err1 = strconv.ParseInt(f[4], 10, 64)
		n.PongReceived, err2 = strconv.ParseInt(f[5], 10, 64)
		n.ConfigEpoch, err3 = strconv.ParseUint(f[6], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || n.PingSent < 0 || n.PongReceived < 0 || n.ConfigEpoch > MaxEpoch {
			return nil, bad("bad ping/pong/epoch fields")
		}
		n.ClaimEpoch = n.ConfigEpoch
		switch f[7] {
		case "connected":
			n.Connected = true
		case "disconnected":
		default:
			return nil, bad("bad link state %q", f[7])
		}
		if fl&FlagMyself != 0 {
			if s.Myself != nil {
				return nil, bad("second myself line")
			}
			s.Myself = n
		}
		s.addNode(n)
		for _, tok := range f[8:] {
			if strings.HasPrefix(tok, "[") {
				if fl&FlagMyself == 0 {
					return nil, bad("open slot %q on a line other than myself", tok)
				}
				if err := parseOpenSlot(s, tok); err != nil {
					return nil, bad("%v", err)
				}
				continue
			}
			r, ok := slots.ParseRange(tok)
			if !ok {
				return nil, bad("bad slot range %q", tok)
			}
			for j := r.Start; j <= r.End; j++ {
				if s.Owner[j] != "" {
					return nil, bad("slot %d owned twice", j)
				}
				s.Owner[j] = n.ID
				n.addSlot(j)
			}
		}
	}
	if s.Myself == nil {
		return nil, fmt.Errorf("%w: no myself line", ErrNodesConf)
	}
	for _, id := range s.order {
		n := s.Nodes[id]
		if n.NumSlots > 0 && !n.IsMaster() {
			return nil, fmt.Errorf("%w: node %s serves slots but is not a master", ErrNodesConf, id)
		}
	}
	s.dirty = false
	return s, nil
}

func parseNodeAddr(s string, n *Node) bool {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return false
	}
	hostport, rest := s[:at], s[at+1:]
	cport, host, hasHost := strings.Cut(rest, ",")
	colon := strings.LastIndexByte(hostport, ':')
	if colon < 0 {
		return false
	}
	port, err := strconv.Atoi(hostport[colon+1:])
	if err != nil || port < 0 || port > 65535 || hostport[colon+1:] != strconv.Itoa(port) {
		return false
	}
	cp, err := strconv.Atoi(cport)
	if err != nil || cp < 0 || cp > 65535 || cport != strconv.Itoa(cp) {
		return false
	}
	if hasHost && (host == "" || strings.ContainsAny(host, ",@ ")) {
		return false
	}
	n.IP, n.Port, n.CPort, n.Hostname = hostport[:colon], port, cp, host
	return true
}

func parseOpenSlot(s *State, tok string) error {
	if !strings.HasSuffix(tok, "]") {
		return fmt.Errorf("bad open slot %q", tok)
	}
	body := tok[1 : len(tok)-1]
	for _, sep := range []string{"->-", "-<-"} {
		num, id, ok := strings.Cut(body, sep)
		if !ok {
			continue
		}
		r, ok := slots.ParseRange(num)
		if !ok || r.Start != r.End || !ValidID(id) {
			return fmt.Errorf("bad open slot %q", tok)
		}
		if sep == "->-" {
			s.Migrating[r.Start] = NodeID(id)
		} else {
			s.Importing[r.Start] = NodeID(id)
		}
		return nil
	}
	return fmt.Errorf("bad open slot %q", tok)
}

// Restart prepares a state loaded from nodes.conf to run again: set Cfg
// first. Links start disconnected and no ping is pending, so the first
// ticks ping every node and a node that does not answer becomes PFAIL after
// the node timeout as usual.
func (s *State) Restart(now int64) {
	if s.Cfg.NodeTimeout <= 0 {
		s.Cfg.NodeTimeout = DefaultNodeTimeout
	}
	for _, id := range s.order {
		n := s.Nodes[id]
		n.PingSent = 0
		n.FailReports = nil
		if n != s.Myself {
			n.Connected = false
			n.Flags &^= FlagPFail
			n.DataReceived = now
		}
	}
	s.running = false
	s.Status = ClusterFail
}

// slotRanges is Bitmap.Ranges stepping over empty and full bytes, which is
// nearly all of them: config writes and CLUSTER NODES format every node.
func slotRanges(bm *slots.Bitmap) []slots.Range {
	var out []slots.Range
	start := -1
	for j := 0; j < slots.Count; {
		if j&7 == 0 {
			switch bm[j>>3] {
			case 0:
				if start >= 0 {
					out = append(out, slots.Range{Start: start, End: j - 1})
					start = -1
				}
				j += 8
				continue
			case 0xff:
				if start < 0 {
					start = j
				}
				j += 8
				continue
			}
		}
		if bm.Has(j) {
			if start < 0 {
				start = j
			}
		} else if start >= 0 {
			out = append(out, slots.Range{Start: start, End: j - 1})
			start = -1
		}
		j++
	}
	if start >= 0 {
		out = append(out, slots.Range{Start: start, End: slots.Count - 1})
	}
	return out
}
