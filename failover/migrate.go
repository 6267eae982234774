package failover

import (
	"strconv"

	"github.com/slotd/slotd/gossip"
)

// observe remembers which masters had replicas, or were replicas: only
// those count as orphaned when they have none.
func (m *Machine) observe(st *gossip.State) {
	for _, id := range st.Order() {
		n := st.Nodes[id]
		if n.InHandshake() {
			continue
		}
		if n.IsReplica() {
			m.wasSlave[id] = true
			if n.Master != "" {
				m.migrateTo[n.Master] = true
			}
		} else if m.wasSlave[id] && n != st.Myself {
			m.migrateTo[id] = true
		}
	}
}

// migrationTick moves this replica to an orphaned master when it is the
// one replica that should (see the package doc).
func (m *Machine) migrationTick(now int64, st *gossip.State) {
	me := st.Myself
	if !m.Cfg.AllowReplicaMigration || st.Status != gossip.ClusterOK || st.Nodes[me.Master] == nil {
		clear(m.orphaned)
		return
	}
	maxOK := 0
	var target *gossip.Node
	for _, id := range st.Order() {
		n := st.Nodes[id]
		if !n.IsMaster() {
			continue
		}
		ok := healthyReplicas(st, id)
		maxOK = max(maxOK, ok)
		if ok == 0 && n.NumSlots > 0 && m.migrateTo[id] && !n.Failing() {
			if _, seen := m.orphaned[id]; !seen {
				m.orphaned[id] = now
			}
			if target == nil {
				target = n
			}
		} else {
			delete(m.orphaned, id)
		}
	}
	mine := healthyReplicas(st, me.Master)
	if target == nil || maxOK < 2 || mine != maxOK || mine <= m.Cfg.MigrationBarrier {
		return
	}
	// The candidate: the smallest id among the healthy replicas of the
	// masters with the most healthy replicas.
	for _, id := range st.Order() {
		n := st.Nodes[id]
		if !n.IsMaster() || healthyReplicas(st, id) != maxOK {
			continue
		}
		for _, r := range replicasOf(st, id) {
			if !r.Failing() && r.ID < me.ID {
				return
			}
		}
	}
	if now-m.orphaned[target.ID] <= migrationDelay {
		return
	}
	old := me.Master
	outs, err := st.Replicate(now, target.ID)
	if err != nil {
		return
	}
	m.Stats.ReplicaMigrations++
	m.event(EventReplicaMigrated, target.ID, "left "+short(old)+" with "+strconv.Itoa(mine-1)+
		" replicas for orphaned master "+short(target.ID))
	delete(m.orphaned, target.ID)
	m.gossip(outs)
}
