package txn

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/partition"
)

// leaderAnswer is a broker that answers WriteTxnMarkers with code for the
// partition it is asked about, or leaves the partition out.
type leaderAnswer struct {
	code int16
	omit bool
	got  *kmsg.WriteTxnMarkersRequest
}

func (l *leaderAnswer) Request(_ context.Context, r kmsg.Request) (kmsg.Response, error) {
	req := r.(*kmsg.WriteTxnMarkersRequest)
	l.got = req
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	for _, m := range req.Markers {
		sm := kmsg.NewWriteTxnMarkersResponseMarker()
		sm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			st := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			st.Topic = t.Topic
			for _, p := range t.Partitions {
				if l.omit {
					continue
				}
				sp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				sp.Partition, sp.ErrorCode = p, l.code
				st.Partitions = append(st.Partitions, sp)
			}
			sm.Topics = append(sm.Topics, st)
		}
		resp.Markers = append(resp.Markers, sm)
	}
	return resp, nil
}

// A marker goes to the partition's leader; the leader's answer decides
// whether it is done, dropped or retried, and a partition gone from the
// image needs none.
func TestMarkersWriteRouting(t *testing.T) {
	errLink := errors.New("link down")
	tp := TopicPartition{Topic: "t", Partition: 2}
	m := partition.TxnMarker{ProducerID: 9, ProducerEpoch: 3, Commit: true, CoordinatorEpoch: 4}
	for _, tc := range []struct {
		name     string
		leader   int32
		known    bool
		answer   leaderAnswer
		sendErr  error
		wantSent bool
		want     error // nil, ErrMarkerDropped, or a sentinel the error wraps
		wantFail bool  // an error to retry
	}{
		{name: "topic gone", leader: -1, known: false, want: ErrMarkerDropped},
		{name: "no leader", leader: -1, known: true, wantFail: true},
		{name: "remote ok", leader: 2, known: true, wantSent: true},
		{name: "remote fenced epoch", leader: 2, known: true, answer: leaderAnswer{code: kerr.InvalidProducerEpoch.Code}, wantSent: true, want: ErrMarkerDropped},
		{name: "remote coordinator fenced", leader: 2, known: true, answer: leaderAnswer{code: kerr.TransactionCoordinatorFenced.Code}, wantSent: true, want: ErrMarkerDropped},
		{name: "remote not leader", leader: 2, known: true, answer: leaderAnswer{code: kerr.NotLeaderForPartition.Code}, wantSent: true, want: kerr.NotLeaderForPartition},
		{name: "remote answer without the partition", leader: 2, known: true, answer: leaderAnswer{omit: true}, wantSent: true, wantFail: true},
		{name: "link down", leader: 2, known: true, sendErr: errLink, want: errLink},
		{name: "led here but not hosted", leader: 1, known: true, wantFail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer := tc.answer
			sentTo := int32(-1)
			w := &Markers{
				NodeID: 1,
				Leader: func(got TopicPartition) (int32, bool) {
					if got != tp {
						t.Fatalf("leader of %v asked", got)
					}
					return tc.leader, tc.known
				},
				Partition: func(TopicPartition) (*partition.Partition, bool) { return nil, false },
				Send: func(id int32, send func(context.Context, kmsg.Requestor) error) error {
					sentTo = id
					if tc.sendErr != nil {
						return tc.sendErr
					}
					return send(context.Background(), &answer)
				},
			}
			err := w.Write(tp, m)
			switch {
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("err %v, want %v", err, tc.want)
			case tc.want == nil && tc.wantFail && (err == nil || errors.Is(err, ErrMarkerDropped)):
				t.Fatalf("err %v, want an error to retry", err)
			case tc.want == nil && !tc.wantFail && err != nil:
				t.Fatalf("err %v", err)
			}
			if tc.wantSent {
				if sentTo != tc.leader || answer.got == nil {
					t.Fatalf("sent to %d, want %d", sentTo, tc.leader)
				}
				rm := answer.got.Markers[0]
				if rm.ProducerID != 9 || rm.ProducerEpoch != 3 || !rm.Committed || rm.CoordinatorEpoch != 4 ||
					rm.Topics[0].Topic != "t" || rm.Topics[0].Partitions[0] != 2 {
					t.Fatalf("marker sent %+v", rm)
				}
			}
		})
	}
}
