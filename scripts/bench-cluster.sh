#!/usr/bin/env bash
# Benchmarks a 3-master slotd cluster side by side with a 3-master
# redis-server cluster on this machine, and measures the cluster bus cost of
# a 6-node slotd cluster. Prints a Markdown report on stdout.
#
# Both clusters: 127.0.0.1, cluster-node-timeout 5000, no persistence,
# created with the unmodified `redis-cli --cluster create`. Each workload is
# run REPS times per cluster, alternating (redis, slotd, redis, ...), and the
# median is reported.
#
# Environment: N=200000 requests per run at -P 1, N16=2000000 at -P 16,
# CLIENTS=50, REPS=3, BUS_SECONDS=20,
# BASE=21800 (redis uses BASE.., slotd BASE+10.., the 6-node cluster BASE+20..;
# bus ports are +10000).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

N=${N:-200000}
N16=${N16:-2000000}
CLIENTS=${CLIENTS:-50}
REPS=${REPS:-3}
BUS_SECONDS=${BUS_SECONDS:-20}
BASE=${BASE:-21800}

work=$(mktemp -d /tmp/slotd-bench-cluster.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/slotd" ./cmd/slotd

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
	for _ in $(seq 1 200); do
		[ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && return 0
		sleep 0.05
	done
	echo "bench-cluster: node on port $port did not start" >&2
	exit 1
}

make_cluster() { # kind first_port count
	local kind=$1 first=$2 count=$3 addrs=()
	for i in $(seq 0 $((count - 1))); do
		start_node "$kind" $((first + i))
		addrs+=("127.0.0.1:$((first + i))")
	done
	redis-cli --cluster create "${addrs[@]}" --cluster-yes >"$work/create-$kind-$first.log" 2>&1
	for _ in $(seq 1 300); do
		local ok=0
		for i in $(seq 0 $((count - 1))); do
			redis-cli -p $((first + i)) cluster info | grep -q 'cluster_state:ok' && ok=$((ok + 1))
		done
		[ "$ok" = "$count" ] && return 0
		sleep 0.1
	done
	echo "bench-cluster: $kind cluster on $first did not reach cluster_state:ok" >&2
	exit 1
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

run() { # port test pipeline -> "rps p50 p99"
	local n=$N
	[ "$3" = 1 ] || n=$N16
	redis-benchmark -p "$1" --cluster -t "$2" -c "$CLIENTS" -n "$n" -P "$3" --csv 2>/dev/null |
		tr -d '"' | awk -F, -v t="${2^^}" '$1 == t {print $2, $5, $7; exit}'
}

make_cluster redis "$BASE" 3
make_cluster slotd $((BASE + 10)) 3

echo "## Cluster: 3 masters, redis-benchmark --cluster -c $CLIENTS -n <$N at -P 1, $N16 at -P 16>"
echo
echo "| test | -P | redis rps | slotd rps | ratio | redis p50/p99 ms | slotd p50/p99 ms |"
echo "|---|---|---|---|---|---|---|"
for P in 1 16; do
	for t in set get; do
		: >"$work/r" && : >"$work/s"
		for _ in $(seq 1 "$REPS"); do
			run "$BASE" "$t" "$P" >>"$work/r"
			run $((BASE + 10)) "$t" "$P" >>"$work/s"
		done
		rr=$(cut -d' ' -f1 "$work/r" | median)
		sr=$(cut -d' ' -f1 "$work/s" | median)
		rl=$(awk '{print $2"/"$3}' "$work/r" | tail -1)
		sl=$(awk '{print $2"/"$3}' "$work/s" | tail -1)
		ratio=$(awk -v a="$sr" -v b="$rr" 'BEGIN {printf "%.2f", a / b}')
		echo "| ${t^^} | $P | $rr | $sr | $ratio | $rl | $sl |"
	done
done
echo

# Bus cost: a 6-node slotd cluster at rest, measured from CLUSTER INFO's
# bus byte counters over BUS_SECONDS.
make_cluster slotd $((BASE + 20)) 6
sleep 3
bytes() { redis-cli -p "$1" cluster info | tr -d '\r' | awk -F: '/cluster_stats_bus_bytes_sent/ {print $2}'; }
msgs() { redis-cli -p "$1" cluster info | tr -d '\r' | awk -F: '/cluster_stats_messages_sent:/ {print $2}'; }
declare -A b0 m0
for i in 0 1 2 3 4 5; do b0[$i]=$(bytes $((BASE + 20 + i))); m0[$i]=$(msgs $((BASE + 20 + i))); done
sleep "$BUS_SECONDS"
total=0
totalm=0
for i in 0 1 2 3 4 5; do
	total=$((total + $(bytes $((BASE + 20 + i))) - b0[$i]))
	totalm=$((totalm + $(msgs $((BASE + 20 + i))) - m0[$i]))
done
per=$(awk -v t="$total" -v s="$BUS_SECONDS" 'BEGIN {printf "%.0f", t / 6 / s}')
perm=$(awk -v t="$totalm" -v s="$BUS_SECONDS" 'BEGIN {printf "%.1f", t / 6 / s}')
echo "## Cluster bus cost, 6 slotd nodes (6 masters) at rest, ${BUS_SECONDS}s"
echo
echo "- bus bytes sent per node per second: $per"
echo "- bus messages sent per node per second: $perm"
echo "- the same messages in redis-server's format: at least $(awk -v m="$perm" 'BEGIN {printf "%.0f", m * 2256}') bytes per node per second (2256-byte header with the 2 KB slot bitmap per message, gossip sections extra)"
