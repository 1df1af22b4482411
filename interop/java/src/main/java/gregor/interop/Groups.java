package gregor.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/** The consumer_group scenario for the Java client: three members, a leave, commit and resume. */
final class Groups {
    private Groups() {}

    /** One member polling in its own thread; KafkaConsumer is not thread-safe, so only that thread touches it. */
    static final class Member implements Runnable {
        final Set<Integer> assigned = ConcurrentHashMap.newKeySet();
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread thread = new Thread(this);
        final String topic, group;
        final Set<String> seen;
        final AtomicReference<Throwable> error;

        Member(String topic, String group, Set<String> seen, AtomicReference<Throwable> error) {
            this.topic = topic;
            this.group = group;
            this.seen = seen;
            this.error = error;
            thread.start();
        }

        public void run() {
            try (KafkaConsumer<byte[], byte[]> c = Driver.consumer(Driver.props(ConsumerConfig.GROUP_ID_CONFIG, group))) {
                c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    public void onPartitionsRevoked(Collection<TopicPartition> ps) {
                        c.commitSync();
                        ps.forEach(p -> assigned.remove(p.partition()));
                    }

                    public void onPartitionsAssigned(Collection<TopicPartition> ps) {
                        ps.forEach(p -> assigned.add(p.partition()));
                    }

                    public void onPartitionsLost(Collection<TopicPartition> ps) {
                        ps.forEach(p -> assigned.remove(p.partition()));
                    }
                });
                while (!stop.get()) {
                    c.poll(Duration.ofMillis(100)).forEach(r -> seen.add(Driver.s(r.value())));
                    c.commitSync();
                }
                c.commitSync();
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
        String topic = Driver.PREFIX + "-grp", group = Driver.PREFIX + "-grp";
        try (Admin a = Driver.admin(new java.util.Properties())) {
            Driver.create(a, topic, 6, null);
        }
        try (KafkaProducer<byte[], byte[]> p = Driver.producer(new java.util.Properties())) {
            for (int i = 0; i < 60; i++) p.send(new ProducerRecord<>(topic, i % 6, null, Driver.b("g-" + i)));
            p.flush();
        }
        Set<String> seen = ConcurrentHashMap.newKeySet();
        AtomicReference<Throwable> error = new AtomicReference<>();
        List<Member> ms = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) ms.add(new Member(topic, group, seen, error));
            Driver.eventually(() -> balanced(ms, 2, error));
            ms.get(2).close();
            Driver.eventually(() -> balanced(ms.subList(0, 2), 3, error));
            Driver.eventually(() -> Driver.check(seen.size() >= 60, "group consumed %d of 60 records", seen.size()));
            ms.get(0).close();
            ms.get(1).close();
            ms.clear();
            try (KafkaProducer<byte[], byte[]> p = Driver.producer(new java.util.Properties())) {
                for (int i = 0; i < 6; i++) p.send(new ProducerRecord<>(topic, i, null, Driver.b("after-" + i)));
                p.flush();
            }
            seen.clear();
            ms.add(new Member(topic, group, seen, error));
            Driver.eventually(() -> {
                for (String v : seen) Driver.check(v.startsWith("after-"), "resumed member re-read %s: committed offsets not used", v);
                Driver.check(seen.size() >= 6, "resumed member read %d of 6 new records", seen.size());
            });
            for (String v : seen) Driver.check(v.startsWith("after-"), "resumed member re-read %s", v);
        } finally {
            for (Member m : ms) m.close();
        }
        if (error.get() != null) throw new RuntimeException(error.get());
    }

    static void balanced(List<Member> ms, int each, AtomicReference<Throwable> error) {
        if (error.get() != null) throw new RuntimeException(error.get());
        List<Integer> counts = new ArrayList<>();
        ms.forEach(m -> counts.add(m.assigned.size()));
        for (int c : counts) Driver.check(c == each, "assignment %s, want %d partitions each", counts, each);
    }
}
