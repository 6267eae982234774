#!/usr/bin/env bash
# Resharding benchmark: a 3-master redis-server cluster and a 3-master slotd
# cluster on this machine, each loaded with KEYS keys holding 64-byte values
# spread over all slots; the unmodified `redis-cli --cluster reshard
# --cluster-pipeline 100` moves SLOTS slots (all of the first master's) to
# the second master while a concurrent client (redis-py RedisCluster, which
# follows MOVED and ASK) reads and writes keys of the moving slots. Reports
# keys moved per second and the client's latency. Writes a Markdown report
# to OUT (docs/BENCHMARKS-reshard.md) and prints it.
#
# Environment: KEYS=1000000, SLOTS=5461, BASE=23700 (redis uses BASE..,
# slotd BASE+10..; bus ports are +10000), OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

KEYS=${KEYS:-1000000}
SLOTS=${SLOTS:-5461}
BASE=${BASE:-23700}
OUT=${OUT:-docs/BENCHMARKS-reshard.md}
PY=/usr/bin/python3

work=$(mktemp -d /tmp/slotd-bench-reshard.XXXXXX)
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
	echo "bench-reshard: node on port $port did not start" >&2
	exit 1
}

make_cluster() { # kind first_port
	local kind=$1 first=$2 addrs=()
	for i in 0 1 2; do
		start_node "$kind" $((first + i))
		addrs+=("127.0.0.1:$((first + i))")
	done
	redis-cli --cluster create "${addrs[@]}" --cluster-yes >"$work/create-$kind.log" 2>&1
	for _ in $(seq 1 300); do
		local ok=0
		for i in 0 1 2; do
			redis-cli -p $((first + i)) cluster info | grep -q 'cluster_state:ok' && ok=$((ok + 1))
		done
		[ "$ok" = 3 ] && return 0
		sleep 0.1
	done
	echo "bench-reshard: $kind cluster did not reach cluster_state:ok" >&2
	exit 1
}

# load writes KEYS keys "key:<i>" with 64-byte values, each to the master
# that owns its slot, through redis-cli --pipe.
load() { # first_port
	local first=$1
	"$PY" - "$first" "$KEYS" "$work" <<'EOF'
import sys
from redis.crc import key_slot
first, n, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
files = [open(f"{work}/load-{i}.resp", "wb") for i in range(3)]
val = b"v" * 64
for i in range(n):
    k = b"key:%d" % i
    s = key_slot(k)
    owner = 0 if s <= 5460 else (1 if s <= 10922 else 2)
    files[owner].write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$64\r\n%s\r\n" % (len(k), k, val))
for f in files:
    f.close()
EOF
	for i in 0 1 2; do
		redis-cli -p $((first + i)) --pipe <"$work/load-$i.resp" >/dev/null
	done
}

# probe runs a client on keys of the moving slots until the file stop
# exists, and prints "ops p50 p99 max errors" (latencies in ms).
probe() { # first_port
	"$PY" - "$1" "$work/stop" "$KEYS" <<'EOF'
import logging, os, sys, time
from redis.cluster import RedisCluster, ClusterNode
logging.disable(logging.CRITICAL)  # redis-py logs every MOVED it follows
from redis.crc import key_slot
first, stop, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", first + i) for i in range(3)])
# Existing keys only, so that the probe adds none.
keys = [b"key:%d" % i for i in range(min(n, 200000)) if key_slot(b"key:%d" % i) <= 5460][:20000]
lat, errors, i = [], 0, 0
while not os.path.exists(stop):
    k = keys[i % len(keys)]
    t = time.perf_counter()
    try:
        if i % 2:
            rc.get(k)
        else:
            rc.set(k, b"w" * 64)
    except Exception:
        errors += 1
    lat.append((time.perf_counter() - t) * 1000)
    i += 1
lat.sort()
q = lambda p: lat[min(len(lat) - 1, int(len(lat) * p))]
print(len(lat), "%.2f" % q(0.5), "%.2f" % q(0.99), "%.2f" % lat[-1], errors)
EOF
}

# bench runs one reshard and writes "seconds keys keys/s probe..." to
# $work/result-<kind> (not to stdout: the nodes it starts inherit stdout).
bench() { # kind first_port
	local kind=$1 first=$2
	make_cluster "$kind" "$first"
	load "$first"
	local from to moving
	from=$(redis-cli -p "$first" cluster myid)
	to=$(redis-cli -p $((first + 1)) cluster myid)
	moving=$(redis-cli -p "$first" dbsize)
	rm -f "$work/stop"
	probe "$first" >"$work/probe-$kind" &
	local pp=$!
	sleep 2
	local t0 t1
	t0=$(date +%s.%N)
	redis-cli --cluster reshard "127.0.0.1:$first" --cluster-from "$from" --cluster-to "$to" \
		--cluster-slots "$SLOTS" --cluster-yes --cluster-pipeline 100 >"$work/reshard-$kind.log" 2>&1
	t1=$(date +%s.%N)
	touch "$work/stop"
	wait "$pp"
	local left
	left=$(redis-cli -p "$first" dbsize)
	local secs
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
	echo "$secs $((moving - left)) $(awk -v k=$((moving - left)) -v s="$secs" 'BEGIN {printf "%.0f", k / s}') $(cat "$work/probe-$kind")" >"$work/result-$kind"
}

bench redis "$BASE"
bench slotd $((BASE + 10))
r=$(cat "$work/result-redis")
s=$(cat "$work/result-slotd")

exec 3>&1 >"$work/report.md"
echo "# Resharding benchmark: redis-cli --cluster reshard against slotd and redis-server"
echo
echo "Generated by scripts/bench-reshard.sh on $(date -u '+%Y-%m-%d %H:%M UTC'). Do not edit by hand."
echo
echo "- machine: $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo); the clusters, redis-cli and the probe client share it (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
echo "- each cluster: 3 masters on 127.0.0.1, no persistence, $KEYS keys \`key:<i>\` with 64-byte values over all slots"
echo "- move: \`redis-cli --cluster reshard --cluster-from <master 1> --cluster-to <master 2> --cluster-slots $SLOTS --cluster-pipeline 100 --cluster-yes\`"
echo "- probe: one redis-py RedisCluster client alternating SET and GET on 20,000 keys of the moving slots for the whole move (it follows MOVED and ASK); latency per operation, client included"
echo
echo "| cluster | seconds | keys moved | keys/s | probe ops | p50 ms | p99 ms | max ms | probe errors |"
echo "|---|---|---|---|---|---|---|---|---|"
read -r a b c d e f g h <<<"$r"
echo "| redis-server 7.0 | $a | $b | $c | $d | $e | $f | $g | $h |"
read -r a2 b2 c2 d2 e2 f2 g2 h2 <<<"$s"
echo "| slotd $(git rev-parse --short HEAD 2>/dev/null) | $a2 | $b2 | $c2 | $d2 | $e2 | $f2 | $g2 | $h2 |"
echo
echo "slotd / redis-server keys/s: $(awk -v a="$c2" -v b="$c" 'BEGIN {printf "%.2f", a / b}')"
exec 1>&3
mkdir -p "$(dirname "$OUT")"
cp "$work/report.md" "$OUT"
cat "$OUT"
