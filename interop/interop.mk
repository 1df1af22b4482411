# Interop matrix, Apache Kafka as a reference broker, and side-by-side benchmarks.
# Included from the Makefile. Everything installs what it needs (apt, pip, npm, mvn) into
# .cache/ the first time and is quick afterwards.
#
#   make kafka-ref [KAFKA_NODES=3]       fetch Apache Kafka's jars and start a KRaft cluster on loopback
#   make kafka-ref-stop [KAFKA_NODES=3]
#   make interop [TARGET=kafka]          full client × scenario matrix against Gregor (or Apache Kafka)
#   make interop TARGET=kafka KAFKA_NODES=3  the same against a 3-node Apache Kafka, topics RF=3
#   make interop GREGOR_NODES=3          the same matrix against a 3-node Gregor cluster, topics RF=3
#   make interop-cluster                 = make interop GREGOR_NODES=3 (results as target gregor-3node)
#   make interop-smoke                   the CI subset against Gregor
#   make interop-diff                    Gregor vs Apache Kafka, field by field (interop/DIFF.md)
#   make bench-compare                   Gregor vs Apache Kafka throughput, latency, RSS, start time
#   make interop-streams [GREGOR_NODES=3] Kafka Streams 4.4 word count, group.protocol=streams and
#                                        exactly_once_v2, an instance bounced mid-run: exact counts;
#                                        with 3 nodes the group's coordinator is SIGKILLed mid-run
#   make interop-streams-restart [GREGOR_NODES=3] the same word count with one instance stopped once
#                                        40% of the words are counted and started again on its state
#                                        directory (same transactional ids), classic and streams
#                                        group protocols: exact counts
#   make interop-tools                   Kafka's own tools (kafka-topics, -configs, -consumer-groups, -dump-log) against Gregor

GO            ?= go
TARGET        ?= gregor
KAFKA_NODES   ?= 1
INTEROP_FLAGS ?=
INTEROP_RUNNER = $(GO) run ./interop/runner
KAFKA_REF      = ./scripts/kafka-ref.sh
GREGOR_REF     = ./scripts/interop-gregor.sh
# Nodes of the Gregor cluster `make interop` starts; with more than one the drivers create their
# topics with replication factor min(GREGOR_NODES, 3) and the results are target gregor-Nnode.
GREGOR_NODES  ?= 1
ifeq ($(GREGOR_NODES),1)
GREGOR_TARGET  = gregor
GREGOR_RF      = 1
else
GREGOR_TARGET  = gregor-$(GREGOR_NODES)node
GREGOR_RF      = $(shell n=$(GREGOR_NODES); echo $$(( n < 3 ? n : 3 )))
endif
# gregor_addrs,PORT lists node K's PORT+100(K-1) for every node (scripts/interop-gregor.sh's layout).
gregor_addrs   = $(shell sep=; for k in $$(seq 1 $(GREGOR_NODES)); do printf '%s127.0.0.1:%d' "$$sep" $$(( $(1) + 100*(k-1) )); sep=,; done)
SMOKE_CLIENTS  = java kcat kafkajs python franz-go
# Where the scripts install the clients and write the TLS certificate; the runner is told the same.
INTEROP_CACHE  = $${GREGOR_CACHE:-.cache}
# The listeners scripts/interop-gregor.sh and scripts/kafka-ref.sh open; the TLS ones serve the
# certificate scripts/interop-tls.sh makes under .cache/interop-tls.
GREGOR_LISTENERS = --bootstrap $(call gregor_addrs,28092) --sasl-bootstrap $(call gregor_addrs,28094) \
	--ssl-bootstrap $(call gregor_addrs,28093) --sasl-ssl-bootstrap $(call gregor_addrs,28095) \
	--ca-file $(INTEROP_CACHE)/interop-tls/ca.pem --cache $(INTEROP_CACHE)/interop --replication-factor $(GREGOR_RF)
# kafka_addrs,PORT lists PORT+1..PORT+KAFKA_NODES (scripts/kafka-ref.sh's three-node layout).
kafka_addrs    = $(shell sep=; for k in $$(seq 1 $(KAFKA_NODES)); do printf '%s127.0.0.1:%d' "$$sep" $$(( $(1) + k )); sep=,; done)
ifeq ($(KAFKA_NODES),1)
KAFKA_TARGET     = kafka
KAFKA_LISTENERS  = --bootstrap 127.0.0.1:29092 --sasl-bootstrap 127.0.0.1:29094 \
	--ssl-bootstrap 127.0.0.1:29095 --sasl-ssl-bootstrap 127.0.0.1:29096
else
KAFKA_TARGET     = kafka-$(KAFKA_NODES)node
KAFKA_LISTENERS  = --bootstrap $(call kafka_addrs,29100) --sasl-bootstrap $(call kafka_addrs,29130) \
	--ssl-bootstrap $(call kafka_addrs,29140) --sasl-ssl-bootstrap $(call kafka_addrs,29150) \
	--replication-factor $(shell n=$(KAFKA_NODES); echo $$(( n < 3 ? n : 3 )))
endif
KAFKA_LISTENERS += --ca-file $(INTEROP_CACHE)/interop-tls/ca.pem --cache $(INTEROP_CACHE)/interop

.PHONY: interop-streams interop-streams-restart
.PHONY: kafka-ref kafka-ref-stop interop-deps interop interop-cluster interop-smoke interop-diff interop-tools

kafka-ref:
	$(KAFKA_REF) start --nodes $(KAFKA_NODES)

kafka-ref-stop:
	$(KAFKA_REF) stop --nodes $(KAFKA_NODES)

interop-deps:
	./scripts/interop-deps.sh

# Kafka Streams (KIP-1071 streams groups, exactly_once_v2) against a fresh Gregor; 30,000 lines,
# two instances, the first closed and replaced once output appears. Exit status: exact or not.
STREAMS_DRIVER = $${GREGOR_CACHE:-.cache}/interop/streams
ifeq ($(GREGOR_NODES),1)
STREAMS_KILL   =
else
STREAMS_KILL   = kill -9 $$($(GREGOR_REF) pids | sed -n {node}p)
endif
interop-streams:
	./scripts/interop-deps.sh streams
	$(GREGOR_REF) start --nodes $(GREGOR_NODES)
	java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$(STREAMS_DRIVER)/streams-driver.jar:$(STREAMS_DRIVER)/libs/*" \
		gregor.interop.WordCount $(call gregor_addrs,28092) 30000 2 180 1 '$(STREAMS_KILL)'; \
		rc=$$?; $(GREGOR_REF) stop; exit $$rc

# Kafka Streams exactly_once_v2 restarted on its state directory: one instance, stopped at 40% of
# the words counted and started again with the same state directory, so its producer initialises
# the same transactional id again and must go on committing offsets in transactions. Once per group
# protocol, each against a fresh Gregor. Exit status: every run exact.
STREAMS_RESTART_PROTOCOLS ?= classic streams
interop-streams-restart:
	./scripts/interop-deps.sh streams
	@rc=0; for proto in $(STREAMS_RESTART_PROTOCOLS); do \
		$(GREGOR_REF) start --nodes $(GREGOR_NODES) || exit 1; \
		java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$(STREAMS_DRIVER)/streams-driver.jar:$(STREAMS_DRIVER)/libs/*" \
			gregor.interop.WordCount $(call gregor_addrs,28092) 30000 1 180 restart '' $$proto || rc=1; \
		$(GREGOR_REF) stop; \
	done; exit $$rc

# The target is started fresh and stopped afterwards; the runner's exit status is the target's.
interop: interop-deps
ifeq ($(TARGET),kafka)
	$(KAFKA_REF) start --nodes $(KAFKA_NODES)
	$(INTEROP_RUNNER) --target $(KAFKA_TARGET) $(KAFKA_LISTENERS) $(INTEROP_FLAGS); \
		rc=$$?; $(KAFKA_REF) stop --nodes $(KAFKA_NODES); exit $$rc
else
	$(GREGOR_REF) start --nodes $(GREGOR_NODES)
	$(INTEROP_RUNNER) --target $(GREGOR_TARGET) $(GREGOR_LISTENERS) $(INTEROP_FLAGS); \
		rc=$$?; $(GREGOR_REF) stop; exit $$rc
endif

interop-cluster:
	$(MAKE) interop GREGOR_NODES=3

# Prints its duration (installs included) before the runner's closing "N passed, N failed" line.
interop-smoke:
	@start=$$(date +%s); out=$$(mktemp); \
	./scripts/interop-deps.sh $(SMOKE_CLIENTS) && $(GREGOR_REF) start && \
	{ { $(INTEROP_RUNNER) --smoke --target gregor --bootstrap 127.0.0.1:28092 --cache $(INTEROP_CACHE)/interop $(INTEROP_FLAGS); echo $$? >$$out.rc; } | tee $$out; rc=$$(cat $$out.rc); \
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

# bench-compare's recipe is in the Makefile.
