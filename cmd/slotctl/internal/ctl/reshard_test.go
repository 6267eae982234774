package ctl

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/migrate"
	"github.com/slotd/slotd/slots"
)

func fakeCluster(counts ...[2]int) *Cluster {
	c := &Cluster{opts: &Options{}}
	for i, r := range counts {
		id := strings.Repeat(string(rune('a'+i)), 40)
		info := NodeInfo{ID: id, IP: "127.0.0.1", Port: 7000 + i, Flags: []string{"master"}}
		if r[1] >= r[0] {
			info.Slots = []slots.Range{{Start: r[0], End: r[1]}}
		}
		c.Nodes = append(c.Nodes, &Node{ID: id, Addr: info.Addr(), Entry: info})
	}
	return c
}

// TestMovePlanAndDryRun checks the printed plan of a rebalance onto an
// empty master and that a dry run stops before touching a node (the fake
// nodes have no connection).
func TestMovePlanAndDryRun(t *testing.T) {
	c := fakeCluster([2]int{0, 5460}, [2]int{5461, 10922}, [2]int{10923, 16383}, [2]int{1, 0})
	steps, err := migrate.Rebalance(mastersOf(c), migrate.RebalanceOptions{Threshold: 2, UseEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	var moves []migrate.Move
	for _, s := range steps {
		moves = append(moves, s.Moves...)
	}
	var out bytes.Buffer
	o := &Options{Out: &out}
	res, err := c.execute(context.Background(), NewReporter(o), o, &MoveOptions{DryRun: true}, "rebalance", moves)
	if err != nil || res.Planned != 4096 || res.Slots != 0 {
		t.Fatalf("dry run: %+v, %v", res, err)
	}
	for _, want := range []string{
		">>> Plan (rebalance): 4096 slots to move",
		"1366 slots 127.0.0.1:7001 (bbbbbbbb...) -> 127.0.0.1:7003 (dddddddd...): 5461-6826",
		"1365 slots 127.0.0.1:7000 (aaaaaaaa...) -> 127.0.0.1:7003 (dddddddd...): 0-1364",
		"127.0.0.1:7003 (dddddddd...): 0 -> 4096",
		"[OK] Dry run: nothing moved.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}

	// Without --yes and with no Confirm, nothing runs either.
	out.Reset()
	if _, err := c.execute(context.Background(), NewReporter(o), o, &MoveOptions{}, "rebalance", moves); err != ErrAborted {
		t.Errorf("unconfirmed plan: %v", err)
	}
}

func TestProgressLine(t *testing.T) {
	m := &mover{prog: &progress{start: time.Now().Add(-10 * time.Second)}}
	m.prog.slotsTotal.Store(100)
	m.prog.slotsDone.Store(25)
	m.prog.keys.Store(50000)
	line := m.progressLine()
	for _, want := range []string{"[#######.......................] 25/100 slots", "50000 keys", "5000 keys/s", "ETA 30s"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
}
