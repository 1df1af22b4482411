package api

import (
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// DescribeLogDirs v1 is Apache Kafka 4's minimum; v4 adds the volume's total
// and usable bytes, v5 the cordoned flag.
func init() { reg(35, 1, 5, (*Broker).handleDescribeLogDirs) }

func (b *Broker) handleDescribeLogDirs(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DescribeLogDirsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	// Kafka: DESCRIBE on the cluster, else an empty answer with the error.
	if !b.authorizeCluster(r, sdkauth.OpDescribe) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	}

	// A null topic list asks for every partition; otherwise only the named
	// partitions this broker holds are listed.
	var wanted map[partition.TopicPartition]bool
	if req.Topics != nil {
		wanted = map[partition.TopicPartition]bool{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				wanted[partition.TopicPartition{Topic: t.Topic, Partition: p}] = true
			}
		}
	}

	// Gregor keeps every partition in its one data directory.
	dir := kmsg.NewDescribeLogDirsResponseDir()
	path := b.Logs.Path()
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	dir.Dir = path
	total, usable, err := log.DiskSpace(path)
	if err != nil {
		b.Logger.Warn("log dir unreadable", "dir", path, "err", err)
		dir.ErrorCode = kerr.KafkaStorageError.Code
		dir.Topics = []kmsg.DescribeLogDirsResponseDirTopic{}
		resp.Dirs = append(resp.Dirs, dir)
		return protocol.Reply{Resp: resp}
	}
	dir.TotalBytes, dir.UsableBytes = total, usable
	dir.Topics = []kmsg.DescribeLogDirsResponseDirTopic{}
	for _, l := range b.Logs.Logs() {
		tp := partition.TopicPartition{Topic: l.Topic(), Partition: l.Partition()}
		if wanted != nil && !wanted[tp] {
			continue
		}
		n := len(dir.Topics)
		if n == 0 || dir.Topics[n-1].Topic != tp.Topic {
			t := kmsg.NewDescribeLogDirsResponseDirTopic()
			t.Topic = tp.Topic
			dir.Topics = append(dir.Topics, t)
			n++
		}
		p := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		p.Partition = tp.Partition
		p.Size = l.Size()
		p.OffsetLag = b.offsetLag(l)
		dir.Topics[n-1].Partitions = append(dir.Topics[n-1].Partitions, p)
	}
	resp.Dirs = append(resp.Dirs, dir)
	return protocol.Reply{Resp: resp}
}

// offsetLag is Kafka's lag of a current (not future) log: how far the high
// watermark is ahead of the log end offset, at least 0. A leader's is 0.
func (b *Broker) offsetLag(l *log.Log) int64 {
	p, ok := b.Partitions.Get(l.Topic(), l.Partition())
	if !ok {
		return 0
	}
	off := p.Offsets()
	return max(off.HighWatermark-off.LogEndOffset, 0)
}
