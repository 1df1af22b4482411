package gregor.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The share_group scenario for the Java client: two KafkaShareConsumers of one share group, one
 * acknowledging implicitly and one explicitly, read a topic together; every record arrives once.
 */
final class Shares {
    private Shares() {}

    static final int RECORDS = 60;

    /** One share consumer polling in its own thread, the only thread that touches it. */
    static final class Member implements Runnable {
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicInteger got = new AtomicInteger();
        final Thread thread = new Thread(this);
        final String topic, group, mode;
        final Map<String, Integer> seen;
        final AtomicReference<Throwable> error;

        Member(String topic, String group, String mode, Map<String, Integer> seen, AtomicReference<Throwable> error) {
            this.topic = topic;
            this.group = group;
            this.mode = mode;
            this.seen = seen;
            this.error = error;
            thread.start();
        }

        public void run() {
            Properties p = Driver.base(Driver.BOOTSTRAP);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, mode);
            try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(p)) {
                c.subscribe(List.of(topic));
                while (!stop.get()) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                        seen.merge(Driver.s(r.value()), 1, Integer::sum);
                        got.incrementAndGet();
                        if (mode.equals("explicit")) c.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                    // Explicit mode: the acknowledgements go now. Implicit: the next poll
                    // accepts what this one returned; commitSync sends it at once.
                    c.commitSync();
                }
            } catch (Throwable t) {
                error.compareAndSet(null, t);
            }
        }

        void close() throws InterruptedException {
            stop.set(true);
            thread.join();
        }
    }

    static void run() throws Exception {
        String topic = Driver.PREFIX + "-share", group = Driver.PREFIX + "-share";
        try (Admin a = Driver.admin(new Properties())) {
            Driver.create(a, topic, 3, null);
            // Share groups start at the latest offset unless the group says otherwise.
            ConfigResource g = new ConfigResource(ConfigResource.Type.GROUP, group);
            a.incrementalAlterConfigs(Map.of(g, List.of(new AlterConfigOp(
                    new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                .all().get(Driver.left(), TimeUnit.MILLISECONDS);
        }
        try (KafkaProducer<byte[], byte[]> p = Driver.producer(new Properties())) {
            for (int i = 0; i < RECORDS; i++) p.send(new ProducerRecord<>(topic, i % 3, null, Driver.b("s-" + i)));
            p.flush();
        }
        Map<String, Integer> seen = new ConcurrentHashMap<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        List<Member> ms = new ArrayList<>();
        try {
            ms.add(new Member(topic, group, "implicit", seen, error));
            ms.add(new Member(topic, group, "explicit", seen, error));
            Driver.eventually(() -> {
                if (error.get() != null) throw new RuntimeException(error.get());
                Driver.check(seen.size() >= RECORDS, "share group read %d of %d records", seen.size(), RECORDS);
            });
        } finally {
            for (Member m : ms) m.close();
        }
        if (error.get() != null) throw new RuntimeException(error.get());
        for (int i = 0; i < RECORDS; i++) {
            Integer n = seen.get("s-" + i);
            Driver.check(n != null && n == 1, "record s-%d delivered %s times, want once", i, n);
        }
        Driver.check(seen.size() == RECORDS, "read %d distinct values, want %d", seen.size(), RECORDS);
        System.err.printf("share_group: implicit member read %d, explicit member read %d%n", ms.get(0).got.get(), ms.get(1).got.get());
    }
}
