#!/usr/bin/env bash
# Apache Kafka as a reference broker for Gregor's interop matrix and benchmarks.
#
# The broker and its tools run from Maven Central's jars (org.apache.kafka:kafka_2.13 and
# kafka-tools), fetched by mvn into .cache/kafka/<version>/libs. Nothing downloaded is committed.
#
#   scripts/kafka-ref.sh fetch                 resolve the jars (idempotent)
#   scripts/kafka-ref.sh start [--nodes 1|3] [--fsync] [--checkpoint-interval-ms MS]
#                                              format a fresh KRaft cluster on loopback and start it
#                                              (MS: log.flush.offset.checkpoint.interval.ms)
#   scripts/kafka-ref.sh stop [--nodes 1|3]    stop it (SIGTERM, then SIGKILL after 30 s)
#   scripts/kafka-ref.sh kill [--nodes 1|3]    SIGKILL it (a crash; the data stays)
#   scripts/kafka-ref.sh restart [--nodes 1|3] start it again on its data without waiting (the caller polls)
#   scripts/kafka-ref.sh status [--nodes 1|3]  exit 0 when every node's process is alive
#   scripts/kafka-ref.sh pid [--nodes 1|3]     print node 1's process id
#   scripts/kafka-ref.sh bootstrap [--nodes N] print the PLAINTEXT bootstrap list
#   scripts/kafka-ref.sh TOOL [args...]        run one of Kafka's tools from the same jars:
#       kafka-topics kafka-consumer-groups kafka-share-groups kafka-streams-groups kafka-console-share-consumer
#       kafka-console-producer kafka-configs kafka-acls kafka-dump-log kafka-storage
#       kafka-get-offsets kafka-metadata-quorum kafka-client-metrics producer-perf consumer-perf e2e-latency
#     e.g. scripts/kafka-ref.sh kafka-topics --bootstrap-server 127.0.0.1:28092 --list
#
# Ports (chosen not to clash with Gregor's 28092 in the interop config):
#   single node: PLAINTEXT 127.0.0.1:29092, SASL_PLAINTEXT 127.0.0.1:29094, controller 29093,
#                SSL 29095, SASL_SSL 29096
#   three nodes: PLAINTEXT 2910{1,2,3},      SASL_PLAINTEXT 2913{1,2,3},    controllers 2912{1,2,3},
#                SSL 2914{1,2,3},            SASL_SSL 2915{1,2,3}
# SASL users (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512): interop / interop-secret. The SSL listeners
# serve the test certificate of scripts/interop-tls.sh (CA in .cache/interop-tls/ca.pem).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
KAFKA_VERSION="${KAFKA_VERSION:-4.4.0}"
CACHE="${GREGOR_CACHE:-$ROOT/.cache}"
LIBS="$CACHE/kafka/$KAFKA_VERSION/libs"
RUN="$CACHE/kafka-run"
HEAP="${KAFKA_HEAP:-1G}"
SASL_USER=interop
SASL_PASS=interop-secret

die() { echo "kafka-ref: $*" >&2; exit 1; }

# check_java: Kafka 4.x brokers and tools need Java 17 or newer.
check_java() {
	command -v java >/dev/null || install_java
	local major; major="$(java -version 2>&1 | sed -nE '1s/.*version "([0-9]+).*/\1/p')"
	[[ -n "$major" && "$major" -ge 17 ]] || die "Apache Kafka $KAFKA_VERSION needs Java 17 or newer; java is ${major:-unknown} (set PATH or JAVA_HOME, e.g. /usr/lib/jvm/java-17-openjdk-amd64)"
}

fetch() {
	check_java
	if [[ -f "$LIBS/.complete" ]]; then return 0; fi
	command -v mvn >/dev/null || install_maven
	echo "kafka-ref: fetching Apache Kafka $KAFKA_VERSION jars into $LIBS" >&2
	rm -rf "$LIBS"
	mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$CACHE/m2" -Dkafka.version="$KAFKA_VERSION" \
		-f "$ROOT/interop/kafka-ref/pom.xml" dependency:copy-dependencies \
		-DoutputDirectory="$LIBS" -DincludeScope=runtime >&2
	[[ -f "$LIBS/kafka_2.13-$KAFKA_VERSION.jar" ]] || die "mvn did not produce kafka_2.13-$KAFKA_VERSION.jar"
	touch "$LIBS/.complete"
}

install_java() {
	apt-get update -qq >&2 && apt-get install -y -qq openjdk-17-jdk-headless >&2
}

install_maven() {
	apt-get update -qq >&2 && apt-get install -y -qq maven >&2
}

classpath() { echo "$LIBS/*"; }

tools_log4j() {
	local f="$RUN/log4j2-tools.properties"
	mkdir -p "$RUN"
	if [[ ! -f "$f" ]]; then
		cat >"$f" <<-'EOF'
		status = error
		appender.err.type = Console
		appender.err.name = STDERR
		appender.err.target = SYSTEM_ERR
		appender.err.layout.type = PatternLayout
		appender.err.layout.pattern = [%d] %p %m (%c)%n
		rootLogger.level = warn
		rootLogger.appenderRef.err.ref = STDERR
		EOF
	fi
	echo "$f"
}

# first_class CLASS...: the first of these classes that the fetched Kafka jars hold (tools moved
# from kafka.* to org.apache.kafka.tools between releases).
first_class() {
	fetch
	local c
	for c in "$@"; do
		if grep -qlaF "${c//.//}.class" "$LIBS"/kafka*.jar; then echo "$c"; return 0; fi
	done
	die "none of $* is in Apache Kafka $KAFKA_VERSION's jars"
}

run_class() {
	local cls="$1"; shift
	fetch
	exec java -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$(tools_log4j)" -cp "$(classpath)" "$cls" "$@"
}

# node_ports N I -> "plaintext sasl controller ssl sasl_ssl"
node_ports() {
	local nodes="$1" i="$2"
	if [[ "$nodes" == 1 ]]; then echo "29092 29094 29093 29095 29096"; else echo "2910$i 2913$i 2912$i 2914$i 2915$i"; fi
}

cluster_dir() { echo "$RUN/cluster-$1"; }

write_node_config() {
	local nodes="$1" i="$2" fsync="$3" dir="$4" cpms="${5:-}"
	local p s c t st voters="" j tls
	read -r p s c t st <<<"$(node_ports "$nodes" "$i")"
	tls="$("$ROOT/scripts/interop-tls.sh")" || die "could not make the test certificates"
	for ((j = 1; j <= nodes; j++)); do
		local pj sj cj tj stj
		read -r pj sj cj tj stj <<<"$(node_ports "$nodes" "$j")"
		voters+="${voters:+,}$j@127.0.0.1:$cj"
	done
	local rf=$((nodes < 3 ? 1 : 3)) minisr=$((nodes < 3 ? 1 : 2))
	cat >"$dir/server.properties" <<-EOF
	process.roles=broker,controller
	node.id=$i
	controller.quorum.voters=$voters
	listeners=PLAINTEXT://127.0.0.1:$p,SASL_PLAINTEXT://127.0.0.1:$s,CONTROLLER://127.0.0.1:$c,SSL://127.0.0.1:$t,SASL_SSL://127.0.0.1:$st
	advertised.listeners=PLAINTEXT://127.0.0.1:$p,SASL_PLAINTEXT://127.0.0.1:$s,SSL://127.0.0.1:$t,SASL_SSL://127.0.0.1:$st
	listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL
	ssl.keystore.type=PEM
	ssl.keystore.location=$tls/server-keystore.pem
	ssl.truststore.type=PEM
	ssl.truststore.location=$tls/ca.pem
	ssl.client.auth=none
	controller.listener.names=CONTROLLER
	inter.broker.listener.name=PLAINTEXT
	sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
	listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$SASL_USER="$SASL_PASS";
	listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
	listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
	listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$SASL_USER="$SASL_PASS";
	listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
	listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
	log.dirs=$dir/data
	offsets.topic.replication.factor=$rf
	offsets.topic.num.partitions=3
	transaction.state.log.replication.factor=$rf
	transaction.state.log.min.isr=$minisr
	transaction.state.log.num.partitions=3
	share.coordinator.state.topic.replication.factor=$rf
	share.coordinator.state.topic.min.isr=$minisr
	group.initial.rebalance.delay.ms=0
	EOF
	if [[ "$nodes" == 3 ]]; then
		# Topic defaults stay Kafka's own on a single node so DescribeConfigs compares cleanly.
		printf 'default.replication.factor=3\nmin.insync.replicas=2\n' >>"$dir/server.properties"
	fi
	if [[ "$fsync" == 1 ]]; then
		# Like-with-like with Gregor's durability = "fsync": every append reaches disk before the ack.
		echo "log.flush.interval.messages=1" >>"$dir/server.properties"
	fi
	if [[ -n "$cpms" ]]; then
		echo "log.flush.offset.checkpoint.interval.ms=$cpms" >>"$dir/server.properties"
	fi
	cat >"$dir/log4j2.properties" <<-EOF
	status = error
	appender.file.type = File
	appender.file.name = FILE
	appender.file.fileName = $dir/server.log
	appender.file.layout.type = PatternLayout
	appender.file.layout.pattern = [%d] %p %m (%c)%n
	rootLogger.level = info
	rootLogger.appenderRef.file.ref = FILE
	logger.kafka.name = kafka
	logger.kafka.level = info
	EOF
}

start() {
	local nodes=1 fsync=0 cpms=""
	while [[ $# -gt 0 ]]; do
		case "$1" in
		--nodes) nodes="$2"; shift 2 ;;
		--fsync) fsync=1; shift ;;
		--checkpoint-interval-ms) cpms="$2"; shift 2 ;;
		*) die "start: unknown flag $1" ;;
		esac
	done
	[[ "$nodes" == 1 || "$nodes" == 3 ]] || die "start: --nodes must be 1 or 3"
	[[ -z "$cpms" || "$cpms" =~ ^[1-9][0-9]*$ ]] || die "start: --checkpoint-interval-ms must be a positive number, not $cpms"
	fetch
	stop --nodes "$nodes" >/dev/null 2>&1 || true
	local cdir; cdir="$(cluster_dir "$nodes")"
	local i0 p0 s0 c0 t0 st0
	for ((i0 = 1; i0 <= nodes; i0++)); do
		read -r p0 s0 c0 t0 st0 <<<"$(node_ports "$nodes" "$i0")"
		if (exec 3<>"/dev/tcp/127.0.0.1/$p0") 2>/dev/null; then die "start: 127.0.0.1:$p0 is already in use by another process"; fi
	done
	rm -rf "$cdir"; mkdir -p "$cdir"
	local cid; cid="$(java -cp "$(classpath)" -Dlog4j2.configurationFile="$(tools_log4j)" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)"
	[[ -n "$cid" ]] || die "start: could not make a cluster id"
	local i
	for ((i = 1; i <= nodes; i++)); do
		local dir="$cdir/node$i"; mkdir -p "$dir/data"
		write_node_config "$nodes" "$i" "$fsync" "$dir" "$cpms"
		java -cp "$(classpath)" -Dlog4j2.configurationFile="$(tools_log4j)" kafka.tools.StorageTool format \
			-t "$cid" -c "$dir/server.properties" --ignore-formatted \
			--add-scram "SCRAM-SHA-256=[name=$SASL_USER,password=$SASL_PASS]" \
			--add-scram "SCRAM-SHA-512=[name=$SASL_USER,password=$SASL_PASS]" >"$dir/format.log" 2>&1 \
			|| { cat "$dir/format.log" >&2; die "start: format of node $i failed"; }
		launch "$nodes" "$dir"
	done
	for ((i = 1; i <= nodes; i++)); do
		local p s c t st; read -r p s c t st <<<"$(node_ports "$nodes" "$i")"
		wait_port "$p" 90 "$cdir/node$i" || die "start: node $i did not listen on 127.0.0.1:$p (see $cdir/node$i/server.log)"
	done
	echo "kafka-ref: Apache Kafka $KAFKA_VERSION up, $nodes node(s), bootstrap $(bootstrap --nodes "$nodes")" >&2
}

# launch N DIR starts the broker of node directory DIR of an N-node cluster, its start time in
# started_at and its process id in pid.
launch() {
	local nodes="$1" dir="$2" heap="$HEAP"
	[[ "$nodes" == 3 ]] && heap="${KAFKA_HEAP:-512m}"
	date +%s%N >"$dir/started_at"
	nohup java -Xms"$heap" -Xmx"$heap" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
		-XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$dir/log4j2.properties" -Dkafka.logs.dir="$dir" \
		-cp "$(classpath)" kafka.Kafka "$dir/server.properties" >"$dir/stdout.log" 2>&1 &
	echo $! >"$dir/pid"
}

# restart [--nodes N] launches the nodes of the last start again on their data and returns at once.
# The old server.log moves aside, so that its "started" line does not answer for the new process.
restart() {
	local nodes=1
	[[ "${1:-}" == --nodes ]] && nodes="$2"
	local cdir i; cdir="$(cluster_dir "$nodes")"
	for ((i = 1; i <= nodes; i++)); do
		local dir="$cdir/node$i"
		[[ -f "$dir/server.properties" ]] || die "restart: no node $i in $cdir"
		if [[ -f "$dir/pid" ]] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then die "restart: node $i is still running"; fi
		mv -f "$dir/server.log" "$dir/server.log.prev" 2>/dev/null || true
		launch "$nodes" "$dir"
	done
}

# crash [--nodes N] SIGKILLs the nodes and waits until they are gone; the data stays.
crash() {
	local nodes=1
	[[ "${1:-}" == --nodes ]] && nodes="$2"
	local cdir i t pid; cdir="$(cluster_dir "$nodes")"
	for ((i = 1; i <= nodes; i++)); do
		local pf="$cdir/node$i/pid"
		[[ -f "$pf" ]] || continue
		pid="$(cat "$pf")"
		kill -9 "$pid" 2>/dev/null || true
		for ((t = 0; t < 100; t++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
		rm -f "$pf"
	done
}

wait_port() {
	local port="$1" secs="$2" dir="$3" t
	for ((t = 0; t < secs * 5; t++)); do
		if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then tail -20 "$dir/stdout.log" "$dir/server.log" >&2 2>/dev/null; return 1; fi
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			# The socket server binds before the broker has caught up with the metadata log;
			# "Kafka Server started" in the log is the real readiness signal.
			if grep -q "Kafka Server started\|KafkaRaftServer.*started" "$dir/server.log" 2>/dev/null; then return 0; fi
		fi
		sleep 0.2
	done
	return 1
}

stop() {
	local nodes=1
	[[ "${1:-}" == --nodes ]] && nodes="$2"
	local cdir i; cdir="$(cluster_dir "$nodes")"
	for ((i = 1; i <= nodes; i++)); do
		local pf="$cdir/node$i/pid"
		[[ -f "$pf" ]] || continue
		local pid; pid="$(cat "$pf")"
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid" 2>/dev/null || true
			local t
			for ((t = 0; t < 150; t++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
			kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
		fi
		rm -f "$pf"
	done
}

status() {
	local nodes=1
	[[ "${1:-}" == --nodes ]] && nodes="$2"
	local cdir i; cdir="$(cluster_dir "$nodes")"
	for ((i = 1; i <= nodes; i++)); do
		[[ -f "$cdir/node$i/pid" ]] && kill -0 "$(cat "$cdir/node$i/pid")" 2>/dev/null || { echo "node $i: down"; return 1; }
		echo "node $i: up (pid $(cat "$cdir/node$i/pid"))"
	done
}

bootstrap() {
	local nodes=1
	[[ "${1:-}" == --nodes ]] && nodes="$2"
	local i out=""
	for ((i = 1; i <= nodes; i++)); do
		local p s c t st; read -r p s c t st <<<"$(node_ports "$nodes" "$i")"
		out+="${out:+,}127.0.0.1:$p"
	done
	echo "$out"
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
fetch) fetch ;;
start) start "$@" ;;
stop) stop "$@" ;;
kill) crash "$@" ;;
restart) restart "$@" ;;
status) status "$@" ;;
pid) n=1; [[ "${1:-}" == --nodes ]] && n="$2"; cat "$(cluster_dir "$n")/node1/pid" ;;
bootstrap) bootstrap "$@" ;;
kafka-topics) run_class org.apache.kafka.tools.TopicCommand "$@" ;;
kafka-consumer-groups) run_class org.apache.kafka.tools.consumer.group.ConsumerGroupCommand "$@" ;;
kafka-share-groups) run_class org.apache.kafka.tools.consumer.group.ShareGroupCommand "$@" ;;
kafka-streams-groups) run_class org.apache.kafka.tools.streams.StreamsGroupCommand "$@" ;;
kafka-console-share-consumer) run_class org.apache.kafka.tools.consumer.ConsoleShareConsumer "$@" ;;
kafka-console-producer) run_class org.apache.kafka.tools.ConsoleProducer "$@" ;;
kafka-configs) run_class "$(first_class org.apache.kafka.tools.ConfigCommand kafka.admin.ConfigCommand)" "$@" ;;
kafka-acls) run_class org.apache.kafka.tools.AclCommand "$@" ;;
kafka-dump-log) run_class "$(first_class org.apache.kafka.tools.DumpLogSegments kafka.tools.DumpLogSegments)" "$@" ;;
kafka-storage) run_class kafka.tools.StorageTool "$@" ;;
kafka-get-offsets) run_class org.apache.kafka.tools.GetOffsetShell "$@" ;;
kafka-metadata-quorum) run_class org.apache.kafka.tools.MetadataQuorumCommand "$@" ;;
kafka-client-metrics) run_class org.apache.kafka.tools.ClientMetricsCommand "$@" ;;
producer-perf) run_class org.apache.kafka.tools.ProducerPerformance "$@" ;;
consumer-perf) run_class org.apache.kafka.tools.ConsumerPerformance "$@" ;;
share-consumer-perf) run_class org.apache.kafka.tools.ShareConsumerPerformance "$@" ;;
e2e-latency) run_class org.apache.kafka.tools.EndToEndLatency "$@" ;;
"" | -h | --help | help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//' ;;
*) die "unknown command $cmd (try --help)" ;;
esac
