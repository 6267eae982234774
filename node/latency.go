package node

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// latencyHistoryLen is how many samples an event keeps, one per second.
const latencyHistoryLen = 160

type latencySample struct {
	at int64 // unix seconds
	ms int64
}

type latencyEvent struct {
	samples []latencySample // oldest first
	max     int64
}

// latencyMonitor keeps the LATENCY samples per event class.
type latencyMonitor struct {
	mu     sync.Mutex
	events map[string]*latencyEvent
}

func (m *latencyMonitor) add(event string, ms int64) {
	now := time.Now().Unix()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == nil {
		m.events = map[string]*latencyEvent{}
	}
	ev := m.events[event]
	if ev == nil {
		ev = &latencyEvent{}
		m.events[event] = ev
	}
	if ms > ev.max {
		ev.max = ms
	}
	// Samples in the same second merge, keeping the worst.
	if n := len(ev.samples); n > 0 && ev.samples[n-1].at == now {
		if ms > ev.samples[n-1].ms {
			ev.samples[n-1].ms = ms
		}
		return
	}
	ev.samples = append(ev.samples, latencySample{at: now, ms: ms})
	if len(ev.samples) > latencyHistoryLen {
		ev.samples = ev.samples[1:]
	}
}

func (m *latencyMonitor) names() []string {
	var out []string
	for n := range m.events {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func registerLatency(t Table) {
	acl := []string{"admin", "slow", "dangerous"}
	fl := FlagAdmin | FlagNoScript | FlagLoading | FlagStale
	special := []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"}
	t.Add(&Command{Name: "latency", Arity: -2, ACL: []string{"slow"}, Handler: cmdContainerHelp})
	t.Add(&Command{Name: "latency|latest", Arity: 2, Flags: fl, ACL: acl, Tips: special, Handler: cmdLatencyLatest})
	t.Add(&Command{Name: "latency|history", Arity: 3, Flags: fl, ACL: acl, Tips: special, Handler: cmdLatencyHistory})
	t.Add(&Command{Name: "latency|reset", Arity: -2, Flags: fl, ACL: acl, Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Handler: cmdLatencyReset})
	t.Add(&Command{Name: "latency|doctor", Arity: 2, Flags: fl, ACL: acl, Tips: special, Handler: cmdLatencyDoctor})
	t.Add(&Command{Name: "latency|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: []string{"slow"}, Handler: cmdLatencyHelp})
}

func cmdLatencyLatest(x *Ctx) {
	m := &x.S.ext.latency
	m.mu.Lock()
	defer m.mu.Unlock()
	names := m.names()
	x.W.Array(len(names))
	for _, n := range names {
		ev := m.events[n]
		last := ev.samples[len(ev.samples)-1]
		x.W.Array(4)
		x.W.BulkString(n)
		x.W.Int(last.at)
		x.W.Int(last.ms)
		x.W.Int(ev.max)
	}
}

func cmdLatencyHistory(x *Ctx) {
	m := &x.S.ext.latency
	m.mu.Lock()
	defer m.mu.Unlock()
	ev := m.events[x.Arg(2)]
	if ev == nil {
		x.W.Array(0)
		return
	}
	x.W.Array(len(ev.samples))
	for _, s := range ev.samples {
		x.W.Array(2)
		x.W.Int(s.at)
		x.W.Int(s.ms)
	}
}

func cmdLatencyReset(x *Ctx) {
	m := &x.S.ext.latency
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	if len(x.Args) == 2 {
		n = len(m.events)
		m.events = nil
	} else {
		for _, a := range x.Args[2:] {
			if _, ok := m.events[string(a)]; ok {
				delete(m.events, string(a))
				n++
			}
		}
	}
	x.W.Int(int64(n))
}

func cmdLatencyDoctor(x *Ctx) {
	m := &x.S.ext.latency
	m.mu.Lock()
	defer m.mu.Unlock()
	var sb strings.Builder
	switch {
	case len(m.events) == 0 && x.S.ext.latencyThreshold.Load() == 0:
		sb.WriteString("Latency monitoring is off on this node (latency-monitor-threshold is 0). Turn it on with CONFIG SET latency-monitor-threshold <milliseconds>.\n")
	case len(m.events) == 0:
		sb.WriteString("No latency spike has been recorded since this node started.\n")
	default:
		sb.WriteString("Latency spikes recorded on this node, by event:\n\n")
		for i, n := range m.names() {
			ev := m.events[n]
			var sum int64
			for _, s := range ev.samples {
				sum += s.ms
			}
			avg := sum / int64(len(ev.samples))
			var dev int64
			for _, s := range ev.samples {
				d := s.ms - avg
				if d < 0 {
					d = -d
				}
				dev += d
			}
			dev /= int64(len(ev.samples))
			period := 0.0
			if len(ev.samples) > 1 {
				period = float64(ev.samples[len(ev.samples)-1].at-ev.samples[0].at) / float64(len(ev.samples))
			}
			if period == 0 {
				period = 1
			}
			fmt.Fprintf(&sb, "%d. %s: %d spike(s), average %dms (mean deviation %dms), one per %.2f s; worst %dms.\n",
				i+1, n, len(ev.samples), avg, dev, period, ev.max)
		}
		sb.WriteString("\nslotd gives no tuning advice.\n")
	}
	x.W.Verbatim(sb.String())
}

func cmdLatencyHelp(x *Ctx) {
	writeHelp(x, "LATENCY",
		"DOCTOR",
		"    A plain-text summary of the latency spikes recorded so far.",
		"GRAPH <event>",
		"    An ASCII chart of the recorded spikes of <event>.",
		"HISTORY <event>",
		"    The recorded spikes of <event> as (unix time, milliseconds) pairs.",
		"LATEST",
		"    For each event: time and size of its last spike, and its worst ever.",
		"RESET [<event> ...]",
		"    Drops what is recorded for the named events, or for all of them.",
		"HISTOGRAM [COMMAND ...]",
		"    Per-command latency distributions, cumulative, for the named commands",
		"    or for every command that has run.")
}
