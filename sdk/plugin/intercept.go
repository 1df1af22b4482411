package plugin

import (
	"context"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
	"github.com/gregorbroker/gregor/sdk/plugin/pb"
)

// InterceptRecordsToProto converts interceptor records for the protocol.
func InterceptRecordsToProto(records []interceptor.Record) []*pb.InterceptRecord {
	out := make([]*pb.InterceptRecord, len(records))
	for i, r := range records {
		pr := &pb.InterceptRecord{Key: r.Key, NullKey: r.Key == nil, Value: r.Value, NullValue: r.Value == nil,
			Timestamp: r.Timestamp, OffsetDelta: r.OffsetDelta}
		if len(r.Headers) > 0 {
			pr.Headers = make([]*pb.InterceptHeader, len(r.Headers))
			for j, h := range r.Headers {
				pr.Headers[j] = &pb.InterceptHeader{Key: h.Key, Value: h.Value, NullValue: h.Value == nil}
			}
		}
		out[i] = pr
	}
	return out
}

// InterceptRecordsFromProto converts protocol records back.
func InterceptRecordsFromProto(records []*pb.InterceptRecord) []interceptor.Record {
	out := make([]interceptor.Record, len(records))
	for i, pr := range records {
		r := interceptor.Record{Key: nonNil(pr.GetKey(), pr.GetNullKey()), Value: nonNil(pr.GetValue(), pr.GetNullValue()),
			Timestamp: pr.GetTimestamp(), OffsetDelta: pr.GetOffsetDelta()}
		if hs := pr.GetHeaders(); len(hs) > 0 {
			r.Headers = make([]interceptor.Header, len(hs))
			for j, h := range hs {
				r.Headers[j] = interceptor.Header{Key: h.GetKey(), Value: nonNil(h.GetValue(), h.GetNullValue())}
			}
		}
		out[i] = r
	}
	return out
}

// nonNil is b, or nil when null; proto3 hands an empty value as nil.
func nonNil(b []byte, null bool) []byte {
	if null {
		return nil
	}
	if b == nil {
		return []byte{}
	}
	return b
}

// DecisionToProto converts a decision for the protocol.
func DecisionToProto(d interceptor.Decision) *pb.InterceptProduceResponse {
	resp := &pb.InterceptProduceResponse{Action: int32(d.Action), Message: d.Message}
	for _, e := range d.Errors {
		resp.Errors = append(resp.Errors, &pb.RecordError{Index: e.Index, Message: e.Message})
	}
	if d.Action == interceptor.Rewrite {
		resp.Records = InterceptRecordsToProto(d.Records)
	}
	return resp
}

// DecisionFromProto converts a protocol decision back.
func DecisionFromProto(resp *pb.InterceptProduceResponse) interceptor.Decision {
	d := interceptor.Decision{Action: interceptor.Action(resp.GetAction()), Message: resp.GetMessage()}
	for _, e := range resp.GetErrors() {
		d.Errors = append(d.Errors, interceptor.RecordError{Index: e.GetIndex(), Message: e.GetMessage()})
	}
	if d.Action == interceptor.Rewrite {
		d.Records = InterceptRecordsFromProto(resp.GetRecords())
	}
	return d
}

// interceptorServer serves an interceptor.Interceptor.
type interceptorServer struct {
	pb.UnimplementedInterceptorServer
	conf *configured[interceptor.Interceptor]
}

func (s *interceptorServer) Configure(_ context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	return s.conf.configure(req)
}

func (s *interceptorServer) InterceptProduce(ctx context.Context, req *pb.InterceptProduceRequest) (*pb.InterceptProduceResponse, error) {
	impl, err := s.conf.get()
	if err != nil {
		return nil, err
	}
	b := &interceptor.Batch{Topic: req.GetTopic(), Partition: req.GetPartition(),
		Principal: auth.Principal{Type: req.GetPrincipal().GetType(), Name: req.GetPrincipal().GetName()},
		Records:   InterceptRecordsFromProto(req.GetRecords())}
	d, err := impl.InterceptProduce(ctx, b)
	if err != nil {
		return nil, appError(err)
	}
	return DecisionToProto(d), nil
}
