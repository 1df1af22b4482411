package plugin

import (
	"errors"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/plugin/pb"
	"github.com/gregorbroker/gregor/sdk/retention"
)

// The conversions between sdk types and their protobuf form. Both sides of
// the protocol use them, so a field added to a contract is added here once.

// RecordsToProto converts records for a PartitionBatch request.
func RecordsToProto(records []partitioner.Record) []*pb.Record {
	out := make([]*pb.Record, len(records))
	for i, r := range records {
		pr := &pb.Record{Key: r.Key, NullKey: r.Key == nil, Value: r.Value}
		if len(r.Headers) > 0 {
			pr.Headers = make([]*pb.Header, len(r.Headers))
			for j, h := range r.Headers {
				pr.Headers[j] = &pb.Header{Key: h.Key, Value: h.Value}
			}
		}
		out[i] = pr
	}
	return out
}

// RecordsFromProto appends the records of a PartitionBatch request to dst.
// A key that is not null is never nil, even when empty.
func RecordsFromProto(dst []partitioner.Record, records []*pb.Record) []partitioner.Record {
	for _, pr := range records {
		r := partitioner.Record{Value: pr.GetValue()}
		if !pr.GetNullKey() {
			r.Key = pr.GetKey()
			if r.Key == nil {
				r.Key = []byte{}
			}
		}
		if hs := pr.GetHeaders(); len(hs) > 0 {
			r.Headers = make([]partitioner.Header, len(hs))
			for j, h := range hs {
				r.Headers[j] = partitioner.Header{Key: h.GetKey(), Value: h.GetValue()}
			}
		}
		dst = append(dst, r)
	}
	return dst
}

// PartitionToProto converts a retention question.
func PartitionToProto(p retention.Partition) *pb.RetentionPartition {
	out := &pb.RetentionPartition{
		Topic:          p.Topic,
		Partition:      p.Partition,
		LogStartOffset: p.LogStartOffset,
		LogEndOffset:   p.LogEndOffset,
		HighWatermark:  p.HighWatermark,
		NowMs:          p.NowMs,
		Segments:       make([]*pb.Segment, len(p.Segments)),
		Groups:         make([]*pb.GroupOffset, len(p.Groups)),
	}
	for i, s := range p.Segments {
		out.Segments[i] = &pb.Segment{BaseOffset: s.BaseOffset, NextOffset: s.NextOffset,
			SizeBytes: s.SizeBytes, LargestTimestampMs: s.LargestTimestampMs}
	}
	for i, g := range p.Groups {
		out.Groups[i] = &pb.GroupOffset{Group: g.Group, Offset: g.Offset}
	}
	return out
}

// PartitionFromProto converts a retention question back.
func PartitionFromProto(p *pb.RetentionPartition) retention.Partition {
	out := retention.Partition{
		Topic:          p.GetTopic(),
		Partition:      p.GetPartition(),
		LogStartOffset: p.GetLogStartOffset(),
		LogEndOffset:   p.GetLogEndOffset(),
		HighWatermark:  p.GetHighWatermark(),
		NowMs:          p.GetNowMs(),
		Segments:       make([]retention.Segment, len(p.GetSegments())),
		Groups:         make([]retention.GroupOffset, len(p.GetGroups())),
	}
	for i, s := range p.GetSegments() {
		out.Segments[i] = retention.Segment{BaseOffset: s.GetBaseOffset(), NextOffset: s.GetNextOffset(),
			SizeBytes: s.GetSizeBytes(), LargestTimestampMs: s.GetLargestTimestampMs()}
	}
	for i, g := range p.GetGroups() {
		out.Groups[i] = retention.GroupOffset{Group: g.GetGroup(), Offset: g.GetOffset()}
	}
	return out
}

// CredentialsToProto converts SASL credentials.
func CredentialsToProto(c auth.Credentials) *pb.Credentials {
	return &pb.Credentials{
		Mechanism:       c.Mechanism,
		Username:        c.Username,
		Password:        c.Password,
		AuthorizationId: c.AuthorizationID,
		Token:           c.Token,
		Listener:        c.Listener,
		ClientHost:      c.ClientHost,
	}
}

// CredentialsFromProto converts SASL credentials back.
func CredentialsFromProto(c *pb.Credentials) auth.Credentials {
	return auth.Credentials{
		Mechanism:       c.GetMechanism(),
		Username:        c.GetUsername(),
		Password:        c.GetPassword(),
		AuthorizationID: c.GetAuthorizationId(),
		Token:           c.GetToken(),
		Listener:        c.GetListener(),
		ClientHost:      c.GetClientHost(),
	}
}

// PrincipalToProto converts a principal.
func PrincipalToProto(p auth.Principal) *pb.Principal {
	return &pb.Principal{Type: p.Type, Name: p.Name}
}

// PrincipalFromProto converts a principal back.
func PrincipalFromProto(p *pb.Principal) auth.Principal {
	return auth.Principal{Type: p.GetType(), Name: p.GetName()}
}

// ActionsToProto converts authorization questions.
func ActionsToProto(actions []auth.Action) []*pb.Action {
	out := make([]*pb.Action, len(actions))
	for i, a := range actions {
		out[i] = &pb.Action{
			Principal: PrincipalToProto(a.Principal),
			Host:      a.Host,
			Operation: int32(a.Operation),
			Resource: &pb.Resource{
				Type:    int32(a.Resource.Type),
				Name:    a.Resource.Name,
				Pattern: int32(a.Resource.Pattern),
			},
		}
	}
	return out
}

// ActionsFromProto converts authorization questions back. Codes outside
// int8 become the Unknown value of their enum.
func ActionsFromProto(actions []*pb.Action) []auth.Action {
	out := make([]auth.Action, len(actions))
	for i, a := range actions {
		r := a.GetResource()
		out[i] = auth.Action{
			Principal: PrincipalFromProto(a.GetPrincipal()),
			Host:      a.GetHost(),
			Operation: auth.Operation(int8Code(a.GetOperation())),
			Resource: auth.Resource{
				Type:    auth.ResourceType(int8Code(r.GetType())),
				Name:    r.GetName(),
				Pattern: auth.PatternType(int8Code(r.GetPattern())),
			},
		}
	}
	return out
}

func int8Code(v int32) int8 {
	if v < -128 || v > 127 {
		return 0
	}
	return int8(v)
}

// isAuthFailure tells a rejection of the credentials (answered as a failed
// authentication) from a failure of the authenticator itself.
func isAuthFailure(err error) bool {
	return errors.Is(err, auth.ErrAuthenticationFailed) || errors.Is(err, auth.ErrUnsupportedMechanism)
}
