#!/usr/bin/env bash
# Benchmarks replication, slotd side by side with redis-server 7 on this
# machine, and writes a Markdown report to OUT (docs/BENCHMARKS-replication.md).
#
# For each server (a master and a replica of the same kind, diskless sync
# with no delay, no persistence):
#   1. full sync: KEYS (1,000,000) keys of 64-byte values (DEBUG POPULATE)
#      on the master; time from REPLICAOF until the replica reports
#      master_link_status:up with the master's offset;
#   2. master throughput: redis-benchmark -t set -P 16 -c 50 -n N16 against
#      the master without a replica, then with the synced replica attached;
#   3. replication lag during (2): master_repl_offset minus the replica's
#      offset, sampled every 100 ms; the maximum and the mean are reported.
# Each measurement runs REPS times (redis, slotd alternating); medians.
#
# Environment: KEYS=1000000, N16=2000000, REPS=3, BASE=25900 (master BASE,
# replica BASE+1 for redis; BASE+2, BASE+3 for slotd).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

KEYS=${KEYS:-1000000}
N16=${N16:-2000000}
REPS=${REPS:-3}
BASE=${BASE:-25900}
OUT=${OUT:-docs/BENCHMARKS-replication.md}

work=$(mktemp -d /tmp/slotd-bench-repl.XXXXXX)
# Servers are started inside $(...) subshells: their pids go to a file.
cleanup() {
	if [ -f "$work/pids" ]; then
		while read -r p; do kill -9 "$p" 2>/dev/null || true; done <"$work/pids"
	fi
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/slotd" ./cmd/slotd
REDIS_SERVER=$(command -v redis-server || echo /usr/bin/redis-server)

start() { # kind port -> pid in $started
	local kind=$1 port=$2
	# Each server gets an empty directory of its own: a replica's received
	# RDB must not be loaded by the next server started on that port.
	rm -rf "$work/$port"
	mkdir -p "$work/$port"
	if [ "$kind" = redis ]; then
		"$REDIS_SERVER" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/$port" \
			--enable-debug-command yes --repl-diskless-sync yes --repl-diskless-sync-delay 0 \
			--logfile "$work/redis-$port.log" &
	else
		"$work/slotd" --port "$port" --bind 127.0.0.1 --dir "$work/$port" --loglevel warning --save '' \
			--enable-debug-command yes --repl-diskless-sync yes --repl-diskless-sync-delay 0 \
			>"$work/slotd-$port.log" 2>&1 &
	fi
	started=$!
	echo "$started" >>"$work/pids"
	for _ in $(seq 400); do
		redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	echo "server on $port did not start" >&2
	exit 1
}

stop() { # pid port
	redis-cli -p "$2" shutdown nosave >/dev/null 2>&1 || kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

field() { # port section field
	redis-cli -p "$1" info "$2" | tr -d '\r' | sed -n "s/^$3://p"
}

now_ms() { date +%s%3N; }

# run_one kind -> prints "sync_ms rps_without rps_with lag_max lag_mean"
run_one() {
	local kind=$1 mp rp
	if [ "$kind" = redis ]; then mp=$BASE rp=$((BASE + 1)); else mp=$((BASE + 2)) rp=$((BASE + 3)); fi
	start "$kind" "$mp"; local mpid=$started
	redis-cli -p "$mp" debug populate "$KEYS" key 64 >/dev/null
	start "$kind" "$rp"; local rpid=$started
	local t0 t1
	t0=$(now_ms)
	redis-cli -p "$rp" replicaof 127.0.0.1 "$mp" >/dev/null
	while :; do
		if [ "$(field "$rp" replication master_link_status)" = up ] &&
			[ "$(field "$rp" replication master_repl_offset)" = "$(field "$mp" replication master_repl_offset)" ]; then
			break
		fi
		sleep 0.02
	done
	t1=$(now_ms)
	# Throughput without the replica: detach it, let the master settle.
	redis-cli -p "$rp" replicaof no one >/dev/null
	sleep 1
	local without with
	without=$(redis-benchmark -p "$mp" -t set -P 16 -c 50 -n "$N16" -q 2>/dev/null | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)
	redis-cli -p "$rp" replicaof 127.0.0.1 "$mp" >/dev/null
	while [ "$(field "$rp" replication master_link_status)" != up ]; do sleep 0.05; done
	sleep 1
	: >"$work/lag"
	(
		# One INFO of the master: its offset and the replica's last ACK.
		while :; do
			redis-cli -p "$mp" info replication | tr -d '\r' |
				awk -F'[:,=]' '/^slave0:/ {for (i = 1; i < NF; i++) if ($i == "offset") r = $(i + 1)} /^master_repl_offset:/ {m = $2} END {if (m != "" && r != "") print m - r}' >>"$work/lag"
			sleep 0.1
		done
	) 2>/dev/null &
	local sampler=$!
	echo "$sampler" >>"$work/pids"
	with=$(redis-benchmark -p "$mp" -t set -P 16 -c 50 -n "$N16" -q 2>/dev/null | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)
	kill "$sampler" 2>/dev/null || true
	wait "$sampler" 2>/dev/null || true
	local lagmax lagmean
	lagmax=$(sort -n "$work/lag" | tail -1)
	lagmean=$(awk '{s+=$1} END {if (NR) printf "%d", s/NR; else print 0}' "$work/lag")
	stop "$rpid" "$rp"
	stop "$mpid" "$mp"
	echo "$((t1 - t0)) $without $with ${lagmax:-0} ${lagmean:-0}"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A res
for ((i = 1; i <= REPS; i++)); do
	for kind in redis slotd; do
		echo "run $i: $kind" >&2
		res[$kind,$i]=$(run_one "$kind")
		[ "$(echo "${res[$kind,$i]}" | wc -w)" = 5 ] || { echo "run failed: ${res[$kind,$i]}" >&2; exit 1; }
		echo "  ${res[$kind,$i]}" >&2
	done
done

col() { # kind column
	for ((i = 1; i <= REPS; i++)); do echo "${res[$1,$i]}" | cut -d' ' -f"$2"; done | median
}

{
	echo "# Replication benchmarks"
	echo
	echo "Measured by \`scripts/bench-repl.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores (the servers and the client share them),"
	echo "redis-server $("$REDIS_SERVER" --version | grep -o 'v=[0-9.]*' | cut -d= -f2) and slotd from this tree, master and replica on 127.0.0.1,"
	echo "diskless sync without delay, no persistence. Medians of $REPS runs."
	echo
	echo "| measure | redis-server | slotd | slotd / redis |"
	echo "|---|---:|---:|---:|"
	for pair in "1 full sync of $KEYS keys, 64-byte values (ms)" "2 SET -P 16 -c 50, no replica (req/s)" "3 SET -P 16 -c 50, one replica (req/s)" "4 replication lag under that load, max (bytes)" "5 replication lag under that load, mean (bytes)"; do
		c=${pair%% *}
		name=${pair#* }
		r=$(col redis "$c")
		s=$(col slotd "$c")
		ratio=$(awk -v a="$s" -v b="$r" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
		echo "| $name | $r | $s | $ratio |"
	done
	echo
	echo "Throughput with a replica relative to the same server without one: redis-server $(awk -v a="$(col redis 3)" -v b="$(col redis 2)" 'BEGIN {printf "%.2f", a/b}'), slotd $(awk -v a="$(col slotd 3)" -v b="$(col slotd 2)" 'BEGIN {printf "%.2f", a/b}')."
	echo
	echo "Raw runs (sync ms, req/s without, req/s with, lag max, lag mean):"
	echo
	for ((i = 1; i <= REPS; i++)); do
		echo "- run $i: redis \`${res[redis,$i]}\`, slotd \`${res[slotd,$i]}\`"
	done
} | tee "$OUT"
