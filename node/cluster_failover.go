package node

import (
	"math/rand/v2"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/slotd/slotd/failover"
	"github.com/slotd/slotd/gossip"
)

// The cluster loop's side of package failover: it ticks the machine after
// gossip, hands it the failover messages gossip forwards, and carries out
// what it decides through FailoverHooks. Everything here runs on the loop.

// failoverConfig reads the directives the failover machine uses.
func (cn *clusterNode) failoverConfig(r gossip.Rand) failover.Config {
	c := cn.s.Cfg
	return failover.Config{
		ValidityFactor:        c.Int("cluster-replica-validity-factor"),
		ReplPingPeriod:        c.Int("repl-ping-replica-period") * 1000,
		MigrationBarrier:      int(c.Int("cluster-migration-barrier")),
		AllowReplicaMigration: c.Bool("cluster-allow-replica-migration"),
		Rand:                  r,
	}
}

// startFailover makes the machine and applies cluster-replica-no-failover.
func (cn *clusterNode) startFailover() {
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())^0xfa11))
	cn.fo = failover.New(cn.failoverConfig(r))
	cn.hooks = newFailoverHooks(cn.s)
	cn.apply(cn.st.SetNoFailover(time.Now().UnixMilli(), cn.s.Cfg.Bool("cluster-replica-no-failover")))
}

// failoverConfigChanged applies CONFIG SET of a failover directive; it
// reports whether name was one.
func (cn *clusterNode) failoverConfigChanged(name string) bool {
	switch name {
	case "cluster-replica-validity-factor", "repl-ping-replica-period", "cluster-migration-barrier",
		"cluster-allow-replica-migration", "cluster-replica-no-failover":
	default:
		return false
	}
	nofailover := cn.s.Cfg.Bool("cluster-replica-no-failover")
	go cn.do(func() {
		cn.fo.Cfg = cn.failoverConfig(cn.fo.Cfg.Rand)
		cn.apply(cn.st.SetNoFailover(time.Now().UnixMilli(), nofailover))
	})
	return true
}

// failoverTick feeds the replication state in and ticks the machine.
func (cn *clusterNode) failoverTick(now int64) {
	cn.fo.SetMasterLinkDown(cn.hooks.MasterLinkDownSince())
	cn.applyFailover(now, cn.fo.Tick(now, cn.st))
}

// failoverProgress lets a manual failover move on after bus messages,
// without waiting for the next tick (a no-op otherwise).
func (cn *clusterNode) failoverProgress() {
	if cn.fo.InManualFailover() {
		// The replica's offset as of now, not as of the last tick: it
		// decides whether the paused master's offset is reached.
		cn.st.SetReplOffset(cn.hooks.ReplOffset())
		cn.applyFailover(cn.now, cn.fo.Progress(cn.now, cn.st))
	}
}

// manualPoll is how often the loop checks a manual failover between bus
// messages: a replica reaches the paused master's offset through the
// replication link, which sends the loop nothing.
const manualPoll = 5 * time.Millisecond

// manualPollC returns a channel that fires after manualPoll while a manual
// failover is under way, nil otherwise (a nil channel never fires).
func (cn *clusterNode) manualPollC() <-chan time.Time {
	if !cn.fo.InManualFailover() {
		return nil
	}
	if cn.mfTimer == nil {
		cn.mfTimer = time.NewTimer(manualPoll)
	} else {
		cn.mfTimer.Reset(manualPoll)
	}
	return cn.mfTimer.C
}

// manualPollFired moves a manual failover on after manualPoll.
func (cn *clusterNode) manualPollFired() {
	cn.now = time.Now().UnixMilli()
	cn.failoverProgress()
	cn.publishIfChanged()
}

// applyFailover carries out the machine's outputs in order.
func (cn *clusterNode) applyFailover(now int64, outs []failover.Output) {
	for _, o := range outs {
		switch o := o.(type) {
		case gossip.Output:
			cn.apply([]gossip.Output{o})
		case *failover.Event:
			cn.log.Info("failover event", zap.String("event", o.Kind.String()), zap.String("about", string(o.Node)), zap.String("detail", o.Detail))
		case *failover.Promote:
			cn.log.Warn("promoted to master", zap.Uint64("config_epoch", o.Epoch))
			cn.hooks.Promote()
		case *failover.PauseWrites:
			off := cn.hooks.PauseWrites(time.UnixMilli(o.Until))
			cn.log.Warn("writes paused for a manual failover", zap.String("replica", string(o.Replica)), zap.Int64("offset", off))
			cn.applyFailover(now, cn.fo.WritesPaused(now, cn.st, off))
		case *failover.ResumeWrites:
			// Clients held by the pause must see the new routing (MOVED
			// when the failover happened), never this node as master.
			cn.publish()
			cn.hooks.ResumeWrites()
		}
	}
}

// follow points replication at the master gossip says this node follows.
func (cn *clusterNode) follow(id gossip.NodeID) {
	n := cn.st.Nodes[id]
	if n == nil {
		return
	}
	cn.hooks.Follow(string(id), n.IP, n.Port)
}
