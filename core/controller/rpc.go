package controller

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Controller RPCs travel in Kafka frames on the controller listener. The
// Kafka APIs that Kafka's own brokers send to their controller are used as
// Kafka defines them (BrokerRegistration 62, BrokerHeartbeat 63,
// AlterPartition 56); metadata writes a broker forwards to the active
// controller use the Gregor-private key forwardKey, whose request and
// response bodies are JSON (see forward.go).
const (
	keyBrokerRegistration = 62
	keyBrokerHeartbeat    = 63
	keyAlterPartition     = 56
	keyDescribeQuorum     = 55
	forwardKey            = 0x4752 // "GR"; far above Kafka's keys
	forwardVersion        = 1
)

// maxRPCBytes bounds a controller RPC frame; a forwarded CreateTopics of
// the largest allowed size fits well within it.
const maxRPCBytes = 64 << 20

// rpcIdleTimeout closes an RPC connection that sends nothing for this long.
const rpcIdleTimeout = 5 * time.Minute

// serveRPC accepts controller RPC connections until the controller closes.
func (c *Controller) serveRPC() {
	defer c.wg.Done()
	for {
		conn, err := c.mux.acceptRPC()
		if err != nil {
			return
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer conn.Close()
			if err := c.serveConn(conn); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.log.Debug("controller rpc connection", "remote", conn.RemoteAddr(), "err", err)
			}
		}()
	}
}

// localOnly marks a context whose operation must not be forwarded again.
type localOnlyKey struct{}

func localOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, localOnlyKey{}, true)
}

func isLocalOnly(ctx context.Context) bool { return ctx.Value(localOnlyKey{}) != nil }

func (c *Controller) serveConn(conn net.Conn) error {
	for {
		conn.SetReadDeadline(time.Now().Add(rpcIdleTimeout))
		frame, err := readFrame(conn)
		if err != nil {
			return err
		}
		resp, err := c.handleFrame(frame)
		if err != nil {
			return err
		}
		conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
		if _, err := conn.Write(resp); err != nil {
			return err
		}
	}
}

// readFrame reads one size-prefixed frame, refusing a size outside
// (0, maxRPCBytes] before allocating.
func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n <= 0 || n > maxRPCBytes {
		return nil, fmt.Errorf("controller: rpc frame of %d bytes is outside (0, %d]", n, maxRPCBytes)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// handleFrame decodes one request and returns the whole response frame. An
// error closes the connection (the request could not be parsed).
func (c *Controller) handleFrame(frame []byte) ([]byte, error) {
	rd := kbin.Reader{Src: frame}
	key, version, corr := rd.Int16(), rd.Int16(), rd.Int32()
	rd.NullableString() // client id
	if !rd.Ok() {
		return nil, errors.New("controller: rpc: truncated request header")
	}
	ctx, cancel := context.WithTimeout(localOnly(context.Background()), 30*time.Second)
	defer cancel()
	if key == forwardKey {
		if version != forwardVersion {
			return nil, fmt.Errorf("controller: rpc: forward version %d", version)
		}
		body := c.handleForward(ctx, rd.Src)
		return appendResponse(corr, false, body), nil
	}
	req := kmsg.RequestForKey(key)
	if req == nil || (key != keyBrokerRegistration && key != keyBrokerHeartbeat && key != keyAlterPartition && key != keyDescribeQuorum) {
		return nil, fmt.Errorf("controller: rpc: api key %d is not served on the controller listener", key)
	}
	if version < 0 || version > req.MaxVersion() {
		return nil, fmt.Errorf("controller: rpc: api key %d version %d is not supported", key, version)
	}
	req.SetVersion(version)
	if req.IsFlexible() {
		kmsg.SkipTags(&rd)
	}
	if !rd.Ok() {
		return nil, errors.New("controller: rpc: truncated request header")
	}
	if err := req.ReadFrom(rd.Src); err != nil {
		return nil, fmt.Errorf("controller: rpc: api key %d: %w", key, err)
	}
	var resp kmsg.Response
	switch r := req.(type) {
	case *kmsg.BrokerRegistrationRequest:
		resp = c.serveRegistration(ctx, r)
	case *kmsg.BrokerHeartbeatRequest:
		resp = c.serveHeartbeat(ctx, r)
	case *kmsg.AlterPartitionRequest:
		resp = c.serveAlterPartition(ctx, r)
	case *kmsg.DescribeQuorumRequest:
		resp = c.serveDescribeQuorum(r)
	}
	return appendResponse(corr, resp.IsFlexible(), resp.AppendTo(nil)), nil
}

func appendResponse(corr int32, flexible bool, body []byte) []byte {
	out := make([]byte, 0, 9+len(body))
	out = kbin.AppendInt32(out, 0)
	out = kbin.AppendInt32(out, corr)
	if flexible {
		out = append(out, 0)
	}
	out = append(out, body...)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out
}

func (c *Controller) serveRegistration(ctx context.Context, r *kmsg.BrokerRegistrationRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.BrokerRegistrationResponse)
	b := Broker{NodeID: r.BrokerID, PreviousEpoch: -1}
	if r.Version >= 3 {
		b.PreviousEpoch = r.PreviousBrokerEpoch
	}
	if r.Rack != nil {
		b.Rack = *r.Rack
	}
	for i, l := range r.Listeners {
		if l.Name == controllerListenerName {
			b.ControllerAddress = net.JoinHostPort(l.Host, fmt.Sprint(l.Port))
			continue
		}
		if b.Host == "" {
			b.Host, b.Port = l.Host, int32(l.Port)
		}
		if i < maxEndpoints {
			b.Endpoints = append(b.Endpoints, Endpoint{Listener: l.Name, Host: l.Host, Port: int32(l.Port)})
		}
	}
	if im := c.Image(); r.ClusterID != im.ClusterID {
		resp.ErrorCode = kerr.InconsistentClusterID.Code
		return resp
	}
	epoch, err := c.RegisterBrokerFenced(ctx, b)
	resp.ErrorCode, resp.BrokerEpoch = errorCode(err), epoch
	return resp
}

func (c *Controller) serveHeartbeat(ctx context.Context, r *kmsg.BrokerHeartbeatRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.BrokerHeartbeatResponse)
	reply, err := c.BrokerHeartbeat(ctx, Heartbeat{
		NodeID: r.BrokerID, Epoch: r.BrokerEpoch, MetadataOffset: r.CurrentMetadataOffset,
		LogEndOffset: heartbeatLogEnd(r), WantShutdown: r.WantShutdown, LogDirOffline: len(r.OfflineLogDirs) > 0,
	})
	resp.ErrorCode = errorCode(err)
	resp.IsCaughtUp, resp.IsFenced, resp.ShouldShutdown = reply.CaughtUp, reply.Fenced, reply.ShouldShutdown
	if err != nil {
		resp.IsFenced = true
	}
	return resp
}

func (c *Controller) serveAlterPartition(ctx context.Context, r *kmsg.AlterPartitionRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.AlterPartitionResponse)
	im := c.Image()
	for _, rt := range r.Topics {
		st := kmsg.NewAlterPartitionResponseTopic()
		st.Topic, st.TopidID = rt.Topic, rt.TopicID
		name := rt.Topic
		if r.Version >= 2 {
			if t, ok := im.TopicsByID[rt.TopicID]; ok {
				name = t.Name
			} else {
				name = ""
			}
		}
		for _, rp := range rt.Partitions {
			sp := kmsg.NewAlterPartitionResponseTopicPartition()
			sp.Partition = rp.Partition
			isr := rp.NewISR
			if r.Version >= 3 {
				isr = make([]int32, 0, len(rp.NewEpochISR))
				for _, m := range rp.NewEpochISR {
					isr = append(isr, m.BrokerID)
				}
			}
			p, err := c.alterPartition(ctx, AlterPartitionRequest{
				BrokerID: r.BrokerID, BrokerEpoch: r.BrokerEpoch, Topic: name, Partition: rp.Partition,
				LeaderEpoch: rp.LeaderEpoch, PartitionEpoch: rp.PartitionEpoch, ISR: isr,
			})
			sp.ErrorCode = errorCode(err)
			if name == "" && r.Version >= 2 {
				sp.ErrorCode = kerr.UnknownTopicID.Code
			}
			if err == nil {
				sp.LeaderID, sp.LeaderEpoch, sp.ISR, sp.PartitionEpoch = p.Leader, p.LeaderEpoch, p.ISR, p.PartitionEpoch
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// controllerListenerName names the controller listener in a broker
// registration.
const controllerListenerName = "CONTROLLER"

// maxEndpoints bounds the listeners one registration may carry.
const maxEndpoints = 64

// sentinels pairs each sentinel error with its Kafka error code, for the
// controller RPCs in both directions.
var sentinels = []struct {
	err  error
	code *kerr.Error
}{
	{ErrTopicExists, kerr.TopicAlreadyExists},
	{ErrUnknownTopicID, kerr.UnknownTopicID},
	{ErrUnknownTopic, kerr.UnknownTopicOrPartition},
	{ErrInvalidTopic, kerr.InvalidTopicException},
	{ErrInvalidPartitions, kerr.InvalidPartitions},
	{ErrInvalidReplicationFactor, kerr.InvalidReplicationFactor},
	{ErrInvalidReplicaAssignment, kerr.InvalidReplicaAssignment},
	{ErrInvalidConfig, kerr.InvalidConfig},
	{ErrPolicyViolation, kerr.PolicyViolation},
	{ErrNotController, kerr.NotController},
	{ErrInvalidRequest, kerr.InvalidRequest},
	{ErrStaleBrokerEpoch, kerr.StaleBrokerEpoch},
	{ErrBrokerNotRegistered, kerr.BrokerIDNotRegistered},
	{ErrFencedLeaderEpoch, kerr.FencedLeaderEpoch},
	{ErrInvalidUpdateVersion, kerr.InvalidUpdateVersion},
	{ErrIneligibleReplica, kerr.IneligibleReplica},
	{ErrElectionNotNeeded, kerr.ElectionNotNeeded},
	{ErrPreferredLeaderNotAvailable, kerr.PreferredLeaderNotAvailable},
	{ErrEligibleLeadersNotAvailable, kerr.EligibleLeadersNotAvailable},
	{ErrNoReassignmentInProgress, kerr.NoReassignmentInProgress},
	{ErrClusterAuthorization, kerr.ClusterAuthorizationFailed},
	{context.DeadlineExceeded, kerr.RequestTimedOut},
	{ErrCorrupt, kerr.UnknownServerError},
}

// errorCode is err's Kafka code (0 for nil).
func errorCode(err error) int16 {
	if err == nil {
		return 0
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.code.Code
		}
	}
	return kerr.UnknownServerError.Code
}

// remoteError is an error the active controller returned: its message,
// unwrapping to the matching sentinel.
type remoteError struct {
	msg      string
	sentinel error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.sentinel }

// codeError turns a Kafka error code from the active controller back into
// an error wrapping the sentinel.
func codeError(what string, code int16) error {
	if code == 0 {
		return nil
	}
	for _, s := range sentinels {
		if s.code.Code == code {
			return &remoteError{msg: fmt.Sprintf("controller: %s: %s: %v", what, s.code.Message, s.err), sentinel: s.err}
		}
	}
	return fmt.Errorf("controller: %s: %w", what, kerr.ErrorForCode(code))
}
