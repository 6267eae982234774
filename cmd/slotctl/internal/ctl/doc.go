// Package ctl is the client side of slotctl: it reads a cluster's topology
// from its nodes and drives them with the same commands redis-cli --cluster
// sends (INFO, CLUSTER NODES, ADDSLOTSRANGE, SET-CONFIG-EPOCH, MEET,
// REPLICATE, FORGET, RESET), so every operation works against redis-server 7
// clusters and slotd clusters alike.
//
// The package is split so that later operations (reshard, rebalance, fix,
// drain) reuse the same parts:
//
//   - topology.go is pure: it parses CLUSTER NODES text into NodeInfo values
//     and computes the "all nodes agree" signature. It talks to no node.
//   - conn.go wraps one go-redis connection per node; every failure comes back
//     as a *CmdError naming the node and the command.
//   - cluster.go loads a Cluster: the entry node's view plus a connection and
//     the own view of every reachable node it lists.
//   - plan.go holds the plans an operation prints before it acts and asks the
//     user to confirm (Options.Confirm); a plan is computed without side
//     effects, so a --dry-run is printing it and stopping.
//   - report.go is the one place that writes progress and results. Operations
//     call Section/OK/Warn/Err/Progress on a Reporter; a progress bar for key
//     moves can be added there without touching the operations.
//   - one file per operation (create.go, check.go, info.go, addnode.go,
//     delnode.go); reshard.go holds reshard, rebalance, drain and fix.
//   - move.go runs the per-slot protocol (SETSLOT IMPORTING on the target,
//     MIGRATING on the source, GETKEYSINSLOT + pipelined MIGRATE ... KEYS,
//     SETSLOT NODE on the target, the source, the others), moving large
//     collections in chunks and batching SETSLOT calls when the nodes are
//     slotd (SLOTD.MIGRATE; see docs/design.md, "Slot migration").
//
// The moving operations follow one shape: Load gives the topology; open
// slots left by an interrupted run are finished first (migrate.PlanFix in
// resume mode), so every operation is resumable by running it again; a
// pure planner in migrate/ turns the slot owners (and weights) into moves;
// the plan is printed and confirmed like CreatePlan (--dry-run stops
// there); the moves run --parallel at a time with a progress line.
//
// Operations return an error for a failure that stopped them and report
// findings (a failed check) through Reporter and their result value. The
// caller (cmd/slotctl) maps both to the exit status.
package ctl
