"""Gregor's interop driver for kcat (librdkafka's command-line client, from Debian).

Runs the scenarios of interop/SCENARIOS.md named on the command line by invoking the kcat
binary, and prints one JSON line per scenario on stdout. Standard library only. kcat has no
admin API, so topics come from auto-creation (one partition), except the consumer group's
six-partition topic, which create_topic makes with one CreateTopics request on the wire.
"""
import collections
import json
import os
import queue
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

BOOTSTRAP = os.environ.get("INTEROP_BOOTSTRAP", "127.0.0.1:28092")
SASL_BOOTSTRAP = os.environ.get("INTEROP_SASL_BOOTSTRAP") or BOOTSTRAP
SSL_BOOTSTRAP = os.environ.get("INTEROP_SSL_BOOTSTRAP", "")
SASL_SSL_BOOTSTRAP = os.environ.get("INTEROP_SASL_SSL_BOOTSTRAP", "")
CA_FILE = os.environ.get("INTEROP_CA_FILE", "")
PREFIX = os.environ.get("INTEROP_PREFIX", "it-kcat")
REPLICATION_FACTOR = int(os.environ.get("INTEROP_REPLICATION_FACTOR", "1"))
USER = os.environ.get("INTEROP_SASL_USER", "interop")
PASS = os.environ.get("INTEROP_SASL_PASSWORD", "interop-secret")
TIMEOUT = int(os.environ.get("INTEROP_SCENARIO_TIMEOUT_MS", "90000")) / 1000.0
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]

deadline = 0.0


class Skip(Exception):
    pass


class Check(Exception):
    pass


def check(ok, msg):
    if not ok:
        raise Check(msg)


def kcat(args, stdin=None, bootstrap=None, extra=()):
    cmd = ["kcat", "-b", bootstrap or BOOTSTRAP, "-X", "client.id=interop-kcat"] + list(extra) + list(args)
    left = max(1.0, deadline - time.time())
    p = subprocess.run(cmd, input=stdin, capture_output=True, timeout=left)
    if p.returncode != 0:
        raise Check("%s exited %d: %s" % (" ".join(args[:4]), p.returncode, p.stderr.decode(errors="replace").strip()[-400:]))
    return p.stdout.decode()


def produce(topic, lines, key=None, headers=(), extra=(), bootstrap=None):
    args = ["-P", "-t", topic, "-K", "\t"] + sum((["-H", "%s=%s" % h] for h in headers), [])
    kcat(args, stdin="".join(l + "\n" for l in lines).encode(), bootstrap=bootstrap, extra=extra)


def consume(topic, count, offset="beginning", extra=(), bootstrap=None):
    """Reads count records with -J (JSON envelope) starting at offset, every partition."""
    out = kcat(["-C", "-t", topic, "-o", offset, "-c", str(count), "-J", "-q"],
               bootstrap=bootstrap, extra=list(extra) + ["-X", "fetch.wait.max.ms=100"])
    recs = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    check(len(recs) >= count, "consumed %d of %d records" % (len(recs), count))
    return recs


def metadata():
    topic = PREFIX + "-meta"
    md = json.loads(kcat(["-L", "-J"]))
    check(len(md.get("brokers", [])) > 0, "metadata lists no brokers")
    produce(topic, ["meta"])  # auto-creates the topic
    md = json.loads(kcat(["-L", "-J", "-t", topic]))
    ts = [t for t in md["topics"] if t["topic"] == topic]
    check(ts and not ts[0].get("error"), "topic %s missing or in error: %s" % (topic, ts))
    check(len(ts[0]["partitions"]) >= 1 and all(p["leader"] >= 0 for p in ts[0]["partitions"]),
          "partitions without a leader: %s" % ts[0]["partitions"])


def produce_consume():
    topic = PREFIX + "-pc"
    want = {}
    for codec in CODECS:
        for i in range(10):
            key = "key-%s-%d" % (codec, i) if i % 2 == 0 else None
            value = "value-%s-%d" % (codec, i)
            hdrs = [("h-index", str(i)), ("h-codec", codec)]
            # kcat fixes headers per invocation, so each record is its own invocation.
            produce(topic, [(key + "\t" if key else "") + value], headers=hdrs, extra=["-z", codec])
            want[value] = (key, hdrs)
    got = consume(topic, len(want))
    seen = set()
    for r in got:
        v = r["payload"]
        check(v not in seen, "value %s consumed twice" % v)
        seen.add(v)
        check(v in want, "unexpected value %s" % v)
        key, hdrs = want[v]
        check(r["key"] == key, "value %s: key %r, want %r" % (v, r["key"], key))
        h = r.get("headers") or []
        gh = list(zip(h[0::2], h[1::2]))
        check(gh == hdrs, "value %s: headers %s, want %s" % (v, gh, hdrs))
    check(len(got) == len(want), "consumed %d, produced %d" % (len(got), len(want)))


def consume_timestamp():
    # kcat cannot set a record's timestamp: it takes those the broker stored and checks the
    # timestamp lookup and the start-at-timestamp consumer against them.
    topic = PREFIX + "-ts"
    for i in range(10):
        produce(topic, ["ts-%d" % i])
    recs = sorted(consume(topic, 10), key=lambda r: r["offset"])
    at = recs[5]["ts"]
    want = min(r["offset"] for r in recs if r["ts"] >= at)
    out = kcat(["-Q", "-t", "%s:0:%d" % (topic, at)])
    got = [l for l in out.splitlines() if "offset" in l]
    check(got and got[0].split("offset")[-1].strip().split()[0] == str(want),
          "kcat -Q for timestamp %d: %s, want offset %d" % (at, out.strip(), want))
    first = consume(topic, 1, offset="s@%d" % at)[0]
    check(first["offset"] == want and first["payload"] == recs[want]["payload"],
          "first record from timestamp: offset %d %s, want %d" % (first["offset"], first["payload"], want))


def idempotent():
    topic = PREFIX + "-idem"
    produce(topic, ["idem-%d" % i for i in range(200)], extra=["-X", "enable.idempotence=true", "-X", "acks=all"])
    got = sorted(consume(topic, 200), key=lambda r: r["offset"])
    check(len(got) == 200, "consumed %d, want 200" % len(got))
    for i, r in enumerate(got):
        check(r["offset"] == i and r["payload"] == "idem-%d" % i,
              "offset %d holds %s, want %d holding idem-%d" % (r["offset"], r["payload"], i, i))


def librdkafka_version():
    out = subprocess.run(["kcat", "-V"], capture_output=True).stdout.decode()
    m = re.search(r"librdkafka (?:version )?(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(x) for x in m.groups()) if m else (0, 0, 0)


def sasl(mech):
    v = librdkafka_version()
    if mech.startswith("SCRAM") and v < (2, 6, 1):
        # librdkafka before 2.6.1 repeats the client nonce in the SCRAM client-final message;
        # Kafka 4.x checks it strictly (RFC 5802) and refuses the proof (librdkafka PR 4895).
        raise Skip("kcat links librdkafka %s; SCRAM needs 2.6.1 or newer (nonce bug)" % ".".join(map(str, v)))
    secure("sasl_plain" if mech == "PLAIN" else "sasl_scram", SASL_BOOTSTRAP, "SASL_PLAINTEXT", mech, "sasl")


def ssl():
    secure("ssl", SSL_BOOTSTRAP, "SSL", None, "ssl")


def sasl_ssl():
    # SCRAM-SHA-512 as the scenario says where librdkafka's SCRAM works; PLAIN (still over TLS)
    # on the older librdkafka whose SCRAM nonce bug is described in sasl().
    mech = "SCRAM-SHA-512" if librdkafka_version() >= (2, 6, 1) else "PLAIN"
    secure("sasl_ssl", SASL_SSL_BOOTSTRAP, "SASL_SSL", mech, "sasl_ssl")


def secure(scenario, bootstrap, protocol, mech, value):
    """One record through the listener, then a client that must be refused: a wrong password, or
    (ssl) one that trusts only a CA that signed nothing of the broker's."""
    check(bootstrap, "no bootstrap for %s given" % scenario)
    topic = PREFIX + "-" + scenario.replace("_", "-")

    def x(pw, ca=CA_FILE):
        out = ["-X", "security.protocol=" + protocol]
        if mech:
            out += ["-X", "sasl.mechanisms=" + mech, "-X", "sasl.username=" + USER, "-X", "sasl.password=" + pw]
        if protocol.endswith("SSL"):
            out += ["-X", "ssl.ca.location=" + ca]
        return out
    produce(topic, [value], extra=x(PASS), bootstrap=bootstrap)
    got = consume(topic, 1, extra=x(PASS), bootstrap=bootstrap)
    check(got[0]["payload"] == value, "read %s back" % got[0]["payload"])
    bad, want = x("wrong-" + PASS), "auth"
    if not mech:
        bad, want = x(PASS, os.path.join(os.path.dirname(CA_FILE), "other-ca.pem")), "ssl"
    try:
        kcat(["-L", "-m", "10"], extra=bad, bootstrap=bootstrap)
    except Check as e:
        check(want in str(e).lower(), "refused client: %s, want an %s error" % (e, want))
        return
    raise Check("a wrong password was accepted" if mech else "a client that does not trust the CA got metadata")


def create_topic(topic, partitions):
    """Creates topic with one CreateTopics v2 request (INTEROP_REPLICATION_FACTOR, default 1) to the first
    bootstrap server, since kcat has no admin API; an existing topic is accepted when its
    metadata shows the same partition count. Waits until kcat's metadata shows every partition
    with a leader."""
    def string(x):
        b = x.encode()
        return struct.pack(">h", len(b)) + b

    body = (struct.pack(">i", 1) + string(topic) + struct.pack(">ihii", partitions, REPLICATION_FACTOR, 0, 0)
            + struct.pack(">i?", 10000, False))
    req = struct.pack(">hhi", 19, 2, 1) + string("interop-kcat") + body
    host, port = BOOTSTRAP.split(",")[0].strip().rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=max(1.0, deadline - time.time())) as c:
        c.sendall(struct.pack(">i", len(req)) + req)

        def read(n):
            buf = b""
            while len(buf) < n:
                chunk = c.recv(n - len(buf))
                check(chunk, "create topic %s: connection closed after %d of %d bytes" % (topic, len(buf), n))
                buf += chunk
            return buf
        size = struct.unpack(">i", read(4))[0]
        check(0 < size <= 1 << 20, "create topic %s: response size %d" % (topic, size))
        resp = read(size)
    # correlation id, throttle time, topics array of one: name, error code, error message.
    check(len(resp) >= 14 and struct.unpack(">i", resp[:4])[0] == 1 and struct.unpack(">i", resp[8:12])[0] == 1,
          "create topic %s: malformed response %s" % (topic, resp.hex()))
    nlen = struct.unpack(">h", resp[12:14])[0]
    check(0 <= nlen and len(resp) >= 16 + nlen, "create topic %s: malformed response %s" % (topic, resp.hex()))
    code = struct.unpack(">h", resp[14 + nlen:16 + nlen])[0]
    check(code in (0, 36), "create topic %s: error code %d (%s)" % (topic, code, resp[16 + nlen:].decode(errors="replace")))
    while True:
        md = json.loads(kcat(["-L", "-J", "-t", topic]))
        ts = [t for t in md.get("topics", []) if t["topic"] == topic and not t.get("error")]
        ps = ts[0]["partitions"] if ts else []
        if len(ps) == partitions and all(p["leader"] >= 0 for p in ps):
            return
        check(not (code == 36 and ts and len(ps) != partitions),
              "topic %s exists with %d partitions, want %d" % (topic, len(ps), partitions))
        check(time.time() < deadline, "topic %s: metadata shows %d partitions with leaders, want %d" %
              (topic, len(ps), partitions))
        time.sleep(0.1)  # metadata propagates asynchronously; kcat -L has nothing to wait on


class Member:
    """One `kcat -G` balanced consumer. stderr is merged into stdout so its rebalance lines and
    the records it prints arrive in the order kcat wrote them; a reader thread turns each line
    into an event on the shared queue."""
    RECORD = re.compile(r"^R (\d+) (\d+) (.*)$")
    REBALANCE = re.compile(r"^% Group \S+ rebalanced \(memberid ([^)]*)\): (assigned|revoked): (.*)$")
    EOF = re.compile(r"^% Reached end of topic \S+ \[(\d+)\] at offset (\d+)")

    def __init__(self, name, group, topic, events):
        self.name = name
        self.assigned = set()
        self.records = []      # (partition, offset, value) in the order printed
        self.foreign = []      # records of partitions not assigned to this member when printed
        self.ends = {}         # partition -> offset of the last "Reached end" line
        self.errors = []
        self.member_id = ""
        cmd = ["kcat", "-b", BOOTSTRAP, "-X", "client.id=interop-kcat-" + name, "-u",
               "-X", "auto.offset.reset=earliest", "-X", "heartbeat.interval.ms=500",
               "-X", "fetch.wait.max.ms=100", "-f", "R %p %o %s\\n", "-G", group, topic]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        threading.Thread(target=self._read, args=(events,), daemon=True).start()

    def _read(self, events):
        for raw in self.proc.stdout:
            events.put((self, raw.decode(errors="replace").rstrip("\n")))
        events.put((self, None))

    def apply(self, line):
        if line is None:
            return
        m = self.RECORD.match(line)
        if m:
            rec = (int(m.group(1)), int(m.group(2)), m.group(3))
            self.records.append(rec)
            if rec[0] not in self.assigned:
                self.foreign.append(rec)
            return
        m = self.REBALANCE.match(line)
        if m:
            self.member_id = m.group(1)
            parts = {int(x) for x in re.findall(r"\[(\d+)\]", m.group(3))}
            self.assigned = parts if m.group(2) == "assigned" else self.assigned - parts
            return
        m = self.EOF.match(line)
        if m:
            self.ends[int(m.group(1))] = int(m.group(2))
        elif "ERROR" in line or "FAIL" in line:
            self.errors.append(line)

    def leave(self):
        """SIGINT makes kcat close its consumer: it commits the offsets it consumed and sends
        LeaveGroup, as a clean shutdown does."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            rc = self.proc.wait(timeout=max(1.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            raise Check("member %s did not exit within the scenario's time after SIGINT" % self.name)
        check(rc == 0, "member %s exited %d after SIGINT: %s" % (self.name, rc, self.errors[-3:]))

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def consumer_group():
    topic = group = PREFIX + "-grp"
    parts = 6
    create_topic(topic, parts)
    for p in range(parts):
        produce(topic, ["g-%d" % i for i in range(60) if i % parts == p], extra=["-p", str(p)])
    events = queue.Queue()
    members = []

    def until(cond, what):
        while not cond():
            left = deadline - time.time()
            if left <= 0:
                raise Check(what())
            try:
                m, line = events.get(timeout=left)
            except queue.Empty:
                continue
            m.apply(line)
            if line is None and m in live:
                raise Check("member %s exited unexpectedly (%s): %s" % (m.name, m.proc.wait(), m.errors[-3:]))

    def balanced(ms, each):
        sets = [m.assigned for m in ms]
        return all(len(s) == each for s in sets) and set().union(*sets) == set(range(parts))

    def assignment():
        return ", ".join("%s=%s" % (m.name, sorted(m.assigned)) for m in live)

    def consumed():
        return [r for m in members for r in m.records]

    def probe(tag):
        """One record per partition, which must be printed by the member that owns it."""
        for p in range(parts):
            produce(topic, ["%s-%d" % (tag, p)], extra=["-p", str(p)])
        want = {"%s-%d" % (tag, p) for p in range(parts)}
        until(lambda: want <= {r[2] for r in consumed()},
              lambda: "%s: read %s of %s (assignment %s)" % (tag, sorted(want & {r[2] for r in consumed()}), sorted(want), assignment()))
        for m in live:
            for p, _, v in m.records:
                if v in want:
                    check(p in m.assigned and v == "%s-%d" % (tag, p),
                          "%s: member %s printed %s of partition %d it does not own (%s)" % (tag, m.name, v, p, assignment()))

    live = []
    try:
        for name in ("a", "b", "c"):
            live.append(Member(name, group, topic, events))
        members = list(live)
        until(lambda: balanced(live, 2), lambda: "assignment %s, want 2 disjoint partitions each" % assignment())
        probe("probe1")
        gone = live.pop()
        gone.leave()
        until(lambda: balanced(live, 3),
              lambda: "after %s left: assignment %s, want 3 disjoint partitions each" % (gone.name, assignment()))
        check(gone.assigned <= set().union(*(m.assigned for m in live)), "partitions of %s did not move" % gone.name)
        probe("probe2")
        want = {"g-%d" % i for i in range(60)}
        until(lambda: want <= {r[2] for r in consumed()},
              lambda: "read %d of the 60 records" % len(want & {r[2] for r in consumed()}))
        for m in members:
            check(not m.foreign, "member %s printed records of partitions it did not own: %s" % (m.name, m.foreign[:3]))
        dup = sorted(k for k, n in collections.Counter(r[:2] for r in consumed()).items() if n > 1)
        check(not dup, "records read twice (partition, offset): %s" % dup[:5])
        while live:
            live.pop().leave()
        for p in range(parts):
            produce(topic, ["after-%d" % p], extra=["-p", str(p)])
        ends = {p: 13 for p in range(parts)}  # 10 records, two probes and the new one each
        r = Member("resume", group, topic, events)
        live.append(r)
        members = [r]
        until(lambda: r.ends == ends or any(not v.startswith("after-") for _, _, v in r.records),
              lambda: "resumed member read %s, reached the end of %s, want %s" % (r.records, r.ends, ends))
        got = sorted(v for _, _, v in r.records)
        check(got == sorted("after-%d" % p for p in range(parts)),
              "resumed member read %s, want after-0..5 only: committed offsets not used" % got[:8])
        live.pop().leave()
    finally:
        for m in live:
            m.kill()


def lacks(what):
    def f():
        raise Skip("kcat has no " + what)
    return f


SCENARIOS = {
    "metadata": metadata, "produce_consume": produce_consume, "consume_timestamp": consume_timestamp,
    "idempotent": idempotent, "sasl_plain": lambda: sasl("PLAIN"), "sasl_scram": lambda: sasl("SCRAM-SHA-256"),
    "ssl": ssl, "sasl_ssl": sasl_ssl,
    "topic_admin": lacks("admin API (create/alter/delete topic)"),
    "admin": lacks("admin API (configs, partitions, delete records)"),
    "consumer_group": consumer_group,
    "transactions": lacks("way to abort a transaction (it commits when its input ends)"),
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
                raise Skip("kcat driver has no scenario %s" % sc)
            fn()
        except Skip as e:
            status, detail = "skip", str(e)
        except Exception as e:
            status, detail = "fail", "%s: %s" % (type(e).__name__, e)
        print(json.dumps({"scenario": sc, "status": status, "detail": detail,
                          "duration_ms": int((time.time() - start) * 1000)}), flush=True)


if __name__ == "__main__":
    main()
