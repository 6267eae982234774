#!/usr/bin/env bash
# Benchmarks slotd side by side with redis-server 7 on this machine and
# writes docs/BENCHMARKS.md.
#
# Both servers run with the same settings (loopback, no persistence). For
# every workload and pipeline depth the two are measured alternately, REPS
# times each (redis, slotd, redis, slotd, ...), and the median is reported.
# Then the resident memory of each is measured after loading the same
# 1,000,000 SETs of 64-byte values through redis-cli --pipe.
#
# Environment:
#   N=200000          requests per redis-benchmark run at -P 1
#   N16=1000000       requests per run at -P 16 (runs of a second or more, so
#                     that connection set-up does not weigh in)
#   IO_THREADS=1      io-threads passed to both servers (slotd runs that many
#                     Go procs unless GOMAXPROCS is set)
#   CLIENTS=50        parallel connections
#   REPS=5            repetitions per workload and server (median taken; the
#                     -P 1 figures of this machine swing by ~10% from run to run)
#   MEM_KEYS=1000000  keys for the memory measurement (0 skips it)
#   GOMAXPROCS=       passed to slotd if set (Go's default otherwise)
#   REDIS_PORT=21700 SLOTD_PORT=21701
#   OUT=docs/BENCHMARKS.md
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

N=${N:-200000}
N16=${N16:-1000000}
IO_THREADS=${IO_THREADS:-1}
CLIENTS=${CLIENTS:-50}
REPS=${REPS:-5}
MEM_KEYS=${MEM_KEYS:-1000000}
REDIS_PORT=${REDIS_PORT:-21700}
SLOTD_PORT=${SLOTD_PORT:-21701}
OUT=${OUT:-docs/BENCHMARKS.md}
TESTS=(set get incr lpush lpop sadd hset zadd mset)
PIPELINES=(1 16)

for tool in redis-server redis-cli redis-benchmark go; do
	command -v "$tool" >/dev/null || { echo "bench: $tool not found; run scripts/install-deps.sh" >&2; exit 1; }
done

work=$(mktemp -d /tmp/slotd-bench.XXXXXX)
redis_pid="" slotd_pid=""
cleanup() {
	for p in $redis_pid $slotd_pid; do kill "$p" 2>/dev/null || true; done
	for p in $redis_pid $slotd_pid; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

port_free() { ! (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null; }
for p in "$REDIS_PORT" "$SLOTD_PORT"; do
	port_free "$p" || { echo "bench: port $p is in use (set REDIS_PORT/SLOTD_PORT)" >&2; exit 1; }
done

echo "bench: building slotd" >&2
go build -o "$work/slotd" ./cmd/slotd

wait_ready() { # port pid
	for _ in $(seq 1 200); do
		kill -0 "$2" 2>/dev/null || { echo "bench: server on port $1 exited" >&2; exit 1; }
		[ "$(redis-cli -p "$1" ping 2>/dev/null)" = "PONG" ] && return 0
		sleep 0.05
	done
	echo "bench: server on port $1 not ready" >&2
	exit 1
}

start_servers() {
	redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --io-threads "$IO_THREADS" \
		--loglevel warning --dir "$work" >"$work/redis.log" 2>&1 &
	redis_pid=$!
	if [ -n "${GOMAXPROCS:-}" ]; then
		GOMAXPROCS=$GOMAXPROCS "$work/slotd" --port "$SLOTD_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" --io-threads "$IO_THREADS" --loglevel warning >"$work/slotd.log" 2>&1 &
	else
		env -u GOMAXPROCS "$work/slotd" --port "$SLOTD_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" --io-threads "$IO_THREADS" --loglevel warning >"$work/slotd.log" 2>&1 &
	fi
	slotd_pid=$!
	wait_ready "$REDIS_PORT" "$redis_pid"
	wait_ready "$SLOTD_PORT" "$slotd_pid"
}

stop_servers() {
	kill "$redis_pid" "$slotd_pid" 2>/dev/null || true
	wait "$redis_pid" 2>/dev/null || true
	wait "$slotd_pid" 2>/dev/null || true
	redis_pid="" slotd_pid=""
}

# bench_one port test pipeline -> "rps p50 p99" (or "- - -" on failure)
bench_one() {
	local line
	local n=$N
	[ "$3" = 1 ] || n=$N16
	line=$(redis-benchmark -h 127.0.0.1 -p "$1" -c "$CLIENTS" -n "$n" -r 100000 -P "$3" -t "$2" --csv 2>/dev/null |
		grep -v '^"test"' | tail -1 || true)
	# "test","rps","avg","min","p50","p95","p99","max"
	echo "$line" | awk -F'","' 'NF >= 8 { gsub(/"/, "", $8); print $2, $5, $7; found=1 } END { if (!found) print "- - -" }'
}

median() { # values on stdin, "-" ignored
	awk '$1 != "-"' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

start_servers
results="$work/results"
: >"$results"
for P in "${PIPELINES[@]}"; do
	for t in "${TESTS[@]}"; do
		for rep in $(seq 1 "$REPS"); do
			for s in redis slotd; do
				port=$REDIS_PORT
				[ "$s" = slotd ] && port=$SLOTD_PORT
				echo "$P $t $s $(bench_one "$port" "$t" "$P")" >>"$results"
			done
		done
		echo "bench: -P $P $t done" >&2
	done
done
stop_servers

# Memory: fresh servers, the same generated SETs, VmRSS before and after.
mem_redis="-" mem_slotd="-" base_redis="-" base_slotd="-"
rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
if [ "$MEM_KEYS" -gt 0 ]; then
	echo "bench: generating $MEM_KEYS SET commands" >&2
	awk -v n="$MEM_KEYS" 'BEGIN {
		v = sprintf("%064d", 0); gsub(/0/, "v", v)
		for (i = 0; i < n; i++) { k = "key:" i; printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$64\r\n%s\r\n", length(k), k, v }
	}' >"$work/load.resp"
	start_servers
	base_redis=$(rss_mb "$redis_pid")
	base_slotd=$(rss_mb "$slotd_pid")
	for port in "$REDIS_PORT" "$SLOTD_PORT"; do
		redis-cli -p "$port" --pipe <"$work/load.resp" >"$work/pipe-$port.log" 2>&1 ||
			{ echo "bench: --pipe to $port failed:" >&2; cat "$work/pipe-$port.log" >&2; }
	done
	sleep 1
	mem_redis=$(rss_mb "$redis_pid")
	mem_slotd=$(rss_mb "$slotd_pid")
	keys_redis=$(redis-cli -p "$REDIS_PORT" dbsize)
	keys_slotd=$(redis-cli -p "$SLOTD_PORT" dbsize)
	stop_servers
fi

# Report.
procs=${GOMAXPROCS:-"unset, so io-threads ($IO_THREADS) Go procs"}
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
{
	echo "# Benchmarks: slotd vs redis-server"
	echo
	echo "Generated by \`make bench\` (scripts/bench.sh) on $(date -u '+%Y-%m-%d %H:%M UTC'). Do not edit by hand."
	echo
	echo "- machine: $(nproc) CPUs, ${cpu:-unknown CPU}, $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM; client and servers share it"
	echo "- redis-server: $(redis-server --version | cut -d' ' -f3), started with \`--bind 127.0.0.1 --save '' --appendonly no --io-threads $IO_THREADS\`"
	echo "- slotd: $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(go version | cut -d' ' -f3), started with \`--bind 127.0.0.1 --save '' --appendonly no --io-threads $IO_THREADS\`, GOMAXPROCS=$procs"
	echo "- command: \`redis-benchmark -h 127.0.0.1 -p PORT -c $CLIENTS -n <$N at -P 1, $N16 at -P 16> -r 100000 -P <1|16> -t <test> --csv\`"
	echo "- each cell: median of $REPS runs; the servers are measured alternately (redis, slotd, redis, slotd, ...)"
	echo "- rps in requests/s, latencies in ms; ratio = slotd / redis (above 1 means slotd is faster for rps)"
	if [ "$N" -lt 100000 ]; then
		echo "- note: short run (N=$N) to check the script; the numbers are noisy, run \`make bench\` for real ones"
	fi
	echo
	for P in "${PIPELINES[@]}"; do
		echo "## Pipeline -P $P"
		echo
		echo "| test | redis rps | slotd rps | ratio | redis p50 | slotd p50 | redis p99 | slotd p99 |"
		echo "|---|---:|---:|---:|---:|---:|---:|---:|"
		for t in "${TESTS[@]}"; do
			row="| $t"
			declare -A m=()
			for s in redis slotd; do
				for col in 4 5 6; do
					m[$s$col]=$(awk -v P="$P" -v t="$t" -v s="$s" -v c="$col" '$1 == P && $2 == t && $3 == s { print $c }' "$results" | median)
				done
			done
			ratio=$(awk -v a="${m[slotd4]}" -v b="${m[redis4]}" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }')
			row="$row | ${m[redis4]} | ${m[slotd4]} | $ratio | ${m[redis5]} | ${m[slotd5]} | ${m[redis6]} | ${m[slotd6]} |"
			echo "$row"
			unset m
		done
		echo
	done
	if [ "$MEM_KEYS" -gt 0 ]; then
		echo "## Memory"
		echo
		echo "Resident set size (VmRSS) after \`redis-cli --pipe\` loaded $MEM_KEYS \`SET key:<n> <64 bytes>\` into a fresh server."
		echo
		echo "| server | keys | RSS empty (MiB) | RSS loaded (MiB) | ratio |"
		echo "|---|---:|---:|---:|---:|"
		echo "| redis-server | $keys_redis | $base_redis | $mem_redis | 1.00 |"
		echo "| slotd | $keys_slotd | $base_slotd | $mem_slotd | $(awk -v a="$mem_slotd" -v b="$mem_redis" 'BEGIN { printf "%.2f", a / b }') |"
		echo
	fi
	echo "A test that slotd does not implement yet shows \`-\` (redis-benchmark got errors)."
	echo
	echo "Cluster figures: [BENCHMARKS-cluster.md](BENCHMARKS-cluster.md) (\`make bench-cluster\`). Where the time goes and what is left: the Performance section of [design.md](design.md)."
} >"$work/report.md"
mkdir -p "$(dirname "$OUT")"
cp "$work/report.md" "$OUT"
cat "$OUT"
