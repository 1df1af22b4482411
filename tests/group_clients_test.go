package tests

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
)

// kafkaGoMember runs a kafka-go ConsumerGroup, recording each generation's
// assignment, until closed (which leaves the group).
func kafkaGoMember(t *testing.T, addr, group, topic, name string, as *assignments) (closeFn func()) {
	t.Helper()
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID: group, Brokers: []string{addr}, Topics: []string{topic},
		HeartbeatInterval: 100 * time.Millisecond, SessionTimeout: 2 * time.Second,
		RebalanceTimeout: 5 * time.Second, JoinGroupBackoff: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("kafka-go consumer group: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			gen, err := cg.Next(ctx)
			if err != nil {
				if !errors.Is(err, context.Canceled) && !errors.Is(err, kafka.ErrGroupClosed) {
					t.Logf("kafka-go %s: next generation: %v", name, err)
				}
				if ctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed) {
					return
				}
				continue
			}
			var parts []int32
			for _, pa := range gen.Assignments[topic] {
				parts = append(parts, int32(pa.ID))
			}
			as.set(name, parts)
		}
	}()
	var closed bool
	closeFn = func() {
		if closed {
			return
		}
		closed = true
		cg.Close()
		cancel()
		<-done
	}
	t.Cleanup(closeFn)
	return closeFn
}

func TestGroupKafkaGoThreeMembersShareTwelvePartitions(t *testing.T) {
	b := startBroker(t, groupConfig)
	const topic, group = "grp-kafkago", "g-kafkago"
	createTopic(t, b.Addr, topic, 12, nil)
	as := newAssignments()
	kafkaGoMember(t, b.Addr, group, topic, "a", as)
	kafkaGoMember(t, b.Addr, group, topic, "b", as)
	closeC := kafkaGoMember(t, b.Addr, group, topic, "c", as)
	eventually(t, 30*time.Second, "three kafka-go members share 12 partitions", func() error {
		return as.check([]string{"a", "b", "c"}, 12)
	})
	closeC()
	as.drop("c")
	eventually(t, 5*time.Second, "two kafka-go members share 12 partitions after a leave", func() error {
		return as.check([]string{"a", "b"}, 12)
	})
}

// saramaHandler records each session's claims and consumes nothing.
type saramaHandler struct {
	name string
	as   *assignments
}

func (h saramaHandler) Setup(s sarama.ConsumerGroupSession) error {
	h.as.set(h.name, s.Claims()[topicOf(s)])
	return nil
}
func (h saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h saramaHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-c.Messages():
			if !ok {
				return nil
			}
			s.MarkMessage(m, "")
		case <-s.Context().Done():
			return nil
		}
	}
}

func topicOf(s sarama.ConsumerGroupSession) string {
	for t := range s.Claims() {
		return t
	}
	return ""
}

func saramaMember(t *testing.T, addr, group, topic, name string, as *assignments) (closeFn func()) {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.ClientID = name
	cfg.Consumer.Group.Session.Timeout = 2 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 100 * time.Millisecond
	cfg.Consumer.Group.Rebalance.Timeout = 5 * time.Second
	cfg.Consumer.Group.Rebalance.Retry.Backoff = 100 * time.Millisecond
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Metadata.RefreshFrequency = time.Second
	cg, err := sarama.NewConsumerGroup([]string{addr}, group, cfg)
	if err != nil {
		t.Fatalf("sarama consumer group: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, saramaHandler{name: name, as: as}); err != nil {
				if errors.Is(err, sarama.ErrClosedConsumerGroup) {
					return
				}
				t.Logf("sarama %s: %v", name, err)
			}
		}
	}()
	var closed bool
	closeFn = func() {
		if closed {
			return
		}
		closed = true
		cancel()
		<-done
		cg.Close()
	}
	t.Cleanup(closeFn)
	return closeFn
}

func TestGroupSaramaThreeMembersShareTwelvePartitions(t *testing.T) {
	b := startBroker(t, groupConfig)
	const topic, group = "grp-sarama", "g-sarama"
	createTopic(t, b.Addr, topic, 12, nil)
	as := newAssignments()
	saramaMember(t, b.Addr, group, topic, "a", as)
	saramaMember(t, b.Addr, group, topic, "b", as)
	closeC := saramaMember(t, b.Addr, group, topic, "c", as)
	eventually(t, 30*time.Second, "three sarama members share 12 partitions", func() error {
		return as.check([]string{"a", "b", "c"}, 12)
	})
	closeC()
	as.drop("c")
	eventually(t, 5*time.Second, "two sarama members share 12 partitions after a leave", func() error {
		return as.check([]string{"a", "b"}, 12)
	})
}

func TestGroupOffsetsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	b := startRestartableBroker(t, dir)
	const topic, group = "grp-restart", "g-restart"
	createTopic(t, b.Addr, topic, 4, nil)
	produceToEach(t, b.Addr, topic, 4, 10)

	// A member reads all 40 records and commits, then leaves.
	as := newAssignments()
	m := startKgoMember(t, b.Addr, group, topic, "first", as)
	eventually(t, 20*time.Second, "first member reads 40 records", func() error {
		if n := len(m.read()); n < 40 {
			return fmt.Errorf("%d read", n)
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := m.cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	cancel()
	m.close()
	produceToEach(t, b.Addr, topic, 4, 3) // the uncommitted tail, "<p>-0".."<p>-2" again
	b.Stop()

	b = startRestartableBroker(t, dir)
	adm := newAdmin(t, b.Addr)
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var committed map[int32]int64
	eventually(t, 20*time.Second, "committed offsets after restart", func() error {
		offs, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return err
		}
		committed = map[int32]int64{}
		offs.Each(func(o kadmOffset) { committed[o.Partition] = o.At })
		return nil
	})
	for p := int32(0); p < 4; p++ {
		if committed[p] != 10 {
			t.Fatalf("committed offsets after restart = %v, want 10 per partition", committed)
		}
	}
	produceToEach(t, b.Addr, topic, 4, 2)
	// A new member resumes from the commits: it reads the 5 records per
	// partition written after them, and nothing before.
	m2 := startKgoMember(t, b.Addr, group, topic, "second", newAssignments())
	eventually(t, 20*time.Second, "second member reads the 20 new records", func() error {
		if n := len(m2.read()); n < 20 {
			return fmt.Errorf("%d read", n)
		}
		return nil
	})
	got := m2.read()
	if len(got) != 20 {
		t.Fatalf("read %d records after restart, want 20: %v", len(got), got)
	}
	count := map[string]int{}
	for _, v := range got {
		count[v]++
	}
	for p := 0; p < 4; p++ {
		// 3 records "p-0..2" from before the restart, 2 "p-0..1" after.
		for i, want := range []int{2, 2, 1} {
			if k := fmt.Sprintf("%d-%d", p, i); count[k] != want {
				t.Fatalf("value %s read %d times, want %d (all: %v)", k, count[k], want, got)
			}
		}
	}
}
