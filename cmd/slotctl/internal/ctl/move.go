package ctl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// MoveOptions tune how slots move.
type MoveOptions struct {
	// Parallel is how many slots move at once (default 256). Each slot
	// still goes through its own protocol run; parallelism overlaps the
	// runs, and towards slotd lets their SETSLOT calls share one config
	// write per node (SLOTD.MIGRATE SETSLOTS).
	Parallel int
	// Pipeline is the number of keys per MIGRATE ... KEYS call (default
	// 100), as redis-cli's --cluster-pipeline.
	Pipeline int
	// Depth is how many MIGRATE calls of one slot are sent before the
	// first reply is read (default 4).
	Depth int
	// MigrateTimeout is MIGRATE's timeout argument (default 60 s).
	MigrateTimeout time.Duration
	// Replace adds REPLACE to MIGRATE, overwriting keys the target
	// already holds (otherwise BUSYKEY stops the move).
	Replace bool
	// BigKey is the element count from which a collection moves in
	// chunks when both nodes are slotd (default 10000; negative: never).
	BigKey int
	// Chunk is the number of elements per chunk (default 1000).
	Chunk int
	// DryRun prints the plan and stops.
	DryRun bool
	// Trace prints where the time of a move went.
	Trace bool
}

func (m *MoveOptions) parallel() int { return def(m.Parallel, 256) }
func (m *MoveOptions) pipeline() int { return def(m.Pipeline, 100) }
func (m *MoveOptions) depth() int    { return def(m.Depth, 4) }
func (m *MoveOptions) chunk() int    { return def(m.Chunk, 1000) }
func (m *MoveOptions) bigKey() int   { return def(m.BigKey, 10000) }
func (m *MoveOptions) migrateTimeout() time.Duration {
	if m.MigrateTimeout > 0 {
		return m.MigrateTimeout
	}
	return 60 * time.Second
}

func def(v, d int) int {
	if v != 0 {
		return v
	}
	return d
}

// progress counts what a run has moved; the reporter reads it.
type progress struct {
	slotsTotal, slotsDone atomic.Int64
	keys, bigKeys         atomic.Int64
	setslots, batches     atomic.Int64
	// Time spent by all moves in each step, for --trace.
	tOpen, tKeys, tBig, tAssign atomic.Int64
	start                       time.Time
}

// mover runs the per-slot protocol against the nodes of one cluster. It
// keeps a pooled connection per node sized for the parallel moves, and
// remembers which nodes are slotd (they take SLOTD.MIGRATE).
type mover struct {
	c    *Cluster
	o    *Options
	mo   *MoveOptions
	prog *progress

	mu    sync.Mutex
	pools map[string]*redis.Client
	slotd map[string]bool
	// batch coalesces the SETSLOT calls of parallel moves per slotd node.
	batch map[string]chan setslotReq
	// bigSlots, when not nil, lists the slots found holding large
	// collections before the run (scanBigKeys); other slots skip the
	// per-slot BIGKEYS call.
	bigSlots map[int]bool
	// reported is closed when the progress reporter has stopped.
	reported chan struct{}
}

func newMover(c *Cluster, o *Options, mo *MoveOptions) *mover {
	return &mover{c: c, o: o, mo: mo, prog: &progress{start: time.Now()},
		pools: map[string]*redis.Client{}, slotd: map[string]bool{}, batch: map[string]chan setslotReq{}}
}

// close stops the SETSLOT batchers and closes the pools; no move may be
// running.
func (m *mover) close() {
	for _, ch := range m.batch {
		close(ch)
	}
	for _, p := range m.pools {
		p.Close()
	}
}

type setslotReq struct {
	slot       int
	action, id string
	done       chan error
}

// setslot runs CLUSTER SETSLOT slot action [id] on n. On a slotd node the
// calls of concurrent moves are coalesced into SLOTD.MIGRATE SETSLOTS, so
// that the node writes its config once for the batch rather than once per
// slot; elsewhere it is a plain CLUSTER SETSLOT.
func (m *mover) setslot(ctx context.Context, n *Node, slot int, action, id string) error {
	if !m.isSlotd(ctx, n) {
		args := []any{"CLUSTER", "SETSLOT", slot, action}
		if id != "" {
			args = append(args, id)
		}
		_, err := m.do(ctx, n, args...)
		return err
	}
	m.mu.Lock()
	ch := m.batch[n.ID]
	if ch == nil {
		ch = make(chan setslotReq, 1024)
		m.batch[n.ID] = ch
		go m.runBatcher(n, ch)
	}
	m.mu.Unlock()
	req := setslotReq{slot: slot, action: action, id: id, done: make(chan error, 1)}
	ch <- req
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runBatcher sends the queued SETSLOT requests of one node: whatever has
// queued while the previous batch was in flight goes in the next, one
// SETSLOTS per action and id.
func (m *mover) runBatcher(n *Node, ch chan setslotReq) {
	for first := range ch {
		reqs := []setslotReq{first}
	drain:
		for len(reqs) < 512 {
			select {
			case r, ok := <-ch:
				if !ok {
					break drain
				}
				reqs = append(reqs, r)
			default:
				break drain
			}
		}
		type key struct{ action, id string }
		var order []key
		groups := map[key][]setslotReq{}
		for _, r := range reqs {
			k := key{r.action, r.id}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], r)
		}
		for _, k := range order {
			g := groups[k]
			id := k.id
			if id == "" {
				id = "-"
			}
			args := []any{"SLOTD.MIGRATE", "SETSLOTS", k.action, id}
			for _, r := range g {
				args = append(args, r.slot)
			}
			v, err := m.do(context.Background(), n, args...)
			m.prog.batches.Add(1)
			m.prog.setslots.Add(int64(len(g)))
			res, _ := v.([]any)
			for i, r := range g {
				switch {
				case err != nil:
					r.done <- err
				case i >= len(res):
					r.done <- &CmdError{Addr: n.Addr, Cmd: "SLOTD.MIGRATE SETSLOTS", Err: fmt.Errorf("%d replies for %d slots", len(res), len(g))}
				default:
					if e, ok := res[i].(error); ok {
						r.done <- &CmdError{Addr: n.Addr, Cmd: fmt.Sprintf("CLUSTER SETSLOT %d %s %s", r.slot, k.action, k.id), Err: e}
					} else {
						r.done <- nil
					}
				}
			}
		}
	}
}

// pool returns the data connection pool of node n.
func (m *mover) pool(n *Node) *redis.Client {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.pools[n.Addr]
	if p == nil {
		p = redis.NewClient(&redis.Options{
			Addr: n.Addr, Password: m.o.Password, Protocol: 2, DisableIdentity: true,
			DialTimeout: m.o.timeout(), ReadTimeout: m.o.timeout() + m.mo.migrateTimeout(), WriteTimeout: m.o.timeout(),
			MaxRetries: -1, PoolSize: m.mo.parallel() + 2,
		})
		m.pools[n.Addr] = p
	}
	return p
}

// do sends one command on n's pool, wrapping failures as *CmdError.
func (m *mover) do(ctx context.Context, n *Node, args ...any) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, m.o.timeout()+m.mo.migrateTimeout())
	defer cancel()
	v, err := m.pool(n).Do(ctx, args...).Result()
	if err != nil {
		return nil, &CmdError{Addr: n.Addr, Cmd: cmdString(args), Err: err}
	}
	return v, nil
}

// isSlotd reports whether n answers SLOTD.MIGRATE VERSION (asked once).
func (m *mover) isSlotd(ctx context.Context, n *Node) bool {
	m.mu.Lock()
	v, ok := m.slotd[n.ID]
	m.mu.Unlock()
	if ok {
		return v
	}
	r, err := m.do(ctx, n, "SLOTD.MIGRATE", "VERSION")
	v = err == nil && r == int64(1)
	m.mu.Lock()
	m.slotd[n.ID] = v
	m.mu.Unlock()
	return v
}

// masters returns the reachable masters other than skip.
func (m *mover) others(skip ...*Node) []*Node {
	var out []*Node
outer:
	for _, n := range m.c.Nodes {
		if n.Conn == nil || !n.Info().IsMaster() {
			continue
		}
		for _, s := range skip {
			if s != nil && s.ID == n.ID {
				continue outer
			}
		}
		out = append(out, n)
	}
	return out
}

// moveSlot moves one slot from src to dst with redis-cli's protocol:
// SETSLOT IMPORTING on the target, MIGRATING on the source, the keys
// (large collections in chunks when both are slotd, the rest with
// MIGRATE ... KEYS in pipelined batches), then SETSLOT NODE on the
// target, the source and every other master. Each step is skipped when
// the node is already past it, so the same call finishes a slot an
// interrupted run left open.
//
// stable says the caller knows the slot is stable and owned by src (a
// fresh plan); otherwise both nodes' marks are read first.
func (m *mover) moveSlot(ctx context.Context, slot int, src, dst *Node, stable bool) error {
	srcInfo, dstInfo := slotMark{owns: true}, slotMark{}
	if !stable {
		marks, err := m.slotMarks(ctx, slot, src, dst)
		if err != nil {
			return err
		}
		srcInfo, dstInfo = marks[0], marks[1]
	}
	t0 := time.Now()
	if !dstInfo.owns && dstInfo.importing != src.ID {
		if err := m.setslot(ctx, dst, slot, "IMPORTING", src.ID); err != nil {
			return err
		}
	}
	if srcInfo.owns && srcInfo.migrating != dst.ID {
		if err := m.setslot(ctx, src, slot, "MIGRATING", dst.ID); err != nil {
			return err
		}
	}
	t1 := time.Now()
	m.prog.tOpen.Add(int64(t1.Sub(t0)))
	if err := m.moveKeys(ctx, slot, src, dst, !srcInfo.owns); err != nil {
		return err
	}
	t2 := time.Now()
	m.prog.tKeys.Add(int64(t2.Sub(t1)))
	defer func() { m.prog.tAssign.Add(int64(time.Since(t2))) }()
	for try := 0; ; try++ {
		err := m.assign(ctx, slot, dst, src)
		if err == nil || try == 3 || !strings.Contains(err.Error(), "still hold keys") {
			return err
		}
		// A key reached the source after the last GETKEYSINSLOT (an
		// expired-then-rewritten race); move what is left and retry.
		if err := m.moveKeys(ctx, slot, src, dst, false); err != nil {
			return err
		}
	}
}

// scanBigKeys finds, before a run, which of the planned slots hold
// collections of BigKey elements or more, with one pipelined BIGKEYS per
// slot per source, so that the moves of the other slots skip that call.
func (m *mover) scanBigKeys(ctx context.Context, bySource map[*Node][]int) error {
	m.bigSlots = map[int]bool{}
	for src, ss := range bySource {
		if !m.isSlotd(ctx, src) {
			continue
		}
		for i := 0; i < len(ss); i += 1000 {
			pipe := m.pool(src).Pipeline()
			part := ss[i:min(i+1000, len(ss))]
			for _, s := range part {
				pipe.Do(ctx, "SLOTD.MIGRATE", "BIGKEYS", s, m.mo.bigKey(), 1)
			}
			cmds, err := pipe.Exec(ctx)
			if err != nil {
				return &CmdError{Addr: src.Addr, Cmd: "SLOTD.MIGRATE BIGKEYS", Err: err}
			}
			for j, c := range cmds {
				if v, _ := c.(*redis.Cmd).Val().([]any); len(v) > 0 {
					m.bigSlots[part[j]] = true
				}
			}
		}
	}
	return nil
}

// assign runs SETSLOT NODE dst on dst, then on first (when not nil), then
// on every other master. A master that fails is reported in the error
// after the others were told.
func (m *mover) assign(ctx context.Context, slot int, dst, first *Node) error {
	if err := m.setslot(ctx, dst, slot, "NODE", dst.ID); err != nil {
		return err
	}
	if first != nil && first.ID != dst.ID {
		if err := m.setslot(ctx, first, slot, "NODE", dst.ID); err != nil {
			return err
		}
	}
	// The others learn it at once rather than by gossip; they are told
	// concurrently, each one's calls batched with other slots'.
	others := m.others(dst, first)
	errs := make([]error, len(others))
	var wg sync.WaitGroup
	for i, n := range others {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.setslot(ctx, n, slot, "NODE", dst.ID)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

type slotMark struct {
	owns                 bool
	migrating, importing string
}

// slotMarks reads the slot's state on src and dst from their own CLUSTER
// NODES.
func (m *mover) slotMarks(ctx context.Context, slot int, nodes ...*Node) (out [2]slotMark, err error) {
	for i, n := range nodes {
		v, err := m.do(ctx, n, "CLUSTER", "NODES")
		if err != nil {
			return out, err
		}
		text, _ := v.(string)
		view, err := ParseNodes(text)
		if err != nil {
			return out, &CmdError{Addr: n.Addr, Cmd: "CLUSTER NODES", Err: err}
		}
		self := Myself(view)
		if self == nil {
			return out, &CmdError{Addr: n.Addr, Cmd: "CLUSTER NODES", Err: errors.New("no line flagged myself")}
		}
		for _, r := range self.Slots {
			if slot >= r.Start && slot <= r.End {
				out[i].owns = true
			}
		}
		out[i].migrating = self.Migrating[slot]
		out[i].importing = self.Importing[slot]
	}
	return out, nil
}

// moveKeys empties slot on src into dst. asking prefixes each MIGRATE
// with ASKING, for a source that holds keys of a slot it does not own
// (it must then mark the slot importing for ASKING to apply).
func (m *mover) moveKeys(ctx context.Context, slot int, src, dst *Node, asking bool) error {
	if !asking && m.mo.bigKey() > 0 && (m.bigSlots == nil || m.bigSlots[slot]) && m.isSlotd(ctx, src) && m.isSlotd(ctx, dst) {
		t := time.Now()
		if err := m.moveBigKeys(ctx, slot, src, dst); err != nil {
			return err
		}
		m.prog.tBig.Add(int64(time.Since(t)))
	}
	host, port, err := net.SplitHostPort(dst.Addr)
	if err != nil {
		return err
	}
	batch := m.mo.pipeline()
	retries := 0
	for {
		v, err := m.do(ctx, src, "CLUSTER", "GETKEYSINSLOT", slot, batch*m.mo.depth())
		if err != nil {
			return err
		}
		keys, _ := v.([]any)
		if len(keys) == 0 {
			return nil
		}
		// Fewer keys than asked for means these were all: while the slot
		// is migrating a missing key is sent to the target (ASK), so the
		// source gains none. SETSLOT NODE on the source checks it, and
		// moveSlot comes back here if it was wrong.
		last := len(keys) < batch*m.mo.depth()
		pipe := m.pool(src).Pipeline()
		var sent []int
		for i := 0; i < len(keys); i += batch {
			part := keys[i:min(i+batch, len(keys))]
			args := []any{"MIGRATE", host, port, "", 0, m.mo.migrateTimeout().Milliseconds()}
			if m.mo.Replace {
				args = append(args, "REPLACE")
			}
			if m.o.Password != "" {
				args = append(args, "AUTH", m.o.Password)
			}
			args = append(args, "KEYS")
			args = append(args, part...)
			if asking {
				pipe.Do(ctx, "ASKING")
			}
			pipe.Do(ctx, args...)
			sent = append(sent, len(part))
		}
		pctx, cancel := context.WithTimeout(ctx, m.o.timeout()+m.mo.migrateTimeout())
		cmds, _ := pipe.Exec(pctx)
		cancel()
		j := 0
		transient := false
		for _, c := range cmds {
			name, _ := c.Args()[0].(string)
			if name == "ASKING" {
				if err := c.Err(); err != nil {
					return &CmdError{Addr: src.Addr, Cmd: "ASKING", Err: err}
				}
				continue
			}
			if err := c.Err(); err != nil && err != redis.Nil {
				// A node whose cluster state flips to fail for a moment
				// answers CLUSTERDOWN; the batch is sent again (its keys
				// that did move are no longer listed).
				if msg := err.Error(); (strings.HasPrefix(msg, "CLUSTERDOWN") || strings.HasPrefix(msg, "TRYAGAIN")) && retries < 100 {
					transient = true
					continue
				}
				if strings.HasPrefix(err.Error(), "BUSYKEY") {
					return &CmdError{Addr: src.Addr, Cmd: "MIGRATE", Err: fmt.Errorf("%v: the target already holds a key of slot %d; run again with --replace to overwrite it", err, slot)}
				}
				return &CmdError{Addr: src.Addr, Cmd: cmdString(c.Args()), Err: err}
			}
			m.prog.keys.Add(int64(sent[j]))
			j++
		}
		if transient {
			retries++
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if last {
			return nil
		}
	}
}

// moveBigKeys moves, in chunks, the collections of slot with at least
// BigKey elements (SLOTD.MIGRATE; see docs/design.md).
func (m *mover) moveBigKeys(ctx context.Context, slot int, src, dst *Node) error {
	for {
		v, err := m.do(ctx, src, "SLOTD.MIGRATE", "BIGKEYS", slot, m.mo.bigKey(), 16)
		if err != nil {
			return err
		}
		keys, _ := v.([]any)
		if len(keys) == 0 {
			return nil
		}
		for _, k := range keys {
			key, _ := k.(string)
			if err := m.moveBigKey(ctx, src, dst, key); err != nil {
				return err
			}
		}
	}
}

func (m *mover) moveBigKey(ctx context.Context, src, dst *Node, key string) (err error) {
	v, err := m.do(ctx, src, "SLOTD.MIGRATE", "FREEZE", key, 30000)
	if err != nil {
		var ce *CmdError
		if errors.As(err, &ce) && (strings.Contains(ce.Err.Error(), "no such key") || strings.HasPrefix(ce.Err.Error(), "ASK ")) {
			return nil // expired or deleted since BIGKEYS listed it
		}
		return err
	}
	head, _ := v.([]any)
	if len(head) != 3 {
		return &CmdError{Addr: src.Addr, Cmd: "SLOTD.MIGRATE FREEZE", Err: fmt.Errorf("unexpected reply %v", v)}
	}
	kind, _ := head[0].(string)
	length, pttl := head[1], head[2]
	defer func() {
		if err != nil {
			// Undo: the key stays on the source, writable again.
			bg := context.WithoutCancel(ctx)
			m.do(bg, dst, "SLOTD.MIGRATE", "DISCARD", key)
			m.do(bg, src, "SLOTD.MIGRATE", "THAW", key)
		}
	}()
	cursor := "0"
	for {
		v, err := m.do(ctx, src, "SLOTD.MIGRATE", "CHUNK", key, cursor, m.mo.chunk())
		if err != nil {
			return err
		}
		r, _ := v.([]any)
		if len(r) == 0 {
			return &CmdError{Addr: src.Addr, Cmd: "SLOTD.MIGRATE CHUNK", Err: fmt.Errorf("unexpected reply %v", v)}
		}
		cursor, _ = r[0].(string)
		if len(r) > 1 {
			args := append([]any{"SLOTD.MIGRATE", "STAGE", key, kind}, r[1:]...)
			if _, err := m.do(ctx, dst, args...); err != nil {
				return err
			}
		}
		if cursor == "0" {
			break
		}
	}
	if _, err := m.do(ctx, dst, "SLOTD.MIGRATE", "COMMIT", key, pttl, length); err != nil {
		return err
	}
	if _, err := m.do(ctx, src, "SLOTD.MIGRATE", "DELFROZEN", key); err != nil {
		return err
	}
	m.prog.keys.Add(1)
	m.prog.bigKeys.Add(1)
	return nil
}
