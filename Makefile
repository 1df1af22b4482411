# Gregor's build. `make run` starts a single-node broker on broker.toml;
# `make test` runs the default test suite (what CI runs).
GO       ?= go
BIN      := bin/gregor
CONFIG   ?= broker.toml
FUZZTIME ?= 5s
GOFLAGS_TEST ?= -count=1 -timeout 20m
# The sdk modules: each its own Go module that imports nothing of the broker.
SDK_MODULES := sdk sdk/plugin sdk/clients

.PHONY: all build run test unit sdk-test fuzz fuzz-smoke bench check clean tools wasm-examples bench-plugins mirror-interop security-tools interceptor-clients share-tools fault fault-smoke bench-mirror bench-compare fault-mirror

all: build

tools:
	@command -v $(GO) >/dev/null || { echo "Go 1.26 or newer is required (https://go.dev/dl)"; exit 1; }
	$(GO) mod download

build: tools
	$(GO) build -o $(BIN) ./cmd/gregor

run: build
	./$(BIN) serve --config $(CONFIG)

# The default suite: unit and integration tests against real brokers on
# loopback with real clients, the SDK module, and a short run of every fuzz target.
test: tools
	$(GO) test $(GOFLAGS_TEST) ./...
	for m in $(SDK_MODULES); do (cd $$m && GOWORK=off $(GO) test $(GOFLAGS_TEST) ./...) || exit 1; done
	./scripts/fuzz.sh $(FUZZTIME)
	@echo "make test: all suites passed"

unit:
	$(GO) test $(GOFLAGS_TEST) -short ./...

# Apache Kafka's kafka-configs (SCRAM users, quotas) and kafka-acls against
# Gregor, alone (each tool starts a JVM; make test runs it too when the jars
# are there).
security-tools: tools
	./scripts/kafka-ref.sh fetch
	$(GO) test $(GOFLAGS_TEST) -run 'TestKafkaSecurityTools' -v ./tests

# The record interceptor examples with external clients: kcat (Debian) and
# the Java client (Kafka's console producer from the cached jars) against the
# JSON Schema example, the Java client against the go-plugin schema id one
# (make test runs them too when kcat and the jars are there).
interceptor-clients: tools
	./scripts/interop-deps.sh kcat kcat-rdkafka2
	./scripts/kafka-ref.sh fetch
	$(GO) test $(GOFLAGS_TEST) -run 'TestInterceptorJSONSchemaKcatAndJava|TestInterceptorSchemaIDPlugin' -v ./tests

# Apache Kafka's share group tools against Gregor, alone: kafka-share-groups
# (list, describe --members/--state/--offsets, reset-offsets, delete-offsets,
# delete), kafka-console-share-consumer and kafka-configs --entity-type
# groups (make test runs it too when the jars are there).
share-tools: tools
	./scripts/kafka-ref.sh fetch
	$(GO) test $(GOFLAGS_TEST) -run 'TestKafkaShareGroupTools' -v ./tests

# The fault suite (tests/fault_test.go), not part of make test: three
# broker processes behind proxies, acks=all writers and readers, a
# consumer group committing offsets synchronously, and exactly-once
# consume-transform-produce members (GroupTransactSession), with faults from
# seeded schedules (SIGKILL a leader or the controller, SIGSTOP, SIGTERM and
# restart, cut or blackhole links, isolate a node, reassign a partition,
# corrupt a follower's segment tail, SIGKILL the leader of a group's
# __consumer_offsets or a transactional id's __transaction_state partition
# right after a commit was acknowledged, fail a leader's disk with fsync EIO
# or ENOSPC through the errorfs build of the broker, which only the fault
# suite runs, then restart it); the checkers must find nothing
# lost, duplicated, moved backwards, aborted-but-visible or inconsistent.
# FAULT_SEEDS="1-20" or "3,7" (default: one seed from the clock, printed),
# FAULT_DURATION per seed (default 60s), FAULT_KINDS to replay some kinds
# only. fault-smoke is one short seeded run of every workload for CI.
FAULT_SEEDS    ?=
FAULT_DURATION ?= 60s
FAULT_KINDS    ?=
fault: tools
	GREGOR_FAULT=1 FAULT_SEEDS="$(FAULT_SEEDS)" FAULT_DURATION=$(FAULT_DURATION) FAULT_KINDS="$(FAULT_KINDS)" \
		$(GO) test -count=1 -timeout 0 -run '^TestFault$$' -v ./tests

fault-smoke: tools
	GREGOR_FAULT=1 FAULT_SEEDS=$(or $(FAULT_SEEDS),1) FAULT_DURATION=30s FAULT_KINDS="$(FAULT_KINDS)" \
		$(GO) test -count=1 -timeout 10m -run '^TestFault$$' -v ./tests

# The mirror fault suite (tests/fault_mirror_test.go): a 3-node source (Gregor, or Apache Kafka
# 4.4.0 from scripts/kafka-ref.sh in the kafka-* modes, which bind its fixed ports), a 3-node
# Gregor target, the mirror in copy mode, copy with exactly_once and link mode; SIGKILL of the
# mirror and of source leaders, SIGSTOP of source leaders, cut links between the mirror and
# either cluster, and source retention gaps; the checker reports lost, duplicated, reordered and
# offset-mismatched records and unreported gaps (tests/FAULTS.md). Seeds and duration as in
# make fault; FAULT_MIRROR_MODES="copy,copy-eos,link" by default, or any of those and
# kafka-copy, kafka-copy-eos, kafka-link.
FAULT_MIRROR_MODES ?=
fault-mirror: build
	GREGOR_FAULT_MIRROR=1 FAULT_SEEDS="$(FAULT_SEEDS)" FAULT_DURATION=$(or $(FAULT_DURATION),60s) \
		FAULT_MIRROR_MODES="$(FAULT_MIRROR_MODES)" \
		$(GO) test -count=1 -timeout 0 -run '^TestMirrorFault$$' -v ./tests

fuzz:
	./scripts/fuzz.sh $(or $(FUZZLONG),60s)

fuzz-smoke:
	./scripts/fuzz.sh $(FUZZTIME)

# Throughput and latency with a real client against an in-process broker,
# plus allocation counts of the produce and fetch paths. Not part of `make test`.
bench: build
	$(GO) test -run='^$$' -bench=. -benchmem ./core/log ./core/record ./core/partition
	./$(BIN) bench
	$(GO) test -run='^$$' -bench=Mirror -benchtime=1x ./tests

# The mirror against Apache Kafka (scripts/kafka-ref.sh): Kafka to Gregor in
# copy and link mode, Gregor to Kafka in copy mode. Not part of make test.
mirror-interop:
	./scripts/kafka-ref.sh start
	GREGOR_MIRROR_KAFKA=127.0.0.1:29092 $(GO) test -count=1 -run=TestMirrorApacheKafka -v ./tests; \
		rc=$$?; ./scripts/kafka-ref.sh stop; exit $$rc

check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff
	@# Every sdk module builds, vets and tidies on its own (GOWORK=off) and
	@# imports nothing of the broker module.
	for m in $(SDK_MODULES); do (cd $$m && GOWORK=off $(GO) vet ./... && GOWORK=off $(GO) mod tidy -diff) || exit 1; done
	@for m in $(SDK_MODULES); do \
		bad=$$(cd $$m && GOWORK=off $(GO) list -deps ./... | grep -E '^github.com/gregorbroker/gregor/(core|hooks|plugins|loader|mirror|cmd)(/|$$)'); \
		if [ -n "$$bad" ]; then echo "$$m imports the broker module:"; echo "$$bad"; exit 1; fi; \
		if grep -nE '=>[[:space:]]*\.\./\.\.([[:space:]]|$$)' $$m/go.mod; then echo "$$m/go.mod replaces a module with the broker"; exit 1; fi; \
	done
	@echo "make check: clean"

clean:
	rm -rf bin

include interop/interop.mk
include web/console/console.mk

# WebAssembly extension examples: the Go guests (GOOS=wasip1, c-shared) and
# the AssemblyScript murmur2 (npm). Their tests build them too, so `make test`
# needs only Go and npm.
wasm-examples:
	cd examples/wasm-region && GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o region.wasm .
	cd examples/wasm-authorizer && GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o authorizer.wasm .
	cd examples/interceptor-jsonschema && GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o jsonschema.wasm .
	cd examples/interceptor-mask && GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o mask.wasm .
	cd examples/wasm-murmur2-as && { [ -x node_modules/.bin/asc ] || npm ci --no-audit --no-fund; } && npm run build
	@echo "built examples/wasm-region/region.wasm examples/wasm-authorizer/authorizer.wasm examples/interceptor-jsonschema/jsonschema.wasm examples/interceptor-mask/mask.wasm examples/wasm-murmur2-as/build/murmur2.wasm"

# Per-record partitioner cost: built-in Go murmur2 against WASM guests (Go,
# AssemblyScript) in batches, with and without a per-call time limit; a
# go-plugin partitioner per call; produce-over-HTTP throughput with the
# built-in and WASM partitioners; the placement check's cost on franz-go
# produce of uncompressed 1 KiB records (enforce off and on, alternating).
# Gregor's mirror (copy and link mode) against MirrorMaker 2 in dedicated mode, with Apache
# Kafka 4.4.0 as source and a fresh Gregor target: catch-up on a backlog (200 MB by default on a
# shared machine; BENCH_MIRROR_FLAGS=--backlog-mb=1024 for the 1 GB figure), replication latency
# at a fixed rate, mirror RSS and CPU, consumer group failover. Maven Central serves
# connect-mirror 4.1.1 (not 4.4.0); it runs on Kafka 4.1.1's jars. Uses Kafka's fixed ports:
# run under flock /work/locks/ports.lock when the machine is shared. Also run by bench-compare.
MM2_VERSION ?= 4.1.1
bench-mirror: build
	KAFKA_VERSION=4.4.0 ./scripts/kafka-ref.sh fetch
	KAFKA_VERSION=$(MM2_VERSION) ./scripts/kafka-ref.sh fetch
	for a in connect-mirror connect-mirror-client; do \
		mvn -B -q -Dmaven.repo.local=$${GREGOR_CACHE:-.cache}/m2 dependency:get \
			-Dartifact=org.apache.kafka:$$a:$(MM2_VERSION) -Dtransitive=false || exit 1; done
	$(GO) run ./bench/mirror --gregor $(BIN) --mm2-version $(MM2_VERSION) $(BENCH_MIRROR_FLAGS)

# Gregor vs Apache Kafka 4.4.0 on this machine (bench/compare: single node, then 3 nodes), then
# the mirror benchmark. BENCH_COMPARE_FLAGS=--quick is a short single-node subset; see bench/RESULTS.md.
# The heavy rows are opt-in: --full adds 5,000 and 10,000 idle connections and Gregor's 3-node
# section with a PLAINTEXT controller plane (--cluster-plaintext-controller alone runs only that);
# --durability fsync reruns everything with fsync before every ack on both brokers.
# Uses Kafka's and Gregor's fixed ports: run under flock /work/locks/ports.lock on a shared machine.
bench-compare: build
	KAFKA_VERSION=4.4.0 ./scripts/kafka-ref.sh fetch
	KAFKA_VERSION=4.4.0 GREGOR_BIN=$(CURDIR)/$(BIN) $(GO) run ./bench/compare $(BENCH_COMPARE_FLAGS) $(BENCH_FLAGS)
	$(MAKE) bench-mirror

bench-plugins: wasm-examples build
	$(GO) test -run='^$$' -bench='Partitioner|Interceptor' -benchmem ./hooks
	./$(BIN) plugin bench --wasm examples/wasm-murmur2-as/build/murmur2.wasm
	./$(BIN) plugin bench --wasm examples/wasm-region/region.wasm
	$(GO) test -run='^$$' -bench=ExtPluginPartitioner -benchmem ./tests
	$(GO) test -run='^$$' -bench=ExtHTTPProduce -benchtime=2s ./tests
	$(GO) test -run='^$$' -bench=ExtPlacementCheck -benchtime=100000x -count=3 ./tests
	$(GO) test -run='^$$' -bench=ExtInterceptorProduce -benchtime=20000x -count=3 ./tests
	$(GO) test -run='^$$' -bench=ExtInterceptorFetch -benchtime=4x -count=3 ./tests
