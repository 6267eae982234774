# Sourced by the cluster benchmark scripts (bench-cluster.sh,
# bench-reshard.sh, bench-reshard-slotctl.sh): starts redis-server and slotd
# cluster nodes on 127.0.0.1 and makes clusters of them with the unmodified
# `redis-cli --cluster create`.
#
# The caller sets: work (a temporary directory that holds the slotd binary
# and receives nodes.conf files and logs), pids (an array: every started
# process is appended; the caller kills them on exit), bench (the name its
# messages start with) and, if slotd needs more options, slotd_args (an
# array). Both kinds run with cluster-node-timeout 5000; redis-server
# without persistence.

# start_node kind port: starts a redis or slotd cluster node and waits up
# to 60 s for it to answer PING.
start_node() {
	local kind=$1 port=$2
	if [ "$kind" = redis ]; then
		redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes --cluster-node-timeout 5000 \
			--cluster-config-file "$work/nodes-$port.conf" --dir "$work" --save '' --appendonly no \
			--logfile "$work/redis-$port.log" &
	else
		"$work/slotd" --port "$port" --bind 127.0.0.1 --cluster-enabled yes --cluster-node-timeout 5000 \
			--cluster-config-file "$work/nodes-$port.conf" --dir "$work" --loglevel warning \
			"${slotd_args[@]}" >"$work/slotd-$port.log" 2>&1 &
	fi
	pids+=($!)
	for _ in $(seq 1 600); do
		[ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && return 0
		sleep 0.1
	done
	echo "$bench: node on port $port did not start" >&2
	tail -5 "$work/slotd-$port.log" "$work/redis-$port.log" 2>/dev/null >&2 || true
	exit 1
}

# make_cluster kind first_port count: starts count nodes on consecutive
# ports, makes them one cluster of masters and waits up to 30 s for every
# node to report cluster_state:ok.
make_cluster() {
	local kind=$1 first=$2 count=$3 addrs=() i
	for i in $(seq 0 $((count - 1))); do
		start_node "$kind" $((first + i))
		addrs+=("127.0.0.1:$((first + i))")
	done
	redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes >"$work/create-$kind-$first.log" 2>&1
	for _ in $(seq 1 300); do
		local ok=0
		for i in $(seq 0 $((count - 1))); do
			redis-cli -p $((first + i)) cluster info | grep -q 'cluster_state:ok' && ok=$((ok + 1))
		done
		[ "$ok" = "$count" ] && return 0
		sleep 0.1
	done
	echo "$bench: $kind cluster on $first did not reach cluster_state:ok" >&2
	exit 1
}
