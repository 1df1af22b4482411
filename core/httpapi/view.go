package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"time"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/core/share/coordinator"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// BrokerView is the Admin a broker serves: it reads the same owners the
// Kafka handlers ask (the controller's metadata image, the hosted
// partitions, the group coordinator, the extensions and the authorizer),
// never the protocol layer.
type BrokerView struct {
	Config     config.Config
	Controller *controller.Controller
	Partitions *partition.Set
	// Partition returns a partition hosted here, as a Fetch finds it.
	Partition func(topic string, index int32) (*partition.Partition, bool)
	// TopicConfig is a topic's effective configuration: the broker's
	// defaults with the topic's overrides.
	TopicConfig func(im *controller.Image, topic string) map[string]string
	// PartitionConfig is the rules a topic's partitions enforce.
	PartitionConfig func(im *controller.Image, topic string) partition.Config
	// GroupCoordinator answers the group views; nil answers them with
	// ErrUnavailable.
	GroupCoordinator *group.Coordinator
	// Share returns the share group coordinator; nil leaves share groups
	// out of the group views.
	Share func() *coordinator.Coordinator
	// ExtensionSet holds the partitioners and retention policies; nil when
	// every topic uses the built-ins.
	ExtensionSet *extension.Set
	// Authorizer returns the authorizer, its ACLs current with the image;
	// nil (or a nil result) allows everything.
	Authorizer func() sdkauth.Authorizer
	Logger     *slog.Logger
}

var _ Admin = (*BrokerView)(nil)

func (v *BrokerView) logger() *slog.Logger {
	if v.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return v.Logger
}

// allowed decides one operation on resources for an admin API request.
// A context that did not come through the HTTP listener is the broker's own
// and is allowed; an authorizer error denies.
func (v *BrokerView) allowed(ctx context.Context, op sdkauth.Operation, typ sdkauth.ResourceType, names ...string) []bool {
	out := make([]bool, len(names))
	ps, fromHTTP := RequestPrincipal(ctx)
	var az sdkauth.Authorizer
	if fromHTTP && v.Authorizer != nil {
		az = v.Authorizer()
	}
	if az == nil {
		for i := range out {
			out[i] = true
		}
		return out
	}
	p, err := sdkauth.ParsePrincipal(ps)
	if err != nil {
		return out
	}
	host := ClientHost(ctx)
	actions := make([]sdkauth.Action, len(names))
	for i, n := range names {
		actions[i] = sdkauth.Action{Principal: p, Host: host, Operation: op,
			Resource: sdkauth.Resource{Type: typ, Name: n, Pattern: sdkauth.PatternLiteral}}
	}
	decisions := make([]sdkauth.Decision, len(actions))
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := az.Authorize(actx, actions, decisions); err != nil {
		v.logger().Warn("authorizer failed; denying", "principal", ps, "operation", op.String(), "err", err)
		return out
	}
	for i, d := range decisions {
		out[i] = d == sdkauth.Allow
	}
	return out
}

func (v *BrokerView) denied(ctx context.Context, op sdkauth.Operation, typ sdkauth.ResourceType, name string) error {
	if v.allowed(ctx, op, typ, name)[0] {
		return nil
	}
	p, _ := RequestPrincipal(ctx)
	what := name
	if typ == sdkauth.ResourceCluster {
		what = "the cluster"
	}
	return fmt.Errorf("httpapi: %w: %s may not %s %s", ErrNotAuthorized, p, op.String(), what)
}

// Cluster implements Admin; it needs DESCRIBE on the cluster.
func (v *BrokerView) Cluster(ctx context.Context) (Cluster, error) {
	if err := v.denied(ctx, sdkauth.OpDescribe, sdkauth.ResourceCluster, sdkauth.ClusterName); err != nil {
		return Cluster{}, err
	}
	im := v.Controller.Image()
	c := Cluster{ClusterID: im.ClusterID, ControllerID: im.ControllerID, NodeID: v.Config.NodeID,
		Version: version(), MetadataOffset: im.Offset, Topics: len(im.Topics),
		SecurityAuthorizer: v.Config.Security.Authorizer, AuthenticationNeeded: RequiresAuth(v.Config)}
	leaders, replicas := map[int32]int{}, map[int32]int{}
	for _, t := range im.Topics {
		minISR := v.PartitionConfig(im, t.Name).MinInsyncReplicas
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
		hb := Broker{NodeID: id, Host: br.Host, Port: br.Port, Rack: br.Rack, Controller: id == im.ControllerID,
			Leaders: leaders[id], Replicas: replicas[id]}
		for _, e := range br.Endpoints {
			hb.Endpoints = append(hb.Endpoints, Endpoint{Listener: e.Listener, Host: e.Host, Port: e.Port})
		}
		c.Brokers = append(c.Brokers, hb)
	}
	for _, p := range v.Partitions.All() {
		c.SizeBytes += p.Log().Size()
	}
	if v.GroupCoordinator != nil {
		gs, _ := v.GroupCoordinator.ListGroups(nil, nil)
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

// Topics implements Admin: the topics the principal may describe.
func (v *BrokerView) Topics(ctx context.Context) ([]TopicSummary, error) {
	im := v.Controller.Image()
	names := make([]string, 0, len(im.Topics))
	for n := range im.Topics {
		names = append(names, n)
	}
	sort.Strings(names)
	ok := v.allowed(ctx, sdkauth.OpDescribe, sdkauth.ResourceTopic, names...)
	out := make([]TopicSummary, 0, len(names))
	for i, n := range names {
		if ok[i] {
			s, _ := v.topicState(im, im.Topics[n])
			out = append(out, s)
		}
	}
	return out, nil
}

// topicState summarises a topic and lists its partitions.
func (v *BrokerView) topicState(im *controller.Image, t *controller.Topic) (TopicSummary, []PartitionState) {
	s := TopicSummary{Name: t.Name, ID: t.ID.String(), Internal: t.Internal, Partitions: len(t.Partitions),
		ReplicationFactor: int(t.ReplicationFactor())}
	parts := make([]PartitionState, len(t.Partitions))
	for i, p := range t.Partitions {
		ps := PartitionState{Partition: p.Index, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
			Replicas: append([]int32{}, p.Replicas...), ISR: append([]int32{}, p.ISR...),
			UnderReplicated: len(p.ISR) < len(p.Replicas), Offline: offline(im, p),
			LogStartOffset: -1, HighWatermark: -1, LogEndOffset: -1, SizeBytes: -1}
		if hp, ok := v.Partitions.Get(t.Name, p.Index); ok {
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

// Topic implements Admin: DESCRIBE on the topic shows it, and
// DESCRIBE_CONFIGS its configuration.
func (v *BrokerView) Topic(ctx context.Context, name string) (TopicDetail, error) {
	im := v.Controller.Image()
	t, ok := im.Topic(name)
	if !ok {
		return TopicDetail{}, fmt.Errorf("httpapi: topic %s: %w", name, ErrTopicNotFound)
	}
	if err := v.denied(ctx, sdkauth.OpDescribe, sdkauth.ResourceTopic, name); err != nil {
		return TopicDetail{}, err
	}
	s, parts := v.topicState(im, t)
	d := TopicDetail{TopicSummary: s, PartitionList: parts, Configs: map[string]string{}, Overrides: []string{}}
	if v.allowed(ctx, sdkauth.OpDescribeConfigs, sdkauth.ResourceTopic, name)[0] {
		d.Configs = v.TopicConfig(im, name)
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

// Records implements Admin: READ on the topic lets the principal
// browse a partition hosted here, from an offset or a timestamp, up to the
// high watermark. Control batches (transaction markers) are skipped.
func (v *BrokerView) Records(ctx context.Context, q RecordsQuery) (RecordPage, error) {
	page := RecordPage{Topic: q.Topic, Partition: q.Partition}
	im := v.Controller.Image()
	t, ok := im.Topic(q.Topic)
	if !ok {
		return page, fmt.Errorf("httpapi: topic %s: %w", q.Topic, ErrTopicNotFound)
	}
	if err := v.denied(ctx, sdkauth.OpRead, sdkauth.ResourceTopic, q.Topic); err != nil {
		return page, err
	}
	if q.Partition < 0 || int(q.Partition) >= len(t.Partitions) {
		return page, fmt.Errorf("httpapi: %w: topic %s has %d partitions, not %d", ErrPartitionNotFound, q.Topic, len(t.Partitions), q.Partition)
	}
	p, ok := v.Partition(q.Topic, q.Partition)
	if !ok {
		return page, fmt.Errorf("httpapi: %w: %s-%d is not hosted on broker %d; ask broker %d", ErrUnavailable,
			q.Topic, q.Partition, v.Config.NodeID, t.Partitions[q.Partition].Leader)
	}
	if q.Limit <= 0 {
		q.Limit = DefaultRecordsLimit
	}
	if q.MaxBytes <= 0 {
		q.MaxBytes = DefaultRecordsMaxByte
	}
	off := p.Offsets()
	page.LogStartOffset, page.HighWatermark = off.LogStartOffset, off.HighWatermark
	start := q.Offset
	switch {
	case q.Timestamp >= 0:
		o, _, _, found, err := p.Log().OffsetForTimestamp(q.Timestamp)
		if err != nil {
			return page, fmt.Errorf("httpapi: %s-%d: offset for timestamp %d: %w", q.Topic, q.Partition, q.Timestamp, err)
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
	pass, err := v.fetchPass(ctx, im, q.Topic, q.Partition)
	if err != nil {
		return page, err
	}
	recs, next, truncated, err := readRecords(p, start, q.Limit, q.MaxBytes, pass)
	page.Records, page.NextOffset, page.Truncated = recs, next, truncated
	if err != nil {
		return page, fmt.Errorf("httpapi: records of %s-%d from %d: %w", q.Topic, q.Partition, start, err)
	}
	return page, nil
}

var errPageFull = errors.New("page full")

// readRecords decodes records from start until limit records, maxBytes of
// keys and values (at least one record), or the high watermark, each read
// of the log passed through pass when it is set (the fetch interceptor).
func readRecords(p *partition.Partition, start int64, limit, maxBytes int, pass func([]byte) ([]byte, error)) (out []Record, next int64, truncated bool, err error) {
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
		if pass != nil {
			if batches, err = pass(batches); err != nil || len(batches) == 0 {
				return out, next, false, err // nothing whole to show
			}
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
				hr := Record{Partition: p.Index, Offset: o, Timestamp: r.Timestamp(h), TimestampType: tsType,
					Key: clone(r.Key), Value: clone(r.Value), Headers: []RecordHeader{}, Size: size}
				for _, rh := range r.Headers {
					hr.Headers = append(hr.Headers, RecordHeader{Key: rh.Key, Value: clone(rh.Value)})
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
