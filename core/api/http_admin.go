package api

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"time"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/httpapi"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// adminView is the broker as the admin API sees it.
type adminView struct{ b *Broker }

// AdminView is the broker's read-only view for the admin API and the
// console.
func (b *Broker) AdminView() httpapi.Admin { return adminView{b} }

// httpAllowed decides one operation on resources for an admin API request.
// A context that did not come through the HTTP listener is the broker's own
// and is allowed; an authorizer error denies.
func (b *Broker) httpAllowed(ctx context.Context, op sdkauth.Operation, typ sdkauth.ResourceType, names ...string) []bool {
	out := make([]bool, len(names))
	ps, fromHTTP := httpapi.RequestPrincipal(ctx)
	az := b.Security.Authorizer
	if !fromHTTP || az == nil {
		for i := range out {
			out[i] = true
		}
		return out
	}
	p, err := sdkauth.ParsePrincipal(ps)
	if err != nil {
		return out
	}
	b.syncACLs()
	host := httpapi.ClientHost(ctx)
	actions := make([]sdkauth.Action, len(names))
	for i, n := range names {
		actions[i] = sdkauth.Action{Principal: p, Host: host, Operation: op,
			Resource: sdkauth.Resource{Type: typ, Name: n, Pattern: sdkauth.PatternLiteral}}
	}
	decisions := make([]sdkauth.Decision, len(actions))
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := az.Authorize(actx, actions, decisions); err != nil {
		b.Logger.Warn("authorizer failed; denying", "principal", ps, "operation", op.String(), "err", err)
		return out
	}
	for i, d := range decisions {
		out[i] = d == sdkauth.Allow
	}
	return out
}

func (b *Broker) httpDenied(ctx context.Context, op sdkauth.Operation, typ sdkauth.ResourceType, name string) error {
	if b.httpAllowed(ctx, op, typ, name)[0] {
		return nil
	}
	p, _ := httpapi.RequestPrincipal(ctx)
	what := name
	if typ == sdkauth.ResourceCluster {
		what = "the cluster"
	}
	return fmt.Errorf("api: %w: %s may not %s %s", httpapi.ErrNotAuthorized, p, op.String(), what)
}

// Cluster implements httpapi.Admin; it needs DESCRIBE on the cluster.
func (v adminView) Cluster(ctx context.Context) (httpapi.Cluster, error) {
	b := v.b
	if err := b.httpDenied(ctx, sdkauth.OpDescribe, sdkauth.ResourceCluster, sdkauth.ClusterName); err != nil {
		return httpapi.Cluster{}, err
	}
	im := b.Controller.Image()
	c := httpapi.Cluster{ClusterID: im.ClusterID, ControllerID: im.ControllerID, NodeID: b.Config.NodeID,
		Version: version(), MetadataOffset: im.Offset, Topics: len(im.Topics),
		SecurityAuthorizer: b.Config.Security.Authorizer, AuthenticationNeeded: HTTPRequiresAuth(b.Config)}
	leaders, replicas := map[int32]int{}, map[int32]int{}
	for _, t := range im.Topics {
		minISR := b.partitionConfig(im, t.Name).MinInsyncReplicas
		for _, p := range t.Partitions {
			c.Partitions++
			if len(p.ISR) < len(p.Replicas) {
				c.UnderReplicated++
			}
			if offline(im, p) {
				c.Offline++
			}
			if int32(len(p.ISR)) < minISR {
				c.UnderMinISR++
			}
			leaders[p.Leader]++
			for _, r := range p.Replicas {
				replicas[r]++
			}
		}
	}
	for _, id := range im.BrokerIDs() {
		br := im.Brokers[id]
		hb := httpapi.Broker{NodeID: id, Host: br.Host, Port: br.Port, Rack: br.Rack, Controller: id == im.ControllerID,
			Leaders: leaders[id], Replicas: replicas[id]}
		for _, e := range br.Endpoints {
			hb.Endpoints = append(hb.Endpoints, httpapi.Endpoint{Listener: e.Listener, Host: e.Host, Port: e.Port})
		}
		c.Brokers = append(c.Brokers, hb)
	}
	for _, p := range b.Partitions.All() {
		c.SizeBytes += p.Log().Size()
	}
	if b.Groups != nil {
		gs, _ := b.Groups.ListGroups(nil, nil)
		c.Groups = len(gs)
	}
	return c, nil
}

// offline reports a partition without a live leader.
func offline(im *controller.Image, p controller.Partition) bool {
	if p.Leader < 0 {
		return true
	}
	_, ok := im.Brokers[p.Leader]
	return !ok
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// Topics implements httpapi.Admin: the topics the principal may describe.
func (v adminView) Topics(ctx context.Context) ([]httpapi.TopicSummary, error) {
	b := v.b
	im := b.Controller.Image()
	names := make([]string, 0, len(im.Topics))
	for n := range im.Topics {
		names = append(names, n)
	}
	sort.Strings(names)
	ok := b.httpAllowed(ctx, sdkauth.OpDescribe, sdkauth.ResourceTopic, names...)
	out := make([]httpapi.TopicSummary, 0, len(names))
	for i, n := range names {
		if ok[i] {
			s, _ := b.topicState(im, im.Topics[n])
			out = append(out, s)
		}
	}
	return out, nil
}

// topicState summarises a topic and lists its partitions.
func (b *Broker) topicState(im *controller.Image, t *controller.Topic) (httpapi.TopicSummary, []httpapi.PartitionState) {
	s := httpapi.TopicSummary{Name: t.Name, ID: t.ID.String(), Internal: t.Internal, Partitions: len(t.Partitions),
		ReplicationFactor: int(t.ReplicationFactor())}
	parts := make([]httpapi.PartitionState, len(t.Partitions))
	for i, p := range t.Partitions {
		ps := httpapi.PartitionState{Partition: p.Index, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
			Replicas: append([]int32{}, p.Replicas...), ISR: append([]int32{}, p.ISR...),
			UnderReplicated: len(p.ISR) < len(p.Replicas), Offline: offline(im, p),
			LogStartOffset: -1, HighWatermark: -1, LogEndOffset: -1, SizeBytes: -1}
		if hp, ok := b.Partitions.Get(t.Name, p.Index); ok {
			off := hp.Offsets()
			ps.LogStartOffset, ps.HighWatermark, ps.LogEndOffset = off.LogStartOffset, off.HighWatermark, off.LogEndOffset
			ps.SizeBytes, ps.Segments = hp.Log().Size(), len(hp.Log().Segments())
			s.Records += off.HighWatermark - off.LogStartOffset
			s.SizeBytes += ps.SizeBytes
		}
		if ps.UnderReplicated {
			s.UnderReplicated++
		}
		if ps.Offline {
			s.Offline++
		}
		parts[i] = ps
	}
	return s, parts
}

// Topic implements httpapi.Admin: DESCRIBE on the topic shows it, and
// DESCRIBE_CONFIGS its configuration.
func (v adminView) Topic(ctx context.Context, name string) (httpapi.TopicDetail, error) {
	b := v.b
	im := b.Controller.Image()
	t, ok := im.Topic(name)
	if !ok {
		return httpapi.TopicDetail{}, fmt.Errorf("api: topic %s: %w", name, httpapi.ErrTopicNotFound)
	}
	if err := b.httpDenied(ctx, sdkauth.OpDescribe, sdkauth.ResourceTopic, name); err != nil {
		return httpapi.TopicDetail{}, err
	}
	s, parts := b.topicState(im, t)
	d := httpapi.TopicDetail{TopicSummary: s, PartitionList: parts, Configs: map[string]string{}, Overrides: []string{}}
	if b.httpAllowed(ctx, sdkauth.OpDescribeConfigs, sdkauth.ResourceTopic, name)[0] {
		d.Configs = b.TopicConfig(im, name)
		for k := range im.TopicConfig(name) {
			d.Overrides = append(d.Overrides, k)
		}
		sort.Strings(d.Overrides)
	}
	return d, nil
}

// maxRecordsDecompressed bounds one batch's decompressed size in a records
// read.
const maxRecordsDecompressed = 64 << 20

// Records implements httpapi.Admin: READ on the topic lets the principal
// browse a partition hosted here, from an offset or a timestamp, up to the
// high watermark. Control batches (transaction markers) are skipped.
func (v adminView) Records(ctx context.Context, q httpapi.RecordsQuery) (httpapi.RecordPage, error) {
	b := v.b
	page := httpapi.RecordPage{Topic: q.Topic, Partition: q.Partition}
	im := b.Controller.Image()
	t, ok := im.Topic(q.Topic)
	if !ok {
		return page, fmt.Errorf("api: topic %s: %w", q.Topic, httpapi.ErrTopicNotFound)
	}
	if err := b.httpDenied(ctx, sdkauth.OpRead, sdkauth.ResourceTopic, q.Topic); err != nil {
		return page, err
	}
	if q.Partition < 0 || int(q.Partition) >= len(t.Partitions) {
		return page, fmt.Errorf("api: %w: topic %s has %d partitions, not %d", httpapi.ErrPartitionNotFound, q.Topic, len(t.Partitions), q.Partition)
	}
	p, ok := b.partition(q.Topic, q.Partition)
	if !ok {
		return page, fmt.Errorf("api: %w: %s-%d is not hosted on broker %d; ask broker %d", httpapi.ErrUnavailable,
			q.Topic, q.Partition, b.Config.NodeID, t.Partitions[q.Partition].Leader)
	}
	if q.Limit <= 0 {
		q.Limit = httpapi.DefaultRecordsLimit
	}
	if q.MaxBytes <= 0 {
		q.MaxBytes = httpapi.DefaultRecordsMaxByte
	}
	off := p.Offsets()
	page.LogStartOffset, page.HighWatermark = off.LogStartOffset, off.HighWatermark
	start := q.Offset
	switch {
	case q.Timestamp >= 0:
		o, _, _, found, err := p.Log().OffsetForTimestamp(q.Timestamp)
		if err != nil {
			return page, fmt.Errorf("api: %s-%d: offset for timestamp %d: %w", q.Topic, q.Partition, q.Timestamp, err)
		}
		start = off.HighWatermark
		if found {
			start = o
		}
	case start < 0:
		start = off.HighWatermark - int64(q.Limit)
	}
	start = max(off.LogStartOffset, min(start, off.HighWatermark))
	page.StartOffset, page.NextOffset = start, start
	recs, next, truncated, err := readRecords(p, start, q.Limit, q.MaxBytes)
	page.Records, page.NextOffset, page.Truncated = recs, next, truncated
	if err != nil {
		return page, fmt.Errorf("api: records of %s-%d from %d: %w", q.Topic, q.Partition, start, err)
	}
	return page, nil
}

var errPageFull = errors.New("page full")

// readRecords decodes records from start until limit records, maxBytes of
// keys and values (at least one record), or the high watermark.
func readRecords(p *partition.Partition, start int64, limit, maxBytes int) (out []httpapi.Record, next int64, truncated bool, err error) {
	next = start
	copied := 0
	for len(out) < limit {
		// The log is read directly: browsing is not fetch traffic.
		off := p.Offsets()
		if next >= off.HighWatermark {
			return out, next, false, nil
		}
		batches, err := p.Log().Read(next, maxBytes, off.HighWatermark, true)
		if err != nil {
			return out, next, false, err
		}
		if len(batches) == 0 {
			return out, next, false, nil
		}
		it := record.Batches(batches)
		for it.Next() {
			h := it.Header()
			if h.IsControl() {
				next = h.NextOffset()
				continue
			}
			tsType := "CreateTime"
			if h.LogAppendTime() {
				tsType = "LogAppendTime"
			}
			err := record.Records(it.Batch(), maxRecordsDecompressed, func(r record.Record) error {
				o := h.BaseOffset + int64(r.OffsetDelta)
				if o < next {
					return nil
				}
				size := len(r.Key) + len(r.Value)
				if len(out) >= limit || (len(out) > 0 && copied+size > maxBytes) {
					return errPageFull
				}
				copied += size
				hr := httpapi.Record{Partition: p.Index, Offset: o, Timestamp: r.Timestamp(h), TimestampType: tsType,
					Key: clone(r.Key), Value: clone(r.Value), Headers: []httpapi.RecordHeader{}, Size: size}
				for _, rh := range r.Headers {
					hr.Headers = append(hr.Headers, httpapi.RecordHeader{Key: rh.Key, Value: clone(rh.Value)})
				}
				out = append(out, hr)
				next = o + 1
				return nil
			})
			if errors.Is(err, errPageFull) {
				return out, next, true, nil
			}
			if err != nil {
				return out, next, false, err
			}
			// Records removed by compaction leave gaps inside a batch.
			next = max(next, h.NextOffset())
		}
		if err := it.Err(); err != nil {
			return out, next, false, err
		}
		if next >= off.HighWatermark {
			return out, next, false, nil
		}
		if copied >= maxBytes {
			return out, next, true, nil
		}
	}
	return out, next, next < p.Offsets().HighWatermark, nil
}

// clone copies a slice that aliases a batch; nil stays nil.
func clone(b []byte) *[]byte {
	if b == nil {
		return nil
	}
	c := append([]byte{}, b...)
	return &c
}
