package gregor.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

/**
 * Word count with Kafka Streams' streams rebalance protocol (KIP-1071, group.protocol=streams)
 * and exactly_once_v2. It writes a known input, runs `instances` KafkaStreams instances until
 * the read_committed output holds the final count of every word, and checks every count:
 * exact, never more. With BOUNCE=1 the first instance is closed as soon as output appears and
 * a new one started, so tasks move between members while transactions are open. With
 * BOUNCE=restart the first instance is closed once the committed output has counted 40% of the
 * input's words and started again on the same state directory (so with the same process id and
 * the same transactional ids, which the broker must let it initialise again and go on
 * committing offsets with). KILL_CMD, if
 * given, runs once (sh -c) when output appears, with {node} replaced by the node id of the
 * group's coordinator (from Admin.describeStreamsGroups): it is how a broker is killed mid-run.
 * Exit 0 on exact counts, 1 otherwise.
 *
 * GROUP_PROTOCOL is streams (the default) or classic.
 *
 * usage: WordCount BOOTSTRAP [LINES] [INSTANCES] [TIMEOUT_S] [BOUNCE] [KILL_CMD] [GROUP_PROTOCOL]
 */
public final class WordCount {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        int lines = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        int instances = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        int timeoutS = args.length > 3 ? Integer.parseInt(args[3]) : 180;
        boolean bounce = args.length > 4 && args[4].equals("1");
        boolean restart = args.length > 4 && args[4].equals("restart");
        String killCmd = args.length > 5 && !args[5].isEmpty() ? args[5] : null;
        String protocol = args.length > 6 && !args[6].isEmpty() ? args[6] : "streams";
        String run = UUID.randomUUID().toString().substring(0, 8);
        String input = "wc-in-" + run, output = "wc-out-" + run, app = "wc-app-" + run;

        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(input, 4, (short) -1), new NewTopic(output, 4, (short) -1))).all().get();
        }

        Map<String, Long> want = new HashMap<>();
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> p = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < lines; i++) {
                StringBuilder line = new StringBuilder();
                for (int w = 0; w < 5; w++) {
                    String word = "w" + ((i * 7 + w * 13) % 97);
                    want.merge(word, 1L, Long::sum);
                    line.append(word).append(' ');
                }
                p.send(new ProducerRecord<>(input, "k" + i, line.toString().trim()));
            }
            p.flush();
        }

        StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream(input)
                .flatMapValues(v -> List.of(v.split(" ")))
                .groupBy((k, v) -> v, Grouped.with(Serdes.String(), Serdes.String()))
                .count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore("counts"))
                        .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));

        List<KafkaStreams> apps = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
            apps.add(start(b, app, bootstrap, i, protocol));
        }
        boolean bounced = !bounce;
        boolean restarted = !restart;
        long words = (long) lines * 5;
        long counted = 0;
        long restartedAt = 0;

        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, "wc-check-" + run);
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        Map<String, Long> got = new HashMap<>();
        long deadline = System.currentTimeMillis() + timeoutS * 1000L;
        boolean exact = false;
        long over = 0;
        try (KafkaConsumer<String, Long> c = new KafkaConsumer<>(cp, new StringDeserializer(), new LongDeserializer())) {
            c.subscribe(List.of(output));
            while (System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, Long> r : c.poll(Duration.ofMillis(500))) {
                    Long prev = got.put(r.key(), r.value());
                    counted += r.value() - (prev == null ? 0 : prev);
                    Long w = want.get(r.key());
                    if (w == null || r.value() > w) {
                        over++;
                        System.err.println("wordcount: " + r.key() + " counted " + r.value() + ", want " + w);
                    }
                }
                if (!bounced && !got.isEmpty()) {
                    bounced = true;
                    apps.get(0).close(Duration.ofSeconds(30));
                    apps.set(0, start(b, app, bootstrap, instances, protocol));
                    System.err.println("wordcount: bounced an instance after " + got.size() + " words had output");
                }
                if (!restarted && counted * 10 >= words * 4) {
                    restarted = true;
                    restartedAt = counted;
                    apps.get(0).close(Duration.ofSeconds(30));
                    apps.set(0, start(b, app, bootstrap, 0, protocol));
                    System.err.println("wordcount: stopped instance 0 at " + counted + " of " + words
                            + " words counted and started it again on its state directory");
                }
                if (killCmd != null && !got.isEmpty()) {
                    int node;
                    try (Admin admin = Admin.create(ap)) {
                        node = admin.describeStreamsGroups(List.of(app)).all().get().get(app).coordinator().id();
                    }
                    String cmd = killCmd.replace("{node}", Integer.toString(node));
                    killCmd = null;
                    int rc = new ProcessBuilder("sh", "-c", cmd).inheritIO().start().waitFor();
                    System.err.println("wordcount: ran `" + cmd + "` (the group's coordinator is node " + node + "): exit " + rc);
                }
                if (got.equals(want)) {
                    exact = true;
                    break;
                }
                for (KafkaStreams ks : apps) {
                    if (ks.state() == KafkaStreams.State.ERROR || ks.state() == KafkaStreams.State.NOT_RUNNING) {
                        System.err.println("wordcount: an instance is " + ks.state());
                        deadline = 0;
                    }
                }
            }
        }
        for (KafkaStreams ks : apps) {
            ks.close(Duration.ofSeconds(30));
        }
        int missing = 0;
        for (Map.Entry<String, Long> e : want.entrySet()) {
            if (!e.getValue().equals(got.get(e.getKey()))) {
                missing++;
            }
        }
        if (restart && restartedAt == 0) {
            System.err.println("wordcount: the run never reached 40% of its words, so nothing was restarted");
        }
        boolean ok = exact && over == 0 && (!restart || restartedAt > 0);
        System.out.printf("wordcount: %d lines, %d words, %d instances, group.protocol=%s, exactly_once_v2%s: %s"
                        + " (%d words not at their count, %d counts above the truth)%n",
                lines, want.size(), instances, protocol,
                restart ? ", restarted on its state directory at " + restartedAt + " of " + words + " words" : "",
                ok ? "exact" : "NOT exact", missing, over);
        System.exit(ok ? 0 : 1);
    }

    private static KafkaStreams start(StreamsBuilder b, String app, String bootstrap, int i, String protocol) {
        Properties sp = new Properties();
        sp.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        sp.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        sp.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, protocol);
        sp.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        sp.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        sp.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        sp.put(StreamsConfig.STATE_DIR_CONFIG, System.getProperty("java.io.tmpdir") + "/" + app + "-" + i);
        sp.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        sp.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        KafkaStreams ks = new KafkaStreams(b.build(), sp);
        ks.setUncaughtExceptionHandler(e -> {
            System.err.println("wordcount: stream thread failed: " + e);
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        ks.start();
        return ks;
    }

    private WordCount() {}
}
