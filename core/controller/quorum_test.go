package controller

import (
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestQuorumProgress(t *testing.T) {
	t0 := time.UnixMilli(1_000_000)
	var p quorumProgress
	if got := p.get(2); got.LogEndOffset != -1 || !got.LastFetch.IsZero() {
		t.Fatalf("unknown node: %+v, want log end -1 and no fetch", got)
	}
	for _, c := range []struct {
		at            time.Duration
		logEnd, hw    int64
		wantCaughtUp  time.Duration
		wantFetchTime time.Duration
	}{
		{0, 10, 10, 0, 0},                     // at the high watermark: caught up now
		{time.Second, 11, 15, 0, time.Second}, // behind: the caught-up time stays
		{2 * time.Second, 16, 15, 2 * time.Second, 2 * time.Second},
	} {
		p.report(2, c.logEnd, c.hw, t0.Add(c.at))
		got := p.get(2)
		want := QuorumReplica{NodeID: 2, LogEndOffset: c.logEnd, LastFetch: t0.Add(c.wantFetchTime), LastCaughtUp: t0.Add(c.wantCaughtUp)}
		if got != want {
			t.Fatalf("after a report at +%v of %d (hw %d): %+v, want %+v", c.at, c.logEnd, c.hw, got, want)
		}
	}
	p.reset()
	if got := p.get(2); got.LogEndOffset != -1 {
		t.Fatalf("after reset: %+v", got)
	}
}

// TestQuorumResponseRoundTrip encodes a quorum state as the active
// controller answers a peer and decodes it as the peer does.
func TestQuorumResponseRoundTrip(t *testing.T) {
	t0 := time.UnixMilli(1_796_000_000_000)
	qs := QuorumState{
		LeaderID: 2, LeaderEpoch: 7, HighWatermark: 40,
		Voters: []QuorumReplica{
			{NodeID: 1, LogEndOffset: 38, LastFetch: t0, LastCaughtUp: t0.Add(-time.Second)},
			{NodeID: 2, LogEndOffset: 41, LastFetch: t0, LastCaughtUp: t0},
		},
		Observers: []QuorumReplica{{NodeID: 4, LogEndOffset: -1}},
		Endpoints: map[int32]string{1: "10.0.0.1:9093", 2: "10.0.0.2:9093"},
	}
	resp := kmsg.NewPtrDescribeQuorumResponse()
	resp.Version = 2
	QuorumResponse(resp, qs)
	var back kmsg.DescribeQuorumResponse
	back.Version = 2
	if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	o := back.Topics[0].Partitions[0].Observers[0]
	if o.LastFetchTimestamp != -1 || o.LastCaughtUpTimestamp != -1 {
		t.Fatalf("an observer never heard from: %+v, want timestamps -1", o)
	}
	got := quorumFromResponse(&back, &back.Topics[0].Partitions[0])
	if back.Topics[0].Topic != MetadataTopic || !reflect.DeepEqual(got, qs) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, qs)
	}
}

func TestHeartbeatLogEndTag(t *testing.T) {
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.BrokerID, req.CurrentMetadataOffset = 3, 12
	req.UnknownTags.Set(heartbeatLogEndTag, encodeLogEnd(17))
	var back kmsg.BrokerHeartbeatRequest
	if err := back.ReadFrom(req.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	if got := heartbeatLogEnd(&back); got != 17 {
		t.Fatalf("log end %d, want 17", got)
	}
	if got := heartbeatLogEnd(kmsg.NewPtrBrokerHeartbeatRequest()); got != 0 {
		t.Fatalf("no tag: log end %d, want 0", got)
	}
}
