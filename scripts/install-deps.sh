#!/usr/bin/env bash
# Installs what the e2e tests and the benchmark need: redis-server 7,
# redis-tools (redis-cli, redis-benchmark) and python3-redis. Idempotent and
# non-interactive; does nothing when everything is there. Needs root (or
# sudo) only when something is missing.
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-cli >/dev/null 2>&1 && command -v redis-benchmark >/dev/null 2>&1 || missing+=(redis-tools)
# The Debian package serves the system python3.
dpkg -s python3-redis >/dev/null 2>&1 || /usr/bin/python3 -c 'import redis' >/dev/null 2>&1 || missing+=(python3-redis)

if [ ${#missing[@]} -gt 0 ]; then
	SUDO=""
	if [ "$(id -u)" -ne 0 ]; then SUDO="sudo -E"; fi
	echo "install-deps: installing ${missing[*]}"
	# policy-rc.d 101 stops the package from starting its service: the tests
	# start their own servers on free ports.
	policy=/usr/sbin/policy-rc.d
	made_policy=""
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
		$SUDO chmod +x "$policy"
		made_policy=1
	fi
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	if [ -n "$made_policy" ]; then $SUDO rm -f "$policy"; fi
fi

# A packaged redis-server may run as a service on 6379 (started by the
# package on a machine without policy-rc.d): stop and disable it.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet redis-server 2>/dev/null; then
	systemctl stop redis-server || true
	systemctl disable redis-server >/dev/null 2>&1 || true
elif [ -x /etc/init.d/redis-server ] && pgrep -f '^/usr/bin/redis-server 127.0.0.1:6379' >/dev/null 2>&1; then
	/etc/init.d/redis-server stop >/dev/null 2>&1 || true
fi

version=$(redis-server --version | sed -n 's/.*v=\([0-9]*\)\..*/\1/p')
if [ "$version" != "7" ]; then
	echo "install-deps: redis-server 7 is needed, found: $(redis-server --version)" >&2
	exit 1
fi
echo "install-deps: $(redis-server --version | cut -d' ' -f1-3), $(redis-cli --version)"
