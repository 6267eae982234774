#!/usr/bin/env bash
# Runs every Go fuzz target of the module in turn, FUZZTIME each (default
# 30s). ONLY=regexp limits the targets by name. Stops at the first failure;
# go test then writes the failing input under the package's testdata/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-30s}
ONLY=${ONLY:-.}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
go list ./... | while read -r pkg; do
	for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		[[ $target =~ $ONLY ]] || continue
		echo "== $pkg $target ($FUZZTIME)"
		# Minimizing a large new input can hold a worker for a minute
		# without counting executions; a short bound keeps the time spent
		# on finding inputs.
		if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 5s "$pkg" >"$log" 2>&1; then
			cat "$log"
			exit 1
		fi
		tail -n 1 "$log"
	done
done
