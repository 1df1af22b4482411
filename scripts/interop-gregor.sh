#!/usr/bin/env bash
# Starts and stops a throwaway Gregor broker for the interop matrix and the benchmarks.
#
#   scripts/interop-gregor.sh start [--durability fsync|page_cache]   build bin/gregor, fresh data dir, start
#   scripts/interop-gregor.sh stop
#   scripts/interop-gregor.sh pid
# GREGOR_BIN=path runs that binary instead of building ./cmd/gregor from the work tree.
#
# Listens on 127.0.0.1:28092 (Kafka protocol, PLAINTEXT), 28094 (SASL_PLAINTEXT), 28093 (SSL),
# 28095 (SASL_SSL) and 127.0.0.1:28644 (HTTP), data in .cache/gregor-run/data, log in
# .cache/gregor-run/gregor.log. SASL mechanisms PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 with the
# user interop / interop-secret (created with `gregor user create` once the broker is up); the
# TLS listeners serve the test certificate of scripts/interop-tls.sh (CA in .cache/interop-tls/ca.pem).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUN="${GREGOR_CACHE:-$ROOT/.cache}/gregor-run"
PORT="${GREGOR_PORT:-28092}"
HTTP_PORT="${GREGOR_HTTP_PORT:-28644}"
SSL_PORT="${GREGOR_SSL_PORT:-28093}"
SASL_PORT="${GREGOR_SASL_PORT:-28094}"
SASL_SSL_PORT="${GREGOR_SASL_SSL_PORT:-28095}"
SASL_USER=interop
SASL_PASS=interop-secret

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
	local tls; tls="$("$ROOT/scripts/interop-tls.sh")" || die "could not make the test certificates"
	rm -rf "$RUN"; mkdir -p "$RUN/data"
	cat >"$RUN/broker.toml" <<-EOF
	node_id = 1
	data_dir = "$RUN/data"

	[listeners]
	kafka = "127.0.0.1:$PORT"
	http = "127.0.0.1:$HTTP_PORT"

	[[listeners.extra]]
	name = "SASL_PLAINTEXT"
	address = "127.0.0.1:$SASL_PORT"
	protocol = "SASL_PLAINTEXT"

	[[listeners.extra]]
	name = "SSL"
	address = "127.0.0.1:$SSL_PORT"
	protocol = "SSL"

	[[listeners.extra]]
	name = "SASL_SSL"
	address = "127.0.0.1:$SASL_SSL_PORT"
	protocol = "SASL_SSL"

	[security]
	sasl_mechanisms = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
	tls_cert_file = "$tls/server.pem"
	tls_key_file = "$tls/server-key.pem"
	tls_ca_file = "$tls/ca.pem"

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
			create_user "$bin"
			echo "interop-gregor: up on 127.0.0.1:$PORT, SASL_PLAINTEXT :$SASL_PORT, SSL :$SSL_PORT, SASL_SSL :$SASL_SSL_PORT (durability $durability, pid $(cat "$RUN/pid"))" >&2
			return 0
		fi
		sleep 0.1
	done
	die "gregor did not listen on 127.0.0.1:$PORT within 15 s (see $RUN/gregor.log)"
}

# create_user makes the harness's SCRAM user (PLAIN checks the same credentials), retrying while
# the metadata log is still starting.
create_user() {
	local bin="$1" t out
	for ((t = 0; t < 50; t++)); do
		if out="$(printf '%s' "$SASL_PASS" | "$bin" user create "$SASL_USER" --password-stdin \
			--bootstrap "127.0.0.1:$PORT" 2>&1)"; then
			return 0
		fi
		sleep 0.2
	done
	die "could not create SASL user $SASL_USER: $out"
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
*) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
