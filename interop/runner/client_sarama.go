package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

func init() { goDrivers["sarama"] = saramaScenario }

func saramaScenario(ctx context.Context, env Env, scenario string) error {
	s := &saramaEnv{env: env}
	switch scenario {
	case "metadata":
		return s.metadata()
	case "topic_admin":
		return s.topicAdmin(ctx)
	case "produce_consume":
		return s.produceConsume(ctx)
	case "consume_timestamp":
		return s.timestamp(ctx)
	case "idempotent":
		return s.idempotent(ctx)
	case "consumer_group":
		return s.group(ctx)
	case "transactions":
		return s.transactions(ctx)
	case "admin":
		return s.admin(ctx)
	case "sasl_plain", "sasl_scram", "ssl", "sasl_ssl":
		return s.secure(ctx, scenario)
	}
	return skipf("sarama driver has no scenario %q", scenario)
}

type saramaEnv struct {
	env  Env
	tune func(*sarama.Config)
}

func (s *saramaEnv) config() *sarama.Config {
	c := sarama.NewConfig()
	c.ClientID = "interop-sarama"
	c.Version = sarama.V3_0_0_0
	c.Producer.Return.Successes = true
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Consumer.Return.Errors = true
	c.Metadata.AllowAutoTopicCreation = false
	if s.tune != nil {
		s.tune(c)
	}
	return c
}

func (s *saramaEnv) addrs() []string { return strings.Split(s.env.Bootstrap, ",") }

func (s *saramaEnv) clusterAdmin() (sarama.ClusterAdmin, error) {
	a, err := sarama.NewClusterAdmin(s.addrs(), s.config())
	if err != nil {
		return nil, fmt.Errorf("sarama: cluster admin: %w", err)
	}
	return a, nil
}

func (s *saramaEnv) create(topic string, parts int32, configs map[string]*string) error {
	a, err := s.clusterAdmin()
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: parts, ReplicationFactor: s.env.rf(), ConfigEntries: configs}, false); err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return nil
}

func (s *saramaEnv) metadata() error {
	topic := s.env.Prefix + "-meta"
	if err := s.create(topic, 3, nil); err != nil {
		return err
	}
	cl, err := sarama.NewClient(s.addrs(), s.config())
	if err != nil {
		return fmt.Errorf("sarama: client: %w", err)
	}
	defer cl.Close()
	if len(cl.Brokers()) == 0 {
		return errors.New("metadata lists no brokers")
	}
	ps, err := cl.Partitions(topic)
	if err != nil || len(ps) != 3 {
		return fmt.Errorf("partitions of %s: %v (%v), want 3", topic, ps, err)
	}
	for _, p := range ps {
		if _, err := cl.Leader(topic, p); err != nil {
			return fmt.Errorf("leader of %s/%d: %w", topic, p, err)
		}
	}
	return nil
}

func (s *saramaEnv) topicConfig(a sarama.ClusterAdmin, topic, name string) (string, error) {
	es, err := a.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic})
	if err != nil {
		return "", err
	}
	for _, e := range es {
		if e.Name == name {
			return e.Value, nil
		}
	}
	return "", fmt.Errorf("describe configs of %s: no %s", topic, name)
}

func (s *saramaEnv) topicAdmin(ctx context.Context) error {
	topic := s.env.Prefix + "-topic"
	if err := s.create(topic, 3, map[string]*string{"retention.ms": strp("3600000")}); err != nil {
		return err
	}
	a, err := s.clusterAdmin()
	if err != nil {
		return err
	}
	defer a.Close()
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		if v, err := s.topicConfig(a, topic, "retention.ms"); err != nil || v != "3600000" {
			return fmt.Errorf("retention.ms after create = %q (%v), want 3600000", v, err)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := a.IncrementalAlterConfig(sarama.TopicResource, topic, map[string]sarama.IncrementalAlterConfigsEntry{
		"retention.ms": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: strp("7200000")}}, false); err != nil {
		return fmt.Errorf("incremental alter configs: %w", err)
	}
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		if v, err := s.topicConfig(a, topic, "retention.ms"); err != nil || v != "7200000" {
			return fmt.Errorf("retention.ms after alter = %q (%v), want 7200000", v, err)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := a.DeleteTopic(topic); err != nil {
		return fmt.Errorf("delete topic: %w", err)
	}
	return eventually(ctx, 200*time.Millisecond, func() error {
		ts, err := a.ListTopics()
		if err != nil {
			return err
		}
		if _, ok := ts[topic]; ok {
			return fmt.Errorf("topic %s still listed after delete", topic)
		}
		return nil
	})
}

func toSarama(topic string, r rec) *sarama.ProducerMessage {
	m := &sarama.ProducerMessage{Topic: topic, Value: sarama.ByteEncoder(r.Value), Timestamp: r.Timestamp, Partition: r.Partition}
	if r.Key != nil {
		m.Key = sarama.ByteEncoder(r.Key)
	}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h[0]), Value: []byte(h[1])})
	}
	return m
}

func (s *saramaEnv) send(msgs []*sarama.ProducerMessage, tune func(*sarama.Config)) error {
	c := s.config()
	if tune != nil {
		tune(c)
	}
	p, err := sarama.NewSyncProducer(s.addrs(), c)
	if err != nil {
		return fmt.Errorf("sarama: producer: %w", err)
	}
	defer p.Close()
	if err := p.SendMessages(msgs); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	return nil
}

// readAll reads every partition of topic from offset (or the oldest) up to its high
// watermark without a group.
func (s *saramaEnv) readAll(ctx context.Context, topic string, from int64, tune func(*sarama.Config)) ([]rec, error) {
	c := s.config()
	if tune != nil {
		tune(c)
	}
	cl, err := sarama.NewClient(s.addrs(), c)
	if err != nil {
		return nil, fmt.Errorf("sarama: client: %w", err)
	}
	defer cl.Close()
	cons, err := sarama.NewConsumerFromClient(cl)
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	ps, err := cl.Partitions(topic)
	if err != nil {
		return nil, err
	}
	var out []rec
	for _, p := range ps {
		hw, err := cl.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return nil, err
		}
		start := from
		if start < 0 {
			start = sarama.OffsetOldest
		}
		if from >= 0 && from >= hw {
			continue
		}
		if from < 0 {
			if lo, err := cl.GetOffset(topic, p, sarama.OffsetOldest); err != nil || lo >= hw {
				continue
			}
		}
		pc, err := cons.ConsumePartition(topic, p, start)
		if err != nil {
			return nil, fmt.Errorf("consume %s/%d: %w", topic, p, err)
		}
		for done := false; !done; {
			select {
			case m := <-pc.Messages():
				r := rec{Partition: m.Partition, Offset: m.Offset, Key: m.Key, Value: m.Value, Timestamp: m.Timestamp}
				for _, h := range m.Headers {
					r.Headers = append(r.Headers, [2]string{string(h.Key), string(h.Value)})
				}
				out = append(out, r)
				// Stop at the last stable offset for read_committed (control batches never arrive).
				done = m.Offset+1 >= pc.HighWaterMarkOffset()
			case e := <-pc.Errors():
				pc.Close()
				return nil, fmt.Errorf("consume %s/%d: %w", topic, p, e)
			case <-time.After(2 * time.Second):
				done = true // nothing more below the high watermark (aborted or control records)
			case <-ctx.Done():
				pc.Close()
				return nil, ctx.Err()
			}
		}
		pc.Close()
	}
	return out, nil
}

func (s *saramaEnv) produceConsume(ctx context.Context) error {
	topic := s.env.Prefix + "-pc"
	if err := s.create(topic, 3, nil); err != nil {
		return err
	}
	byName := map[string]sarama.CompressionCodec{"none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP,
		"snappy": sarama.CompressionSnappy, "lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD}
	var all []rec
	for _, name := range codecs {
		rs := pcRecords(name)
		var msgs []*sarama.ProducerMessage
		for _, r := range rs {
			msgs = append(msgs, toSarama(topic, r))
		}
		codec := byName[name]
		if err := s.send(msgs, func(c *sarama.Config) {
			c.Producer.Compression = codec
			c.Producer.Partitioner = sarama.NewHashPartitioner
		}); err != nil {
			return fmt.Errorf("codec %s: %w", name, err)
		}
		all = append(all, rs...)
	}
	got, err := s.readAll(ctx, topic, -1, nil)
	if err != nil {
		return err
	}
	return checkSameRecords(all, got)
}

func (s *saramaEnv) timestamp(ctx context.Context) error {
	topic := s.env.Prefix + "-ts"
	if err := s.create(topic, 1, nil); err != nil {
		return err
	}
	base := time.Now().Add(-time.Minute).UnixMilli()
	var msgs []*sarama.ProducerMessage
	for i := 0; i < tsCount; i++ {
		msgs = append(msgs, toSarama(topic, rec{Value: []byte(fmt.Sprintf("ts-%d", i)), Timestamp: time.UnixMilli(base + int64(i*tsStepMs))}))
	}
	if err := s.send(msgs, nil); err != nil {
		return err
	}
	cl, err := sarama.NewClient(s.addrs(), s.config())
	if err != nil {
		return err
	}
	defer cl.Close()
	at := base + tsPickIndex*tsStepMs
	for _, q := range []int64{at, at - tsStepMs/2} {
		o, err := cl.GetOffset(topic, 0, q)
		if err != nil || o != tsPickIndex {
			return fmt.Errorf("offset for timestamp base+%d = %d (%v), want %d", q-base, o, err, tsPickIndex)
		}
	}
	got, err := s.readAll(ctx, topic, tsPickIndex, nil)
	if err != nil {
		return err
	}
	if len(got) == 0 || got[0].Offset != tsPickIndex || string(got[0].Value) != "ts-5" || got[0].Timestamp.UnixMilli() != at {
		return fmt.Errorf("first record from timestamp: %d records, want offset 5 ts-5 at base+5000", len(got))
	}
	return nil
}

func (s *saramaEnv) idempotent(ctx context.Context) error {
	topic := s.env.Prefix + "-idem"
	if err := s.create(topic, 1, nil); err != nil {
		return err
	}
	var msgs []*sarama.ProducerMessage
	for i := 0; i < idemCount; i++ {
		msgs = append(msgs, toSarama(topic, rec{Value: []byte(fmt.Sprintf("idem-%d", i))}))
	}
	if err := s.send(msgs, func(c *sarama.Config) {
		c.Producer.Idempotent = true
		c.Net.MaxOpenRequests = 1
	}); err != nil {
		return err
	}
	got, err := s.readAll(ctx, topic, -1, nil)
	if err != nil {
		return err
	}
	return checkContiguous(got, "idem", idemCount)
}

func (s *saramaEnv) transactions(ctx context.Context) error {
	topic := s.env.Prefix + "-txn"
	if err := s.create(topic, 1, nil); err != nil {
		return err
	}
	c := s.config()
	c.Producer.Idempotent = true
	c.Producer.Transaction.ID = s.env.Prefix + "-tx"
	c.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer(s.addrs(), c)
	if err != nil {
		return fmt.Errorf("sarama: transactional producer: %w", err)
	}
	defer p.Close()
	for _, step := range []string{"c1", "a", "c2"} {
		if err := p.BeginTxn(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		for i := 0; i < 5; i++ {
			if _, _, err := p.SendMessage(toSarama(topic, rec{Value: []byte(fmt.Sprintf("%s-%d", step, i))})); err != nil {
				return fmt.Errorf("produce %s: %w", step, err)
			}
		}
		if step == "a" {
			err = p.AbortTxn()
		} else {
			err = p.CommitTxn()
		}
		if err != nil {
			return fmt.Errorf("end transaction %s: %w", step, err)
		}
	}
	committed, err := s.readAll(ctx, topic, -1, func(c *sarama.Config) { c.Consumer.IsolationLevel = sarama.ReadCommitted })
	if err != nil {
		return err
	}
	if got, want := fmt.Sprint(values(committed)), fmt.Sprint(txnCommitted()); got != want {
		return fmt.Errorf("read_committed saw %s, want %s", got, want)
	}
	all, err := s.readAll(ctx, topic, -1, nil)
	if err != nil {
		return err
	}
	if len(all) != 15 {
		return fmt.Errorf("read_uncommitted saw %d records, want 15", len(all))
	}
	return nil
}

func (s *saramaEnv) admin(ctx context.Context) error {
	topic := s.env.Prefix + "-adm"
	if err := s.create(topic, 1, nil); err != nil {
		return err
	}
	a, err := s.clusterAdmin()
	if err != nil {
		return err
	}
	defer a.Close()
	// Every broker learns of a new topic from the metadata log, a moment after the create.
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		if v, err := s.topicConfig(a, topic, "cleanup.policy"); err != nil || v != "delete" {
			return fmt.Errorf("cleanup.policy = %q (%v), want delete", v, err)
		}
		return nil
	}); err != nil {
		return err
	}
	brokers, _, err := a.DescribeCluster()
	if err != nil || len(brokers) == 0 {
		return fmt.Errorf("describe cluster: %d brokers (%v)", len(brokers), err)
	}
	bc, err := a.DescribeConfig(sarama.ConfigResource{Type: sarama.BrokerResource, Name: fmt.Sprint(brokers[0].ID())})
	if err != nil || len(bc) == 0 {
		return fmt.Errorf("describe broker configs: %d entries (%v)", len(bc), err)
	}
	if err := a.CreatePartitions(topic, 3, nil, false); err != nil {
		return fmt.Errorf("create partitions: %w", err)
	}
	var msgs []*sarama.ProducerMessage
	for i := 0; i < 10; i++ {
		msgs = append(msgs, toSarama(topic, rec{Value: []byte(fmt.Sprint(i))}))
	}
	if err := s.send(msgs, func(c *sarama.Config) { c.Producer.Partitioner = sarama.NewManualPartitioner }); err != nil {
		return err
	}
	cl, err := sarama.NewClient(s.addrs(), s.config())
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.RefreshMetadata(topic); err != nil {
		return err
	}
	if ps, _ := cl.Partitions(topic); len(ps) != 3 {
		return fmt.Errorf("%d partitions after create partitions, want 3", len(ps))
	}
	e, _ := cl.GetOffset(topic, 0, sarama.OffsetOldest)
	l, _ := cl.GetOffset(topic, 0, sarama.OffsetNewest)
	if e != 0 || l != 10 {
		return fmt.Errorf("earliest %d latest %d, want 0 and 10", e, l)
	}
	if err := a.DeleteRecords(topic, map[int32]int64{0: adminDeleteTo}); err != nil {
		return fmt.Errorf("delete records: %w", err)
	}
	if e, err := cl.GetOffset(topic, 0, sarama.OffsetOldest); err != nil || e != adminDeleteTo {
		return fmt.Errorf("earliest after delete records %d (%v), want %d", e, err, adminDeleteTo)
	}
	return nil
}

// saramaMember is one consumer-group member; its handler records the assignment.
type saramaMember struct {
	cg       sarama.ConsumerGroup
	topic    string
	mu       sync.Mutex
	assigned int
	seen     func(string)
	done     chan struct{}
}

func (m *saramaMember) Setup(sess sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	m.assigned = len(sess.Claims()[m.topic])
	m.mu.Unlock()
	return nil
}

func (m *saramaMember) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (m *saramaMember) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		m.seen(string(msg.Value))
		sess.MarkMessage(msg, "")
		sess.Commit()
	}
	return nil
}

func (m *saramaMember) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.assigned
}

func (s *saramaEnv) group(ctx context.Context) error {
	topic, group := s.env.Prefix+"-grp", s.env.Prefix+"-grp"
	if err := s.create(topic, groupParts, nil); err != nil {
		return err
	}
	manual := func(c *sarama.Config) { c.Producer.Partitioner = sarama.NewManualPartitioner }
	var msgs []*sarama.ProducerMessage
	for i := 0; i < groupParts*groupPerPart; i++ {
		msgs = append(msgs, toSarama(topic, rec{Partition: int32(i % groupParts), Value: []byte(fmt.Sprintf("g-%d", i))}))
	}
	if err := s.send(msgs, manual); err != nil {
		return err
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	var groupErr error
	start := func() (*saramaMember, error) {
		c := s.config()
		c.Consumer.Offsets.Initial = sarama.OffsetOldest
		c.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
		c.Consumer.Group.Session.Timeout = 10 * time.Second
		c.Consumer.Group.Rebalance.Timeout = 10 * time.Second
		cg, err := sarama.NewConsumerGroup(s.addrs(), group, c)
		if err != nil {
			return nil, fmt.Errorf("sarama: consumer group: %w", err)
		}
		m := &saramaMember{cg: cg, topic: topic, done: make(chan struct{}), seen: func(v string) {
			mu.Lock()
			seen[v] = true
			mu.Unlock()
		}}
		go func() {
			defer close(m.done)
			for ctx.Err() == nil {
				if err := cg.Consume(ctx, []string{topic}, m); err != nil {
					if !errors.Is(err, sarama.ErrClosedConsumerGroup) && ctx.Err() == nil {
						mu.Lock()
						groupErr = errors.Join(groupErr, err)
						mu.Unlock()
					}
					return
				}
			}
		}()
		return m, nil
	}
	closeMember := func(m *saramaMember) {
		_ = m.cg.Close()
		<-m.done
	}
	balanced := func(ms []*saramaMember, each int) func() error {
		return func() error {
			mu.Lock()
			gerr := groupErr
			mu.Unlock()
			if gerr != nil {
				return gerr
			}
			var counts []int
			for _, m := range ms {
				counts = append(counts, m.count())
			}
			for _, c := range counts {
				if c != each {
					return fmt.Errorf("assignment %v, want %d partitions each", counts, each)
				}
			}
			return nil
		}
	}
	var ms []*saramaMember
	defer func() {
		for _, m := range ms {
			closeMember(m)
		}
	}()
	for i := 0; i < 3; i++ {
		m, err := start()
		if err != nil {
			return err
		}
		ms = append(ms, m)
	}
	if err := eventually(ctx, 100*time.Millisecond, balanced(ms, 2)); err != nil {
		return fmt.Errorf("3 members: %w", err)
	}
	closeMember(ms[2])
	ms = ms[:2]
	if err := eventually(ctx, 100*time.Millisecond, balanced(ms, 3)); err != nil {
		return fmt.Errorf("after one member left: %w", err)
	}
	if err := eventually(ctx, 100*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(seen) < groupParts*groupPerPart {
			return fmt.Errorf("group consumed %d of %d records", len(seen), groupParts*groupPerPart)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, m := range ms {
		closeMember(m)
	}
	ms = nil
	msgs = nil
	for p := 0; p < groupParts; p++ {
		msgs = append(msgs, toSarama(topic, rec{Partition: int32(p), Value: []byte(fmt.Sprintf("after-%d", p))}))
	}
	if err := s.send(msgs, manual); err != nil {
		return err
	}
	mu.Lock()
	seen = map[string]bool{}
	mu.Unlock()
	m, err := start()
	if err != nil {
		return err
	}
	ms = append(ms, m)
	return eventually(ctx, 100*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		for v := range seen {
			if !strings.HasPrefix(v, "after-") {
				return fmt.Errorf("resumed member re-read %q: committed offsets not used", v)
			}
		}
		if len(seen) < groupParts {
			return fmt.Errorf("resumed member read %d of %d new records", len(seen), groupParts)
		}
		return nil
	})
}

// secure runs sasl_plain, sasl_scram, ssl and sasl_ssl: one record through the scenario's
// listener, then a client that must be refused (wrong password, or no trust in the CA for ssl).
func (s *saramaEnv) secure(ctx context.Context, scenario string) error {
	l, err := listenerFor(s.env, scenario)
	if err != nil {
		return err
	}
	tune := func(pass string, trusted bool) (func(*sarama.Config), error) {
		tlsCfg, err := l.tls(s.env, trusted)
		if err != nil {
			return nil, err
		}
		return func(c *sarama.Config) {
			if tlsCfg != nil {
				c.Net.TLS.Enable, c.Net.TLS.Config = true, tlsCfg
			}
			if l.Mechanism == "" {
				return
			}
			c.Net.SASL.Enable = true
			c.Net.SASL.User, c.Net.SASL.Password = s.env.User, pass
			c.Net.SASL.Handshake = true
			switch l.Mechanism {
			case "PLAIN":
				c.Net.SASL.Mechanism = sarama.SASLTypePlaintext
			case "SCRAM-SHA-256":
				c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
				c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return newScramSHA256() }
			case "SCRAM-SHA-512":
				c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
				c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return newScramSHA512() }
			}
		}, nil
	}
	good, err := tune(s.env.Pass, true)
	if err != nil {
		return err
	}
	ss := &saramaEnv{env: s.env, tune: good}
	ss.env.Bootstrap = l.Bootstrap
	topic := s.env.Prefix + "-" + strings.ReplaceAll(scenario, "_", "-")
	if err := ss.create(topic, 1, nil); err != nil {
		return err
	}
	if err := ss.send([]*sarama.ProducerMessage{toSarama(topic, rec{Value: []byte(l.Value)})}, nil); err != nil {
		return err
	}
	got, err := ss.readAll(ctx, topic, -1, nil)
	if err != nil {
		return err
	}
	if len(got) != 1 || string(got[0].Value) != l.Value {
		return fmt.Errorf("read %d records back, want the one %q", len(got), l.Value)
	}
	refused := "a wrong password was accepted"
	badTune, err := tune("wrong-"+s.env.Pass, true)
	if l.Mechanism == "" {
		refused = "a client that does not trust the CA completed a TLS handshake"
		badTune, err = tune(s.env.Pass, false)
	}
	if err != nil {
		return err
	}
	bad := &saramaEnv{env: ss.env, tune: badTune}
	c := bad.config()
	c.Metadata.Retry.Max = 0
	cl, err := sarama.NewClient(bad.addrs(), c)
	if err == nil {
		cl.Close()
		return errors.New(refused)
	}
	return nil
}
