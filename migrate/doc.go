// Package migrate plans slot migrations: which slots move from which master
// to which, for a reshard, a rebalance or a drain, and what to do with a
// slot left open (migrating or importing) by an interrupted run.
//
// Everything here is pure: a planner takes the masters and their slots as
// read from the cluster (in the order the caller read them; the order
// breaks ties, as it does in redis-cli) and returns moves. It opens no
// connection and reads no clock. slotctl executes the moves with the
// per-slot protocol described in docs/design.md ("Slot migration").
//
// The reshard and rebalance planners compute the same slot lists redis-cli
// 7.0 computes for the same cluster and options (including its float32
// arithmetic), so the two tools can be compared move for move.
package migrate
