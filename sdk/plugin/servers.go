package plugin

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gregorbroker/gregor/sdk"
	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/plugin/pb"
	"github.com/gregorbroker/gregor/sdk/retention"
)

// configured holds an extension built by its factory on Configure.
type configured[T any] struct {
	factory func(Config) (T, error)
	logger  *slog.Logger

	mu   sync.RWMutex // guards impl and ok
	impl T
	ok   bool
}

func newConfigured[T any](factory func(Config) (T, error), logger *slog.Logger) *configured[T] {
	return &configured[T]{factory: factory, logger: logger}
}

func (c *configured[T]) configure(req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	if v := req.GetContractVersion(); v != sdk.ContractVersion {
		return nil, status.Errorf(codes.FailedPrecondition,
			"plugin: broker speaks contract version %d, this plugin was built for version %d", v, sdk.ContractVersion)
	}
	impl, err := c.factory(Config{
		Name:   req.GetName(),
		JSON:   req.GetConfigJson(),
		Logger: c.logger.With("extension", req.GetName()),
	})
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "plugin: %s: %v", req.GetName(), err)
	}
	c.mu.Lock()
	c.impl, c.ok = impl, true
	c.mu.Unlock()
	return &pb.ConfigureResponse{}, nil
}

func (c *configured[T]) get() (T, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ok {
		var zero T
		return zero, status.Error(codes.FailedPrecondition, "plugin: called before Configure")
	}
	return c.impl, nil
}

// appError turns an extension's own error into a gRPC status the host
// reports as the extension's failure, not a transport failure.
func appError(err error) error {
	return status.Error(codes.Aborted, err.Error())
}

type partitionerServer struct {
	pb.UnimplementedPartitionerServer
	conf *configured[partitioner.BatchPartitioner]

	mu      sync.Mutex // serialises PartitionBatch; guards records and out
	records []partitioner.Record
	out     []int32
}

func (s *partitionerServer) Configure(_ context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	return s.conf.configure(req)
}

func (s *partitionerServer) PartitionBatch(_ context.Context, req *pb.PartitionBatchRequest) (*pb.PartitionBatchResponse, error) {
	p, err := s.conf.get()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = RecordsFromProto(s.records[:0], req.GetRecords())
	n := len(s.records)
	if cap(s.out) < n {
		s.out = make([]int32, n)
	}
	out := s.out[:n]
	if err := p.PartitionBatch(s.records, req.GetNumPartitions(), out); err != nil {
		return nil, appError(err)
	}
	return &pb.PartitionBatchResponse{Partitions: append([]int32(nil), out...)}, nil
}

type retentionServer struct {
	pb.UnimplementedRetentionServer
	conf *configured[retention.Policy]
}

func (s *retentionServer) Configure(_ context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	return s.conf.configure(req)
}

func (s *retentionServer) GroupInterest(context.Context, *pb.GroupInterestRequest) (*pb.GroupInterestResponse, error) {
	p, err := s.conf.get()
	if err != nil {
		return nil, err
	}
	gi, ok := p.(retention.GroupInterest)
	if !ok {
		return &pb.GroupInterestResponse{}, nil
	}
	return &pb.GroupInterestResponse{Declared: true, Groups: gi.Groups()}, nil
}

func (s *retentionServer) DeletableSegments(ctx context.Context, req *pb.RetentionPartition) (*pb.DeletableSegmentsResponse, error) {
	p, err := s.conf.get()
	if err != nil {
		return nil, err
	}
	n, err := p.DeletableSegments(ctx, PartitionFromProto(req))
	if err != nil {
		return nil, appError(err)
	}
	return &pb.DeletableSegmentsResponse{Count: int32(n)}, nil
}

type authenticatorServer struct {
	pb.UnimplementedAuthenticatorServer
	conf *configured[auth.Authenticator]
}

func (s *authenticatorServer) Configure(_ context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	return s.conf.configure(req)
}

func (s *authenticatorServer) Mechanisms(context.Context, *pb.MechanismsRequest) (*pb.MechanismsResponse, error) {
	a, err := s.conf.get()
	if err != nil {
		return nil, err
	}
	return &pb.MechanismsResponse{Mechanisms: a.Mechanisms()}, nil
}

func (s *authenticatorServer) Authenticate(ctx context.Context, req *pb.Credentials) (*pb.AuthenticateResponse, error) {
	a, err := s.conf.get()
	if err != nil {
		return nil, err
	}
	p, err := a.Authenticate(ctx, CredentialsFromProto(req))
	if err != nil {
		if isAuthFailure(err) {
			return &pb.AuthenticateResponse{Failed: true, Reason: err.Error()}, nil
		}
		return nil, appError(err)
	}
	return &pb.AuthenticateResponse{Principal: PrincipalToProto(p)}, nil
}

type authorizerServer struct {
	pb.UnimplementedAuthorizerServer
	conf *configured[auth.Authorizer]
}

func (s *authorizerServer) Configure(_ context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	return s.conf.configure(req)
}

func (s *authorizerServer) Authorize(ctx context.Context, req *pb.AuthorizeRequest) (*pb.AuthorizeResponse, error) {
	a, err := s.conf.get()
	if err != nil {
		return nil, err
	}
	actions := ActionsFromProto(req.GetActions())
	decisions := make([]auth.Decision, len(actions))
	if err := a.Authorize(ctx, actions, decisions); err != nil {
		return nil, appError(fmt.Errorf("plugin: authorize: %w", err))
	}
	allowed := make([]bool, len(decisions))
	for i, d := range decisions {
		allowed[i] = d == auth.Allow
	}
	return &pb.AuthorizeResponse{Allowed: allowed}, nil
}
