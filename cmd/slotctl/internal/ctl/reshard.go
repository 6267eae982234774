package ctl

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slotd/slotd/migrate"
	"github.com/slotd/slotd/slots"
)

// ReshardRequest is what `slotctl reshard` asks for.
type ReshardRequest struct {
	// To is the target master (id or unique prefix).
	To string
	// From lists source masters; empty means every other master.
	From []string
	// Slots is how many slots to move.
	Slots int
}

// RebalanceRequest is what `slotctl rebalance` asks for.
type RebalanceRequest struct {
	// Weights maps master ids (or prefixes) to weights.
	Weights   map[string]float64
	Threshold float64
	UseEmpty  bool
}

// MoveResult sums up a run.
type MoveResult struct {
	Slots, Keys, BigKeys int64
	Elapsed              time.Duration
	// Planned is the plan's length; with DryRun nothing moved.
	Planned int
}

// mastersOf turns the loaded topology into the planner's input, in the
// order the nodes were loaded (entry node first), which is the order
// redis-cli breaks ties in.
func mastersOf(c *Cluster) []migrate.Master {
	var out []migrate.Master
	for _, n := range c.Nodes {
		i := n.Info()
		if !i.IsMaster() {
			continue
		}
		m := migrate.Master{ID: n.ID}
		for _, r := range i.Slots {
			for s := r.Start; s <= r.End; s++ {
				m.Slots = append(m.Slots, s)
			}
		}
		out = append(out, m)
	}
	return out
}

// loadForMove loads the cluster, refuses one whose nodes disagree or that
// has unreachable masters, and finishes slots an interrupted run left open
// (so every operation is resumable: run it again).
func loadForMove(ctx context.Context, addr string, o *Options, mo *MoveOptions, r *Reporter) (*Cluster, error) {
	c, err := Load(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	res := c.Check(r)
	for _, n := range c.Nodes {
		if n.Err != nil && n.Info().IsMaster() {
			c.Close()
			return nil, fmt.Errorf("master %s cannot be reached (%v): slots cannot be moved safely", n.Addr, n.Err)
		}
	}
	if len(res.OpenSlots) > 0 {
		if mo.DryRun {
			r.Warn("Open slots %s would be finished first (see slotctl fix --dry-run).", joinInts(res.OpenSlots))
			return c, nil
		}
		r.Section("Finishing %d open %s left by an interrupted run", len(res.OpenSlots), plural(len(res.OpenSlots), "slot", "slots"))
		if _, err := c.fix(ctx, r, mo, migrate.FixResume, false); err != nil {
			c.Close()
			return nil, err
		}
		c.Refresh(ctx)
		res = &CheckResult{}
	}
	if !agree(c) {
		c.Close()
		return nil, errors.New("nodes don't agree about the slots configuration: run slotctl check, or wait for the cluster to converge")
	}
	return c, nil
}

func agree(c *Cluster) bool {
	sig := ""
	for _, n := range c.Nodes {
		if n.View == nil {
			continue
		}
		s := ConfigSignature(n.View)
		if sig == "" {
			sig = s
		} else if s != sig {
			return false
		}
	}
	return true
}

// Reshard moves req.Slots slots to req.To.
func Reshard(ctx context.Context, addr string, req ReshardRequest, o *Options, mo *MoveOptions) (*MoveResult, error) {
	r := NewReporter(o)
	c, err := loadForMove(ctx, addr, o, mo, r)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	to, err := c.Find(req.To)
	if err != nil {
		return nil, err
	}
	var from []string
	for _, f := range req.From {
		n, err := c.Find(f)
		if err != nil {
			return nil, err
		}
		from = append(from, n.ID)
	}
	moves, err := migrate.Reshard(mastersOf(c), to.ID, from, req.Slots)
	if err != nil {
		return nil, err
	}
	return c.execute(ctx, r, o, mo, "reshard", moves)
}

// Rebalance evens the slots out by weight, with redis-cli's arithmetic.
func Rebalance(ctx context.Context, addr string, req RebalanceRequest, o *Options, mo *MoveOptions) (*MoveResult, error) {
	r := NewReporter(o)
	c, err := loadForMove(ctx, addr, o, mo, r)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	weights := map[string]float64{}
	for id, w := range req.Weights {
		n, err := c.Find(id)
		if err != nil {
			return nil, err
		}
		weights[n.ID] = w
	}
	ms := mastersOf(c)
	steps, err := migrate.Rebalance(ms, migrate.RebalanceOptions{Weights: weights, Threshold: req.Threshold, UseEmpty: req.UseEmpty})
	if err != nil {
		return nil, err
	}
	if len(steps) == 0 {
		r.Warn("*** No rebalancing needed! All nodes are within the %.2f%% threshold.", req.Threshold)
		return &MoveResult{}, nil
	}
	var moves []migrate.Move
	for _, s := range steps {
		moves = append(moves, s.Moves...)
	}
	return c.execute(ctx, r, o, mo, "rebalance", moves)
}

// Drain moves every slot of the master id to the other masters (or to
// those listed in to), evenly.
func Drain(ctx context.Context, addr, id string, to []string, o *Options, mo *MoveOptions) (*MoveResult, error) {
	r := NewReporter(o)
	c, err := loadForMove(ctx, addr, o, mo, r)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	victim, err := c.Find(id)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, t := range to {
		n, err := c.Find(t)
		if err != nil {
			return nil, err
		}
		ids = append(ids, n.ID)
	}
	moves, err := migrate.Drain(mastersOf(c), victim.ID, ids)
	if err != nil {
		return nil, err
	}
	if len(moves) == 0 {
		r.OK("Node %s owns no slots: nothing to drain.", victim.Addr)
		return &MoveResult{}, nil
	}
	return c.execute(ctx, r, o, mo, "drain", moves)
}

// printMovePlan shows, per source and target, which slots move, and the
// slot counts before and after.
func (c *Cluster) printMovePlan(r *Reporter, what string, moves []migrate.Move) {
	r.Section("Plan (%s): %d %s to move", what, len(moves), plural(len(moves), "slot", "slots"))
	type pair struct{ from, to string }
	var order []pair
	by := map[pair][]int{}
	for _, m := range moves {
		p := pair{m.From, m.To}
		if _, ok := by[p]; !ok {
			order = append(order, p)
		}
		by[p] = append(by[p], m.Slot)
	}
	addr := map[string]string{}
	for _, n := range c.Nodes {
		addr[n.ID] = n.Addr
	}
	for _, p := range order {
		ss := by[p]
		sort.Ints(ss)
		var b slots.Bitmap
		for _, s := range ss {
			b.Set(s)
		}
		r.Line("  %4d slots %s (%s) -> %s (%s): %s", len(ss), addr[p.from], shortID(p.from), addr[p.to], shortID(p.to), slots.FormatRanges(b.Ranges()))
	}
	ms := mastersOf(c)
	after := migrate.Counts(ms, moves)
	r.Line("Slots per master, before -> after:")
	for _, m := range ms {
		r.Line("  %s (%s): %d -> %d", addr[m.ID], shortID(m.ID), len(m.Slots), after[m.ID])
	}
}

// execute prints the plan, asks for confirmation and moves the slots,
// mo.Parallel at a time, with a progress line. The first failure stops
// new slots from starting; slots in flight finish (or stay open for a
// rerun or slotctl fix to finish).
func (c *Cluster) execute(ctx context.Context, r *Reporter, o *Options, mo *MoveOptions, what string, moves []migrate.Move) (*MoveResult, error) {
	c.printMovePlan(r, what, moves)
	res := &MoveResult{Planned: len(moves)}
	if mo.DryRun {
		r.OK("Dry run: nothing moved.")
		return res, nil
	}
	if !o.confirm("Do you want to proceed with the proposed " + what + " plan (yes/no)? ") {
		return nil, ErrAborted
	}
	byID := map[string]*Node{}
	for _, n := range c.Nodes {
		byID[n.ID] = n
	}
	m := newMover(c, o, mo)
	defer m.close()
	m.prog.slotsTotal.Store(int64(len(moves)))
	if mo.bigKey() > 0 {
		bySource := map[*Node][]int{}
		for _, mv := range moves {
			bySource[byID[mv.From]] = append(bySource[byID[mv.From]], mv.Slot)
		}
		if err := m.scanBigKeys(ctx, bySource); err != nil {
			return nil, err
		}
		if n := len(m.bigSlots); n > 0 {
			r.Line("%d %s hold collections of %d or more elements: they move in chunks of %d.", n, plural(n, "slot", "slots"), mo.bigKey(), mo.chunk())
		}
	}
	r.Section("Moving %d %s (%d in parallel, %d keys per MIGRATE)", len(moves), plural(len(moves), "slot", "slots"), mo.parallel(), mo.pipeline())

	work := make(chan migrate.Move)
	stopped := make(chan struct{})
	var once sync.Once
	var firstErr error
	var mu sync.Mutex
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		once.Do(func() { close(stopped) })
	}
	var wg sync.WaitGroup
	for i := 0; i < mo.parallel(); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for mv := range work {
				// A slot that started finishes even when the run is
				// interrupted, so Ctrl-C leaves no slot open.
				if err := m.moveSlot(context.WithoutCancel(ctx), mv.Slot, byID[mv.From], byID[mv.To], true); err != nil {
					fail(fmt.Errorf("slot %d: %w", mv.Slot, err))
					continue
				}
				m.prog.slotsDone.Add(1)
			}
		}()
	}
	done := make(chan struct{})
	m.reported = make(chan struct{})
	go m.report(r, done)
feed:
	for _, mv := range moves {
		select {
		case work <- mv:
		case <-stopped:
			break feed
		case <-ctx.Done():
			fail(ctx.Err())
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(done)
	<-m.reported

	res.Slots, res.Keys, res.BigKeys = m.prog.slotsDone.Load(), m.prog.keys.Load(), m.prog.bigKeys.Load()
	res.Elapsed = time.Since(m.prog.start)
	if firstErr != nil {
		r.Err("Stopped after %d of %d slots: %v", res.Slots, len(moves), firstErr)
		r.Line("Run the same command again (or slotctl fix) to finish the open slots.")
		return res, firstErr
	}
	r.OK("Moved %d %s and %d keys (%d in chunks) in %.1fs (%.0f keys/s).", res.Slots, plural(int(res.Slots), "slot", "slots"),
		res.Keys, res.BigKeys, res.Elapsed.Seconds(), float64(res.Keys)/max(res.Elapsed.Seconds(), 1e-9))
	if mo.Trace {
		n := max(res.Slots, 1)
		r.Line("Per slot, on average: opening %v, big keys %v, keys %v (including big keys), SETSLOT NODE %v.",
			time.Duration(m.prog.tOpen.Load()/n), time.Duration(m.prog.tBig.Load()/n), time.Duration(m.prog.tKeys.Load()/n), time.Duration(m.prog.tAssign.Load()/n))
	}
	if b := m.prog.batches.Load(); b > 0 {
		r.Line("%d SETSLOT calls sent in %d batches (SLOTD.MIGRATE SETSLOTS).", m.prog.setslots.Load(), b)
	}
	return res, nil
}

// report prints the progress line until done is closed: rewritten in
// place on a terminal four times a second, otherwise a line every five
// seconds.
func (m *mover) report(r *Reporter, done <-chan struct{}) {
	defer close(m.reported)
	every := 5 * time.Second
	if r.live {
		every = 250 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			r.endProgress()
			return
		case <-t.C:
			r.Progress("%s", m.progressLine())
		}
	}
}

func (m *mover) progressLine() string {
	p := m.prog
	el := time.Since(p.start).Seconds()
	done, total := p.slotsDone.Load(), p.slotsTotal.Load()
	keys := p.keys.Load()
	rate := float64(keys) / max(el, 1e-9)
	eta := "?"
	if done > 0 {
		eta = (time.Duration(float64(total-done) * el / float64(done) * float64(time.Second))).Round(time.Second).String()
	}
	width := 30
	fill := 0
	if total > 0 {
		fill = int(int64(width) * done / total)
	}
	bar := strings.Repeat("#", fill) + strings.Repeat(".", width-fill)
	return fmt.Sprintf("[%s] %d/%d slots, %d keys, %.0f keys/s, ETA %s", bar, done, total, keys, rate, eta)
}

// FixResult lists what fix did per slot.
type FixResult struct {
	Fixes []migrate.Fix
	// Unfixed counts slots left as they were (unfixable).
	Unfixed int
}

// Fix finds open and uncovered slots and repairs them: a half-moved slot
// is finished (or, when no key reached the target, rolled back), stray
// marks are cleared, an uncovered slot is given to the node holding its
// keys (or to the master with the fewest slots).
func Fix(ctx context.Context, addr string, o *Options, mo *MoveOptions) (*FixResult, error) {
	r := NewReporter(o)
	c, err := Load(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.Check(r)
	if !mo.DryRun && !o.Yes {
		// Fix asks once, after showing its plan.
		res, err := c.fix(ctx, r, &MoveOptions{DryRun: true}, migrate.FixAuto, true)
		if err != nil || len(res.Fixes) == 0 {
			return res, err
		}
		if !o.confirm("Do you want to apply these fixes (yes/no)? ") {
			return nil, ErrAborted
		}
	}
	return c.fix(ctx, r, mo, migrate.FixAuto, !mo.DryRun && !o.Yes)
}

// fix plans and applies the repair of every open or uncovered slot.
// quiet skips printing the plan (it was printed for confirmation).
func (c *Cluster) fix(ctx context.Context, r *Reporter, mo *MoveOptions, mode migrate.FixMode, quiet bool) (*FixResult, error) {
	m := newMover(c, c.opts, mo)
	defer m.close()
	views, err := m.slotViews(ctx)
	if err != nil {
		return nil, err
	}
	res := &FixResult{}
	var todo []int
	for s := range views {
		todo = append(todo, s)
	}
	sort.Ints(todo)
	fallback := ""
	least := -1
	for _, n := range c.Masters() {
		if n.Conn != nil && (least < 0 || n.Info().SlotCount() < least) {
			fallback, least = n.ID, n.Info().SlotCount()
		}
	}
	byID := map[string]*Node{}
	for _, n := range c.Nodes {
		byID[n.ID] = n
	}
	// A mark may still name a master that has just failed over to its
	// replica (the peers follow within a heartbeat or two): the move goes
	// on with the shard's master.
	heir := func(id string) string {
		if n := byID[id]; n != nil && n.Info().IsReplica() && n.Info().MasterID != "" {
			return n.Info().MasterID
		}
		return id
	}
	for _, vs := range views {
		for i := range vs {
			if vs[i].Migrating != "" {
				vs[i].Migrating = heir(vs[i].Migrating)
			}
			if vs[i].Importing != "" {
				vs[i].Importing = heir(vs[i].Importing)
			}
		}
	}
	for _, s := range todo {
		f := migrate.PlanFix(s, views[s], mode, fallback)
		if f.Kind == migrate.FixNone {
			continue
		}
		res.Fixes = append(res.Fixes, f)
		if !quiet {
			r.Line("Slot %d: %s (%s)%s", s, f.Kind, f.Reason, describeFix(f, byID))
		}
		if f.Kind == migrate.FixUnfixable {
			res.Unfixed++
			r.Err("Slot %d cannot be fixed automatically: %s", s, f.Reason)
			continue
		}
		if mo.DryRun {
			continue
		}
		if err := m.applyFix(ctx, f, byID); err != nil {
			return res, fmt.Errorf("slot %d: %w", s, err)
		}
		r.OK("Slot %d: %s done.", s, f.Kind)
	}
	if len(res.Fixes) == 0 {
		r.OK("Nothing to fix.")
	}
	if res.Unfixed > 0 {
		return res, fmt.Errorf("%d %s could not be fixed", res.Unfixed, plural(res.Unfixed, "slot", "slots"))
	}
	return res, nil
}

func describeFix(f migrate.Fix, byID map[string]*Node) string {
	name := func(id string) string {
		if n := byID[id]; n != nil {
			return n.Addr
		}
		return id
	}
	var parts []string
	if f.From != "" {
		parts = append(parts, "from "+name(f.From))
	}
	if f.To != "" {
		parts = append(parts, "to "+name(f.To))
	}
	for _, c := range f.Cold {
		parts = append(parts, "keys of "+name(c))
	}
	for _, s := range f.Stable {
		parts = append(parts, "STABLE on "+name(s))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}

// slotViews returns, for every slot that is open somewhere, unowned, or
// claimed differently by the masters, each reachable master's view of it
// (with its key count there).
func (m *mover) slotViews(ctx context.Context) (map[int][]migrate.SlotView, error) {
	type state struct {
		owner     [slots.Count]string
		mig, imp  map[int]string
		node      *Node
		hasOwners bool
	}
	var states []*state
	for _, n := range m.c.Nodes {
		if n.Self == nil || !n.Self.IsMaster() {
			continue
		}
		st := &state{node: n, mig: n.Self.Migrating, imp: n.Self.Importing}
		for _, line := range n.View {
			for _, rg := range line.Slots {
				for s := rg.Start; s <= rg.End; s++ {
					st.owner[s] = line.ID
				}
			}
		}
		states = append(states, st)
	}
	odd := map[int]bool{}
	for s := 0; s < slots.Count; s++ {
		first := ""
		for i, st := range states {
			if st.owner[s] == "" || (i > 0 && st.owner[s] != first) {
				odd[s] = true
			}
			if i == 0 {
				first = st.owner[s]
			}
		}
	}
	for _, st := range states {
		for s := range st.mig {
			odd[s] = true
		}
		for s := range st.imp {
			odd[s] = true
		}
	}
	out := map[int][]migrate.SlotView{}
	for s := range odd {
		for _, st := range states {
			v := migrate.SlotView{ID: st.node.ID, Owner: st.owner[s], Migrating: st.mig[s], Importing: st.imp[s]}
			n, err := m.do(ctx, st.node, "CLUSTER", "COUNTKEYSINSLOT", s)
			if err != nil {
				return nil, err
			}
			k, _ := n.(int64)
			v.Keys = int(k)
			out[s] = append(out[s], v)
		}
	}
	return out, nil
}

// applyFix carries out one decision of migrate.PlanFix.
func (m *mover) applyFix(ctx context.Context, f migrate.Fix, byID map[string]*Node) error {
	s := strconv.Itoa(f.Slot)
	node := func(id string) (*Node, error) {
		n := byID[id]
		if n == nil || n.Conn == nil {
			return nil, fmt.Errorf("node %s is not reachable", id)
		}
		return n, nil
	}
	// stable closes the slot on the nodes the plan names.
	stable := func() error {
		for _, id := range f.Stable {
			n, err := node(id)
			if err != nil {
				return err
			}
			if err := m.setslot(ctx, n, f.Slot, "STABLE", ""); err != nil {
				return err
			}
		}
		return nil
	}
	switch f.Kind {
	case migrate.FixFinish:
		src, err := node(f.From)
		if err != nil {
			return err
		}
		dst, err := node(f.To)
		if err != nil {
			return err
		}
		if err := stable(); err != nil {
			return err
		}
		return m.moveSlot(ctx, f.Slot, src, dst, false)
	case migrate.FixRollback, migrate.FixClear:
		return stable()
	case migrate.FixAssign:
		to, err := node(f.To)
		if err != nil {
			return err
		}
		marks, err := m.slotMarks(ctx, f.Slot, to, to)
		if err != nil {
			return err
		}
		if !marks[0].owns {
			owner := ""
			for _, line := range to.View {
				for _, rg := range line.Slots {
					if f.Slot >= rg.Start && f.Slot <= rg.End {
						owner = line.ID
					}
				}
			}
			if owner == "" {
				if _, err := m.do(ctx, to, "CLUSTER", "ADDSLOTS", s); err != nil {
					return err
				}
			} else if _, err := m.do(ctx, to, "CLUSTER", "SETSLOT", s, "NODE", to.ID); err != nil {
				return err
			}
		}
		for _, id := range f.Cold {
			n, err := node(id)
			if err != nil {
				return err
			}
			// ASKING lets MIGRATE run on a node that does not own the
			// slot only while it marks the slot importing.
			cm, err := m.slotMarks(ctx, f.Slot, n, n)
			if err != nil {
				return err
			}
			if cm[0].importing == "" && !cm[0].owns {
				if err := m.setslot(ctx, n, f.Slot, "IMPORTING", to.ID); err != nil {
					return err
				}
			}
			if err := m.moveKeys(ctx, f.Slot, n, to, !cm[0].owns); err != nil {
				return err
			}
			if err := m.setslot(ctx, n, f.Slot, "STABLE", ""); err != nil {
				return err
			}
		}
		if err := stable(); err != nil {
			return err
		}
		return m.assign(ctx, f.Slot, to, nil)
	}
	return nil
}
