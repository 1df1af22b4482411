#!/usr/bin/env bash
# Installs the interop matrix's external clients, idempotently (a second run takes seconds):
#   kcat (Debian; kcat-rdkafka2: the same on the wheel's newer librdkafka), confluent-kafka-python (PyPI, venv in .cache/interop/venv),
#   kafkajs and its codecs (npm, .cache/interop/node), Java kafka-clients and the Java driver
#   (Maven, .cache/interop/java). Go clients come from go.mod.
#   scripts/interop-deps.sh [client...]     default: all of kcat python kafkajs java
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${GREGOR_CACHE:-$ROOT/.cache}"
DEST="$CACHE/interop"
mkdir -p "$DEST"

apt_install() {
	if [[ -z "${APT_UPDATED:-}" ]]; then apt-get update -qq >&2; APT_UPDATED=1; fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

dep_kcat() {
	command -v kcat >/dev/null && return 0
	echo "interop-deps: installing kcat" >&2
	apt_install kcat
}

# kcat-rdkafka2: Debian's kcat run on the librdkafka (2.4 or newer, Produce
# v8+) that confluent-kafka's wheel bundles: a link in $DEST/librdkafka
# that a test puts on LD_LIBRARY_PATH. kcat 1.7 and later builds alike
# load any librdkafka.so.1.
dep_kcat_rdkafka2() {
	dep_kcat
	dep_python
	local so
	so=$(ls "$DEST"/venv/lib/python3*/site-packages/confluent_kafka.libs/librdkafka-*.so.1 2>/dev/null | head -n 1)
	if [[ -z "$so" ]]; then
		echo "interop-deps: confluent-kafka's wheel in $DEST/venv bundles no librdkafka" >&2
		return 1
	fi
	mkdir -p "$DEST/librdkafka"
	ln -sfn "$so" "$DEST/librdkafka/librdkafka.so.1"
}

dep_python() {
	local py="$DEST/venv/bin/python"
	if [[ -x "$py" ]] && "$py" -c 'import confluent_kafka' 2>/dev/null; then return 0; fi
	echo "interop-deps: installing confluent-kafka into $DEST/venv" >&2
	command -v python3 >/dev/null || apt_install python3 python3-venv
	python3 -m venv "$DEST/venv" || { apt_install python3-venv && python3 -m venv "$DEST/venv"; }
	"$DEST/venv/bin/pip" install -q -r "$ROOT/interop/python/requirements.txt"
}

dep_kafkajs() {
	local d="$DEST/node"
	if cmp -s "$ROOT/interop/node/package.json" "$d/package.json" && [[ -d "$d/node_modules/kafkajs" ]]; then return 0; fi
	echo "interop-deps: installing kafkajs into $d" >&2
	command -v npm >/dev/null || apt_install nodejs npm
	mkdir -p "$d"
	cp "$ROOT/interop/node/package.json" "$d/package.json"
	(cd "$d" && npm install --silent --no-audit --no-fund)
}

dep_java() {
	local d="$DEST/java" src="$ROOT/interop/java"
	local stamp; stamp="$(cat "$src/pom.xml" "$src"/src/main/java/gregor/interop/*.java | sha256sum | cut -c1-16)"
	if [[ -f "$d/interop-driver.jar" && "$(cat "$d/.stamp" 2>/dev/null)" == "$stamp" ]]; then return 0; fi
	echo "interop-deps: building the Java driver into $d" >&2
	command -v mvn >/dev/null || apt_install maven
	command -v javac >/dev/null || apt_install openjdk-17-jdk-headless
	local mvn=(mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$CACHE/m2" -Dcache.dir="$DEST" -f "$src/pom.xml")
	rm -rf "$d/libs"
	"${mvn[@]}" package dependency:copy-dependencies -DoutputDirectory="$d/libs" -DincludeScope=runtime >&2
	cp "$d/build/interop-driver.jar" "$d/interop-driver.jar"
	echo "$stamp" >"$d/.stamp"
}

# The Kafka Streams word count driver (interop/streams): kafka-streams 4.4.0 from Maven Central.
dep_streams() {
	local d="$DEST/streams" src="$ROOT/interop/streams"
	local stamp; stamp="$(cat "$src/pom.xml" "$src"/src/main/java/gregor/interop/*.java | sha256sum | cut -c1-16)"
	if [[ -f "$d/streams-driver.jar" && "$(cat "$d/.stamp" 2>/dev/null)" == "$stamp" ]]; then return 0; fi
	echo "interop-deps: building the Kafka Streams driver into $d" >&2
	command -v mvn >/dev/null || apt_install maven
	command -v javac >/dev/null || apt_install openjdk-17-jdk-headless
	local mvn=(mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$CACHE/m2" -Dcache.dir="$DEST" -f "$src/pom.xml")
	rm -rf "$d/libs"
	"${mvn[@]}" package dependency:copy-dependencies -DoutputDirectory="$d/libs" -DincludeScope=runtime >&2
	cp "$d/build/streams-driver.jar" "$d/streams-driver.jar"
	echo "$stamp" >"$d/.stamp"
}

clients=("$@")
[[ ${#clients[@]} -eq 0 ]] && clients=(kcat python kafkajs java)
for c in "${clients[@]}"; do
	case "$c" in
	kcat) dep_kcat ;;
	kcat-rdkafka2) dep_kcat_rdkafka2 ;;
	python) dep_python ;;
	kafkajs) dep_kafkajs ;;
	java) dep_java ;;
	streams) dep_streams ;;
	franz-go | kafka-go | sarama) ;;
	*) echo "interop-deps: unknown client $c" >&2; exit 2 ;;
	esac
done
