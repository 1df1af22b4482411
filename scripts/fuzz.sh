#!/usr/bin/env bash
# Runs every Go fuzz target in the broker module for FUZZTIME each (default 5s).
# Usage: scripts/fuzz.sh [FUZZTIME]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-${FUZZTIME:-5s}}
status=0
while IFS=: read -r file name; do
	pkg="./$(dirname "$file")"
	echo "fuzz $pkg $name ($fuzztime)"
	if ! go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" "$pkg" >/tmp/gregor-fuzz.log 2>&1; then
		cat /tmp/gregor-fuzz.log
		status=1
	fi
done < <(grep -rHoE '^func Fuzz[A-Za-z0-9_]+' --include='*_test.go' core cmd hooks plugins mirror sdk 2>/dev/null | sed 's/:func /:/' | sort -u)
exit $status
