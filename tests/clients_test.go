package tests

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// clientTimeout bounds one client operation (producing or reading a topic).
const clientTimeout = 90 * time.Second

// kafkaClient is one Kafka client library driven the way its users drive it.
// Every producer partitions keys with murmur2, like the Java client.
type kafkaClient interface {
	Name() string
	Produce(t *testing.T, addr, topic, codec string, recs []testRecord)
	// Consume reads every partition from its start up to ends[p].
	Consume(t *testing.T, addr, topic string, ends map[int32]int64) []gotRecord
	// OffsetForTime asks ListOffsets for the first offset at or after ms.
	OffsetForTime(t *testing.T, addr, topic string, partition int32, ms int64) int64
}

func wantTotal(ends map[int32]int64) int {
	n := int64(0)
	for _, e := range ends {
		n += e
	}
	return int(n)
}

// --- franz-go ---

type kgoClient struct{}

func (kgoClient) Name() string { return "franz-go" }

func (kgoClient) Produce(t *testing.T, addr, topic, codec string, recs []testRecord) {
	t.Helper()
	var c kgo.CompressionCodec
	switch codec {
	case "none":
		c = kgo.NoCompression()
	case "gzip":
		c = kgo.GzipCompression()
	case "snappy":
		c = kgo.SnappyCompression()
	case "lz4":
		c = kgo.Lz4Compression()
	case "zstd":
		c = kgo.ZstdCompression()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ProducerBatchCompression(c),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
	)
	for _, r := range recs {
		kr := &kgo.Record{Topic: topic, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		cl.Produce(ctx, kr, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("franz-go flush: %v", err)
	}
	if firstErr != nil {
		t.Fatalf("franz-go produce: %v", firstErr)
	}
}

func (kgoClient) Consume(t *testing.T, addr, topic string, ends map[int32]int64) []gotRecord {
	t.Helper()
	parts := map[int32]kgo.Offset{}
	for p := range ends {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	want := wantTotal(ends)
	var got []gotRecord
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("franz-go consume: read %d of %d records before the deadline", len(got), want)
		}
		fs.EachError(func(_ string, p int32, err error) {
			t.Fatalf("franz-go consume partition %d: %v", p, err)
		})
		fs.EachRecord(func(r *kgo.Record) {
			g := gotRecord{Partition: r.Partition, Offset: r.Offset}
			g.Key, g.Value, g.Timestamp = r.Key, r.Value, r.Timestamp
			for _, h := range r.Headers {
				g.Headers = append(g.Headers, testHeader{h.Key, h.Value})
			}
			got = append(got, g)
		})
	}
	return got
}

func (kgoClient) OffsetForTime(t *testing.T, addr, topic string, partition int32, ms int64) int64 {
	t.Helper()
	adm := newAdmin(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	listed, err := adm.ListOffsetsAfterMilli(ctx, ms, topic)
	if err != nil {
		t.Fatalf("franz-go ListOffsetsAfterMilli: %v", err)
	}
	o, ok := listed.Lookup(topic, partition)
	if !ok || o.Err != nil {
		t.Fatalf("franz-go ListOffsetsAfterMilli partition %d: found %v, err %v", partition, ok, o.Err)
	}
	return o.Offset
}

// --- IBM/sarama ---

type saramaClient struct{}

func (saramaClient) Name() string { return "sarama" }

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0 // headers, zstd and ListOffsets by time
	cfg.ClientID = "gregor-tests"
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewMurmur2Partitioner
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	cfg.Producer.Flush.Bytes = 64 << 10
	cfg.Consumer.Return.Errors = true
	return cfg
}

func (saramaClient) Produce(t *testing.T, addr, topic, codec string, recs []testRecord) {
	t.Helper()
	cfg := saramaConfig()
	switch codec {
	case "none":
		cfg.Producer.Compression = sarama.CompressionNone
	case "gzip":
		cfg.Producer.Compression = sarama.CompressionGZIP
	case "snappy":
		cfg.Producer.Compression = sarama.CompressionSnappy
	case "lz4":
		cfg.Producer.Compression = sarama.CompressionLZ4
	case "zstd":
		cfg.Producer.Compression = sarama.CompressionZSTD
	}
	p, err := sarama.NewAsyncProducer([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("sarama producer: %v", err)
	}
	go func() {
		for _, r := range recs {
			m := &sarama.ProducerMessage{Topic: topic, Key: sarama.ByteEncoder(r.Key), Value: sarama.ByteEncoder(r.Value), Timestamp: r.Timestamp}
			for _, h := range r.Headers {
				m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
			}
			p.Input() <- m
		}
	}()
	timeout := time.NewTimer(clientTimeout)
	defer timeout.Stop()
	var firstErr error
	for done := 0; done < len(recs); done++ {
		select {
		case <-p.Successes():
		case perr := <-p.Errors():
			if firstErr == nil {
				firstErr = perr.Err
			}
		case <-timeout.C:
			p.AsyncClose()
			t.Fatalf("sarama produce: %d of %d records answered before the deadline", done, len(recs))
		}
	}
	if err := p.Close(); err != nil {
		t.Fatalf("sarama producer close: %v", err)
	}
	if firstErr != nil {
		t.Fatalf("sarama produce: %v", firstErr)
	}
}

func (saramaClient) Consume(t *testing.T, addr, topic string, ends map[int32]int64) []gotRecord {
	t.Helper()
	c, err := sarama.NewConsumer([]string{addr}, saramaConfig())
	if err != nil {
		t.Fatalf("sarama consumer: %v", err)
	}
	defer c.Close()
	timeout := time.NewTimer(clientTimeout)
	defer timeout.Stop()
	var got []gotRecord
	for p, end := range ends {
		if end == 0 {
			continue
		}
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatalf("sarama consume partition %d: %v", p, err)
		}
		for last := int64(-1); last < end-1; {
			select {
			case m := <-pc.Messages():
				g := gotRecord{Partition: m.Partition, Offset: m.Offset}
				g.Key, g.Value, g.Timestamp = m.Key, m.Value, m.Timestamp
				for _, h := range m.Headers {
					g.Headers = append(g.Headers, testHeader{string(h.Key), h.Value})
				}
				got = append(got, g)
				last = m.Offset
			case cerr := <-pc.Errors():
				t.Fatalf("sarama consume partition %d: %v", p, cerr.Err)
			case <-timeout.C:
				t.Fatalf("sarama consume partition %d: at offset %d of %d at the deadline", p, last, end)
			}
		}
		pc.Close()
	}
	return got
}

func (saramaClient) OffsetForTime(t *testing.T, addr, topic string, partition int32, ms int64) int64 {
	t.Helper()
	cl, err := sarama.NewClient([]string{addr}, saramaConfig())
	if err != nil {
		t.Fatalf("sarama client: %v", err)
	}
	defer cl.Close()
	o, err := cl.GetOffset(topic, partition, ms)
	if err != nil {
		t.Fatalf("sarama GetOffset: %v", err)
	}
	return o
}

// --- segmentio/kafka-go ---

type kafkaGoClient struct{}

func (kafkaGoClient) Name() string { return "kafka-go" }

func (kafkaGoClient) Produce(t *testing.T, addr, topic, codec string, recs []testRecord) {
	t.Helper()
	// A transport of its own: the shared default one caches metadata for
	// seconds and would not know a topic created a moment ago.
	tr := &kafka.Transport{MetadataTTL: time.Second}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{
		Addr:         kafka.TCP(addr),
		Transport:    tr,
		Topic:        topic,
		Balancer:     &kafka.Murmur2Balancer{},
		RequiredAcks: kafka.RequireAll,
		BatchSize:    500,
		BatchTimeout: 5 * time.Millisecond,
		MaxAttempts:  5,
	}
	switch codec {
	case "gzip":
		w.Compression = kafka.Gzip
	case "snappy":
		w.Compression = kafka.Snappy
	case "lz4":
		w.Compression = kafka.Lz4
	case "zstd":
		w.Compression = kafka.Zstd
	}
	msgs := make([]kafka.Message, len(recs))
	for i, r := range recs {
		msgs[i] = kafka.Message{Key: r.Key, Value: r.Value, Time: r.Timestamp}
		for _, h := range r.Headers {
			msgs[i].Headers = append(msgs[i].Headers, kafka.Header{Key: h.Key, Value: h.Value})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		w.Close()
		t.Fatalf("kafka-go write: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("kafka-go writer close: %v", err)
	}
}

func (kafkaGoClient) Consume(t *testing.T, addr, topic string, ends map[int32]int64) []gotRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	var got []gotRecord
	for p, end := range ends {
		if end == 0 {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers:   []string{addr},
			Topic:     topic,
			Partition: int(p),
			MinBytes:  1,
			MaxBytes:  8 << 20,
			MaxWait:   250 * time.Millisecond,
		})
		for last := int64(-1); last < end-1; {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				r.Close()
				t.Fatalf("kafka-go read partition %d after offset %d of %d: %v", p, last, end, err)
			}
			g := gotRecord{Partition: int32(m.Partition), Offset: m.Offset}
			g.Key, g.Value, g.Timestamp = m.Key, m.Value, m.Time
			for _, h := range m.Headers {
				g.Headers = append(g.Headers, testHeader{h.Key, h.Value})
			}
			got = append(got, g)
			last = m.Offset
		}
		r.Close()
	}
	return got
}

func (kafkaGoClient) OffsetForTime(t *testing.T, addr, topic string, partition int32, ms int64) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	conn, err := kafka.DialLeader(ctx, "tcp", addr, topic, int(partition))
	if err != nil {
		t.Fatalf("kafka-go DialLeader: %v", err)
	}
	defer conn.Close()
	o, err := conn.ReadOffset(time.UnixMilli(ms))
	if err != nil {
		t.Fatalf("kafka-go ReadOffset: %v", err)
	}
	return o
}

// TestClientsRoundTrip writes keyed records with every client and every
// codec, reads them back with another client, compares them byte for byte,
// and checks ListOffsets by timestamp with both clients.
func TestClientsRoundTrip(t *testing.T) {
	b := startBroker(t)
	n := 10000
	if testing.Short() {
		n = 1000
	}
	const partitions = 3
	clients := []kafkaClient{kgoClient{}, saramaClient{}, kafkaGoClient{}}
	codecs := []string{"none", "gzip", "snappy", "lz4", "zstd"}
	for pi, prod := range clients {
		for ci, codec := range codecs {
			cons := clients[(pi+ci+1)%len(clients)]
			t.Run(fmt.Sprintf("%s/%s/read-by-%s", prod.Name(), codec, cons.Name()), func(t *testing.T) {
				topic := fmt.Sprintf("roundtrip-%s-%s", prod.Name(), codec)
				createTopic(t, b.Addr, topic, partitions, nil)
				// Recent timestamps, so retention by time never applies.
				base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
				sent := makeRecords(topic, n, base)
				prod.Produce(t, b.Addr, topic, codec, sent)

				ends := endOffsets(t, b.Addr, topic)
				if len(ends) != partitions {
					t.Fatalf("%d partitions listed, want %d", len(ends), partitions)
				}
				if total := wantTotal(ends); total != n {
					t.Fatalf("end offsets sum to %d, wrote %d records", total, n)
				}
				got := cons.Consume(t, b.Addr, topic, ends)
				verifyRoundTrip(t, sent, got, partitions)

				targets := []int64{
					base.UnixMilli() + int64(n/2),     // the middle
					base.UnixMilli() + int64(n/3) + 1, // another point
					base.UnixMilli() - 60_000,         // before every record: the first offset
				}
				for p := int32(0); p < partitions; p++ {
					for _, ms := range targets {
						want := expectedOffsetForTime(got, p, ms)
						for _, c := range []kafkaClient{prod, cons} {
							if o := c.OffsetForTime(t, b.Addr, topic, p, ms); o != want {
								t.Errorf("%s: partition %d: offset for time %d is %d, want %d", c.Name(), p, ms, o, want)
							}
						}
					}
				}
			})
		}
	}
}
