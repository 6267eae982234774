package ctl

import (
	"context"
	"fmt"

	"github.com/slotd/slotd/slots"
)

// MasterSummary is one master's line of `slotctl info`.
type MasterSummary struct {
	Addr     string
	ID       string
	Keys     int64
	Slots    int
	Replicas int
}

// InfoResult is what `slotctl info` prints.
type InfoResult struct {
	Masters []MasterSummary
	Keys    int64
	Slots   int
}

// Info loads the cluster through addr and summarises it per master.
func Info(ctx context.Context, addr string, o *Options) (*InfoResult, error) {
	c, err := Load(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Info(ctx, NewReporter(o))
}

// Info counts keys (DBSIZE), slots and replicas of every master.
func (c *Cluster) Info(ctx context.Context, r *Reporter) (*InfoResult, error) {
	res := &InfoResult{}
	for _, m := range c.Masters() {
		if m.Conn == nil {
			return nil, fmt.Errorf("node %s (%s) cannot be read: %v", m.Addr, m.ID, m.Err)
		}
		keys, err := m.Conn.Int(ctx, "DBSIZE")
		if err != nil {
			return nil, err
		}
		s := MasterSummary{Addr: m.Addr, ID: m.ID, Keys: keys, Slots: m.Info().SlotCount(), Replicas: len(c.ReplicasOf(m.ID))}
		res.Masters = append(res.Masters, s)
		res.Keys += keys
		res.Slots += s.Slots
		r.Line("%s (%s) -> %d keys | %d slots | %d %s.", s.Addr, shortID(s.ID), s.Keys, s.Slots, s.Replicas, plural(s.Replicas, "replica", "replicas"))
	}
	r.OK("%d keys in %d masters, %d of %d slots assigned.", res.Keys, len(res.Masters), res.Slots, slots.Count)
	r.Line("%.2f keys per slot on average.", float64(res.Keys)/float64(slots.Count))
	return res, nil
}
