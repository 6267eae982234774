// Command slotctl is slotd's cluster tool. It drives any Redis Cluster
// (slotd or redis-server 7) with the commands redis-cli --cluster uses:
//
//	slotctl create host:port... [--replicas N] [--yes]
//	slotctl check host:port
//	slotctl info host:port
//	slotctl add-node new_host:port existing_host:port [--replica-of <id>]
//	slotctl del-node host:port <node-id> [--shutdown]
//	slotctl reshard host:port --to <id> --slots N [--from <id>,...]
//	slotctl rebalance host:port [--weight <id>=<w>]... [--threshold P] [--use-empty-masters]
//	slotctl drain host:port <node-id> [--to <id>,...]
//	slotctl fix host:port
//
// The four slot-moving commands print their plan and ask for confirmation
// (--yes skips it, --dry-run stops after the plan), show a progress line,
// move --parallel slots at once with --pipeline keys per MIGRATE, and move
// large collections in chunks between slotd nodes (--big-key, --chunk).
// They are resumable: run again (or run fix) after an interruption and the
// open slots are finished first.
//
// Global flags, accepted anywhere on the line: --timeout (per command),
// --wait (for the cluster to converge), -a/--pass (password; the
// REDISCLI_AUTH environment variable is used when it is not given),
// --color auto|always|never.
//
// Exit status: 0 on success, 1 when a command failed or a check found a
// problem, 2 on a usage error.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slotd/slotd/cmd/slotctl/internal/ctl"
)

const usage = `Usage: slotctl <command> [arguments] [flags]

Commands:
  create host:port... [--replicas N] [--yes]   build a cluster from empty nodes
  check host:port                              check slot agreement, coverage, open slots, failing nodes
  info host:port                               keys, slots and replicas per master
  add-node new_host:port existing_host:port [--replica-of <id>]
                                               join an empty node (as a master without slots, or a replica)
  del-node host:port <node-id> [--shutdown]    remove a node that owns no slots
  reshard host:port --to <id> --slots N [--from <id>,...]
                                               move N slots to a master (from all others by default)
  rebalance host:port [--weight <id>=<w>]... [--threshold P] [--use-empty-masters]
                                               even the slots out by weight, as redis-cli computes it
  drain host:port <node-id> [--to <id>,...]    move every slot of a master to the others
  fix host:port                                finish or roll back open slots, cover uncovered ones

Flags of reshard, rebalance, drain and fix:
  --yes             do not ask for confirmation
  --dry-run         print the plan and stop
  --parallel N      slots moved at once (default 32)
  --pipeline N      keys per MIGRATE call (default 100)
  --replace         overwrite keys the target already holds
  --big-key N       move collections of N or more elements in chunks, slotd to slotd (default 10000, -1: never)
  --chunk N         elements per chunk (default 1000)
  --migrate-timeout D  MIGRATE's timeout (default 60s)
  --trace           print the average time per slot of each step

Global flags:
  --timeout D     timeout of one command, e.g. 5s (default 10s)
  --wait D        how long to wait for the cluster to converge (default 60s)
  -a, --pass PW   password (default: $REDISCLI_AUTH)
  --color WHEN    auto, always or never (default auto)
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sub := args[0]
	fs := flag.NewFlagSet("slotctl "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	o := &ctl.Options{Out: stdout}
	var color string
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Second, "timeout of one command")
	fs.DurationVar(&o.Wait, "wait", 60*time.Second, "how long to wait for the cluster to converge")
	fs.StringVar(&o.Password, "a", os.Getenv("REDISCLI_AUTH"), "password")
	fs.StringVar(&o.Password, "pass", os.Getenv("REDISCLI_AUTH"), "password")
	fs.StringVar(&color, "color", "auto", "auto, always or never")
	var replicas int
	var replicaOf string
	var shutdown bool
	mo := &ctl.MoveOptions{}
	var reshardReq ctl.ReshardRequest
	var rebalanceReq ctl.RebalanceRequest
	var from, to string
	weights := weightFlag{}
	moveFlags := func() {
		fs.BoolVar(&o.Yes, "yes", false, "do not ask for confirmation")
		fs.BoolVar(&mo.DryRun, "dry-run", false, "print the plan and stop")
		fs.BoolVar(&mo.Trace, "trace", false, "print where the time of the moves went")
		fs.IntVar(&mo.Parallel, "parallel", 32, "slots moved at once")
		fs.IntVar(&mo.Pipeline, "pipeline", 100, "keys per MIGRATE call")
		fs.BoolVar(&mo.Replace, "replace", false, "overwrite keys the target already holds")
		fs.IntVar(&mo.BigKey, "big-key", 10000, "element count from which a collection moves in chunks")
		fs.IntVar(&mo.Chunk, "chunk", 1000, "elements per chunk")
		fs.DurationVar(&mo.MigrateTimeout, "migrate-timeout", 60*time.Second, "MIGRATE's timeout")
	}
	switch sub {
	case "reshard":
		moveFlags()
		fs.StringVar(&to, "to", "", "target master id")
		fs.StringVar(&from, "from", "", "source master ids, comma separated (default: all others)")
		fs.IntVar(&reshardReq.Slots, "slots", 0, "number of slots to move")
	case "rebalance":
		moveFlags()
		fs.Var(weights, "weight", "<id>=<weight>, repeatable")
		fs.Float64Var(&rebalanceReq.Threshold, "threshold", 2, "imbalance in percent that triggers a rebalance")
		fs.BoolVar(&rebalanceReq.UseEmpty, "use-empty-masters", false, "give slots to masters that have none")
	case "drain":
		moveFlags()
		fs.StringVar(&to, "to", "", "receiving master ids, comma separated (default: all others)")
	case "fix":
		moveFlags()
	case "create":
		fs.IntVar(&replicas, "replicas", 0, "replicas per master")
		fs.BoolVar(&o.Yes, "yes", false, "do not ask for confirmation")
	case "add-node":
		fs.StringVar(&replicaOf, "replica-of", "", "join as a replica of this master id")
	case "del-node":
		fs.BoolVar(&shutdown, "shutdown", false, "shut the node down after removing it")
	case "check", "info":
	default:
		fmt.Fprintf(stderr, "slotctl: unknown command %q\n\n%s", sub, usage)
		return 2
	}
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return 2
	}
	tty := isTerminal(stdout)
	switch color {
	case "always":
		o.Color = true
	case "never":
	case "auto":
		o.Color = tty
	default:
		fmt.Fprintf(stderr, "slotctl: --color must be auto, always or never\n")
		return 2
	}
	o.Live = tty
	in := bufio.NewReader(stdin)
	o.Confirm = func(prompt string) bool {
		fmt.Fprint(stdout, prompt)
		line, _ := in.ReadString('\n')
		return strings.TrimSpace(line) == "yes"
	}

	want := map[string]int{"check": 1, "info": 1, "add-node": 2, "del-node": 2, "reshard": 1, "rebalance": 1, "drain": 2, "fix": 1}
	if n, ok := want[sub]; ok && len(pos) != n {
		fmt.Fprintf(stderr, "slotctl %s: want %d arguments, got %d\n\n%s", sub, n, len(pos), usage)
		return 2
	}
	isMove := sub == "reshard" || sub == "rebalance" || sub == "drain" || sub == "fix"
	if isMove && (mo.Parallel < 1 || mo.Pipeline < 1 || mo.Chunk < 1 || mo.BigKey == 0) {
		fmt.Fprintf(stderr, "slotctl %s: --parallel, --pipeline and --chunk must be at least 1, --big-key not 0\n", sub)
		return 2
	}
	if sub == "reshard" && (to == "" || reshardReq.Slots < 1) {
		fmt.Fprintf(stderr, "slotctl reshard: --to and --slots (at least 1) are required\n\n%s", usage)
		return 2
	}
	if sub == "create" && len(pos) == 0 {
		fmt.Fprintf(stderr, "slotctl create: no nodes given\n\n%s", usage)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch sub {
	case "create":
		res, err := ctl.Create(ctx, pos, replicas, o)
		return finish(stderr, sub, res, err)
	case "check":
		res, err := ctl.Check(ctx, pos[0], o)
		return finish(stderr, sub, res, err)
	case "info":
		_, err := ctl.Info(ctx, pos[0], o)
		return finish(stderr, sub, nil, err)
	case "add-node":
		_, err := ctl.AddNode(ctx, pos[0], pos[1], replicaOf, o)
		return finish(stderr, sub, nil, err)
	case "del-node":
		err := ctl.DelNode(ctx, pos[0], pos[1], shutdown, o)
		return finish(stderr, sub, nil, err)
	case "reshard":
		reshardReq.To, reshardReq.From = to, splitList(from)
		_, err := ctl.Reshard(ctx, pos[0], reshardReq, o, mo)
		return finish(stderr, sub, nil, err)
	case "rebalance":
		rebalanceReq.Weights = weights
		_, err := ctl.Rebalance(ctx, pos[0], rebalanceReq, o, mo)
		return finish(stderr, sub, nil, err)
	case "drain":
		_, err := ctl.Drain(ctx, pos[0], pos[1], splitList(to), o, mo)
		return finish(stderr, sub, nil, err)
	case "fix":
		_, err := ctl.Fix(ctx, pos[0], o, mo)
		return finish(stderr, sub, nil, err)
	}
	return 2
}

// finish maps an operation's outcome to the exit status.
func finish(stderr io.Writer, sub string, res *ctl.CheckResult, err error) int {
	if err != nil {
		if errors.Is(err, ctl.ErrAborted) {
			fmt.Fprintf(stderr, "slotctl %s: %v\n", sub, err)
			return 1
		}
		fmt.Fprintf(stderr, "slotctl %s: error: %v\n", sub, err)
		return 1
	}
	if res != nil && !res.OK() {
		fmt.Fprintf(stderr, "slotctl %s: the cluster has problems (see above)\n", sub)
		return 1
	}
	return 0
}

// parseInterleaved lets flags come before, between or after the positional
// arguments (`create a b c --replicas 1`), which the flag package alone
// stops at.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// "--" ends flags: everything after it is positional.
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// weightFlag collects repeated --weight <id>=<w> flags.
type weightFlag map[string]float64

func (w weightFlag) String() string { return "" }

func (w weightFlag) Set(v string) error {
	id, ws, ok := strings.Cut(v, "=")
	if !ok || id == "" {
		return fmt.Errorf("want <node-id>=<weight>, got %q", v)
	}
	f, err := strconv.ParseFloat(ws, 64)
	if err != nil || f < 0 {
		return fmt.Errorf("bad weight %q", ws)
	}
	w[id] = f
	return nil
}
