#!/usr/bin/env bash
# Runs a local slotd cluster: six nodes on 127.0.0.1:7000-7005 (bus ports
# 17000-17005), bootstrapped and ready (cluster_state:ok).
#
#   scripts/cluster.sh start [--replicas N]   build, start, create, wait for ok
#   scripts/cluster.sh status                 one line per node
#   scripts/cluster.sh stop                   stop the nodes (data kept: start brings the same cluster back)
#   scripts/cluster.sh clean                  stop and remove the data directory
#
# Needs only Go and bash. The create step uses `redis-cli --cluster create`
# when redis-cli is on PATH and `go run ./cmd/slotctl create` otherwise.
#
# Environment (all optional):
#   CLUSTER_BASE_PORT  first client port (7000); node i listens on base+i, bus on base+i+10000
#   CLUSTER_NODES      number of nodes (6)
#   CLUSTER_REPLICAS   replicas per master (1: the six nodes are 3 masters +
#                      3 replicas; 0 makes six masters; same as --replicas N)
#   CLUSTER_DIR        data and config directory (./cluster-data)
#   CLUSTER_HOST       address to bind and announce (127.0.0.1)
#   CLUSTER_NODE_TIMEOUT  cluster-node-timeout in ms (5000)
#   CLUSTER_SERVER     slotd (default, built from this tree into ./bin) or
#                      the path of a redis-server, to compare
#   CLUSTER_TOOL       auto (default), redis-cli or slotctl
set -euo pipefail
export LC_ALL=C

cd "$(dirname "$0")/.."
ROOT=$PWD
BASE=${CLUSTER_BASE_PORT:-7000}
NODES=${CLUSTER_NODES:-6}
REPLICAS=${CLUSTER_REPLICAS:-1}
DIR=${CLUSTER_DIR:-$ROOT/cluster-data}
HOST=${CLUSTER_HOST:-127.0.0.1}
TIMEOUT=${CLUSTER_NODE_TIMEOUT:-5000}
SERVER=${CLUSTER_SERVER:-slotd}
TOOL=${CLUSTER_TOOL:-auto}

die() { echo "cluster.sh: $*" >&2; exit 1; }

ports() { local i; for ((i = 0; i < NODES; i++)); do echo $((BASE + i)); done; }

# resp PORT ARG... sends one command to HOST:PORT over bash's /dev/tcp,
# followed by QUIT so that the server closes the connection, and prints the
# raw reply. No redis-cli needed.
resp() {
	local port=$1 a
	shift
	(
		exec 3<>"/dev/tcp/$HOST/$port" || exit 1
		{
			printf '*%d\r\n' $#
			for a in "$@"; do printf '$%d\r\n%s\r\n' ${#a} "$a"; done
			printf '*1\r\n$4\r\nQUIT\r\n'
		} >&3
		timeout 3 cat <&3
	) 2>/dev/null
}

alive() { [ -f "$DIR/$1/pid" ] && kill -0 "$(cat "$DIR/$1/pid")" 2>/dev/null; }

# wait_until SECONDS DESCRIPTION COMMAND... polls COMMAND every 0.2 s.
wait_until() {
	local secs=$1 what=$2 end
	shift 2
	end=$((SECONDS + secs))
	until "$@"; do
		if ((SECONDS >= end)); then die "timed out after ${secs}s waiting for $what"; fi
		sleep 0.2
	done
}

# (Replies are captured, not piped into grep -q: with pipefail, grep
# exiting early would fail the pipeline.)
all_pong() { local p r; for p in $(ports); do r=$(resp "$p" PING) && [[ $r == +PONG* ]] || return 1; done; }
all_ok() {
	local p r
	for p in $(ports); do
		r=$(resp "$p" CLUSTER INFO) && [[ $r == *$'\ncluster_state:ok\r'* ]] || return 1
	done
}
known_nodes() { resp "$1" CLUSTER INFO | sed -n 's/^cluster_known_nodes:\([0-9]*\).*/\1/p'; }

server_bin() {
	if [ "$SERVER" = slotd ]; then
		command -v go >/dev/null 2>&1 || die "go is not on PATH"
		echo "building slotd into bin/slotd" >&2
		go build -o "$ROOT/bin/slotd" ./cmd/slotd
		echo "$ROOT/bin/slotd"
	else
		command -v "$SERVER" >/dev/null 2>&1 || die "CLUSTER_SERVER=$SERVER not found"
		command -v "$SERVER"
	fi
}

create() {
	local addrs=() p tool=$TOOL
	for p in $(ports); do addrs+=("$HOST:$p"); done
	if [ "$tool" = auto ]; then
		if command -v redis-cli >/dev/null 2>&1; then tool=redis-cli; else tool=slotctl; fi
	fi
	echo "creating the cluster with $tool (${#addrs[@]} nodes, $REPLICAS replicas per master)"
	case $tool in
	redis-cli)
		redis-cli --cluster create "${addrs[@]}" --cluster-replicas "$REPLICAS" --cluster-yes
		;;
	slotctl)
		# cmd/slotctl is the project's own cluster tool (issue 3): it speaks
		# the same commands as redis-cli --cluster.
		[ -d "$ROOT/cmd/slotctl" ] || die "cmd/slotctl is not in this tree yet: install redis-cli (scripts/install-deps.sh) or use CLUSTER_TOOL=redis-cli"
		go run ./cmd/slotctl create --yes --replicas "$REPLICAS" "${addrs[@]}"
		;;
	*) die "CLUSTER_TOOL=$tool: want auto, redis-cli or slotctl" ;;
	esac
}

start() {
	local bin p n running=0 extra=()
	[[ $REPLICAS =~ ^[0-9]+$ ]] || die "replicas: $REPLICAS is not a number"
	((NODES >= 3 * (REPLICAS + 1))) || die "$NODES nodes cannot make 3 masters with $REPLICAS replicas each"
	((BASE + NODES - 1 + 10000 <= 65535)) || die "CLUSTER_BASE_PORT=$BASE: bus ports would pass 65535"
	for p in $(ports); do if alive "$p"; then running=$((running + 1)); fi; done
	if ((running == NODES)); then
		echo "already running"
		status
		return
	fi
	((running == 0)) || die "$running of $NODES nodes are running: run '$0 stop' first"
	bin=$(server_bin)
	[ "$SERVER" = slotd ] || extra=(--save '' --appendonly no)
	for p in $(ports); do
		mkdir -p "$DIR/$p"
		nohup "$bin" --port "$p" --bind "$HOST" --dir "$DIR/$p" \
			--cluster-enabled yes --cluster-config-file "$DIR/$p/nodes.conf" \
			--cluster-node-timeout "$TIMEOUT" "${extra[@]}" \
			>"$DIR/$p/node.log" 2>&1 </dev/null &
		echo $! >"$DIR/$p/pid"
	done
	if ! (wait_until 15 "every node to answer PING" all_pong); then
		for p in $(ports); do alive "$p" || { echo "node $p exited; its log:" >&2; tail -n 20 "$DIR/$p/node.log" >&2; }; done
		stop
		exit 1
	fi
	# A node restarted on its nodes.conf already knows the others: create
	# only a fresh set.
	n=$(known_nodes "$BASE")
	if [ "${n:-1}" = 1 ]; then
		create || { stop; die "create failed; logs are in $DIR/<port>/node.log"; }
	else
		echo "nodes know $n nodes already (restart from $DIR): not creating"
	fi
	wait_until 60 "cluster_state:ok on every node" all_ok
	echo "cluster ready: $NODES nodes on $HOST:$BASE-$((BASE + NODES - 1)), data in $DIR"
	echo
	echo "connect:  redis-cli -c -h $HOST -p $BASE"
	echo "go-redis: redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{\"$HOST:$BASE\"}})"
	echo "stop:     $0 stop"
}

stop() {
	local p pid i n pids=()
	# TERM every node first, then wait for all: they shut down in parallel.
	for p in $(ports); do
		[ -f "$DIR/$p/pid" ] || continue
		pid=$(cat "$DIR/$p/pid")
		if kill -TERM "$pid" 2>/dev/null; then pids+=("$p:$pid"); fi
		rm -f "$DIR/$p/pid"
	done
	for i in "${pids[@]}"; do
		p=${i%%:*} pid=${i#*:}
		for ((n = 0; n < 100; n++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
		echo "stopped node $p (pid $pid)"
	done
}

status() {
	local p info state known role down=0
	for p in $(ports); do
		if ! alive "$p"; then
			echo "$HOST:$p  down"
			down=$((down + 1))
			continue
		fi
		info=$(resp "$p" CLUSTER INFO | tr -d '\r')
		state=$(sed -n 's/^cluster_state://p' <<<"$info")
		known=$(sed -n 's/^cluster_known_nodes://p' <<<"$info")
		role=$(resp "$p" CLUSTER NODES | tr -d '\r' | sed -n 's/^[^ ]* [^ ]* \([^ ]*myself[^ ]*\) [^ ]* [^ ]* [^ ]* [^ ]* [^ ]*/\1/p')
		echo "$HOST:$p  pid $(cat "$DIR/$p/pid")  cluster_state:${state:-?}  known_nodes:${known:-?}  ${role}"
	done
	((down == 0))
}

cmd=${1:-}
shift || true
while [ $# -gt 0 ]; do
	case $1 in
	--replicas) REPLICAS=${2:?--replicas needs a number}; shift 2 ;;
	--replicas=*) REPLICAS=${1#*=}; shift ;;
	*) die "unknown option $1" ;;
	esac
done
case $cmd in
start) start ;;
stop) stop ;;
status) status ;;
clean) stop; rm -rf "$DIR"; echo "removed $DIR" ;;
*) echo "usage: $0 start [--replicas N] | stop | status | clean" >&2; exit 2 ;;
esac
