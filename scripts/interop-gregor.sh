#!/usr/bin/env bash
# Starts and stops a throwaway Gregor broker for the interop matrix and the benchmarks.
#
#   scripts/interop-gregor.sh start [--durability fsync|page_cache]   build bin/gregor, fresh data dir, start
#   scripts/interop-gregor.sh stop
#   scripts/interop-gregor.sh pid
# GREGOR_BIN=path runs that binary instead of building ./cmd/gregor from the work tree.
#
# Listens on 127.0.0.1:28092 (Kafka protocol) and 127.0.0.1:28644 (HTTP), data in
# .cache/gregor-run/data, log in .cache/gregor-run/gregor.log.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUN="${GREGOR_CACHE:-$ROOT/.cache}/gregor-run"
PORT="${GREGOR_PORT:-28092}"
HTTP_PORT="${GREGOR_HTTP_PORT:-28644}"

die() { echo "interop-gregor: $*" >&2; exit 1; }

start() {
	local durability=fsync
	while [[ $# -gt 0 ]]; do
		case "$1" in
		--durability) durability="$2"; shift 2 ;;
		*) die "start: unknown flag $1" ;;
		esac
	done
	stop >/dev/null 2>&1 || true
	# Another broker on the port would answer in our place and hide a failed start.
	if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
		die "127.0.0.1:$PORT is already in use by another process (set GREGOR_PORT)"
	fi
	local bin="${GREGOR_BIN:-}"
	if [[ -z "$bin" ]]; then
		(cd "$ROOT" && go build -o bin/gregor ./cmd/gregor) || die "go build ./cmd/gregor failed"
		bin="$ROOT/bin/gregor"
	fi
	rm -rf "$RUN"; mkdir -p "$RUN/data"
	cat >"$RUN/broker.toml" <<-EOF
	node_id = 1
	data_dir = "$RUN/data"

	[listeners]
	kafka = "127.0.0.1:$PORT"
	http = "127.0.0.1:$HTTP_PORT"

	[log]
	durability = "$durability"
	EOF
	date +%s%N >"$RUN/started_at"
	nohup "$bin" serve --config "$RUN/broker.toml" >"$RUN/gregor.log" 2>&1 &
	echo $! >"$RUN/pid"
	local t
	for ((t = 0; t < 150; t++)); do
		kill -0 "$(cat "$RUN/pid")" 2>/dev/null || { tail -20 "$RUN/gregor.log" >&2; die "gregor exited at start"; }
		if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && kill -0 "$(cat "$RUN/pid")" 2>/dev/null; then
			echo "interop-gregor: up on 127.0.0.1:$PORT (durability $durability, pid $(cat "$RUN/pid"))" >&2
			return 0
		fi
		sleep 0.1
	done
	die "gregor did not listen on 127.0.0.1:$PORT within 15 s (see $RUN/gregor.log)"
}

stop() {
	[[ -f "$RUN/pid" ]] || return 0
	local pid; pid="$(cat "$RUN/pid")"
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		local t
		for ((t = 0; t < 100; t++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$RUN/pid"
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
start) start "$@" ;;
stop) stop ;;
pid) cat "$RUN/pid" ;;
*) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
