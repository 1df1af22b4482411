package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// franzMember is one consumer-group member polling in its own goroutine.
type franzMember struct {
	cl       *kgo.Client
	mu       sync.Mutex
	assigned map[int32]bool
	stop     chan struct{}
	done     chan struct{}
}

func (m *franzMember) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.assigned)
}

func franzGroup(ctx context.Context, env Env) error {
	topic, group := env.Prefix+"-grp", env.Prefix+"-grp"
	if err := franzCreate(ctx, env, topic, groupParts, nil); err != nil {
		return err
	}
	pcl, err := franzClient(env, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer pcl.Close()
	var first []*kgo.Record
	for i := 0; i < groupParts*groupPerPart; i++ {
		first = append(first, &kgo.Record{Topic: topic, Partition: int32(i % groupParts), Value: []byte(fmt.Sprintf("g-%d", i))})
	}
	if err := pcl.ProduceSync(ctx, first...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}

	var seenMu sync.Mutex
	seen := map[string]bool{}
	var pollErr error
	start := func() (*franzMember, error) {
		m := &franzMember{assigned: map[int32]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
		cl, err := franzClient(env, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
				m.mu.Lock()
				for _, p := range a[topic] {
					m.assigned[p] = true
				}
				m.mu.Unlock()
			}),
			kgo.OnPartitionsRevoked(func(ctx context.Context, c *kgo.Client, r map[string][]int32) {
				_ = c.CommitUncommittedOffsets(ctx)
				m.mu.Lock()
				for _, p := range r[topic] {
					delete(m.assigned, p)
				}
				m.mu.Unlock()
			}),
			kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, l map[string][]int32) {
				m.mu.Lock()
				for _, p := range l[topic] {
					delete(m.assigned, p)
				}
				m.mu.Unlock()
			}))
		if err != nil {
			return nil, err
		}
		m.cl = cl
		go func() {
			defer close(m.done)
			for {
				pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				fs := cl.PollFetches(pctx)
				cancel()
				select {
				case <-m.stop:
					return
				default:
				}
				fs.EachError(func(t string, p int32, err error) {
					if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
						seenMu.Lock()
						pollErr = errors.Join(pollErr, fmt.Errorf("fetch %s/%d: %w", t, p, err))
						seenMu.Unlock()
					}
				})
				fs.EachRecord(func(r *kgo.Record) {
					seenMu.Lock()
					seen[string(r.Value)] = true
					seenMu.Unlock()
				})
				if err := cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
					seenMu.Lock()
					pollErr = errors.Join(pollErr, fmt.Errorf("commit: %w", err))
					seenMu.Unlock()
				}
				if ctx.Err() != nil {
					return
				}
			}
		}()
		return m, nil
	}
	closeMember := func(m *franzMember) {
		close(m.stop)
		<-m.done
		_ = m.cl.CommitUncommittedOffsets(ctx)
		m.cl.Close() // leaves the group
	}
	var members []*franzMember
	defer func() {
		for _, m := range members {
			select {
			case <-m.stop:
			default:
				closeMember(m)
			}
		}
	}()
	for i := 0; i < 3; i++ {
		m, err := start()
		if err != nil {
			return err
		}
		members = append(members, m)
	}
	balanced := func(ms []*franzMember, each int) func() error {
		return func() error {
			seenMu.Lock()
			perr := pollErr
			seenMu.Unlock()
			if perr != nil {
				return perr
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
	if err := eventually(ctx, 100*time.Millisecond, balanced(members, 2)); err != nil {
		return fmt.Errorf("3 members: %w", err)
	}
	closeMember(members[2])
	if err := eventually(ctx, 100*time.Millisecond, balanced(members[:2], 3)); err != nil {
		return fmt.Errorf("after one member left: %w", err)
	}
	if err := eventually(ctx, 100*time.Millisecond, func() error {
		seenMu.Lock()
		defer seenMu.Unlock()
		if len(seen) < len(first) {
			return fmt.Errorf("group consumed %d of %d records", len(seen), len(first))
		}
		return nil
	}); err != nil {
		return err
	}
	closeMember(members[0])
	closeMember(members[1])
	members = nil

	var after []*kgo.Record
	for p := 0; p < groupParts; p++ {
		after = append(after, &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte(fmt.Sprintf("after-%d", p))})
	}
	if err := pcl.ProduceSync(ctx, after...).FirstErr(); err != nil {
		return fmt.Errorf("produce after: %w", err)
	}
	seenMu.Lock()
	seen = map[string]bool{}
	seenMu.Unlock()
	m, err := start()
	if err != nil {
		return err
	}
	members = append(members, m)
	err = eventually(ctx, 100*time.Millisecond, func() error {
		seenMu.Lock()
		defer seenMu.Unlock()
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
	if err != nil {
		return err
	}
	seenMu.Lock()
	defer seenMu.Unlock()
	for v := range seen {
		if !strings.HasPrefix(v, "after-") {
			return fmt.Errorf("resumed member re-read %q: committed offsets not used", v)
		}
	}
	return nil
}

func franzTxn(ctx context.Context, env Env) error {
	topic := env.Prefix + "-txn"
	if err := franzCreate(ctx, env, topic, 1, nil); err != nil {
		return err
	}
	cl, err := franzClient(env, kgo.TransactionalID(env.Prefix+"-tx"), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return err
	}
	defer cl.Close()
	for _, step := range []struct {
		prefix string
		commit kgo.TransactionEndTry
	}{{"c1", kgo.TryCommit}, {"a", kgo.TryAbort}, {"c2", kgo.TryCommit}} {
		if err := cl.BeginTransaction(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		var rs []rec
		for i := 0; i < 5; i++ {
			rs = append(rs, rec{Value: []byte(fmt.Sprintf("%s-%d", step.prefix, i))})
		}
		if err := franzProduceAll(ctx, cl, topic, rs); err != nil {
			return err
		}
		if err := cl.EndTransaction(ctx, step.commit); err != nil {
			return fmt.Errorf("end transaction %s: %w", step.prefix, err)
		}
	}
	committed, err := franzConsume(ctx, env, topic, 10, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return fmt.Errorf("read_committed: %w", err)
	}
	if got, want := fmt.Sprint(values(committed)), fmt.Sprint(txnCommitted()); got != want {
		return fmt.Errorf("read_committed saw %s, want %s", got, want)
	}
	all, err := franzConsume(ctx, env, topic, 15, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	if err != nil {
		return fmt.Errorf("read_uncommitted: %w", err)
	}
	if len(all) != 15 {
		return fmt.Errorf("read_uncommitted saw %d records, want 15", len(all))
	}
	end, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return err
	}
	if o, _ := end.Lookup(topic, 0); o.Offset != 18 {
		return fmt.Errorf("end offset %d, want 18 (15 records and 3 control batches)", o.Offset)
	}
	return nil
}

func franzAdmin(ctx context.Context, env Env) error {
	topic := env.Prefix + "-adm"
	if err := franzCreate(ctx, env, topic, 1, nil); err != nil {
		return err
	}
	cl, err := franzClient(env, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	// Every broker learns of a new topic from the metadata log, a moment after the create.
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		if v, err := franzTopicConfig(ctx, adm, topic, "cleanup.policy"); err != nil || v != "delete" {
			return fmt.Errorf("cleanup.policy = %q (%v), want delete", v, err)
		}
		return nil
	}); err != nil {
		return err
	}
	dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("describe cluster: %w", err)
	}
	if dc.ErrorCode != 0 || dc.ClusterID == "" || len(dc.Brokers) == 0 {
		return fmt.Errorf("describe cluster: error %d, cluster id %q, %d brokers", dc.ErrorCode, dc.ClusterID, len(dc.Brokers))
	}
	bc, err := adm.DescribeBrokerConfigs(ctx, dc.Brokers[0].NodeID)
	if err != nil || len(bc) == 0 || bc[0].Err != nil || len(bc[0].Configs) == 0 {
		return fmt.Errorf("describe broker %d configs: %v (%d resources)", dc.Brokers[0].NodeID, err, len(bc))
	}
	// kadm reads the current partition count from the metadata of any
	// broker, which may not know the topic yet; like Kafka's AdminClient,
	// retry while the topic is unknown (nothing was created then).
	var createErr error
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		cp, err := adm.CreatePartitions(ctx, 2, topic)
		if err == nil {
			err = cp[topic].Err
		}
		if errors.Is(err, kerr.UnknownTopicOrPartition) {
			return err
		}
		createErr = err
		return nil
	}); err != nil {
		createErr = err
	}
	if createErr != nil {
		return fmt.Errorf("create partitions: %w", createErr)
	}
	if err := eventually(ctx, 200*time.Millisecond, func() error {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return err
		}
		if n := len(td[topic].Partitions); n != 3 {
			return fmt.Errorf("%d partitions after create partitions, want 3", n)
		}
		return nil
	}); err != nil {
		return err
	}
	var rs []*kgo.Record
	for i := 0; i < 10; i++ {
		rs = append(rs, &kgo.Record{Topic: topic, Partition: 0, Value: []byte(fmt.Sprint(i))})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	check := func(what string, list func(context.Context, ...string) (kadm.ListedOffsets, error), want int64) error {
		lo, err := list(ctx, topic)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if o, _ := lo.Lookup(topic, 0); o.Err != nil || o.Offset != want {
			return fmt.Errorf("%s of partition 0 = %d (%v), want %d", what, o.Offset, o.Err, want)
		}
		return nil
	}
	if err := errors.Join(check("earliest", adm.ListStartOffsets, 0), check("latest", adm.ListEndOffsets, 10)); err != nil {
		return err
	}
	var os kadm.Offsets
	os.AddOffset(topic, 0, adminDeleteTo, -1)
	dr, err := adm.DeleteRecords(ctx, os)
	if err != nil {
		return fmt.Errorf("delete records: %w", err)
	}
	if r, ok := dr.Lookup(topic, 0); !ok || r.Err != nil || r.LowWatermark != adminDeleteTo {
		return fmt.Errorf("delete records: low watermark %d (%v), want %d", r.LowWatermark, r.Err, adminDeleteTo)
	}
	return check("earliest after delete records", adm.ListStartOffsets, adminDeleteTo)
}

// franzSecure runs sasl_plain, sasl_scram, ssl and sasl_ssl: one record through the scenario's
// listener, then a client that must be refused (wrong password, or no trust in the CA for ssl).
func franzSecure(ctx context.Context, env Env, scenario string) error {
	l, err := listenerFor(env, scenario)
	if err != nil {
		return err
	}
	opts := func(pass string, trusted bool) ([]kgo.Opt, error) {
		var o []kgo.Opt
		switch l.Mechanism {
		case "PLAIN":
			o = append(o, kgo.SASL(plain.Auth{User: env.User, Pass: pass}.AsMechanism()))
		case "SCRAM-SHA-256":
			o = append(o, kgo.SASL(scram.Auth{User: env.User, Pass: pass}.AsSha256Mechanism()))
		case "SCRAM-SHA-512":
			o = append(o, kgo.SASL(scram.Auth{User: env.User, Pass: pass}.AsSha512Mechanism()))
		}
		cfg, err := l.tls(env, trusted)
		if err != nil {
			return nil, err
		}
		if cfg != nil {
			o = append(o, kgo.DialTLSConfig(cfg))
		}
		return o, nil
	}
	good, err := opts(env.Pass, true)
	if err != nil {
		return err
	}
	secEnv := env
	secEnv.Bootstrap = l.Bootstrap
	topic := env.Prefix + "-" + strings.ReplaceAll(scenario, "_", "-")
	cl, err := franzClient(secEnv, good...)
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, 1, env.rf(), nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic over %s: %w", scenario, err)
	}
	if err := franzProduceAll(ctx, cl, topic, []rec{{Value: []byte(l.Value)}}); err != nil {
		return err
	}
	got, err := franzConsume(ctx, secEnv, topic, 1, good...)
	if err != nil {
		return err
	}
	if string(got[0].Value) != l.Value {
		return fmt.Errorf("read %q back, want %s", got[0].Value, l.Value)
	}
	refused := "a wrong password was accepted"
	bad, err := opts("wrong-"+env.Pass, true)
	if l.Mechanism == "" {
		refused = "a client that does not trust the CA completed a TLS handshake"
		bad, err = opts(env.Pass, false)
	}
	if err != nil {
		return err
	}
	bcl, err := franzClient(secEnv, bad...)
	if err != nil {
		return err
	}
	defer bcl.Close()
	bctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := bcl.Ping(bctx); err == nil {
		return errors.New(refused)
	}
	return nil
}
