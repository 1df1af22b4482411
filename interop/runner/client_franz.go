package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { goDrivers["franz-go"] = franzScenario }

func franzScenario(ctx context.Context, env Env, scenario string) error {
	switch scenario {
	case "metadata":
		return franzMetadata(ctx, env)
	case "topic_admin":
		return franzTopicAdmin(ctx, env)
	case "produce_consume":
		return franzProduceConsume(ctx, env)
	case "consume_timestamp":
		return franzTimestamp(ctx, env)
	case "idempotent":
		return franzIdempotent(ctx, env)
	case "consumer_group":
		return franzGroup(ctx, env)
	case "share_group":
		return franzShare(ctx, env)
	case "transactions":
		return franzTxn(ctx, env)
	case "admin":
		return franzAdmin(ctx, env)
	case "sasl_plain", "sasl_scram", "ssl", "sasl_ssl":
		return franzSecure(ctx, env, scenario)
	}
	return skipf("franz-go driver has no scenario %q", scenario)
}

func franzClient(env Env, opts ...kgo.Opt) (*kgo.Client, error) {
	base := []kgo.Opt{kgo.SeedBrokers(strings.Split(env.Bootstrap, ",")...), kgo.ClientID("interop-franz-go")}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("franz-go: new client: %w", err)
	}
	return cl, nil
}

func franzCreate(ctx context.Context, env Env, topic string, parts int32, configs map[string]*string) error {
	cl, err := franzClient(env)
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, parts, env.rf(), configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return nil
}

func franzMetadata(ctx context.Context, env Env) error {
	cl, err := franzClient(env)
	if err != nil {
		return err
	}
	defer cl.Close()
	av, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("ApiVersions: %w", err)
	}
	seen := map[int16]bool{}
	for _, k := range av.ApiKeys {
		seen[k.ApiKey] = true
	}
	for _, k := range []int16{keyProduce, keyFetch, keyMetadata, keyApiVersions} {
		if !seen[k] {
			return fmt.Errorf("ApiVersions does not list %s", apiName(k))
		}
	}
	topic := env.Prefix + "-meta"
	if err := franzCreate(ctx, env, topic, 3, nil); err != nil {
		return err
	}
	adm := kadm.NewClient(cl)
	return eventually(ctx, 200*time.Millisecond, func() error {
		m, err := adm.Metadata(ctx, topic)
		if err != nil {
			return fmt.Errorf("metadata: %w", err)
		}
		if len(m.Brokers) == 0 {
			return errors.New("metadata lists no brokers")
		}
		td, ok := m.Topics[topic]
		if !ok || td.Err != nil {
			return fmt.Errorf("metadata for %s: present=%v err=%v", topic, ok, td.Err)
		}
		if len(td.Partitions) != 3 {
			return fmt.Errorf("metadata for %s: %d partitions, want 3", topic, len(td.Partitions))
		}
		for _, p := range td.Partitions {
			if p.Err != nil || p.Leader < 0 {
				return fmt.Errorf("partition %d: leader %d err %v", p.Partition, p.Leader, p.Err)
			}
		}
		return nil
	})
}

func strp(s string) *string { return &s }

func franzTopicConfig(ctx context.Context, adm *kadm.Client, topic, key string) (string, error) {
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return "", fmt.Errorf("describe configs: %w", err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		return "", fmt.Errorf("describe configs of %s: %v %v", topic, err, rc.Err)
	}
	for _, c := range rc.Configs {
		if c.Key == key {
			if c.Value == nil {
				return "", nil
			}
			return *c.Value, nil
		}
	}
	return "", fmt.Errorf("describe configs of %s: no %s among %d configs", topic, key, len(rc.Configs))
}

func franzTopicAdmin(ctx context.Context, env Env) error {
	cl, err := franzClient(env)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topic := env.Prefix + "-topic"
	if err := franzCreate(ctx, env, topic, 3, map[string]*string{"retention.ms": strp("3600000")}); err != nil {
		return err
	}
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return err
		}
		if n := len(td[topic].Partitions); n != 3 {
			return fmt.Errorf("describe %s: %d partitions, want 3", topic, n)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		if v, err := franzTopicConfig(ctx, adm, topic, "retention.ms"); err != nil || v != "3600000" {
			return fmt.Errorf("retention.ms after create = %q (%v), want 3600000", v, err)
		}
		return nil
	}); err != nil {
		return err
	}
	ar, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: strp("7200000")}}, topic)
	if err == nil {
		for _, r := range ar {
			err = errors.Join(err, r.Err)
		}
	}
	if err != nil {
		return fmt.Errorf("incremental alter configs: %w", err)
	}
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		if v, err := franzTopicConfig(ctx, adm, topic, "retention.ms"); err != nil || v != "7200000" {
			return fmt.Errorf("retention.ms after alter = %q (%v), want 7200000", v, err)
		}
		return nil
	}); err != nil {
		return err
	}
	dr, err := adm.DeleteTopic(ctx, topic)
	if err == nil {
		err = dr.Err
	}
	if err != nil {
		return fmt.Errorf("delete topic: %w", err)
	}
	return eventually(ctx, 200*time.Millisecond, func() error {
		td, err := adm.ListTopics(ctx)
		if err != nil {
			return err
		}
		if td.Has(topic) {
			return fmt.Errorf("topic %s still listed after delete", topic)
		}
		return nil
	})
}

// franzConsume reads topic from the start (no group) until want records arrived or ctx ends.
func franzConsume(ctx context.Context, env Env, topic string, want int, opts ...kgo.Opt) ([]rec, error) {
	cl, err := franzClient(env, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var got []rec
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return got, fmt.Errorf("consumed %d of %d records: %w", len(got), want, ctx.Err())
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("fetch %s/%d: %w", t, p, err) })
		if ferr != nil {
			return got, ferr
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, fromKgo(r)) })
	}
	return got, nil
}

func fromKgo(r *kgo.Record) rec {
	out := rec{Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, [2]string{h.Key, string(h.Value)})
	}
	return out
}

func toKgo(topic string, r rec) *kgo.Record {
	out := &kgo.Record{Topic: topic, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, kgo.RecordHeader{Key: h[0], Value: []byte(h[1])})
	}
	return out
}

func franzProduceAll(ctx context.Context, cl *kgo.Client, topic string, rs []rec) error {
	var recs []*kgo.Record
	for _, r := range rs {
		recs = append(recs, toKgo(topic, r))
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce to %s: %w", topic, err)
	}
	return nil
}

func franzProduceConsume(ctx context.Context, env Env) error {
	topic := env.Prefix + "-pc"
	if err := franzCreate(ctx, env, topic, 3, nil); err != nil {
		return err
	}
	var all []rec
	for _, codec := range codecs {
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
		cl, err := franzClient(env, kgo.ProducerBatchCompression(c))
		if err != nil {
			return err
		}
		rs := pcRecords(codec)
		err = franzProduceAll(ctx, cl, topic, rs)
		cl.Close()
		if err != nil {
			return fmt.Errorf("codec %s: %w", codec, err)
		}
		all = append(all, rs...)
	}
	got, err := franzConsume(ctx, env, topic, len(all))
	if err != nil {
		return err
	}
	return checkSameRecords(all, got)
}

func franzTimestamp(ctx context.Context, env Env) error {
	topic := env.Prefix + "-ts"
	if err := franzCreate(ctx, env, topic, 1, nil); err != nil {
		return err
	}
	base := time.Now().Add(-time.Minute).UnixMilli()
	var rs []rec
	for i := 0; i < tsCount; i++ {
		rs = append(rs, rec{Value: []byte(fmt.Sprintf("ts-%d", i)), Timestamp: time.UnixMilli(base + int64(i*tsStepMs))})
	}
	cl, err := franzClient(env)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := franzProduceAll(ctx, cl, topic, rs); err != nil {
		return err
	}
	at := base + tsPickIndex*tsStepMs
	for _, q := range []int64{at, at - tsStepMs/2} {
		lo, err := kadm.NewClient(cl).ListOffsetsAfterMilli(ctx, q, topic)
		if err != nil {
			return fmt.Errorf("list offsets after %d: %w", q, err)
		}
		o, ok := lo.Lookup(topic, 0)
		if !ok || o.Err != nil || o.Offset != tsPickIndex {
			return fmt.Errorf("offset for timestamp base+%d = %d (err %v), want %d", q-base, o.Offset, o.Err, tsPickIndex)
		}
	}
	got, err := franzConsume(ctx, env, topic, tsCount-tsPickIndex,
		kgo.ConsumeResetOffset(kgo.NewOffset().AfterMilli(at)))
	if err != nil {
		return err
	}
	if got[0].Offset != tsPickIndex || string(got[0].Value) != fmt.Sprintf("ts-%d", tsPickIndex) || got[0].Timestamp.UnixMilli() != at {
		return fmt.Errorf("first record from timestamp: offset %d value %q ts %d, want offset %d ts %d",
			got[0].Offset, got[0].Value, got[0].Timestamp.UnixMilli(), tsPickIndex, at)
	}
	return nil
}

func franzIdempotent(ctx context.Context, env Env) error {
	topic := env.Prefix + "-idem"
	if err := franzCreate(ctx, env, topic, 1, nil); err != nil {
		return err
	}
	cl, err := franzClient(env, kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var perr error
	for i := 0; i < idemCount; i++ {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("idem-%d", i))}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				perr = errors.Join(perr, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if perr != nil {
		return fmt.Errorf("idempotent produce: %w", perr)
	}
	got, err := franzConsume(ctx, env, topic, idemCount)
	if err != nil {
		return err
	}
	return checkContiguous(got, "idem", idemCount)
}
