package gregor.interop;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Gregor's interop driver for Apache Kafka's Java client: runs the scenarios of
 * interop/SCENARIOS.md named on the command line and prints one JSON line per scenario.
 */
public final class Driver {
    static final String BOOTSTRAP = env("INTEROP_BOOTSTRAP", "127.0.0.1:28092");
    static final String SASL_BOOTSTRAP = env("INTEROP_SASL_BOOTSTRAP", BOOTSTRAP);
    static final String SSL_BOOTSTRAP = env("INTEROP_SSL_BOOTSTRAP", "");
    static final String SASL_SSL_BOOTSTRAP = env("INTEROP_SASL_SSL_BOOTSTRAP", "");
    static final String CA_FILE = env("INTEROP_CA_FILE", "");
    static final String PREFIX = env("INTEROP_PREFIX", "it-java");
    static final short REPLICATION_FACTOR = Short.parseShort(env("INTEROP_REPLICATION_FACTOR", "1"));
    static final String USER = env("INTEROP_SASL_USER", "interop");
    static final String PASS = env("INTEROP_SASL_PASSWORD", "interop-secret");
    static final long TIMEOUT_MS = Long.parseLong(env("INTEROP_SCENARIO_TIMEOUT_MS", "90000"));
    static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};

    static long deadline;

    static String env(String k, String d) {
        String v = System.getenv(k);
        return v == null || v.isEmpty() ? d : v;
    }

    /** Thrown when the Java client cannot express a scenario. */
    static final class Skip extends RuntimeException {
        Skip(String m) { super(m); }
    }

    static final class Check extends RuntimeException {
        Check(String m) { super(m); }
    }

    static void check(boolean ok, String fmt, Object... args) {
        if (!ok) throw new Check(String.format(fmt, args));
    }

    public static void main(String[] args) {
        for (String sc : args) {
            long start = System.currentTimeMillis();
            deadline = start + TIMEOUT_MS - 2000;
            String status = "pass", detail = "";
            try {
                run(sc);
            } catch (Skip s) {
                status = "skip";
                detail = s.getMessage();
            } catch (Throwable t) {
                status = "fail";
                StringBuilder d = new StringBuilder();
                for (Throwable c = t; c != null; c = c.getCause()) {
                    if (c instanceof java.util.concurrent.ExecutionException) continue;
                    if (d.length() > 0) d.append(" <- ");
                    d.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
                }
                detail = d.toString();
            }
            System.out.println("{\"scenario\":" + q(sc) + ",\"status\":" + q(status) + ",\"detail\":" + q(detail)
                    + ",\"duration_ms\":" + (System.currentTimeMillis() - start) + "}");
            System.out.flush();
        }
    }

    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : (s == null ? "" : s).toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static void run(String sc) throws Exception {
        switch (sc) {
            case "metadata": metadata(); break;
            case "topic_admin": topicAdmin(); break;
            case "produce_consume": produceConsume(); break;
            case "consume_timestamp": consumeTimestamp(); break;
            case "idempotent": idempotent(); break;
            case "consumer_group": Groups.run(); break;
            case "share_group": Shares.run(); break;
            case "transactions": transactions(); break;
            case "admin": admin(); break;
            case "sasl_plain": secure(sc, "sasl"); break;
            case "sasl_scram": secure(sc, "sasl"); break;
            case "ssl": secure(sc, "ssl"); break;
            case "sasl_ssl": secure(sc, "sasl_ssl"); break;
            default: throw new Skip("java driver has no scenario " + sc);
        }
    }

    static long left() {
        return Math.max(1000, deadline - System.currentTimeMillis());
    }

    static Properties base(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", "interop-java");
        return p;
    }

    static Admin admin(Properties extra) {
        Properties p = base(BOOTSTRAP);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) Math.min(30000, TIMEOUT_MS));
        p.putAll(extra);
        return Admin.create(p);
    }

    static KafkaProducer<byte[], byte[]> producer(Properties extra) {
        Properties p = base(BOOTSTRAP);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    static KafkaConsumer<byte[], byte[]> consumer(Properties extra) {
        Properties p = base(BOOTSTRAP);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.putAll(extra);
        return new KafkaConsumer<>(p);
    }

    static Properties props(Object... kv) {
        Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) p.put(kv[i], kv[i + 1]);
        return p;
    }

    static byte[] b(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    static String s(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    static void create(Admin a, String topic, int parts, Map<String, String> configs) throws Exception {
        NewTopic t = new NewTopic(topic, parts, REPLICATION_FACTOR);
        if (configs != null) t.configs(configs);
        a.createTopics(List.of(t)).all().get(left(), TimeUnit.MILLISECONDS);
    }

    static TopicDescription describe(Admin a, String topic) throws Exception {
        return a.describeTopics(List.of(topic)).allTopicNames().get(left(), TimeUnit.MILLISECONDS).get(topic);
    }

    /** Polls until check passes or the scenario's time runs out; rethrows the last failure. */
    static void eventually(ThrowingCheck c) throws Exception {
        while (true) {
            try {
                c.run();
                return;
            } catch (Exception e) {
                if (System.currentTimeMillis() > deadline) throw e;
                Thread.sleep(200);
            }
        }
    }

    interface ThrowingCheck {
        void run() throws Exception;
    }

    static void metadata() throws Exception {
        String topic = PREFIX + "-meta";
        try (Admin a = admin(new Properties())) {
            DescribeClusterResult dc = a.describeCluster();
            check(!dc.nodes().get(left(), TimeUnit.MILLISECONDS).isEmpty(), "no brokers");
            create(a, topic, 3, null);
            eventually(() -> {
                TopicDescription d = describe(a, topic);
                check(d.partitions().size() == 3, "%d partitions, want 3", d.partitions().size());
                d.partitions().forEach(p -> check(p.leader() != null && p.leader().id() >= 0, "partition %d has no leader", p.partition()));
            });
        }
        try (KafkaConsumer<byte[], byte[]> c = consumer(new Properties())) {
            check(c.partitionsFor(topic, Duration.ofMillis(left())).size() == 3, "consumer metadata: want 3 partitions");
        }
    }

    static String topicConfig(Admin a, String topic, String key) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Config c = a.describeConfigs(List.of(r)).all().get(left(), TimeUnit.MILLISECONDS).get(r);
        ConfigEntry e = c.get(key);
        check(e != null, "describe configs of %s: no %s", topic, key);
        return e.value();
    }

    static void topicAdmin() throws Exception {
        String topic = PREFIX + "-topic";
        try (Admin a = admin(new Properties())) {
            create(a, topic, 3, Map.of("retention.ms", "3600000"));
            eventually(() -> check(describe(a, topic).partitions().size() == 3, "want 3 partitions"));
            eventually(() -> {
                String v = topicConfig(a, topic, "retention.ms");
                check("3600000".equals(v), "retention.ms after create = %s", v);
            });
            ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            a.incrementalAlterConfigs(Map.of(r, List.of(new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"),
                    AlterConfigOp.OpType.SET)))).all().get(left(), TimeUnit.MILLISECONDS);
            eventually(() -> {
                String v = topicConfig(a, topic, "retention.ms");
                check("7200000".equals(v), "retention.ms after alter = %s", v);
            });
            a.deleteTopics(List.of(topic)).all().get(left(), TimeUnit.MILLISECONDS);
            eventually(() -> check(!a.listTopics().names().get(left(), TimeUnit.MILLISECONDS).contains(topic),
                    "topic still listed after delete"));
        }
    }

    /** Reads every partition of topic from the start without a group until want records arrived. */
    static List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int want, Properties extra) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = consumer(extra)) {
            List<TopicPartition> tps = new ArrayList<>();
            c.partitionsFor(topic, Duration.ofMillis(left())).forEach(p -> tps.add(new TopicPartition(topic, p.partition())));
            c.assign(tps);
            c.seekToBeginning(tps);
            while (out.size() < want && System.currentTimeMillis() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        check(out.size() >= want, "consumed %d of %d records", out.size(), want);
        return out;
    }

    static String headers(Iterable<Header> hs) {
        StringBuilder b = new StringBuilder("[");
        for (Header h : hs) b.append("[").append(h.key()).append(" ").append(s(h.value())).append("]");
        return b.append("]").toString();
    }

    static void produceConsume() throws Exception {
        String topic = PREFIX + "-pc";
        try (Admin a = admin(new Properties())) {
            create(a, topic, 3, null);
        }
        Map<String, String[]> want = new HashMap<>(); // value -> {key, headers}
        for (String codec : CODECS) {
            try (KafkaProducer<byte[], byte[]> p = producer(props(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec))) {
                for (int i = 0; i < 10; i++) {
                    String key = i % 2 == 0 ? "key-" + codec + "-" + i : null;
                    String value = "value-" + codec + "-" + i;
                    ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, b(key), b(value));
                    r.headers().add("h-index", b(String.valueOf(i))).add("h-codec", b(codec));
                    p.send(r);
                    want.put(value, new String[]{key, "[[h-index " + i + "][h-codec " + codec + "]]"});
                }
                p.flush();
            }
        }
        List<ConsumerRecord<byte[], byte[]>> got = readAll(topic, want.size(), new Properties());
        Map<String, Boolean> seen = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : got) {
            String v = s(r.value());
            check(seen.put(v, true) == null, "value %s consumed twice", v);
            String[] w = want.get(v);
            check(w != null, "unexpected value %s", v);
            check(w[0] == null ? r.key() == null : w[0].equals(s(r.key())), "value %s: key %s, want %s", v, s(r.key()), w[0]);
            check(w[1].equals(headers(r.headers())), "value %s: headers %s, want %s", v, headers(r.headers()), w[1]);
        }
        check(got.size() == want.size(), "consumed %d, produced %d", got.size(), want.size());
    }

    static void consumeTimestamp() throws Exception {
        String topic = PREFIX + "-ts";
        try (Admin a = admin(new Properties())) {
            create(a, topic, 1, null);
        }
        long base = System.currentTimeMillis() - 60000;
        try (KafkaProducer<byte[], byte[]> p = producer(new Properties())) {
            for (int i = 0; i < 10; i++) p.send(new ProducerRecord<>(topic, 0, base + i * 1000L, null, b("ts-" + i)));
            p.flush();
        }
        TopicPartition tp = new TopicPartition(topic, 0);
        long at = base + 5000;
        try (KafkaConsumer<byte[], byte[]> c = consumer(new Properties())) {
            for (long qts : new long[]{at, at - 500}) {
                Map<TopicPartition, OffsetAndTimestamp> m = c.offsetsForTimes(Map.of(tp, qts), Duration.ofMillis(left()));
                OffsetAndTimestamp o = m.get(tp);
                check(o != null && o.offset() == 5, "offset for timestamp base+%d = %s, want 5", qts - base, o);
            }
            OffsetAndTimestamp o = c.offsetsForTimes(Map.of(tp, at), Duration.ofMillis(left())).get(tp);
            c.assign(List.of(tp));
            c.seek(tp, o.offset());
            List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
            while (got.isEmpty() && System.currentTimeMillis() < deadline) c.poll(Duration.ofMillis(200)).forEach(got::add);
            check(!got.isEmpty(), "nothing consumed from timestamp");
            ConsumerRecord<byte[], byte[]> r = got.get(0);
            check(r.offset() == 5 && "ts-5".equals(s(r.value())) && r.timestamp() == at,
                    "first record from timestamp: offset %d value %s ts %d, want 5 ts-5 %d", r.offset(), s(r.value()), r.timestamp(), at);
        }
    }

    static void idempotent() throws Exception {
        String topic = PREFIX + "-idem";
        try (Admin a = admin(new Properties())) {
            create(a, topic, 1, null);
        }
        try (KafkaProducer<byte[], byte[]> p = producer(props(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5))) {
            List<java.util.concurrent.Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < 200; i++) fs.add(p.send(new ProducerRecord<>(topic, b("idem-" + i))));
            p.flush();
            for (java.util.concurrent.Future<?> f : fs) f.get(left(), TimeUnit.MILLISECONDS);
        }
        checkContiguous(readAll(topic, 200, new Properties()), "idem", 200);
    }

    static void checkContiguous(List<ConsumerRecord<byte[], byte[]>> got, String prefix, int n) {
        got.sort((x, y) -> Long.compare(x.offset(), y.offset()));
        check(got.size() == n, "consumed %d records, want %d", got.size(), n);
        for (int i = 0; i < n; i++) {
            ConsumerRecord<byte[], byte[]> r = got.get(i);
            check(r.offset() == i && (prefix + "-" + i).equals(s(r.value())), "offset %d holds %s, want %d holding %s-%d",
                    r.offset(), s(r.value()), i, prefix, i);
        }
    }

    static void transactions() throws Exception {
        String topic = PREFIX + "-txn";
        try (Admin a = admin(new Properties())) {
            create(a, topic, 1, null);
        }
        try (KafkaProducer<byte[], byte[]> p = producer(props(ProducerConfig.TRANSACTIONAL_ID_CONFIG, PREFIX + "-tx"))) {
            p.initTransactions();
            for (String step : new String[]{"c1", "a", "c2"}) {
                p.beginTransaction();
                for (int i = 0; i < 5; i++) p.send(new ProducerRecord<>(topic, b(step + "-" + i)));
                if (step.equals("a")) {
                    p.flush();
                    p.abortTransaction();
                } else {
                    p.commitTransaction();
                }
            }
        }
        List<String> committed = new ArrayList<>();
        readAll(topic, 10, props(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")).forEach(r -> committed.add(s(r.value())));
        List<String> want = new ArrayList<>();
        for (String p : new String[]{"c1", "c2"}) for (int i = 0; i < 5; i++) want.add(p + "-" + i);
        check(committed.equals(want), "read_committed saw %s, want %s", committed, want);
        int all = readAll(topic, 15, props(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted")).size();
        check(all == 15, "read_uncommitted saw %d records, want 15", all);
        try (Admin a = admin(new Properties())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            long end = a.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(left(), TimeUnit.MILLISECONDS).offset();
            check(end == 18, "end offset %d, want 18", end);
        }
    }

    static long listOffset(Admin a, TopicPartition tp, OffsetSpec spec) throws Exception {
        return a.listOffsets(Map.of(tp, spec)).partitionResult(tp).get(left(), TimeUnit.MILLISECONDS).offset();
    }

    static void admin() throws Exception {
        String topic = PREFIX + "-adm";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin a = admin(new Properties())) {
            create(a, topic, 1, null);
            eventually(() -> {
                String v = topicConfig(a, topic, "cleanup.policy");
                check("delete".equals(v), "cleanup.policy = %s", v);
            });
            DescribeClusterResult dc = a.describeCluster();
            String cid = dc.clusterId().get(left(), TimeUnit.MILLISECONDS);
            Collection<org.apache.kafka.common.Node> nodes = dc.nodes().get(left(), TimeUnit.MILLISECONDS);
            check(cid != null && !cid.isEmpty() && !nodes.isEmpty(), "describe cluster: id %s, %d nodes", cid, nodes.size());
            ConfigResource br = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(nodes.iterator().next().id()));
            Config bc = a.describeConfigs(List.of(br)).all().get(left(), TimeUnit.MILLISECONDS).get(br);
            check(bc != null && !bc.entries().isEmpty(), "broker configs empty");
            a.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get(left(), TimeUnit.MILLISECONDS);
            eventually(() -> check(describe(a, topic).partitions().size() == 3, "want 3 partitions after create partitions"));
            try (KafkaProducer<byte[], byte[]> p = producer(new Properties())) {
                for (int i = 0; i < 10; i++) p.send(new ProducerRecord<>(topic, 0, null, b(String.valueOf(i))));
                p.flush();
            }
            long e = listOffset(a, tp, OffsetSpec.earliest()), l = listOffset(a, tp, OffsetSpec.latest());
            check(e == 0 && l == 10, "earliest %d latest %d, want 0 and 10", e, l);
            long low = a.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(4))).lowWatermarks().get(tp)
                    .get(left(), TimeUnit.MILLISECONDS).lowWatermark();
            check(low == 4, "delete records: low watermark %d, want 4", low);
            e = listOffset(a, tp, OffsetSpec.earliest());
            check(e == 4, "earliest after delete records %d, want 4", e);
        }
    }

    /** The listener, protocol and mechanism (null for none) of each security scenario. */
    static Properties secureProps(String sc, String pass, String ca) {
        String bootstrap, protocol, mech;
        switch (sc) {
            case "sasl_plain": bootstrap = SASL_BOOTSTRAP; protocol = "SASL_PLAINTEXT"; mech = "PLAIN"; break;
            case "sasl_scram": bootstrap = SASL_BOOTSTRAP; protocol = "SASL_PLAINTEXT"; mech = "SCRAM-SHA-256"; break;
            case "ssl": bootstrap = SSL_BOOTSTRAP; protocol = "SSL"; mech = null; break;
            default: bootstrap = SASL_SSL_BOOTSTRAP; protocol = "SASL_SSL"; mech = "SCRAM-SHA-512"; break;
        }
        check(!bootstrap.isEmpty(), "no bootstrap for %s given", sc);
        Properties p = props("bootstrap.servers", bootstrap, "security.protocol", protocol);
        if (mech != null) {
            String module = mech.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                    : "org.apache.kafka.common.security.scram.ScramLoginModule";
            p.put("sasl.mechanism", mech);
            p.put("sasl.jaas.config", module + " required username=\"" + USER + "\" password=\"" + pass + "\";");
        }
        if (protocol.endsWith("SSL")) {
            p.put("ssl.truststore.type", "PEM");
            p.put("ssl.truststore.location", ca);
        }
        return p;
    }

    /**
     * One record through the scenario's listener, then a client that must be refused: a wrong
     * password, or (ssl) one that trusts only a CA that signed nothing of the broker's.
     */
    static void secure(String sc, String value) throws Exception {
        String topic = PREFIX + "-" + sc.replace('_', '-');
        Properties sp = secureProps(sc, PASS, CA_FILE);
        try (Admin a = admin(sp)) {
            create(a, topic, 1, null);
        }
        try (KafkaProducer<byte[], byte[]> p = producer(sp)) {
            p.send(new ProducerRecord<>(topic, b(value))).get(left(), TimeUnit.MILLISECONDS);
        }
        List<ConsumerRecord<byte[], byte[]>> got = readAll(topic, 1, sp);
        check(value.equals(s(got.get(0).value())), "read %s back", s(got.get(0).value()));
        boolean tlsOnly = sc.equals("ssl");
        Properties bad = tlsOnly
                ? secureProps(sc, PASS, new java.io.File(new java.io.File(CA_FILE).getParentFile(), "other-ca.pem").getPath())
                : secureProps(sc, "wrong-" + PASS, CA_FILE);
        bad.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 15000);
        bad.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10000);
        try (Admin a = admin(bad)) {
            a.describeCluster().clusterId().get(20, TimeUnit.SECONDS);
            throw new Check(tlsOnly ? "a client that does not trust the CA got the cluster id" : "a wrong password was accepted");
        } catch (java.util.concurrent.ExecutionException e) {
            Class<?> want = tlsOnly ? org.apache.kafka.common.errors.SslAuthenticationException.class
                    : org.apache.kafka.common.errors.SaslAuthenticationException.class;
            check(want.isInstance(e.getCause()), "refused client: %s, want %s", e.getCause(), want.getSimpleName());
        }
    }

    static List<String> list(String... xs) {
        return Arrays.asList(xs);
    }
}
