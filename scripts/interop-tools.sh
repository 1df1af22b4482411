#!/usr/bin/env bash
# Runs Apache Kafka's own tools (from the Maven jars, through scripts/kafka-ref.sh) against a
# broker and records which work: kafka-topics, kafka-configs, kafka-consumer-groups,
# kafka-get-offsets, kafka-metadata-quorum, kafka-client-metrics, kafka-streams-groups and kafka-dump-log on the
# broker's segment files.
#   scripts/interop-tools.sh BOOTSTRAP DATA_DIR [OUT.md]
# Exits non-zero when a tool the broker should support fails.
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BOOT="${1:?bootstrap}"
DATA="${2:?data dir}"
OUT="${3:-$ROOT/interop/TOOLS.md}"
REF="$ROOT/scripts/kafka-ref.sh"
TOPIC="tools-$(date +%s)"
LOG="$(mktemp)"
fails=0
rows=()

# check NAME EXPECT-REGEX COMMAND...: passes when the command exits 0 and its output matches.
check() {
	local name="$1" want="$2"; shift 2
	local out rc
	out="$("$@" 2>&1)"; rc=$?
	printf '### %s\n$ %s\n%s\n\n' "$name" "$*" "$out" >>"$LOG"
	# Some tools print an error and still exit 0, so the output is read too.
	if grep -Eq "does not support|UnsupportedVersionException" <<<"$out"; then
		local why; why="$(grep -oE "[^:]*does not support [A-Z_]+" <<<"$out" | head -1 | tr '|' '/')"
		rows+=("| $name | skip (not implemented) | ${why:-UnsupportedVersionException} |")
	elif [[ $rc -eq 0 ]] && ! grep -Eq "^Error|Exception" <<<"$out" && grep -Eq -- "$want" <<<"$out"; then
		rows+=("| $name | pass | |")
	else
		local why; why="$(grep -Ev '^\s*$' <<<"$out" | grep -iE 'error|exception|unsupported' | head -1 | cut -c1-200 | tr '|' '/')"
		[[ -z "$why" ]] && why="exit $rc; output did not match /$want/"
		rows+=("| $name | fail | ${why} |")
		fails=$((fails + 1))
	fi
}

check "kafka-topics --create" "Created topic" "$REF" kafka-topics --bootstrap-server "$BOOT" --create --topic "$TOPIC" --partitions 3 --replication-factor 1
check "kafka-topics --list" "^$TOPIC\$" "$REF" kafka-topics --bootstrap-server "$BOOT" --list
check "kafka-topics --describe" "PartitionCount: 3" "$REF" kafka-topics --bootstrap-server "$BOOT" --describe --topic "$TOPIC"
check "kafka-topics --alter --partitions 4" "" "$REF" kafka-topics --bootstrap-server "$BOOT" --alter --topic "$TOPIC" --partitions 4
check "kafka-configs --alter (topic)" "Completed updating config" "$REF" kafka-configs --bootstrap-server "$BOOT" --alter --entity-type topics --entity-name "$TOPIC" --add-config retention.ms=3600000
check "kafka-configs --describe (topic)" "retention.ms=3600000" "$REF" kafka-configs --bootstrap-server "$BOOT" --describe --entity-type topics --entity-name "$TOPIC"
check "kafka-configs --describe --all (broker 1)" "log.segment.bytes" "$REF" kafka-configs --bootstrap-server "$BOOT" --describe --entity-type brokers --entity-name 1 --all
check "producer-perf (1000 records)" "1000 records sent" "$REF" producer-perf --topic "$TOPIC" --num-records 1000 --record-size 100 --throughput -1 --producer-props bootstrap.servers="$BOOT"
check "kafka-get-offsets" "^$TOPIC:[0-9]+:[0-9]+" "$REF" kafka-get-offsets --bootstrap-server "$BOOT" --topic "$TOPIC"
check "kafka-consumer-groups --list" "" "$REF" kafka-consumer-groups --bootstrap-server "$BOOT" --list
check "kafka-metadata-quorum describe --status" "^HighWatermark: +[0-9]+" "$REF" kafka-metadata-quorum --bootstrap-server "$BOOT" describe --status
check "kafka-metadata-quorum describe --replication" "Leader" "$REF" kafka-metadata-quorum --bootstrap-server "$BOOT" describe --replication
check "kafka-client-metrics --alter" "Altered client metrics config" "$REF" kafka-client-metrics --bootstrap-server "$BOOT" --alter --name "$TOPIC" --metrics org.apache.kafka.producer. --interval 60000
check "kafka-client-metrics --describe" "interval.ms=60000" "$REF" kafka-client-metrics --bootstrap-server "$BOOT" --describe --name "$TOPIC"
check "kafka-configs --entity-type client-metrics --describe" "metrics=org.apache.kafka.producer." "$REF" kafka-configs --bootstrap-server "$BOOT" --entity-type client-metrics --describe
check "kafka-configs --alter (group)" "Completed updating config for group" "$REF" kafka-configs --bootstrap-server "$BOOT" --alter --entity-type groups --entity-name "$TOPIC-g" --add-config consumer.session.timeout.ms=50000,consumer.heartbeat.interval.ms=6000
check "kafka-configs --describe (group)" "consumer.session.timeout.ms=50000" "$REF" kafka-configs --bootstrap-server "$BOOT" --describe --entity-type groups --entity-name "$TOPIC-g"
check "kafka-configs --entity-type groups --describe" "Dynamic configs for group $TOPIC-g" "$REF" kafka-configs --bootstrap-server "$BOOT" --entity-type groups --describe
check "kafka-streams-groups --list" "" "$REF" kafka-streams-groups --bootstrap-server "$BOOT" --list
check "kafka-client-metrics --delete" "Deleted client metrics config" "$REF" kafka-client-metrics --bootstrap-server "$BOOT" --delete --name "$TOPIC"
# The producer's sticky partitioner may leave some partitions empty: take the largest segment.
seg="$(ls -S "$DATA/$TOPIC"-*/*.log 2>/dev/null | head -1)"
if [[ -n "$seg" ]]; then
	check "kafka-dump-log (a segment of $TOPIC)" "baseOffset: 0" "$REF" kafka-dump-log --files "$seg" --print-data-log
	idx="${seg%.log}.index"
	[[ -f "$idx" ]] && check "kafka-dump-log --index-sanity-check" "" "$REF" kafka-dump-log --files "$idx" --index-sanity-check
	tidx="${seg%.log}.timeindex"
	[[ -f "$tidx" ]] && check "kafka-dump-log (time index)" "" "$REF" kafka-dump-log --files "$tidx"
else
	rows+=("| kafka-dump-log | fail | no segment file under $DATA/$TOPIC-* |")
	fails=$((fails + 1))
fi
check "kafka-topics --delete" "" "$REF" kafka-topics --bootstrap-server "$BOOT" --delete --topic "$TOPIC"

{
	echo "# Apache Kafka's tools against $BOOT"
	echo
	echo "Written by \`make interop-tools\` ($(date -u '+%Y-%m-%d %H:%M UTC'), Kafka $("$REF" kafka-topics --version 2>/dev/null | head -1 | awk '{print $1}')). Full output of each command: \`$LOG\`."
	echo
	echo "| tool | result | first error line |"
	echo "|---|---|---|"
	printf '%s\n' "${rows[@]}"
} >"$OUT"
cat "$OUT"
echo "interop-tools: $fails failing tool(s); transcripts in $LOG"
exit $((fails > 0))
