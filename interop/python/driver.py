"""Gregor's interop driver for confluent-kafka-python (librdkafka).

Runs the scenarios of interop/SCENARIOS.md named on the command line and prints one JSON line
per scenario on stdout.
"""
import json
import os
import sys
import time

from confluent_kafka import (Consumer, KafkaException, Producer, TopicPartition, OFFSET_BEGINNING)
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,
                                   NewPartitions, NewTopic, OffsetSpec, ResourceType)

BOOTSTRAP = os.environ.get("INTEROP_BOOTSTRAP", "127.0.0.1:28092")
SASL_BOOTSTRAP = os.environ.get("INTEROP_SASL_BOOTSTRAP") or BOOTSTRAP
SSL_BOOTSTRAP = os.environ.get("INTEROP_SSL_BOOTSTRAP", "")
SASL_SSL_BOOTSTRAP = os.environ.get("INTEROP_SASL_SSL_BOOTSTRAP", "")
CA_FILE = os.environ.get("INTEROP_CA_FILE", "")
PREFIX = os.environ.get("INTEROP_PREFIX", "it-python")
REPLICATION_FACTOR = int(os.environ.get("INTEROP_REPLICATION_FACTOR", "1"))
USER = os.environ.get("INTEROP_SASL_USER", "interop")
PASS = os.environ.get("INTEROP_SASL_PASSWORD", "interop-secret")
TIMEOUT = int(os.environ.get("INTEROP_SCENARIO_TIMEOUT_MS", "90000")) / 1000.0
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]

deadline = 0.0


class Skip(Exception):
    """The client cannot express the scenario."""


class Check(Exception):
    pass


def check(ok, msg):
    if not ok:
        raise Check(msg)


def left():
    return max(1.0, deadline - time.time())


def conf(**extra):
    c = {"bootstrap.servers": BOOTSTRAP, "client.id": "interop-python"}
    c.update({k.replace("_", "."): v for k, v in extra.items()})
    return c


def admin(**extra):
    return AdminClient(conf(**extra))


def wait(futures):
    return {k: f.result(timeout=left()) for k, f in futures.items()}


def create(a, topic, parts, config=None):
    wait(a.create_topics([NewTopic(topic, parts, REPLICATION_FACTOR, config=config or {})], operation_timeout=left()))


def eventually(fn):
    while True:
        try:
            return fn()
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(0.2)


def read_all(topic, want, **extra):
    """Reads every partition from the start without subscribing until want records arrived."""
    c = Consumer(conf(group_id=PREFIX + "-reader", enable_auto_commit=False, **extra))
    try:
        md = c.list_topics(topic, timeout=left())
        parts = sorted(md.topics[topic].partitions)
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in parts])
        out = []
        while len(out) < want and time.time() < deadline:
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error():
                if m.error().code() == -191:  # _PARTITION_EOF
                    continue
                raise KafkaException(m.error())
            out.append(m)
        check(len(out) >= want, "consumed %d of %d records" % (len(out), want))
        return out
    finally:
        c.close()


def s(b):
    return None if b is None else b.decode()


def topic_config(a, topic, key):
    r = ConfigResource(ResourceType.TOPIC, topic)
    entries = wait(a.describe_configs([r]))[r]
    check(key in entries, "describe configs of %s: no %s" % (topic, key))
    return entries[key].value


def metadata():
    topic = PREFIX + "-meta"
    a = admin()
    md = a.list_topics(timeout=left())
    check(len(md.brokers) > 0, "metadata lists no brokers")
    create(a, topic, 3)

    def ok():
        t = a.list_topics(topic, timeout=left()).topics[topic]
        check(t.error is None, "topic error %s" % t.error)
        check(len(t.partitions) == 3, "%d partitions, want 3" % len(t.partitions))
        for p in t.partitions.values():
            check(p.leader >= 0, "partition %d has no leader" % p.id)
    eventually(ok)


def topic_admin():
    topic = PREFIX + "-topic"
    a = admin()
    create(a, topic, 3, {"retention.ms": "3600000"})
    eventually(lambda: check(len(a.list_topics(topic, timeout=left()).topics[topic].partitions) == 3, "want 3 partitions"))
    eventually(lambda: check(topic_config(a, topic, "retention.ms") == "3600000",
                             "retention.ms after create = %s" % topic_config(a, topic, "retention.ms")))
    r = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
        ConfigEntry("retention.ms", "7200000", incremental_operation=AlterConfigOpType.SET)])
    wait(a.incremental_alter_configs([r]))
    eventually(lambda: check(topic_config(a, topic, "retention.ms") == "7200000",
                             "retention.ms after alter = %s" % topic_config(a, topic, "retention.ms")))
    wait(a.delete_topics([topic], operation_timeout=left()))
    eventually(lambda: check(topic not in a.list_topics(timeout=left()).topics, "topic still listed after delete"))


def produce_consume():
    topic = PREFIX + "-pc"
    create(admin(), topic, 3)
    want = {}
    errors = []
    for codec in CODECS:
        p = Producer(conf(compression_type=codec, linger_ms=5))
        for i in range(10):
            key = "key-%s-%d" % (codec, i) if i % 2 == 0 else None
            value = "value-%s-%d" % (codec, i)
            hdrs = [("h-index", str(i).encode()), ("h-codec", codec.encode())]
            p.produce(topic, value=value.encode(), key=None if key is None else key.encode(), headers=hdrs,
                      on_delivery=lambda err, msg: err and errors.append(err))
            want[value] = (key, [("h-index", str(i)), ("h-codec", codec)])
        check(p.flush(left()) == 0, "codec %s: records left unflushed" % codec)
        check(not errors, "codec %s: delivery errors %s" % (codec, errors))
    got = read_all(topic, len(want))
    seen = set()
    for m in got:
        v = s(m.value())
        check(v not in seen, "value %s consumed twice" % v)
        seen.add(v)
        check(v in want, "unexpected value %s" % v)
        key, hdrs = want[v]
        check(s(m.key()) == key, "value %s: key %r, want %r" % (v, s(m.key()), key))
        gh = [(k, s(x)) for k, x in (m.headers() or [])]
        check(gh == hdrs, "value %s: headers %s, want %s" % (v, gh, hdrs))
    check(len(got) == len(want), "consumed %d, produced %d" % (len(got), len(want)))


def consume_timestamp():
    topic = PREFIX + "-ts"
    create(admin(), topic, 1)
    base = int(time.time() * 1000) - 60000
    p = Producer(conf())
    for i in range(10):
        p.produce(topic, value=("ts-%d" % i).encode(), partition=0, timestamp=base + i * 1000)
    check(p.flush(left()) == 0, "records left unflushed")
    at = base + 5000
    c = Consumer(conf(group_id=PREFIX + "-ts-reader", enable_auto_commit=False))
    try:
        for q in (at, at - 500):
            o = c.offsets_for_times([TopicPartition(topic, 0, q)], timeout=left())[0]
            check(o.error is None and o.offset == 5, "offset for timestamp base+%d = %s, want 5" % (q - base, o))
        c.assign([TopicPartition(topic, 0, 5)])
        m = None
        while m is None and time.time() < deadline:
            m = c.poll(0.2)
            if m is not None and m.error():
                raise KafkaException(m.error())
        check(m is not None, "nothing consumed from timestamp")
        ts = m.timestamp()[1]
        check(m.offset() == 5 and s(m.value()) == "ts-5" and ts == at,
              "first record from timestamp: offset %d value %s ts %d, want 5 ts-5 %d" % (m.offset(), s(m.value()), ts, at))
    finally:
        c.close()


def check_contiguous(got, prefix, n):
    got = sorted(got, key=lambda m: m.offset())
    check(len(got) == n, "consumed %d records, want %d" % (len(got), n))
    for i, m in enumerate(got):
        check(m.offset() == i and s(m.value()) == "%s-%d" % (prefix, i),
              "offset %d holds %s, want %d holding %s-%d" % (m.offset(), s(m.value()), i, prefix, i))


def idempotent():
    topic = PREFIX + "-idem"
    create(admin(), topic, 1)
    errors = []
    p = Producer(conf(enable_idempotence=True, acks="all", linger_ms=1))
    for i in range(200):
        p.produce(topic, value=("idem-%d" % i).encode(), on_delivery=lambda err, msg: err and errors.append(err))
    check(p.flush(left()) == 0, "records left unflushed")
    check(not errors, "delivery errors %s" % errors[:3])
    check_contiguous(read_all(topic, 200), "idem", 200)


def consumer_group():
    topic = group = PREFIX + "-grp"
    create(admin(), topic, 6)
    p = Producer(conf())
    for i in range(60):
        p.produce(topic, value=("g-%d" % i).encode(), partition=i % 6)
    check(p.flush(left()) == 0, "records left unflushed")
    seen = set()

    class Member:
        def __init__(self):
            self.assigned = set()
            self.c = Consumer(conf(group_id=group, enable_auto_commit=False, auto_offset_reset="earliest"))
            self.c.subscribe([topic], on_assign=self.on_assign, on_revoke=self.on_revoke, on_lost=self.on_revoke)

        def on_assign(self, c, ps):
            self.assigned |= {x.partition for x in ps}

        def on_revoke(self, c, ps):
            try:
                c.commit(asynchronous=False)
            except KafkaException:
                pass  # nothing consumed yet: no offsets to commit
            self.assigned -= {x.partition for x in ps}

        def poll(self):
            m = self.c.poll(0.05)
            if m is not None and not m.error():
                seen.add(s(m.value()))
                self.c.commit(message=m, asynchronous=False)

        def close(self):
            self.c.close()

    def until(members, cond, what):
        while time.time() < deadline:
            for m in members:
                m.poll()
            if cond():
                return
        raise Check(what())

    ms = [Member() for _ in range(3)]
    try:
        until(ms, lambda: all(len(m.assigned) == 2 for m in ms),
              lambda: "assignment %s, want 2 partitions each" % [len(m.assigned) for m in ms])
        ms.pop().close()
        until(ms, lambda: all(len(m.assigned) == 3 for m in ms) and len(seen) >= 60,
              lambda: "after a member left: assignment %s, consumed %d of 60" % ([len(m.assigned) for m in ms], len(seen)))
    finally:
        for m in ms:
            m.close()
    for i in range(6):
        p.produce(topic, value=("after-%d" % i).encode(), partition=i)
    check(p.flush(left()) == 0, "records left unflushed")
    seen.clear()
    ms = [Member()]
    try:
        until(ms, lambda: len(seen) >= 6 or any(not v.startswith("after-") for v in seen),
              lambda: "resumed member read %d of 6 new records" % len(seen))
        old = [v for v in seen if not v.startswith("after-")]
        check(not old, "resumed member re-read %s: committed offsets not used" % old[:3])
    finally:
        ms[0].close()


def transactions():
    topic = PREFIX + "-txn"
    create(admin(), topic, 1)
    p = Producer(conf(transactional_id=PREFIX + "-tx"))
    p.init_transactions(left())
    for step in ("c1", "a", "c2"):
        p.begin_transaction()
        for i in range(5):
            p.produce(topic, value=("%s-%d" % (step, i)).encode())
        if step == "a":
            p.flush(left())
            p.abort_transaction(left())
        else:
            p.commit_transaction(left())
    committed = [s(m.value()) for m in read_all(topic, 10, isolation_level="read_committed")]
    want = ["%s-%d" % (x, i) for x in ("c1", "c2") for i in range(5)]
    check(committed == want, "read_committed saw %s, want %s" % (committed, want))
    n = len(read_all(topic, 15, isolation_level="read_uncommitted"))
    check(n == 15, "read_uncommitted saw %d, want 15" % n)
    tp = TopicPartition(topic, 0)
    a = admin()  # the futures only complete while their client lives
    end = wait(a.list_offsets({tp: OffsetSpec.latest()}))[tp].offset
    check(end == 18, "end offset %d, want 18" % end)


def admin_scenario():
    topic = PREFIX + "-adm"
    a = admin()
    create(a, topic, 1)
    eventually(lambda: check(topic_config(a, topic, "cleanup.policy") == "delete",
                             "cleanup.policy = %s" % topic_config(a, topic, "cleanup.policy")))
    dc = a.describe_cluster().result(timeout=left())
    check(dc.cluster_id and dc.nodes, "describe cluster: id %r, %d nodes" % (dc.cluster_id, len(dc.nodes or [])))
    br = ConfigResource(ResourceType.BROKER, str(dc.nodes[0].id))
    check(len(wait(a.describe_configs([br]))[br]) > 0, "broker configs empty")
    wait(a.create_partitions([NewPartitions(topic, 3)]))
    eventually(lambda: check(len(a.list_topics(topic, timeout=left()).topics[topic].partitions) == 3,
                             "want 3 partitions after create partitions"))
    p = Producer(conf())
    for i in range(10):
        p.produce(topic, value=str(i).encode(), partition=0)
    check(p.flush(left()) == 0, "records left unflushed")
    tp = TopicPartition(topic, 0)

    def offset(spec):
        return wait(a.list_offsets({tp: spec}))[tp].offset
    e, l = offset(OffsetSpec.earliest()), offset(OffsetSpec.latest())
    check(e == 0 and l == 10, "earliest %d latest %d, want 0 and 10" % (e, l))
    res = wait(a.delete_records([TopicPartition(topic, 0, 4)]))
    low = list(res.values())[0].low_watermark
    check(low == 4, "delete records: low watermark %d, want 4" % low)
    e = offset(OffsetSpec.earliest())
    check(e == 4, "earliest after delete records %d, want 4" % e)


# scenario -> (bootstrap, security.protocol, SASL mechanism or None, the value written and read back)
SECURE = {
    "sasl_plain": (SASL_BOOTSTRAP, "SASL_PLAINTEXT", "PLAIN", "sasl"),
    "sasl_scram": (SASL_BOOTSTRAP, "SASL_PLAINTEXT", "SCRAM-SHA-256", "sasl"),
    "ssl": (SSL_BOOTSTRAP, "SSL", None, "ssl"),
    "sasl_ssl": (SASL_SSL_BOOTSTRAP, "SASL_SSL", "SCRAM-SHA-512", "sasl_ssl"),
}


def secure(scenario):
    """One record through the scenario's listener, then a client that must be refused: a wrong
    password, or (ssl) a client that trusts no CA of ours."""
    bootstrap, protocol, mech, value = SECURE[scenario]
    check(bootstrap, "no bootstrap for %s given" % scenario)
    topic = PREFIX + "-" + scenario.replace("_", "-")
    sc = {"bootstrap_servers": bootstrap, "security_protocol": protocol}
    if mech:
        sc.update(sasl_mechanism=mech, sasl_username=USER, sasl_password=PASS)
    if protocol.endswith("SSL"):
        sc["ssl_ca_location"] = CA_FILE
    create(admin(**sc), topic, 1)
    p = Producer(conf(**sc))
    p.produce(topic, value=value.encode())
    check(p.flush(left()) == 0, "record left unflushed")
    got = read_all(topic, 1, **sc)
    check(s(got[0].value()) == value, "read %s back" % s(got[0].value()))
    errors = []
    if mech:
        bad, want = conf(**dict(sc, sasl_password="wrong-" + PASS)), "auth"
    else:
        # other-ca.pem (scripts/interop-tls.sh) is a CA that signed nothing of the broker's.
        bad, want = conf(**dict(sc, ssl_ca_location=os.path.join(os.path.dirname(CA_FILE), "other-ca.pem"))), "ssl"
    bad["error_cb"] = errors.append
    a = AdminClient(bad)
    try:
        a.list_topics(timeout=10)
    except KafkaException as e:
        a.poll(1)  # serves error_cb
        # librdkafka reports the failed authentication or handshake through error_cb and the call
        # as a transport failure.
        check(any(want in str(x).lower() for x in errors + [e]),
              "refused client: %s (errors %s), want an %s error" % (e, errors[:3], want))
        return
    raise Check("a wrong password was accepted" if mech else "a client that does not trust the CA got metadata")


def share_group():
    """Two ShareConsumers of one share group, one acknowledging implicitly and one explicitly,
    polled in turn from this thread (a ShareConsumer is not thread-safe), read P-share together:
    every record arrives once."""
    import confluent_kafka
    if not hasattr(confluent_kafka, "ShareConsumer"):
        raise Skip("confluent-kafka-python %s (librdkafka %s) has no share consumer"
                   % (confluent_kafka.version()[0], confluent_kafka.libversion()[0]))
    topic = group = PREFIX + "-share"
    a = admin()
    create(a, topic, 3)
    # Share groups start at the latest offset unless the group config says earliest.
    r = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    wait(a.incremental_alter_configs([r]))
    p = Producer(conf())
    for i in range(60):
        p.produce(topic, value=("s-%d" % i).encode(), partition=i % 3)
    check(p.flush(left()) == 0, "records left unflushed")
    seen = {}
    members = []
    try:
        for mode in ("implicit", "explicit"):
            c = confluent_kafka.ShareConsumer(conf(group_id=group, share_acknowledgement_mode=mode))
            c.subscribe([topic])
            members.append((mode, c))
        while len(seen) < 60 and time.time() < deadline:
            for mode, c in members:
                for m in c.poll(0.1):
                    if m.error():
                        continue
                    seen[s(m.value())] = seen.get(s(m.value()), 0) + 1
                    if mode == "explicit":
                        c.acknowledge(m)
                if mode == "explicit":
                    c.commit_sync(left())
    finally:
        for _, c in members:
            c.close()
    check(len(seen) >= 60, "share group read %d of 60 records" % len(seen))
    for i in range(60):
        n = seen.get("s-%d" % i, 0)
        check(n == 1, "record s-%d delivered %d times, want once" % (i, n))


SCENARIOS = {
    "metadata": metadata, "topic_admin": topic_admin, "produce_consume": produce_consume,
    "consume_timestamp": consume_timestamp, "idempotent": idempotent, "consumer_group": consumer_group,
    "transactions": transactions, "admin": admin_scenario, "share_group": share_group,
    "sasl_plain": lambda: secure("sasl_plain"), "sasl_scram": lambda: secure("sasl_scram"),
    "ssl": lambda: secure("ssl"), "sasl_ssl": lambda: secure("sasl_ssl"),
}


def main():
    global deadline
    for sc in sys.argv[1:]:
        start = time.time()
        deadline = start + TIMEOUT - 2
        status, detail = "pass", ""
        try:
            fn = SCENARIOS.get(sc)
            if fn is None:
                raise Skip("python driver has no scenario %s" % sc)
            fn()
        except Skip as e:
            status, detail = "skip", str(e)
        except Exception as e:  # every failure becomes a cell, never a crash of the run
            status, detail = "fail", "%s: %s" % (type(e).__name__, e)
        print(json.dumps({"scenario": sc, "status": status, "detail": detail,
                          "duration_ms": int((time.time() - start) * 1000)}), flush=True)


if __name__ == "__main__":
    main()
