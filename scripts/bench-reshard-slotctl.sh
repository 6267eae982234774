#!/usr/bin/env bash
# Measures `slotctl reshard` moving 5461 slots (slots 0-5460, a third of
# the keys) from one master to another of a 3-master slotd cluster holding
# N keys with SIZE-byte values, while a probe client reads and writes keys
# of the moving slots. Prints keys/s and the probe's latency percentiles.
#
# With REDIS_CLI=1 it also runs the unmodified `redis-cli --cluster reshard
# --cluster-pipeline 100` on the same data against a redis-server 7
# cluster, and with REDIS_CLI_SLOTD=1 against slotd too (slow: one config
# write per SETSLOT), for comparison.
#
# Environment: N=1000000 SIZE=64 PARALLEL=512 PIPELINE=100 BASE=25450
# (each cluster takes the first three consecutive ports from BASE whose
# bus ports, +10000, are free too: bus ports above 32767 can be taken by
# outgoing connections).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

N=${N:-1000000}
SIZE=${SIZE:-64}
PARALLEL=${PARALLEL:-512}
PIPELINE=${PIPELINE:-100}
BASE=${BASE:-25450}
REDIS_CLI=${REDIS_CLI:-0}
REDIS_CLI_SLOTD=${REDIS_CLI_SLOTD:-0}
next_port=$BASE

work=$(mktemp -d /tmp/slotd-bench-reshard.XXXXXX)
pids=()
probe=
cleanup() {
	status=$?
	[ -n "$probe" ] && kill "$probe" 2>/dev/null || true
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ $status != 0 ]; then
		keep=$(mktemp -d /tmp/slotd-bench-reshard-failed.XXXXXX)
		cp "$work"/*.log "$work"/*.txt "$keep"/ 2>/dev/null || true
		echo "bench-reshard: failed; logs kept in $keep" >&2
	fi
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/slotd" ./cmd/slotd
go build -o "$work/slotctl" ./cmd/slotctl
go build -o "$work/reshardbench" ./scripts/reshardbench

bench=bench-reshard
slotd_args=()
. scripts/bench-nodes.sh

port_free() { # port: neither it nor its bus port is bound or used by a connection
	[ -z "$(ss -Htan "( sport = :$1 or sport = :$(($1 + 10000)) )" 2>/dev/null)" ]
}

# pick_ports sets first to the first of three consecutive free ports from next_port.
pick_ports() {
	while ! { port_free $next_port && port_free $((next_port + 1)) && port_free $((next_port + 2)); }; do
		next_port=$((next_port + 1))
		[ $next_port -gt 25497 ] && { echo "bench-reshard: no free ports" >&2; exit 1; }
	done
	first=$next_port
	next_port=$((next_port + 3))
}

cluster() { # kind; sets first
	local kind=$1
	pick_ports
	make_cluster "$kind" "$first" 3
	"$work/reshardbench" load 127.0.0.1:$first "$N" "$SIZE"
}

# run_reshard name first_port command...: times the command with the probe running
run_reshard() {
	local name=$1 first=$2
	shift 2
	local before after
	before=$(redis-cli -p $((first + 1)) dbsize)
	"$work/reshardbench" probe 127.0.0.1:$first 0 5460 >"$work/probe-$name.txt" &
	probe=$!
	sleep 1
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >"$work/out-$name.txt" 2>&1 || { cat "$work/out-$name.txt"; exit 1; }
	t1=$(date +%s.%N)
	kill -TERM $probe
	wait $probe || true
	probe=
	after=$(redis-cli -p $((first + 1)) dbsize)
	local moved=$((after - before))
	moved=${moved#-}
	local secs
	secs=$(echo "$t1 - $t0" | bc -l)
	printf '%-40s %8d keys in %6.1fs = %8.0f keys/s | %s\n' "$name" "$moved" "$secs" "$(echo "$moved / $secs" | bc -l)" "$(cat "$work/probe-$name.txt")"
}

echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); N=$N SIZE=$SIZE"
cluster slotd
sfirst=$first
src=$(redis-cli -p "$sfirst" cluster myid)
dst=$(redis-cli -p $((sfirst + 1)) cluster myid)
run_reshard "slotctl reshard (parallel $PARALLEL)" "$sfirst" \
	"$work/slotctl" reshard 127.0.0.1:$sfirst --from "$src" --to "$dst" --slots 5461 --yes \
	--parallel "$PARALLEL" --pipeline "$PIPELINE" --trace
tail -3 "$work/out-slotctl reshard (parallel $PARALLEL).txt"

if [ "$REDIS_CLI" = 1 ]; then
	# The same 5461 slots with the unmodified redis-cli on a redis-server
	# cluster holding the same data.
	cluster redis
	rsrc=$(redis-cli -p "$first" cluster myid)
	rdst=$(redis-cli -p $((first + 1)) cluster myid)
	run_reshard "redis-cli reshard, redis-server" "$first" \
		redis-cli --cluster reshard 127.0.0.1:$first --cluster-from "$rsrc" --cluster-to "$rdst" \
		--cluster-slots 5461 --cluster-yes --cluster-pipeline 100
fi
if [ "$REDIS_CLI_SLOTD" = 1 ]; then
	# redis-cli moving the slots back on the slotd cluster.
	run_reshard "redis-cli reshard, slotd" "$sfirst" \
		redis-cli --cluster reshard 127.0.0.1:$sfirst --cluster-from "$dst" --cluster-to "$src" \
		--cluster-slots 5461 --cluster-yes --cluster-pipeline 100
fi
