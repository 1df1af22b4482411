# Interop matrix, Apache Kafka as a reference broker, and side-by-side benchmarks.
# Included from the Makefile. Everything installs what it needs (apt, pip, npm, mvn) into
# .cache/ the first time and is quick afterwards.
#
#   make kafka-ref [KAFKA_NODES=3]       fetch Apache Kafka's jars and start a KRaft cluster on loopback
#   make kafka-ref-stop [KAFKA_NODES=3]
#   make interop [TARGET=kafka]          full client × scenario matrix against Gregor (or Apache Kafka)
#   make interop-smoke                   the CI subset against Gregor
#   make interop-diff                    Gregor vs Apache Kafka, field by field (interop/DIFF.md)
#   make bench-compare                   Gregor vs Apache Kafka throughput, latency, RSS, start time
#   make interop-tools                   Kafka's own tools (kafka-topics, -configs, -consumer-groups, -dump-log) against Gregor

GO            ?= go
TARGET        ?= gregor
KAFKA_NODES   ?= 1
INTEROP_FLAGS ?=
INTEROP_RUNNER = $(GO) run ./interop/runner
KAFKA_REF      = ./scripts/kafka-ref.sh
GREGOR_REF     = ./scripts/interop-gregor.sh
SMOKE_CLIENTS  = java kcat kafkajs python franz-go
# The listeners scripts/interop-gregor.sh and scripts/kafka-ref.sh open; the TLS ones serve the
# certificate scripts/interop-tls.sh makes under .cache/interop-tls.
GREGOR_LISTENERS = --bootstrap 127.0.0.1:28092 --sasl-bootstrap 127.0.0.1:28094 \
	--ssl-bootstrap 127.0.0.1:28093 --sasl-ssl-bootstrap 127.0.0.1:28095 --ca-file .cache/interop-tls/ca.pem
KAFKA_LISTENERS  = --bootstrap 127.0.0.1:29092 --sasl-bootstrap 127.0.0.1:29094 \
	--ssl-bootstrap 127.0.0.1:29095 --sasl-ssl-bootstrap 127.0.0.1:29096 --ca-file .cache/interop-tls/ca.pem

.PHONY: kafka-ref kafka-ref-stop interop-deps interop interop-smoke interop-diff interop-tools bench-compare

kafka-ref:
	$(KAFKA_REF) start --nodes $(KAFKA_NODES)

kafka-ref-stop:
	$(KAFKA_REF) stop --nodes $(KAFKA_NODES)

interop-deps:
	./scripts/interop-deps.sh

# The target is started fresh and stopped afterwards; the runner's exit status is the target's.
interop: interop-deps
ifeq ($(TARGET),kafka)
	$(KAFKA_REF) start
	$(INTEROP_RUNNER) --target kafka $(KAFKA_LISTENERS) $(INTEROP_FLAGS); \
		rc=$$?; $(KAFKA_REF) stop; exit $$rc
else
	$(GREGOR_REF) start
	$(INTEROP_RUNNER) --target gregor $(GREGOR_LISTENERS) $(INTEROP_FLAGS); \
		rc=$$?; $(GREGOR_REF) stop; exit $$rc
endif

# Prints its duration (installs included) before the runner's closing "N passed, N failed" line.
interop-smoke:
	@start=$$(date +%s); out=$$(mktemp); \
	./scripts/interop-deps.sh $(SMOKE_CLIENTS) && $(GREGOR_REF) start && \
	{ { $(INTEROP_RUNNER) --smoke --target gregor --bootstrap 127.0.0.1:28092 $(INTEROP_FLAGS); echo $$? >$$out.rc; } | tee $$out; rc=$$(cat $$out.rc); \
	  $(GREGOR_REF) stop; echo "interop-smoke: $$(( $$(date +%s) - start )) s including installs"; \
	  grep -E '^interop: [0-9]+ passed' $$out | tail -1; rm -f $$out $$out.rc; exit $$rc; }

interop-diff:
	$(KAFKA_REF) start
	$(GREGOR_REF) start
	$(GO) run ./interop/diff --gregor 127.0.0.1:28092 --kafka 127.0.0.1:29092 --out interop; \
		rc=$$?; $(GREGOR_REF) stop; $(KAFKA_REF) stop; exit $$rc

interop-tools:
	$(KAFKA_REF) fetch
	$(GREGOR_REF) start
	./scripts/interop-tools.sh 127.0.0.1:28092 .cache/gregor-run/data; rc=$$?; $(GREGOR_REF) stop; exit $$rc

# scripts/interop-gregor.sh builds ./cmd/gregor (or runs GREGOR_BIN) when the benchmark starts it.
bench-compare:
	$(KAFKA_REF) fetch
	$(GO) run ./bench/compare $(BENCH_FLAGS)
