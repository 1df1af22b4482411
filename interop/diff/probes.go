package main

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// baseTs is the first record timestamp the probes write; fixed per run so both brokers store
// the same batches.
var baseTs = time.Now().Add(-time.Hour).UnixMilli() / 1000 * 1000

const tsStep = 1000

func present(b bool) string {
	if b {
		return "present"
	}
	return "missing"
}

func probeAPIVersions(p *pair) {
	var onlyK, onlyG []string
	for k := int16(0); k < 200; k++ {
		gv, gok := p.g.versions[k]
		kv, kok := p.k.versions[k]
		name := kmsg.NameForKey(k)
		if name == "" {
			name = fmt.Sprintf("key%d", k)
		}
		switch {
		case gok && kok:
			for _, b := range []*broker{p.g, p.k} {
				b.fact(fmt.Sprintf("ApiVersions/%02d %s/min", k, name), b.versions[k][0])
				b.fact(fmt.Sprintf("ApiVersions/%02d %s/max", k, name), b.versions[k][1])
			}
		case kok:
			onlyK = append(onlyK, fmt.Sprintf("%d %s v%d-%d", k, name, kv[0], kv[1]))
		case gok:
			onlyG = append(onlyG, fmt.Sprintf("%d %s v%d-%d", k, name, gv[0], gv[1]))
		}
	}
	// One fact each, so a missing API is one line and not two per key.
	p.k.fact("ApiVersions/advertised only by Apache Kafka", strings.Join(onlyK, ", "))
	p.g.fact("ApiVersions/advertised only by Apache Kafka", "")
	p.g.fact("ApiVersions/advertised only by Gregor", strings.Join(onlyG, ", "))
	p.k.fact("ApiVersions/advertised only by Gregor", "")
}

func createTopic(name string, parts int32, rf int16, configs map[string]string) kmsg.CreateTopicsRequestTopic {
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, parts, rf
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		t.Configs = append(t.Configs, c)
	}
	return t
}

func probeCreateTopics(p *pair, prefix string) {
	cases := []struct {
		label    string
		topic    kmsg.CreateTopicsRequestTopic
		validate bool
	}{
		{"ok", createTopic(prefix+"-ct", 3, 1, nil), false},
		{"duplicate", createTopic(prefix+"-ct", 3, 1, nil), false},
		{"defaults(-1,-1)", createTopic(prefix+"-dflt", -1, -1, nil), false},
		{"partitions=0", createTopic(prefix+"-p0", 0, 1, nil), false},
		{"replication=0", createTopic(prefix+"-rf0", 1, 0, nil), false},
		{"replication=3 on 1 broker", createTopic(prefix+"-rf3", 1, 3, nil), false},
		{"name with slash", createTopic(prefix+"/bad", 1, 1, nil), false},
		{"name '.'", createTopic(".", 1, 1, nil), false},
		{"name of 250 chars", createTopic(prefix+strings.Repeat("x", 250-len(prefix)), 1, 1, nil), false},
		{"retention.ms=abc", createTopic(prefix+"-badcfg", 1, 1, map[string]string{"retention.ms": "abc"}), false},
		{"unknown config", createTopic(prefix+"-unkcfg", 1, 1, map[string]string{"no.such.config": "1"}), false},
		{"cleanup.policy=compact", createTopic(prefix+"-compact", 1, 1, map[string]string{"cleanup.policy": "compact"}), false},
		{"validate only", createTopic(prefix+"-vo", 2, 1, nil), true},
	}
	for _, c := range cases {
		p.each(19, 7, func(b *broker, v int16) {
			req := kmsg.NewPtrCreateTopicsRequest()
			req.TimeoutMillis = 30000
			req.ValidateOnly = c.validate
			req.Topics = []kmsg.CreateTopicsRequestTopic{c.topic}
			key := "CreateTopics/" + c.label
			r, err := b.send(req, v)
			if err != nil {
				b.fact(key+"/transport", err)
				return
			}
			resp := r.(*kmsg.CreateTopicsResponse)
			if len(resp.Topics) != 1 {
				b.fact(key+"/topics", len(resp.Topics))
				return
			}
			t := resp.Topics[0]
			b.fact(key+"/error", errName(t.ErrorCode))
			if t.ErrorCode != 0 {
				return
			}
			b.fact(key+"/num_partitions", t.NumPartitions)
			b.fact(key+"/replication_factor", t.ReplicationFactor)
			if c.label == "ok" {
				b.fact(key+"/topic_id", present(t.TopicID != [16]byte{}))
				for _, cf := range t.Configs {
					b.fact(key+"/config/"+cf.Name, configFact(cf.Value, cf.ReadOnly, int8(cf.Source), cf.IsSensitive))
				}
			}
		})
	}
	time.Sleep(500 * time.Millisecond) // lets both brokers finish leader election of the new topics
}

func configFact(v *string, ro bool, source int8, sensitive bool) string {
	val := "null"
	if v != nil {
		val = *v
	}
	return fmt.Sprintf("%s (source %s, read-only %v, sensitive %v)", val, kmsg.ConfigSource(source), ro, sensitive)
}

func errName(code int16) string {
	if code == 0 {
		return "0 NONE"
	}
	if e := kerrName(code); e != "" {
		return fmt.Sprintf("%d %s", code, e)
	}
	return fmt.Sprint(code)
}

func probeMetadata(p *pair, prefix string) {
	p.each(3, 12, func(b *broker, v int16) {
		req := kmsg.NewPtrMetadataRequest()
		for _, t := range []string{prefix + "-ct", prefix + "-missing", prefix + "-vo", prefix + "-dflt"} {
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, mt)
		}
		req.AllowAutoTopicCreation = false
		r, err := b.send(req, v)
		if err != nil {
			b.fact("Metadata/transport", err)
			return
		}
		resp := r.(*kmsg.MetadataResponse)
		b.fact("Metadata/brokers", len(resp.Brokers))
		b.fact("Metadata/cluster_id", present(resp.ClusterID != nil && *resp.ClusterID != ""))
		b.fact("Metadata/controller_id", present(resp.ControllerID >= 0))
		for _, br := range resp.Brokers {
			b.fact("Metadata/broker/rack", br.Rack)
		}
		for _, t := range resp.Topics {
			name := strings.TrimPrefix(*t.Topic, prefix)
			key := "Metadata/topic " + name
			b.fact(key+"/error", errName(t.ErrorCode))
			b.fact(key+"/is_internal", t.IsInternal)
			b.fact(key+"/partitions", len(t.Partitions))
			if t.ErrorCode == 0 {
				b.fact(key+"/topic_id", present(t.TopicID != [16]byte{}))
			}
			for _, pt := range t.Partitions {
				pk := fmt.Sprintf("%s/p%d", key, pt.Partition)
				b.fact(pk+"/error", errName(pt.ErrorCode))
				b.fact(pk+"/leader_is_a_broker", pt.Leader >= 0)
				b.fact(pk+"/leader_epoch", pt.LeaderEpoch)
				b.fact(pk+"/replicas", len(pt.Replicas))
				b.fact(pk+"/isr", len(pt.ISR))
				b.fact(pk+"/offline", len(pt.OfflineReplicas))
			}
		}
	})
	p.each(3, 12, func(b *broker, v int16) {
		req := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(prefix + "-auto")
		req.Topics = []kmsg.MetadataRequestTopic{mt}
		req.AllowAutoTopicCreation = true
		r, err := b.send(req, v)
		if err != nil {
			b.fact("Metadata/auto-create/transport", err)
			return
		}
		for _, t := range r.(*kmsg.MetadataResponse).Topics {
			b.fact("Metadata/auto-create first answer/error", errName(t.ErrorCode))
		}
	})
}

func produce(b *broker, v int16, acks int16, topic string, part int32, records []byte) (kmsg.ProduceResponseTopicPartition, error) {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = acks, 10000
	t := kmsg.NewProduceRequestTopic()
	t.Topic = topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition, pp.Records = part, records
	t.Partitions = []kmsg.ProduceRequestTopicPartition{pp}
	req.Topics = []kmsg.ProduceRequestTopic{t}
	r, err := b.send(req, v)
	if err != nil {
		return kmsg.ProduceResponseTopicPartition{}, err
	}
	resp := r.(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return kmsg.ProduceResponseTopicPartition{}, fmt.Errorf("%d topics in answer", len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0], nil
}

func probeProduce(p *pair, prefix string) {
	vals := func(n int, tag string) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, fmt.Sprintf("%s-%d", tag, i))
		}
		return out
	}
	corrupt := batch(vals(2, "bad"), baseTs, tsStep)
	corrupt[len(corrupt)-1] ^= 0xff
	badMagic := batch(vals(1, "m"), baseTs, tsStep)
	badMagic[16] = 1
	cases := []struct {
		label string
		acks  int16
		topic string
		part  int32
		recs  []byte
	}{
		{"first batch (5 records)", -1, prefix + "-ct", 0, batch(vals(5, "a"), baseTs, tsStep)},
		{"second batch (3 records)", 1, prefix + "-ct", 0, batch(vals(3, "b"), baseTs+5*tsStep, tsStep)},
		{"unknown partition", -1, prefix + "-ct", 99, batch(vals(1, "c"), baseTs, tsStep)},
		{"unknown topic", -1, prefix + "-nope", 0, batch(vals(1, "c"), baseTs, tsStep)},
		{"corrupt crc", -1, prefix + "-ct", 1, corrupt},
		{"magic 1 header on a v2 body", -1, prefix + "-ct", 1, badMagic},
		{"acks=2", 2, prefix + "-ct", 1, batch(vals(1, "d"), baseTs, tsStep)},
		{"null key on compacted topic", -1, prefix + "-compact", 0, batch(vals(1, "e"), baseTs, tsStep)},
	}
	for _, c := range cases {
		p.each(0, 9, func(b *broker, v int16) {
			key := "Produce/" + c.label
			pr, err := produce(b, v, c.acks, c.topic, c.part, c.recs)
			if err != nil {
				b.fact(key+"/transport", "connection error or closed")
				return
			}
			b.fact(key+"/error", errName(pr.ErrorCode))
			if pr.ErrorCode == 0 {
				b.fact(key+"/base_offset", pr.BaseOffset)
				b.fact(key+"/log_append_time", pr.LogAppendTime)
				b.fact(key+"/log_start_offset", pr.LogStartOffset)
			}
			b.fact(key+"/record_errors", len(pr.ErrorRecords))
		})
	}
}

func probeListOffsets(p *pair, prefix string) {
	cases := []struct {
		label string
		part  int32
		ts    int64
		iso   int8
	}{
		{"earliest", 0, -2, 0}, {"latest", 0, -1, 0}, {"latest read_committed", 0, -1, 1},
		{"max timestamp", 0, -3, 0}, {"timestamp of record 2", 0, baseTs + 2*tsStep, 0},
		{"timestamp between records 1 and 2", 0, baseTs + 2*tsStep - 1, 0},
		{"timestamp after the last record", 0, baseTs + 1e9, 0}, {"timestamp before the first", 0, baseTs - 1e6, 0},
		{"earliest of empty partition", 2, -2, 0}, {"latest of empty partition", 2, -1, 0},
		{"max timestamp of empty partition", 2, -3, 0}, {"unknown partition", 99, -1, 0},
	}
	for _, c := range cases {
		p.each(2, 8, func(b *broker, v int16) {
			req := kmsg.NewPtrListOffsetsRequest()
			req.ReplicaID, req.IsolationLevel = -1, c.iso
			t := kmsg.NewListOffsetsRequestTopic()
			t.Topic = prefix + "-ct"
			pp := kmsg.NewListOffsetsRequestTopicPartition()
			pp.Partition, pp.Timestamp = c.part, c.ts
			t.Partitions = []kmsg.ListOffsetsRequestTopicPartition{pp}
			req.Topics = []kmsg.ListOffsetsRequestTopic{t}
			key := "ListOffsets/" + c.label
			r, err := b.send(req, v)
			if err != nil {
				b.fact(key+"/transport", err)
				return
			}
			resp := r.(*kmsg.ListOffsetsResponse)
			if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
				b.fact(key+"/shape", "wrong")
				return
			}
			rp := resp.Topics[0].Partitions[0]
			b.fact(key+"/error", errName(rp.ErrorCode))
			b.fact(key+"/offset", rp.Offset)
			ts := fmt.Sprint(rp.Timestamp)
			if rp.Timestamp >= baseTs {
				ts = fmt.Sprintf("base+%d", rp.Timestamp-baseTs)
			}
			b.fact(key+"/timestamp", ts)
			b.fact(key+"/leader_epoch", rp.LeaderEpoch)
		})
	}
}

func probeFetch(p *pair, prefix string) {
	cases := []struct {
		label  string
		part   int32
		offset int64
	}{
		{"from 0", 0, 0}, {"from 6 (inside the second batch)", 0, 6}, {"at the high watermark", 0, 8},
		{"past the high watermark", 0, 100}, {"negative offset", 0, -5}, {"unknown partition", 99, 0},
		{"empty partition", 2, 0},
	}
	for _, c := range cases {
		p.each(1, 12, func(b *broker, v int16) {
			req := kmsg.NewPtrFetchRequest()
			req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 50, 1, 1<<20
			req.SessionEpoch = -1
			t := kmsg.NewFetchRequestTopic()
			t.Topic = prefix + "-ct"
			pp := kmsg.NewFetchRequestTopicPartition()
			pp.Partition, pp.FetchOffset, pp.PartitionMaxBytes = c.part, c.offset, 1<<20
			t.Partitions = []kmsg.FetchRequestTopicPartition{pp}
			req.Topics = []kmsg.FetchRequestTopic{t}
			key := "Fetch/" + c.label
			r, err := b.send(req, v)
			if err != nil {
				b.fact(key+"/transport", err)
				return
			}
			resp := r.(*kmsg.FetchResponse)
			b.fact(key+"/top_error", errName(resp.ErrorCode))
			if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
				b.fact(key+"/shape", fmt.Sprintf("%d topics", len(resp.Topics)))
				return
			}
			rp := resp.Topics[0].Partitions[0]
			b.fact(key+"/error", errName(rp.ErrorCode))
			b.fact(key+"/high_watermark", rp.HighWatermark)
			b.fact(key+"/last_stable_offset", rp.LastStableOffset)
			b.fact(key+"/log_start_offset", rp.LogStartOffset)
			b.fact(key+"/preferred_read_replica", rp.PreferredReadReplica)
			b.fact(key+"/aborted_transactions", len(rp.AbortedTransactions))
			var bases []int64
			for rest := rp.RecordBatches; len(rest) >= 12; {
				bases = append(bases, int64(binary.BigEndian.Uint64(rest)))
				n := int(binary.BigEndian.Uint32(rest[8:])) + 12
				if n > len(rest) {
					break
				}
				rest = rest[n:]
			}
			b.fact(key+"/batch_base_offsets", bases)
		})
	}
}

func probeDescribeConfigs(p *pair, prefix string) {
	p.each(32, 4, func(b *broker, v int16) {
		req := kmsg.NewPtrDescribeConfigsRequest()
		for _, name := range []string{prefix + "-ct", prefix + "-nope"} {
			r := kmsg.NewDescribeConfigsRequestResource()
			r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, name
			req.Resources = append(req.Resources, r)
		}
		br := kmsg.NewDescribeConfigsRequestResource()
		br.ResourceType, br.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
		req.Resources = append(req.Resources, br)
		r, err := b.send(req, v)
		if err != nil {
			b.fact("DescribeConfigs/transport", err)
			return
		}
		for _, res := range r.(*kmsg.DescribeConfigsResponse).Resources {
			key := "DescribeConfigs/topic " + strings.TrimPrefix(res.ResourceName, prefix)
			if res.ResourceType == kmsg.ConfigResourceTypeBroker {
				key = "DescribeConfigs/broker"
				b.fact(key+"/count", len(res.Configs))
			}
			b.fact(key+"/error", errName(res.ErrorCode))
			for _, c := range res.Configs {
				if res.ResourceType == kmsg.ConfigResourceTypeBroker && !brokerConfigsCompared[c.Name] {
					continue
				}
				b.fact(key+"/"+c.Name, configFact(c.Value, c.ReadOnly, int8(c.Source), c.IsSensitive))
			}
		}
	})
}

// brokerConfigsCompared are the broker settings whose Kafka defaults Gregor mirrors in broker.toml.
var brokerConfigsCompared = map[string]bool{
	"num.partitions": true, "default.replication.factor": true, "auto.create.topics.enable": true,
	"log.segment.bytes": true, "log.retention.ms": true, "log.retention.hours": true, "log.retention.bytes": true,
	"message.max.bytes": true, "min.insync.replicas": true, "log.index.interval.bytes": true,
	"log.roll.ms": true, "log.roll.hours": true, "log.cleanup.policy": true, "log.message.timestamp.type": true,
	"log.retention.check.interval.ms": true, "socket.request.max.bytes": true, "log.flush.interval.ms": true,
	"log.flush.interval.messages": true, "broker.id": true, "node.id": true, "delete.topic.enable": true,
}

func probeAdmin(p *pair, prefix string) {
	p.each(20, 5, func(b *broker, v int16) {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.TimeoutMillis = 10000
		req.TopicNames = []string{prefix + "-nope"}
		r, err := b.send(req, v)
		if err != nil {
			b.fact("DeleteTopics/unknown/transport", err)
			return
		}
		for _, t := range r.(*kmsg.DeleteTopicsResponse).Topics {
			b.fact("DeleteTopics/unknown topic/error", errName(t.ErrorCode))
		}
	})
	for _, c := range []struct {
		label string
		count int32
	}{{"fewer partitions", 2}, {"same count", 3}, {"to 4", 4}} {
		p.each(37, 3, func(b *broker, v int16) {
			req := kmsg.NewPtrCreatePartitionsRequest()
			req.TimeoutMillis = 10000
			t := kmsg.NewCreatePartitionsRequestTopic()
			t.Topic, t.Count = prefix+"-ct", c.count
			req.Topics = []kmsg.CreatePartitionsRequestTopic{t}
			r, err := b.send(req, v)
			if err != nil {
				b.fact("CreatePartitions/"+c.label+"/transport", err)
				return
			}
			for _, t := range r.(*kmsg.CreatePartitionsResponse).Topics {
				b.fact("CreatePartitions/"+c.label+"/error", errName(t.ErrorCode))
			}
		})
	}
	for _, c := range []struct {
		label  string
		part   int32
		offset int64
	}{{"before 2", 0, 2}, {"beyond the high watermark", 0, 100}, {"to the high watermark (-1)", 1, -1}, {"unknown partition", 99, 1}} {
		p.each(21, 2, func(b *broker, v int16) {
			req := kmsg.NewPtrDeleteRecordsRequest()
			req.TimeoutMillis = 10000
			t := kmsg.NewDeleteRecordsRequestTopic()
			t.Topic = prefix + "-ct"
			pp := kmsg.NewDeleteRecordsRequestTopicPartition()
			pp.Partition, pp.Offset = c.part, c.offset
			t.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{pp}
			req.Topics = []kmsg.DeleteRecordsRequestTopic{t}
			key := "DeleteRecords/" + c.label
			r, err := b.send(req, v)
			if err != nil {
				b.fact(key+"/transport", err)
				return
			}
			for _, t := range r.(*kmsg.DeleteRecordsResponse).Topics {
				for _, pp := range t.Partitions {
					b.fact(key+"/error", errName(pp.ErrorCode))
					b.fact(key+"/low_watermark", pp.LowWatermark)
				}
			}
		})
	}
	p.each(22, 4, func(b *broker, v int16) {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionTimeoutMillis = 60000
		var resp *kmsg.InitProducerIDResponse
		// A broker that has just started may still be loading its producer-id block: retry
		// the retriable answers for a few seconds, as a client would.
		for try := 0; try < 50; try++ {
			r, err := b.send(req, v)
			if err != nil {
				b.fact("InitProducerId/transport", err)
				return
			}
			resp = r.(*kmsg.InitProducerIDResponse)
			if resp.ErrorCode != 14 && resp.ErrorCode != 15 && resp.ErrorCode != 5 {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		b.fact("InitProducerId/idempotent/error", errName(resp.ErrorCode))
		b.fact("InitProducerId/idempotent/producer_id", present(resp.ProducerID >= 0))
		b.fact("InitProducerId/idempotent/producer_epoch", resp.ProducerEpoch)
	})
	p.each(60, 1, func(b *broker, v int16) {
		r, err := b.send(kmsg.NewPtrDescribeClusterRequest(), v)
		if err != nil {
			b.fact("DescribeCluster/transport", err)
			return
		}
		resp := r.(*kmsg.DescribeClusterResponse)
		b.fact("DescribeCluster/error", errName(resp.ErrorCode))
		b.fact("DescribeCluster/cluster_id", present(resp.ClusterID != ""))
		b.fact("DescribeCluster/controller_id", present(resp.ControllerID >= 0))
		b.fact("DescribeCluster/brokers", len(resp.Brokers))
		b.fact("DescribeCluster/cluster_authorized_operations", resp.ClusterAuthorizedOperations)
	})
	p.each(23, 4, func(b *broker, v int16) {
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.ReplicaID = -1
		t := kmsg.NewOffsetForLeaderEpochRequestTopic()
		t.Topic = prefix + "-ct"
		pp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		pp.Partition, pp.CurrentLeaderEpoch, pp.LeaderEpoch = 0, -1, 0
		t.Partitions = []kmsg.OffsetForLeaderEpochRequestTopicPartition{pp}
		req.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{t}
		r, err := b.send(req, v)
		if err != nil {
			b.fact("OffsetForLeaderEpoch/transport", err)
			return
		}
		for _, t := range r.(*kmsg.OffsetForLeaderEpochResponse).Topics {
			for _, pp := range t.Partitions {
				b.fact("OffsetForLeaderEpoch/epoch 0/error", errName(pp.ErrorCode))
				b.fact("OffsetForLeaderEpoch/epoch 0/leader_epoch", pp.LeaderEpoch)
				b.fact("OffsetForLeaderEpoch/epoch 0/end_offset", pp.EndOffset)
			}
		}
	})
}
