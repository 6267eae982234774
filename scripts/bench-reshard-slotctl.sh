#!/usr/bin/env bash
# Measures `slotctl reshard` moving 5461 slots (slots 0-5460, a third of
# the keys) from one master to another of a 3-master slotd cluster holding
# N keys with SIZE-byte values, while a probe client reads and writes keys
# of the moving slots. Prints keys/s and the probe's latency percentiles.
#
# With REDIS_CLI=1 it also runs the unmodified `redis-cli --cluster reshard
# --cluster-pipeline 100` on the same data against slotd and against a
# redis-server 7 cluster, for comparison.
#
# Environment: N=1000000 SIZE=64 PARALLEL=128 PIPELINE=100 BASE=25450
# (nodes on BASE..BASE+2, BASE+3..BASE+5 for redis-server; bus +10000).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

N=${N:-1000000}
SIZE=${SIZE:-64}
PARALLEL=${PARALLEL:-128}
PIPELINE=${PIPELINE:-100}
BASE=${BASE:-25450}
REDIS_CLI=${REDIS_CLI:-0}

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

start_node() { # kind port
	local kind=$1 port=$2
	if [ "$kind" = redis ]; then
		redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes --cluster-node-timeout 5000 \
			--cluster-config-file "$work/nodes-$port.conf" --dir "$work" --save '' --appendonly no \
			--logfile "$work/redis-$port.log" &
	else
		"$work/slotd" --port "$port" --bind 127.0.0.1 --cluster-enabled yes --cluster-node-timeout 5000 \
			--cluster-config-file "$work/nodes-$port.conf" --dir "$work" --loglevel warning \
			>"$work/slotd-$port.log" 2>&1 &
	fi
	pids+=($!)
	for _ in $(seq 1 600); do
		[ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && return 0
		sleep 0.1
	done
	echo "bench-reshard: node on port $port did not start" >&2
	tail -5 "$work/slotd-$port.log" "$work/redis-$port.log" 2>/dev/null >&2 || true
	exit 1
}

cluster() { # kind first_port
	local kind=$1 first=$2
	for p in $first $((first + 1)) $((first + 2)); do start_node "$kind" "$p"; done
	redis-cli --cluster create 127.0.0.1:$first 127.0.0.1:$((first + 1)) 127.0.0.1:$((first + 2)) \
		--cluster-replicas 0 --cluster-yes >/dev/null
	for _ in $(seq 1 200); do
		ok=1
		for p in $first $((first + 1)) $((first + 2)); do
			redis-cli -p "$p" cluster info | grep -q cluster_state:ok || ok=0
		done
		[ $ok = 1 ] && break
		sleep 0.1
	done
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
cluster slotd "$BASE"
src=$(redis-cli -p "$BASE" cluster myid)
dst=$(redis-cli -p $((BASE + 1)) cluster myid)
run_reshard "slotctl reshard (parallel $PARALLEL)" "$BASE" \
	"$work/slotctl" reshard 127.0.0.1:$BASE --from "$src" --to "$dst" --slots 5461 --yes \
	--parallel "$PARALLEL" --pipeline "$PIPELINE" --trace
tail -3 "$work/out-slotctl reshard (parallel $PARALLEL).txt"

if [ "$REDIS_CLI" = 1 ]; then
	# The same 5461 slots with the unmodified redis-cli, on a redis-server
	# cluster holding the same data, then on the slotd cluster (moving the
	# slots back).
	cluster redis $((BASE + 3))
	rsrc=$(redis-cli -p $((BASE + 3)) cluster myid)
	rdst=$(redis-cli -p $((BASE + 4)) cluster myid)
	run_reshard "redis-cli reshard, redis-server" $((BASE + 3)) \
		redis-cli --cluster reshard 127.0.0.1:$((BASE + 3)) --cluster-from "$rsrc" --cluster-to "$rdst" \
		--cluster-slots 5461 --cluster-yes --cluster-pipeline 100
	run_reshard "redis-cli reshard, slotd" "$BASE" \
		redis-cli --cluster reshard 127.0.0.1:$BASE --cluster-from "$dst" --cluster-to "$src" \
		--cluster-slots 5461 --cluster-yes --cluster-pipeline 100
fi
