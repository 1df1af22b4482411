package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

func init() { goDrivers["kafka-go"] = kafkagoScenario }

func kafkagoScenario(ctx context.Context, env Env, scenario string) error {
	k := &kgoEnv{env: env}
	switch scenario {
	case "metadata":
		return k.metadata(ctx)
	case "topic_admin":
		return k.topicAdmin(ctx)
	case "produce_consume":
		return k.produceConsume(ctx)
	case "consume_timestamp":
		return k.timestamp(ctx)
	case "consumer_group":
		return k.group(ctx)
	case "idempotent":
		return skipf("kafka-go has no idempotent producer")
	case "transactions":
		return skipf("kafka-go has no transactional producer")
	case "admin":
		return skipf("kafka-go has no DeleteRecords or DescribeCluster API")
	case "sasl_plain", "sasl_scram", "ssl", "sasl_ssl":
		return k.secure(ctx, scenario)
	}
	return skipf("kafka-go driver has no scenario %q", scenario)
}

// kgoEnv carries the target and, for the security scenarios, the mechanism and TLS
// configuration every connection uses.
type kgoEnv struct {
	env  Env
	mech sasl.Mechanism
	tls  *tls.Config
}

func (k *kgoEnv) addr() string { return strings.Split(k.env.Bootstrap, ",")[0] }

func (k *kgoEnv) client() *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(k.addr()), Timeout: 30 * time.Second,
		Transport: &kafka.Transport{SASL: k.mech, TLS: k.tls, ClientID: "interop-kafka-go"}}
}

func (k *kgoEnv) create(ctx context.Context, topic string, parts int, configs ...kafka.ConfigEntry) error {
	resp, err := k.client().CreateTopics(ctx, &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: parts, ReplicationFactor: int(k.env.rf()), ConfigEntries: configs}}})
	if err == nil {
		err = resp.Errors[topic]
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return nil
}

func (k *kgoEnv) partitions(ctx context.Context, topic string) (int, error) {
	md, err := k.client().Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, err
	}
	for _, t := range md.Topics {
		if t.Name == topic {
			if t.Error != nil {
				return 0, t.Error
			}
			for _, p := range t.Partitions {
				if p.Error != nil || p.Leader.ID < 0 {
					return 0, fmt.Errorf("partition %d: leader %d err %v", p.ID, p.Leader.ID, p.Error)
				}
			}
			return len(t.Partitions), nil
		}
	}
	return 0, fmt.Errorf("metadata does not list %s", topic)
}

func (k *kgoEnv) metadata(ctx context.Context) error {
	md, err := k.client().Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if len(md.Brokers) == 0 {
		return errors.New("metadata lists no brokers")
	}
	topic := k.env.Prefix + "-meta"
	if err := k.create(ctx, topic, 3); err != nil {
		return err
	}
	return eventually(ctx, 200*time.Millisecond, func() error {
		n, err := k.partitions(ctx, topic)
		if err == nil && n != 3 {
			err = fmt.Errorf("%d partitions, want 3", n)
		}
		return err
	})
}

func (k *kgoEnv) topicConfig(ctx context.Context, topic, name string) (string, error) {
	resp, err := k.client().DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{
		{ResourceType: kafka.ResourceTypeTopic, ResourceName: topic}}})
	if err != nil {
		return "", err
	}
	for _, r := range resp.Resources {
		if r.Error != nil {
			return "", r.Error
		}
		for _, c := range r.ConfigEntries {
			if c.ConfigName == name {
				return c.ConfigValue, nil
			}
		}
	}
	return "", fmt.Errorf("describe configs of %s: no %s", topic, name)
}

func (k *kgoEnv) topicAdmin(ctx context.Context) error {
	topic := k.env.Prefix + "-topic"
	if err := k.create(ctx, topic, 3, kafka.ConfigEntry{ConfigName: "retention.ms", ConfigValue: "3600000"}); err != nil {
		return err
	}
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		if v, err := k.topicConfig(ctx, topic, "retention.ms"); err != nil || v != "3600000" {
			return fmt.Errorf("retention.ms after create = %q (%v), want 3600000", v, err)
		}
		return nil
	}); err != nil {
		return err
	}
	ar, err := k.client().IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{Resources: []kafka.IncrementalAlterConfigsRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
		Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: "retention.ms", Value: "7200000", ConfigOperation: kafka.ConfigOperationSet}}}}})
	if err == nil {
		for _, r := range ar.Resources {
			err = errors.Join(err, r.Error)
		}
	}
	if err != nil {
		return fmt.Errorf("incremental alter configs: %w", err)
	}
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		if v, err := k.topicConfig(ctx, topic, "retention.ms"); err != nil || v != "7200000" {
			return fmt.Errorf("retention.ms after alter = %q (%v), want 7200000", v, err)
		}
		return nil
	}); err != nil {
		return err
	}
	dr, err := k.client().DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err == nil {
		err = dr.Errors[topic]
	}
	if err != nil {
		return fmt.Errorf("delete topic: %w", err)
	}
	return eventually(ctx, 200*time.Millisecond, func() error {
		md, err := k.client().Metadata(ctx, &kafka.MetadataRequest{})
		if err != nil {
			return err
		}
		for _, t := range md.Topics {
			if t.Name == topic {
				return fmt.Errorf("topic %s still listed after delete", topic)
			}
		}
		return nil
	})
}

// partitionHeader names the partition a record must go to; kafka-go's Writer only places
// records through a Balancer.
const partitionHeader = "interop-partition"

// byHeader places a record on the partition its header names, and keyed or unkeyed records
// as kafka-go's murmur2-free Hash balancer does.
var byHeader = kafka.BalancerFunc(func(m kafka.Message, parts ...int) int {
	for _, h := range m.Headers {
		if h.Key == partitionHeader {
			p, _ := strconv.Atoi(string(h.Value))
			return p
		}
	}
	return (&kafka.Hash{}).Balance(m, parts...)
})

func (k *kgoEnv) writer(topic string, codec kafka.Compression) *kafka.Writer {
	return &kafka.Writer{Addr: kafka.TCP(k.addr()), Topic: topic, Compression: codec, RequiredAcks: kafka.RequireAll,
		BatchTimeout: 5 * time.Millisecond, Transport: &kafka.Transport{SASL: k.mech, TLS: k.tls, ClientID: "interop-kafka-go"},
		Balancer: byHeader}
}

// readPartition reads one partition from offset up to its high watermark without a group.
func (k *kgoEnv) readPartition(ctx context.Context, topic string, part int, offset int64) ([]rec, error) {
	d := &kafka.Dialer{ClientID: "interop-kafka-go", SASLMechanism: k.mech, TLS: k.tls, Timeout: 10 * time.Second}
	conn, err := d.DialLeader(ctx, "tcp", k.addr(), topic, part)
	if err != nil {
		return nil, fmt.Errorf("dial leader of %s/%d: %w", topic, part, err)
	}
	defer conn.Close()
	hw, err := conn.ReadLastOffset()
	if err != nil {
		return nil, fmt.Errorf("high watermark of %s/%d: %w", topic, part, err)
	}
	var out []rec
	for offset < hw {
		if _, err := conn.Seek(offset, kafka.SeekAbsolute); err != nil {
			return nil, err
		}
		if dl, ok := ctx.Deadline(); ok {
			_ = conn.SetReadDeadline(dl)
		}
		b := conn.ReadBatch(1, 10<<20)
		for {
			m, err := b.ReadMessage()
			if err != nil {
				break
			}
			r := rec{Partition: int32(part), Offset: m.Offset, Key: m.Key, Value: m.Value, Timestamp: m.Time}
			for _, h := range m.Headers {
				r.Headers = append(r.Headers, [2]string{h.Key, string(h.Value)})
			}
			out = append(out, r)
			offset = m.Offset + 1
		}
		if err := b.Close(); err != nil {
			return nil, fmt.Errorf("fetch %s/%d at %d: %w", topic, part, offset, err)
		}
	}
	return out, nil
}

func (k *kgoEnv) readAll(ctx context.Context, topic string) ([]rec, error) {
	n, err := k.partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	var all []rec
	for p := 0; p < n; p++ {
		rs, err := k.readPartition(ctx, topic, p, 0)
		if err != nil {
			return nil, err
		}
		all = append(all, rs...)
	}
	return all, nil
}

func toKafkaGo(r rec) kafka.Message {
	m := kafka.Message{Key: r.Key, Value: r.Value, Time: r.Timestamp}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, kafka.Header{Key: h[0], Value: []byte(h[1])})
	}
	return m
}

func (k *kgoEnv) produceConsume(ctx context.Context) error {
	topic := k.env.Prefix + "-pc"
	if err := k.create(ctx, topic, 3); err != nil {
		return err
	}
	codecs := map[string]kafka.Compression{"none": 0, "gzip": kafka.Gzip, "snappy": kafka.Snappy, "lz4": kafka.Lz4, "zstd": kafka.Zstd}
	var all []rec
	for _, name := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		w := k.writer(topic, codecs[name])
		var msgs []kafka.Message
		rs := pcRecords(name)
		for _, r := range rs {
			msgs = append(msgs, toKafkaGo(r))
		}
		err := w.WriteMessages(ctx, msgs...)
		w.Close()
		if err != nil {
			return fmt.Errorf("codec %s: %w", name, err)
		}
		all = append(all, rs...)
	}
	got, err := k.readAll(ctx, topic)
	if err != nil {
		return err
	}
	return checkSameRecords(all, got)
}

func (k *kgoEnv) timestamp(ctx context.Context) error {
	topic := k.env.Prefix + "-ts"
	if err := k.create(ctx, topic, 1); err != nil {
		return err
	}
	base := time.Now().Add(-time.Minute).UnixMilli()
	w := k.writer(topic, 0)
	defer w.Close()
	var msgs []kafka.Message
	for i := 0; i < tsCount; i++ {
		msgs = append(msgs, kafka.Message{Value: []byte(fmt.Sprintf("ts-%d", i)), Time: time.UnixMilli(base + int64(i*tsStepMs))})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	d := &kafka.Dialer{ClientID: "interop-kafka-go", SASLMechanism: k.mech, TLS: k.tls}
	conn, err := d.DialLeader(ctx, "tcp", k.addr(), topic, 0)
	if err != nil {
		return err
	}
	defer conn.Close()
	at := base + tsPickIndex*tsStepMs
	for _, q := range []int64{at, at - tsStepMs/2} {
		o, err := conn.ReadOffset(time.UnixMilli(q))
		if err != nil || o != tsPickIndex {
			return fmt.Errorf("offset for timestamp base+%d = %d (%v), want %d", q-base, o, err, tsPickIndex)
		}
	}
	got, err := k.readPartition(ctx, topic, 0, tsPickIndex)
	if err != nil {
		return err
	}
	if len(got) == 0 || got[0].Offset != tsPickIndex || string(got[0].Value) != "ts-5" || got[0].Timestamp.UnixMilli() != at {
		return fmt.Errorf("first record from timestamp: %+v, want offset 5 ts-5 at base+5000", got)
	}
	return nil
}

func (k *kgoEnv) group(ctx context.Context) error {
	topic, group := k.env.Prefix+"-grp", k.env.Prefix+"-grp"
	if err := k.create(ctx, topic, groupParts); err != nil {
		return err
	}
	produce := func(values func(p, i int) string, per int) error {
		w := k.writer(topic, 0)
		defer w.Close()
		var msgs []kafka.Message
		for i := 0; i < groupParts*per; i++ {
			p := i % groupParts
			msgs = append(msgs, kafka.Message{Value: []byte(values(p, i)),
				Headers: []kafka.Header{{Key: partitionHeader, Value: []byte(strconv.Itoa(p))}}})
		}
		return w.WriteMessages(ctx, msgs...)
	}
	if err := produce(func(_, i int) string { return fmt.Sprintf("g-%d", i) }, groupPerPart); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	var readErr error
	type member struct {
		r       *kafka.Reader
		done    chan struct{}
		closing atomic.Bool
	}
	start := func() *member {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{k.addr()}, GroupID: group, Topic: topic,
			StartOffset: kafka.FirstOffset, MaxWait: 100 * time.Millisecond, HeartbeatInterval: 500 * time.Millisecond,
			SessionTimeout: 10 * time.Second, RebalanceTimeout: 10 * time.Second, JoinGroupBackoff: 200 * time.Millisecond,
			Dialer: &kafka.Dialer{ClientID: "interop-kafka-go", SASLMechanism: k.mech, TLS: k.tls}})
		m := &member{r: r, done: make(chan struct{})}
		go func() {
			defer close(m.done)
			for {
				msg, err := r.FetchMessage(ctx)
				if err != nil {
					if !m.closing.Load() && ctx.Err() == nil {
						mu.Lock()
						readErr = errors.Join(readErr, err)
						mu.Unlock()
					}
					return
				}
				mu.Lock()
				seen[string(msg.Value)] = true
				mu.Unlock()
				if err := r.CommitMessages(ctx, msg); err != nil && ctx.Err() == nil {
					mu.Lock()
					readErr = errors.Join(readErr, fmt.Errorf("commit: %w", err))
					mu.Unlock()
				}
			}
		}()
		return m
	}
	closeMember := func(m *member) {
		if m.closing.Swap(true) {
			return
		}
		_ = m.r.Close()
		<-m.done
	}
	counts := func() ([]int, error) {
		dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := k.client().DescribeGroups(dctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
		if err != nil {
			return nil, err
		}
		var out []int
		for _, g := range resp.Groups {
			if g.GroupState != "Stable" {
				return nil, fmt.Errorf("group state %s", g.GroupState)
			}
			for _, m := range g.Members {
				n := 0
				for _, t := range m.MemberAssignments.Topics {
					n += len(t.Partitions)
				}
				out = append(out, n)
			}
		}
		return out, nil
	}
	balanced := func(members, each int) func() error {
		return func() error {
			mu.Lock()
			rerr := readErr
			mu.Unlock()
			if rerr != nil {
				return rerr
			}
			c, err := counts()
			if err != nil {
				return err
			}
			if len(c) != members {
				return fmt.Errorf("group has %d members, want %d", len(c), members)
			}
			for _, n := range c {
				if n != each {
					return fmt.Errorf("assignment %v, want %d partitions each", c, each)
				}
			}
			return nil
		}
	}
	ms := []*member{start(), start(), start()}
	defer func() {
		for _, m := range ms {
			closeMember(m)
		}
	}()
	if err := eventually(ctx, 200*time.Millisecond, balanced(3, 2)); err != nil {
		return fmt.Errorf("3 members: %w", err)
	}
	closeMember(ms[2])
	ms = ms[:2]
	if err := eventually(ctx, 200*time.Millisecond, balanced(2, 3)); err != nil {
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
	if err := produce(func(p, _ int) string { return fmt.Sprintf("after-%d", p) }, 1); err != nil {
		return fmt.Errorf("produce after: %w", err)
	}
	mu.Lock()
	seen = map[string]bool{}
	mu.Unlock()
	ms = append(ms, start())
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
func (k *kgoEnv) secure(ctx context.Context, scenario string) error {
	l, err := listenerFor(k.env, scenario)
	if err != nil {
		return err
	}
	conn := func(pass string, trusted bool) (*kgoEnv, error) {
		s := &kgoEnv{env: k.env}
		s.env.Bootstrap = l.Bootstrap
		switch l.Mechanism {
		case "PLAIN":
			s.mech = plain.Mechanism{Username: k.env.User, Password: pass}
		case "SCRAM-SHA-256":
			s.mech, err = scram.Mechanism(scram.SHA256, k.env.User, pass)
		case "SCRAM-SHA-512":
			s.mech, err = scram.Mechanism(scram.SHA512, k.env.User, pass)
		}
		if err != nil {
			return nil, err
		}
		s.tls, err = l.tls(k.env, trusted)
		return s, err
	}
	s, err := conn(k.env.Pass, true)
	if err != nil {
		return err
	}
	topic := k.env.Prefix + "-" + strings.ReplaceAll(scenario, "_", "-")
	if err := s.create(ctx, topic, 1); err != nil {
		return err
	}
	w := s.writer(topic, 0)
	err = w.WriteMessages(ctx, kafka.Message{Value: []byte(l.Value)})
	w.Close()
	if err != nil {
		return fmt.Errorf("produce over %s: %w", scenario, err)
	}
	got, err := s.readAll(ctx, topic)
	if err != nil {
		return err
	}
	if len(got) != 1 || string(got[0].Value) != l.Value {
		return fmt.Errorf("read %d records back, want the one %q", len(got), l.Value)
	}
	refused := "a wrong password was accepted"
	bad, err := conn("wrong-"+k.env.Pass, true)
	if l.Mechanism == "" {
		refused = "a client that does not trust the CA completed a TLS handshake"
		bad, err = conn(k.env.Pass, false)
	}
	if err != nil {
		return err
	}
	bctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := bad.client().Metadata(bctx, &kafka.MetadataRequest{}); err == nil {
		return errors.New(refused)
	}
	return nil
}
