// Package gossiptest runs many gossip.State machines in one process on a
// simulated network with a simulated clock, deterministically from a seed.
// Messages travel encoded, through the real codec, so byte counts are real.
package gossiptest

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/slotd/slotd/gossip"
	"github.com/slotd/slotd/slots"
)

// Member is one simulated node.
type Member struct {
	Index int
	State *gossip.State
	Addr  gossip.Addr
	Cfg   gossip.Config
	// Conf is the last nodes.conf the node persisted (see PersistedConf).
	Conf      []byte
	confStale bool
	Down      bool
	Events    []gossip.Event
	// Lost accumulates the slots the node was told to drop.
	Lost slots.Bitmap
	// SentBytes counts bus bytes this node sent.
	SentBytes uint64
	// Roles lists the masters RoleChanged outputs named, in order.
	Roles []gossip.NodeID
}

// Hub is the simulated network and clock.
type Hub struct {
	Seed    uint64
	Now     int64
	Members []*Member
	// Latency is the one-way delay of every frame in ms; Jitter adds up to
	// that many ms more, drawn from the seeded source.
	Latency, Jitter int64
	// Bytes and Frames count everything put on the wire.
	Bytes, Frames uint64
	// RedisBytes estimates what the same messages would cost in Redis 7's
	// bus format (fixed 2256-byte header with the full slot bitmap, 104
	// bytes per gossip entry), for comparison.
	RedisBytes uint64
	// MaxFrame is the largest frame sent.
	MaxFrame int
	// Logf, when set, receives every event (t.Logf).
	Logf func(format string, args ...any)
	// AfterTick, when set, runs after member i's Tick outputs were applied:
	// a state machine riding on the gossip state (package failover) ticks here.
	AfterTick func(i int)
	// AfterStep, when set, runs after member i's Step outputs were applied.
	AfterStep func(i int)
	// OnOutput, when set, sees every output Apply carries out for member i,
	// after the hub's own handling (Forward, RoleChanged, ... for package failover).
	OnOutput func(i int, o gossip.Output)

	rand   *rand.Rand
	byAddr map[gossip.Addr]*Member
	group  map[int]int
	drop   map[[2]int]int
	queue  events
	seq    uint64
	ticks  uint64
}

// Ticks reports how many Tick calls the hub made.
func (h *Hub) Ticks() uint64 { return h.ticks }

// New makes an empty hub; every random choice derives from seed.
func New(seed uint64) *Hub {
	return &Hub{
		Seed:    seed,
		Now:     1_000_000, // not zero: zero means "never" in the state
		Latency: 1,
		rand:    rand.New(rand.NewPCG(seed, 0x9055)),
		byAddr:  make(map[gossip.Addr]*Member),
		group:   make(map[int]int),
		drop:    make(map[[2]int]int),
	}
}

// Add creates n fresh nodes (masters without slots) with the given node
// timeout and returns their indexes.
func (h *Hub) Add(n int, nodeTimeout int64) []int {
	var idx []int
	for i := 0; i < n; i++ {
		k := len(h.Members)
		r := rand.New(rand.NewPCG(h.Seed, uint64(k)+1))
		cfg := gossip.Config{NodeTimeout: nodeTimeout, RequireFullCoverage: true, Rand: r}
		ip := "10.0." + strconv.Itoa(k/250) + "." + strconv.Itoa(k%250+1)
		m := &Member{Index: k, Cfg: cfg, Addr: gossip.Addr{IP: ip, CPort: 17000 + k}}
		m.State = gossip.NewState(cfg, gossip.RandomID(r), ip, 7000+k, 17000+k)
		h.Members = append(h.Members, m)
		h.byAddr[m.Addr] = m
		h.schedTick(m, h.Now+int64(h.rand.IntN(gossip.TickInterval)))
		idx = append(idx, k)
	}
	return idx
}

// ID returns member i's current node id.
func (h *Hub) ID(i int) gossip.NodeID { return h.Members[i].State.Myself.ID }

// Apply carries out outputs as member i's bus loop would.
func (h *Hub) Apply(i int, outs []gossip.Output) {
	m := h.Members[i]
	for _, o := range outs {
		switch o := o.(type) {
		case *gossip.Send:
			h.RedisBytes += redisSize(o.Msg)
			h.send(m, o.Addr, gossip.Encode(o.Msg))
		case *gossip.Broadcast:
			frame := gossip.Encode(o.Msg)
			for _, p := range o.To {
				h.RedisBytes += redisSize(o.Msg)
				h.send(m, p.Addr, frame)
			}
		case *gossip.Persist:
			// Formatted lazily: every call ends with a Persist when it
			// changed the config, so the state between calls is always
			// what was last persisted.
			m.confStale = true
		case *gossip.Event:
			m.Events = append(m.Events, *o)
			if h.Logf != nil {
				h.Logf("t=%d n%d %s %s %s", h.Now, i, o.Kind, short(o.Node), o.Detail)
			}
		case *gossip.SlotsLost:
			for j := 0; j < slots.Count; j++ {
				if o.Slots.Has(j) {
					m.Lost.Set(j)
				}
			}
		case *gossip.RoleChanged:
			m.Roles = append(m.Roles, o.Master)
		}
		if h.OnOutput != nil {
			h.OnOutput(i, o)
		}
	}
}

func short(id gossip.NodeID) string {
	if len(id) > 8 {
		return string(id[:8])
	}
	return string(id)
}

func (h *Hub) send(from *Member, to gossip.Addr, frame []byte) {
	h.Bytes += uint64(len(frame))
	h.Frames++
	h.MaxFrame = max(h.MaxFrame, len(frame))
	from.SentBytes += uint64(len(frame))
	dst := h.byAddr[to]
	if dst == nil || h.group[from.Index] != h.group[dst.Index] {
		return
	}
	if pct := h.drop[[2]int{from.Index, dst.Index}]; pct > 0 && h.rand.IntN(100) < pct {
		return
	}
	at := h.Now + h.Latency
	if h.Jitter > 0 {
		at += h.rand.Int64N(h.Jitter + 1)
	}
	h.seq++
	heap.Push(&h.queue, &event{at: at, seq: h.seq, to: dst.Index, frame: frame})
}

func (h *Hub) schedTick(m *Member, at int64) {
	h.seq++
	heap.Push(&h.queue, &event{at: at, seq: h.seq, to: m.Index, tick: true})
}

// Run advances the simulated clock by d ms, delivering frames and ticking
// nodes in time order (ties in the order they were scheduled).
func (h *Hub) Run(d int64) { h.RunUntil(d, nil) }

// RunUntil runs for at most d ms and stops early, at a tick boundary, once
// cond holds (checked every 100 ms). It reports whether cond held.
func (h *Hub) RunUntil(d int64, cond func() bool) bool {
	end := h.Now + d
	nextCheck := h.Now
	for len(h.queue) > 0 && h.queue[0].at <= end {
		e := heap.Pop(&h.queue).(*event)
		if cond != nil && e.at >= nextCheck {
			h.Now = max(h.Now, nextCheck)
			if cond() {
				heap.Push(&h.queue, e)
				return true
			}
			nextCheck += gossip.TickInterval
		}
		h.Now = e.at
		m := h.Members[e.to]
		if e.tick {
			h.schedTick(m, e.at+gossip.TickInterval)
			if m.Down {
				continue
			}
			h.ticks++
			h.Apply(m.Index, m.State.Tick(h.Now))
			if h.AfterTick != nil && !m.Down {
				h.AfterTick(m.Index)
			}
			continue
		}
		if m.Down {
			continue
		}
		msg, _, err := gossip.ParseMessage(e.frame)
		if err != nil {
			panic(fmt.Sprintf("hub: own frame does not parse: %v", err))
		}
		h.Apply(m.Index, m.State.Step(h.Now, "", msg))
		if h.AfterStep != nil {
			h.AfterStep(m.Index)
		}
	}
	h.Now = end
	return cond != nil && cond()
}

// Partition splits the members into groups that cannot reach each other;
// members not listed form one more group together.
func (h *Hub) Partition(groups ...[]int) {
	clear(h.group)
	for g, members := range groups {
		for _, i := range members {
			h.group[i] = g + 1
		}
	}
}

// CanReach reports whether frames from member a reach member b now
// (same partition group; drops and the target being down aside).
func (h *Hub) CanReach(a, b int) bool { return h.group[a] == h.group[b] }

// Heal removes every partition.
func (h *Hub) Heal() { clear(h.group) }

// Drop loses pct percent of frames from member from to member to.
func (h *Hub) Drop(from, to, pct int) { h.drop[[2]int{from, to}] = pct }

// PersistedConf returns the nodes.conf member i last persisted.
func (m *Member) PersistedConf() []byte {
	if m.confStale {
		m.Conf = gossip.FormatNodesConf(m.State)
		m.confStale = false
	}
	return m.Conf
}

// Kill stops a member: it neither ticks nor receives.
func (h *Hub) Kill(i int) {
	h.Members[i].PersistedConf()
	h.Members[i].Down = true
}

// Restart reloads member i from its last persisted nodes.conf, as a
// restarted process would, and starts it again.
func (h *Hub) Restart(i int) error {
	m := h.Members[i]
	s, err := gossip.ParseNodesConf(m.PersistedConf())
	if err != nil {
		return err
	}
	s.Cfg = m.Cfg
	s.Restart(h.Now)
	m.State = s
	m.Down = false
	return nil
}

type event struct {
	at    int64
	seq   uint64
	to    int
	tick  bool
	frame []byte
}

type events []*event

func (q events) Len() int { return len(q) }
func (q events) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q events) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *events) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *events) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// redisSize is the size of m in Redis 7.0's cluster bus format.
func redisSize(m gossip.Message) uint64 {
	const header, gossipEntry = 2256, 104
	switch m := m.(type) {
	case *gossip.Ping:
		return header + gossipEntry*uint64(len(m.Gossip))
	case *gossip.Pong:
		return header + gossipEntry*uint64(len(m.Gossip))
	case *gossip.Meet:
		return header + gossipEntry*uint64(len(m.Gossip))
	case *gossip.Fail:
		return header + 40
	case *gossip.Update:
		return header + 8 + 40 + 2048
	case *gossip.Publish:
		return header + 8 + uint64(len(m.Channel)+len(m.Message))
	}
	return header
}
