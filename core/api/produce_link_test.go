package api_test

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/record"
)

// linkBatch is a source batch of n records placed at base.
func linkBatch(t *testing.T, base int64, n int) []byte {
	t.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Value: []byte("mirrored")}
	}
	b, err := record.Encode(record.BatchSpec{FirstTimestamp: 1_700_000_000_000, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	record.SetBaseOffset(b, base)
	return b
}

// produceAs sends one batch to topic-0 with the given transactional id.
func (e *adminEnv) produceAs(txnID *string, topic string, batch []byte) kmsg.ProduceResponseTopicPartition {
	e.t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis, req.TransactionID = -1, 10000, txnID
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	td, err := e.adm.ListTopics(e.ctx(), topic)
	if err != nil {
		e.t.Fatalf("metadata of %s: %v", topic, err)
	}
	rt.TopicID = td[topic].ID // Produce v13 names topics by id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := e.requestBroker(nil, req).(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		e.t.Fatalf("answer shape %+v", resp.Topics)
	}
	return resp.Topics[0].Partitions[0]
}

func TestProduceToMirrorLinkTopics(t *testing.T) {
	e := startAdminBroker(t)
	e.createTopic("east.orders", 1, map[string]*string{"gregor.mirror.link": adminStr("east")})
	e.createTopic("plain", 1, nil)
	east, west := adminStr("__gregor_link:east"), adminStr("__gregor_link:west")
	tests := []struct {
		name  string
		txnID *string
		topic string
		batch []byte
		want  *kerr.Error
		base  int64
		msg   string
	}{
		{"ordinary produce refused", nil, "east.orders", linkBatch(t, 0, 1), kerr.PolicyViolation, -1,
			"topic east.orders is a read-only mirror of east; promote it to write"},
		{"link starts an empty log at the source offset", east, "east.orders", linkBatch(t, 100, 3), nil, 100, ""},
		{"gap kept", east, "east.orders", linkBatch(t, 110, 2), nil, 110, ""},
		{"below the log end", east, "east.orders", linkBatch(t, 111, 1), kerr.OffsetOutOfRange, -1, ""},
		{"another link", west, "east.orders", linkBatch(t, 120, 1), kerr.PolicyViolation, -1, "not of link west"},
		{"link to a topic that is no mirror", east, "plain", linkBatch(t, 0, 1), kerr.PolicyViolation, -1, "is not a mirror"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.produceAs(tt.txnID, tt.topic, tt.batch)
			adminWantCode(t, "produce", got.ErrorCode, tt.want)
			if got.BaseOffset != tt.base {
				t.Errorf("base offset %d, want %d", got.BaseOffset, tt.base)
			}
			if tt.msg != "" && (got.ErrorMessage == nil || !strings.Contains(*got.ErrorMessage, tt.msg)) {
				t.Errorf("error message %v, want it to hold %q", got.ErrorMessage, tt.msg)
			}
		})
	}
	if s := e.earliest("east.orders", 0); s != 100 {
		t.Fatalf("mirror starts at %d, want 100", s)
	}

	// Promotion deletes the config: ordinary produce continues after the
	// copied offsets and the link is refused.
	res, err := e.adm.AlterTopicConfigs(e.ctx(), []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "gregor.mirror.link"}}, "east.orders")
	if err == nil {
		_, err = res.On("east.orders", nil)
	}
	if err != nil {
		t.Fatalf("promote: %v", err)
	}
	// The single node applies the change before it answers.
	if got := e.produceAs(nil, "east.orders", linkBatch(t, 0, 1)); got.ErrorCode != 0 || got.BaseOffset != 112 {
		t.Fatalf("produce after promotion: %v at %d, want offset 112", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
	}
	got := e.produceAs(east, "east.orders", linkBatch(t, 200, 1))
	adminWantCode(t, "link after promotion", got.ErrorCode, kerr.PolicyViolation)
}
