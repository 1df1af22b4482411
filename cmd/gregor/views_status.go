package main

import (
	"errors"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/gregorbroker/gregor/mirror"
)

// Structured forms of txn describe, producers describe and mirror status
// (cluster status carries its tags on clusterStatus itself).

// txnView is one transaction of txn describe.
type txnView struct {
	TransactionalID string `json:"transactional_id"`
	Coordinator     int32  `json:"coordinator"`
	State           string `json:"state"`
	ProducerID      int64  `json:"producer_id"`
	ProducerEpoch   int16  `json:"producer_epoch"`
	TimeoutMs       int32  `json:"timeout_ms"`
	// StartTimestamp is null when no transaction is open.
	StartTimestamp *int64             `json:"start_timestamp_ms"`
	Partitions     []txnPartitionView `json:"partitions"`
	Error          string             `json:"error,omitempty"`
}

type txnPartitionView struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// txnDescribeView lists ids in the order asked; an id without an answer
// carries the error.
func txnDescribeView(ids []string, described kadm.DescribedTransactions) []txnView {
	out := make([]txnView, 0, len(ids))
	for _, id := range ids {
		d, ok := described[id]
		if !ok || d.Err != nil {
			err := d.Err
			if !ok {
				err = errors.New("no answer")
			}
			out = append(out, txnView{TransactionalID: id, Partitions: []txnPartitionView{}, Error: err.Error()})
			continue
		}
		v := txnView{TransactionalID: d.TxnID, Coordinator: d.Coordinator, State: d.State, ProducerID: d.ProducerID,
			ProducerEpoch: d.ProducerEpoch, TimeoutMs: d.TimeoutMillis, Partitions: []txnPartitionView{}}
		if d.StartTimestamp > 0 {
			ts := d.StartTimestamp
			v.StartTimestamp = &ts
		}
		for _, t := range d.Topics.Sorted() {
			for _, p := range t.Partitions {
				v.Partitions = append(v.Partitions, txnPartitionView{Topic: t.Topic, Partition: p})
			}
		}
		out = append(out, v)
	}
	return out
}

// producersView lists the active producers of every partition, a failed
// partition as one entry with its error.
func producersView(described kadm.DescribedProducersTopics) []producerView {
	out := []producerView{}
	for _, p := range described.SortedPartitions() {
		if p.Err != nil {
			out = append(out, producerView{Partition: p.Partition, Error: p.Err.Error()})
			continue
		}
		for _, pr := range p.ActiveProducers.Sorted() {
			v := producerView{Partition: p.Partition, ProducerID: pr.ProducerID, ProducerEpoch: int64(pr.ProducerEpoch),
				LastSequence: int64(pr.LastSequence), CoordinatorEpoch: int64(pr.CoordinatorEpoch)}
			if pr.LastTimestamp >= 0 {
				ts := pr.LastTimestamp
				v.LastTimestamp = &ts
			}
			if pr.CurrentTxnStartOffset >= 0 {
				o := pr.CurrentTxnStartOffset
				v.CurrentTxnStartOffset = &o
			}
			out = append(out, v)
		}
	}
	return out
}

// mirrorView is mirror status.
type mirrorView struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Target string `json:"target"`
	Mode   string `json:"mode"`
	// LastHeartbeat is RFC 3339, null when none was found.
	LastHeartbeat *string               `json:"last_heartbeat"`
	Lag           int64                 `json:"lag"`
	Partitions    []mirrorPartitionView `json:"partitions"`
	Promoted      []string              `json:"promoted"`
	// Skipped names source topics that are not mirrored, with the reason.
	Skipped   []mirrorSkippedView `json:"skipped"`
	LastError string              `json:"last_error,omitempty"`
}

type mirrorPartitionView struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	TargetTopic string `json:"target_topic"`
	Position    int64  `json:"position"`
	SourceEnd   int64  `json:"source_end"`
	Lag         int64  `json:"lag"`
	State       string `json:"state"`
	Error       string `json:"error,omitempty"`
	// FailedAt, RetryAt and LastWrite are RFC 3339, omitted when unknown.
	FailedAt  *string `json:"failed_at,omitempty"`
	RetryAt   *string `json:"retry_at,omitempty"`
	Failures  int     `json:"failures,omitempty"`
	LastWrite *string `json:"last_write,omitempty"`
	TooLarge  int64   `json:"records_too_large,omitempty"`
}

// rfc3339 is t in RFC 3339 (UTC), nil when zero.
func rfc3339(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

type mirrorSkippedView struct {
	Topic  string `json:"topic"`
	Reason string `json:"reason"`
}

func mirrorStatusView(st mirror.ClusterStatus) mirrorView {
	v := mirrorView{Name: st.Name, Source: st.Source, Target: st.Target, Mode: st.Mode, Lag: st.Lag(),
		Partitions: []mirrorPartitionView{}, Promoted: []string{}, Skipped: []mirrorSkippedView{}, LastError: st.LastError}
	if !st.LastHeartbeat.IsZero() {
		hb := st.LastHeartbeat.UTC().Format(time.RFC3339Nano)
		v.LastHeartbeat = &hb
	}
	for _, p := range st.Partitions {
		v.Partitions = append(v.Partitions, mirrorPartitionView{Topic: p.Topic, Partition: p.Partition, TargetTopic: p.TargetTopic,
			Position: p.Position, SourceEnd: p.SourceEnd, Lag: p.Lag, State: p.State, Error: p.Error,
			FailedAt: rfc3339(p.FailedAt), RetryAt: rfc3339(p.RetryAt), Failures: p.Failures, LastWrite: rfc3339(p.LastWrite),
			TooLarge: p.TooLarge})
	}
	v.Promoted = append(v.Promoted, st.Promoted...)
	for t, why := range st.Skipped {
		v.Skipped = append(v.Skipped, mirrorSkippedView{Topic: t, Reason: why})
	}
	sort.Slice(v.Skipped, func(i, j int) bool { return v.Skipped[i].Topic < v.Skipped[j].Topic })
	return v
}
