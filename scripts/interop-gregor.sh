#!/usr/bin/env bash
# Starts and stops a throwaway Gregor broker, or a cluster of them, for the interop matrix and the
# benchmarks.
#
#   scripts/interop-gregor.sh start [--nodes N] [--durability fsync|page_cache] [--controller-protocol SSL|PLAINTEXT]
#                                  [--checkpoint-interval-ms MS]
#                                  build bin/gregor, fresh data dirs, start N nodes (default 1); MS sets
#                                  log.flush_offset_checkpoint_interval_ms (bench/compare's restart rows)
#   scripts/interop-gregor.sh stop  stop every node that was started (also when one has died)
#   scripts/interop-gregor.sh kill  SIGKILL every node (a crash; the data stays)
#   scripts/interop-gregor.sh restart  start the single node of the last start again on its data and
#                                  config, without waiting: the caller polls (bench/compare times it)
#   scripts/interop-gregor.sh pid   print node 1's process id
#   scripts/interop-gregor.sh pids  print every node's process id, one a line
#   scripts/interop-gregor.sh bootstrap   print the PLAINTEXT bootstrap list of the running nodes
# GREGOR_BIN=path runs that binary instead of building ./cmd/gregor from the work tree.
#
# One node (the default) listens on 127.0.0.1:28092 (Kafka protocol, PLAINTEXT), 28094
# (SASL_PLAINTEXT), 28093 (SSL), 28095 (SASL_SSL) and 127.0.0.1:28644 (HTTP), data in
# .cache/gregor-run/data, log in .cache/gregor-run/gregor.log, pid in .cache/gregor-run/pid.
# N nodes (--nodes 2..9) form one cluster, every node a controller voter and a broker, with an SSL
# controller plane unless --controller-protocol PLAINTEXT (bench/compare measures the cost of TLS); node K
# listens on
#   PLAINTEXT 28092+100(K-1)   SSL 28093+100(K-1)   SASL_PLAINTEXT 28094+100(K-1)
#   SASL_SSL 28095+100(K-1)    controller (Raft) 28096+100(K-1)   HTTP 28644+(K-1)
# so node 1 keeps 28092-28095 and 28644, node 2 has 28192-28196 and 28645, node 3 28292-28296
# and 28646. Node K's config, data, log, pid and start time are in .cache/gregor-run/nodeK/.
# Topics default to replication factor min(N, 3) and min.insync.replicas 2 when N >= 3, as
# scripts/kafka-ref.sh --nodes 3 sets Apache Kafka's. start returns once the metadata of node 1
# lists N unfenced brokers.
#
# SASL mechanisms PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 with the user interop / interop-secret
# (created with `gregor user create` once the broker is up); the TLS listeners serve the test
# certificate of scripts/interop-tls.sh (CA in .cache/interop-tls/ca.pem).
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

# node_ports N K -> "plaintext ssl sasl sasl_ssl controller http" of node K in an N-node run.
node_ports() {
	local nodes="$1" k="$2"
	if [[ "$nodes" == 1 ]]; then
		echo "$PORT $SSL_PORT $SASL_PORT $SASL_SSL_PORT 0 $HTTP_PORT"
		return
	fi
	local o=$((100 * (k - 1)))
	echo "$((PORT + o)) $((SSL_PORT + o)) $((SASL_PORT + o)) $((SASL_SSL_PORT + o)) $((PORT + 4 + o)) $((HTTP_PORT + k - 1))"
}

# node_dir N K is where node K keeps its config, data, log and pid.
node_dir() { if [[ "$1" == 1 ]]; then echo "$RUN"; else echo "$RUN/node$2"; fi; }

in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# write_config N K DIR DURABILITY TLS VOTERS CONTROLLER_PROTOCOL CHECKPOINT_MS
write_config() {
	local nodes="$1" k="$2" dir="$3" durability="$4" tls="$5" voters="$6" cproto="${7:-SSL}" cpms="${8:-}"
	local p s sa ss c h
	read -r p s sa ss c h <<<"$(node_ports "$nodes" "$k")"
	cat >"$dir/broker.toml" <<-EOF
	node_id = $k
	data_dir = "$dir/data"

	[listeners]
	kafka = "127.0.0.1:$p"
	http = "127.0.0.1:$h"
	EOF
	if [[ "$nodes" != 1 ]]; then
		echo "controller = \"127.0.0.1:$c\"" >>"$dir/broker.toml"
	fi
	cat >>"$dir/broker.toml" <<-EOF

	[[listeners.extra]]
	name = "SASL_PLAINTEXT"
	address = "127.0.0.1:$sa"
	protocol = "SASL_PLAINTEXT"

	[[listeners.extra]]
	name = "SSL"
	address = "127.0.0.1:$s"
	protocol = "SSL"

	[[listeners.extra]]
	name = "SASL_SSL"
	address = "127.0.0.1:$ss"
	protocol = "SASL_SSL"

	[security]
	sasl_mechanisms = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
	tls_cert_file = "$tls/server.pem"
	tls_key_file = "$tls/server-key.pem"
	tls_ca_file = "$tls/ca.pem"
	# The nodes' own certificate principal; admitted on the SSL controller listener of a multi-node run.
	super_users = ["User:CN=localhost"]

	[log]
	durability = "$durability"
	EOF
	if [[ -n "$cpms" ]]; then
		echo "flush_offset_checkpoint_interval_ms = $cpms" >>"$dir/broker.toml"
	fi
	if [[ "$nodes" != 1 ]]; then
		local rf=$((nodes < 3 ? nodes : 3)) minisr=$((nodes < 3 ? 1 : 2))
		cat >>"$dir/broker.toml" <<-EOF
		min_insync_replicas = $minisr

		[topics]
		default_replication_factor = $rf

		[cluster]
		voters = [$voters]
		# Raft and the controller RPCs over TLS by default: every node presents the interop server certificate,
		# whose principal is the controller plane's only super user.
		controller_listener_protocol = "$cproto"
		# A stop takes every node down at once; the last ones have nobody to hand leadership to.
		controlled_shutdown_timeout_ms = 5000
		EOF
	fi
	# As scripts/kafka-ref.sh configures Kafka, so both brokers run alike in interop and bench runs.
	cat >>"$dir/broker.toml" <<-EOF

	[groups]
	group_initial_rebalance_delay_ms = 0
	offsets_topic_partitions = 3

	[transactions]
	state_log_partitions = 3
	EOF
}

start() {
	local durability=fsync nodes=1 cproto=SSL cpms=""
	while [[ $# -gt 0 ]]; do
		case "$1" in
		--durability) durability="$2"; shift 2 ;;
		--checkpoint-interval-ms) cpms="$2"; shift 2 ;;
		--nodes) nodes="$2"; shift 2 ;;
		--controller-protocol) cproto="$2"; shift 2 ;;
		*) die "start: unknown flag $1" ;;
		esac
	done
	[[ "$nodes" =~ ^[1-9]$ ]] || die "start: --nodes must be 1 to 9, not $nodes"
	[[ "$cproto" == SSL || "$cproto" == PLAINTEXT ]] || die "start: --controller-protocol must be SSL or PLAINTEXT, not $cproto"
	[[ -z "$cpms" || "$cpms" =~ ^[1-9][0-9]*$ ]] || die "start: --checkpoint-interval-ms must be a positive number, not $cpms"
	stop >/dev/null 2>&1 || true
	local k p s sa ss c h
	# Another broker on a port would answer in our place and hide a failed start.
	for ((k = 1; k <= nodes; k++)); do
		read -r p s sa ss c h <<<"$(node_ports "$nodes" "$k")"
		in_use "$p" && die "127.0.0.1:$p is already in use by another process (set GREGOR_PORT)"
		[[ "$c" != 0 ]] && in_use "$c" && die "127.0.0.1:$c is already in use by another process (set GREGOR_PORT)"
	done
	local bin="${GREGOR_BIN:-}"
	if [[ -z "$bin" ]]; then
		(cd "$ROOT" && go build -o bin/gregor ./cmd/gregor) || die "go build ./cmd/gregor failed"
		bin="$ROOT/bin/gregor"
	fi
	local tls; tls="$("$ROOT/scripts/interop-tls.sh")" || die "could not make the test certificates"
	rm -rf "$RUN"; mkdir -p "$RUN"
	echo "$nodes" >"$RUN/nodes"
	local voters=""
	for ((k = 1; k <= nodes; k++)); do
		read -r p s sa ss c h <<<"$(node_ports "$nodes" "$k")"
		voters+="${voters:+, }\"$k@127.0.0.1:$c\""
	done
	# Every node is written and started before any is awaited: a cluster node answers only once
	# a Raft quorum of the voters is up.
	for ((k = 1; k <= nodes; k++)); do
		local dir; dir="$(node_dir "$nodes" "$k")"
		mkdir -p "$dir/data"
		write_config "$nodes" "$k" "$dir" "$durability" "$tls" "$voters" "$cproto" "$cpms"
		date +%s%N >"$dir/started_at"
		nohup "$bin" serve --config "$dir/broker.toml" >"$dir/gregor.log" 2>&1 &
		echo $! >"$dir/pid"
	done
	for ((k = 1; k <= nodes; k++)); do
		read -r p s sa ss c h <<<"$(node_ports "$nodes" "$k")"
		wait_listening "$(node_dir "$nodes" "$k")" "$p" 600 || {
			stop >/dev/null 2>&1 || true
			die "node $k did not listen on 127.0.0.1:$p within 60 s"
		}
	done
	if [[ "$nodes" != 1 ]]; then
		wait_brokers "$bin" "$nodes" || { stop >/dev/null 2>&1 || true; exit 1; }
	fi
	create_user "$bin"
	read -r p s sa ss c h <<<"$(node_ports "$nodes" 1)"
	if [[ "$nodes" == 1 ]]; then
		echo "interop-gregor: up on 127.0.0.1:$p, SASL_PLAINTEXT :$sa, SSL :$s, SASL_SSL :$ss (durability $durability, pid $(cat "$RUN/pid"))" >&2
	else
		echo "interop-gregor: $nodes nodes up, bootstrap $(bootstrap), node 1 SASL_PLAINTEXT :$sa, SSL :$s, SASL_SSL :$ss (durability $durability, pids $(pids | tr '\n' ' '))" >&2
	fi
}

# restart launches the single node of the last start again on its config and data and returns at
# once, its start time in started_at.
restart() {
	[[ "$(nodes_running)" == 1 && -f "$RUN/broker.toml" ]] || die "restart: no single-node run to restart in $RUN"
	if [[ -f "$RUN/pid" ]] && kill -0 "$(cat "$RUN/pid")" 2>/dev/null; then die "restart: node 1 is still running"; fi
	in_use "$PORT" && die "127.0.0.1:$PORT is already in use by another process"
	local bin="${GREGOR_BIN:-$ROOT/bin/gregor}"
	[[ -x "$bin" ]] || die "restart: no binary $bin"
	mv -f "$RUN/gregor.log" "$RUN/gregor.log.prev" 2>/dev/null || true
	date +%s%N >"$RUN/started_at"
	nohup "$bin" serve --config "$RUN/broker.toml" >"$RUN/gregor.log" 2>&1 &
	echo $! >"$RUN/pid"
}

# crash SIGKILLs every node and waits until none is alive; the data stays.
crash() {
	local files f t alive
	files="$(pid_files)"
	for f in $files; do kill -9 "$(cat "$f")" 2>/dev/null || true; done
	for ((t = 0; t < 100; t++)); do
		alive=0
		for f in $files; do kill -0 "$(cat "$f")" 2>/dev/null && alive=1; done
		[[ "$alive" == 0 ]] && break
		sleep 0.05
	done
	for f in $files; do rm -f "$f"; done
}

# wait_listening DIR PORT TENTHS: the node's process is alive and its Kafka port accepts.
wait_listening() {
	local dir="$1" port="$2" limit="$3" t
	for ((t = 0; t < limit; t++)); do
		kill -0 "$(cat "$dir/pid")" 2>/dev/null || { tail -20 "$dir/gregor.log" >&2; echo "interop-gregor: gregor exited at start ($dir)" >&2; return 1; }
		if in_use "$port" && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	tail -20 "$dir/gregor.log" >&2
	return 1
}

# wait_brokers BIN N waits until `gregor cluster status` on node 1 lists N unfenced brokers.
wait_brokers() {
	local bin="$1" nodes="$2" t out n=0
	for ((t = 0; t < 120; t++)); do
		if out="$("$bin" cluster status --bootstrap "$(bootstrap)" --connect-timeout 2s -o json 2>/dev/null)"; then
			n="$(jq '[.brokers[] | select(.fenced | not)] | length' <<<"$out" 2>/dev/null || echo 0)"
			[[ "$n" == "$nodes" ]] && return 0
		fi
		sleep 0.5
	done
	echo "interop-gregor: metadata listed $n of $nodes unfenced brokers after 60 s (logs in $RUN/node*/gregor.log)" >&2
	return 1
}

# create_user makes the harness's SCRAM user (PLAIN checks the same credentials), retrying while
# the metadata log is still starting.
create_user() {
	local bin="$1" t out
	for ((t = 0; t < 50; t++)); do
		if out="$(printf '%s' "$SASL_PASS" | "$bin" user create "$SASL_USER" --password-stdin \
			--bootstrap "$(bootstrap)" 2>&1)"; then
			return 0
		fi
		sleep 0.2
	done
	die "could not create SASL user $SASL_USER: $out"
}

# pid_files lists the pid file of every node of the last start (whatever the node count was).
pid_files() {
	local f
	for f in "$RUN/pid" "$RUN"/node*/pid; do [[ -f "$f" ]] && echo "$f"; done
	return 0
}

pids() { local f; for f in $(pid_files); do cat "$f"; done; }

nodes_running() { if [[ -f "$RUN/nodes" ]]; then cat "$RUN/nodes"; else echo 1; fi; }

bootstrap() {
	local nodes k out="" p s sa ss c h
	nodes="$(nodes_running)"
	for ((k = 1; k <= nodes; k++)); do
		read -r p s sa ss c h <<<"$(node_ports "$nodes" "$k")"
		out+="${out:+,}127.0.0.1:$p"
	done
	echo "$out"
}

# stop sends SIGTERM to every node at once (a node that died is skipped), waits up to 20 s for
# them all and SIGKILLs what is left.
stop() {
	local files f pid t alive
	files="$(pid_files)"
	[[ -n "$files" ]] || return 0
	for f in $files; do
		pid="$(cat "$f")"
		kill -0 "$pid" 2>/dev/null && kill "$pid" 2>/dev/null || true
	done
	for ((t = 0; t < 200; t++)); do
		alive=0
		for f in $files; do kill -0 "$(cat "$f")" 2>/dev/null && alive=1; done
		[[ "$alive" == 0 ]] && break
		sleep 0.1
	done
	for f in $files; do
		pid="$(cat "$f")"
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
		rm -f "$f"
	done
	return 0
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
start) start "$@" ;;
stop) stop ;;
kill) crash ;;
restart) restart ;;
pid) f="$(pid_files | head -1)"; [[ -n "$f" ]] || die "no node is running"; cat "$f" ;;
pids) pids ;;
bootstrap) bootstrap ;;
*) sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
