"""Gregor's interop driver for kcat (librdkafka's command-line client, from Debian).

Runs the scenarios of interop/SCENARIOS.md named on the command line by invoking the kcat
binary, and prints one JSON line per scenario on stdout. Standard library only. kcat has no
admin API, so topics come from auto-creation (one partition).
"""
import json
import os
import re
import subprocess
import sys
import time

BOOTSTRAP = os.environ.get("INTEROP_BOOTSTRAP", "127.0.0.1:28092")
SASL_BOOTSTRAP = os.environ.get("INTEROP_SASL_BOOTSTRAP") or BOOTSTRAP
SSL_BOOTSTRAP = os.environ.get("INTEROP_SSL_BOOTSTRAP", "")
SASL_SSL_BOOTSTRAP = os.environ.get("INTEROP_SASL_SSL_BOOTSTRAP", "")
CA_FILE = os.environ.get("INTEROP_CA_FILE", "")
PREFIX = os.environ.get("INTEROP_PREFIX", "it-kcat")
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
    "consumer_group": lacks("way to observe a balanced consumer's assignment or drive one member's leave"),
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
