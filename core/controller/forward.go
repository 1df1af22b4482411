package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A node that is not the active controller validates a metadata write
// against its own image, as the controller would, and forwards the
// resulting records to the active controller, which proposes them. Every
// record re-checks its preconditions when applied (a topic name still
// free, a partition still at the epoch the change was computed from), so
// a record planned on a slightly stale image is refused rather than
// applied wrongly. Broker registrations, heartbeats and ISR changes travel
// as Kafka's own controller APIs instead; controller and broker-state
// records are never accepted from a peer.

// forwardRequest is the JSON body of a forwardKey request.
type forwardRequest struct {
	// Records are encoded records to propose, in order.
	Records []json.RawMessage `json:"records,omitempty"`
	// ProducerIDs asks for a block of this many producer ids.
	ProducerIDs int32 `json:"producer_ids,omitempty"`
	// Barrier asks only for the active controller's metadata offset.
	Barrier bool `json:"barrier,omitempty"`
	// Principal is the client whose request the forwarding broker
	// authorized ("User:alice"); empty when the broker writes on its own
	// behalf, which only some record kinds allow (ownBehalf).
	Principal string `json:"principal,omitempty"`
}

// forwardResponse is the JSON body of a forwardKey response.
type forwardResponse struct {
	// Errors follow the request's records; null is success.
	Errors []*wireError `json:"errors,omitempty"`
	// Error fails the request as a whole.
	Error *wireError `json:"error,omitempty"`
	// Offset is the metadata offset after the writes; the forwarding
	// node waits until it has applied it.
	Offset uint64 `json:"offset"`
	// FirstProducerID is the block's first id.
	FirstProducerID int64 `json:"first_producer_id,omitempty"`
}

// wireError carries an error and the Kafka code of its sentinel.
type wireError struct {
	Code    int16  `json:"code"`
	Message string `json:"message"`
}

func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	return &wireError{Code: errorCode(err), Message: err.Error()}
}

func (w *wireError) err() error {
	if w == nil {
		return nil
	}
	for _, s := range sentinels {
		if s.code.Code == w.Code {
			return &remoteError{msg: w.Message, sentinel: s.err}
		}
	}
	return errors.New(w.Message)
}

// handleForward serves a forwardKey request on the active controller.
func (c *Controller) handleForward(ctx context.Context, body []byte) []byte {
	var req forwardRequest
	var resp forwardResponse
	fail := func(err error) []byte {
		resp.Error = toWire(err)
		out, _ := json.Marshal(&resp)
		return out
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fail(fmt.Errorf("controller: forwarded request: %w: %v", ErrInvalidRequest, err))
	}
	if !c.isActive() {
		return fail(fmt.Errorf("controller: node %d: %w", c.cfg.NodeID, ErrNotController))
	}
	switch {
	case req.Barrier:
	case req.ProducerIDs != 0:
		first, err := c.AllocateProducerIDs(ctx, req.ProducerIDs)
		if err != nil {
			return fail(err)
		}
		resp.FirstProducerID = first
	case len(req.Records) > 0:
		records := make([]record, len(req.Records))
		for i, raw := range req.Records {
			r, err := decodeRecord(raw)
			if err != nil {
				return fail(err)
			}
			if err := checkForwardedKind(r.kind(), req.Principal); err != nil {
				c.log.Warn("refused a forwarded record", "kind", r.kind(), "principal", req.Principal, "err", err)
				return fail(err)
			}
			records[i] = r
		}
		c.log.Debug("proposing forwarded records", "records", len(records), "first_kind", records[0].kind(), "principal", req.Principal)
		c.writeMu.Lock()
		errs := c.proposeAsActive(ctx, records)
		c.writeMu.Unlock()
		resp.Errors = make([]*wireError, len(errs))
		for i, err := range errs {
			resp.Errors[i] = toWire(err)
		}
	default:
		return fail(fmt.Errorf("controller: forwarded request: %w: nothing to do", ErrInvalidRequest))
	}
	resp.Offset = c.Image().Offset
	out, _ := json.Marshal(&resp)
	return out
}

// forward sends a forwardKey request to the active controller.
func (c *Controller) forward(ctx context.Context, req *forwardRequest) (*forwardResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("controller: forward: %w", err)
	}
	var resp forwardResponse
	err = c.callActive(ctx, "forward", func(ctx context.Context, addr string) error {
		raw, err := c.peers.callRaw(ctx, addr, forwardKey, forwardVersion, body)
		if err != nil {
			return err
		}
		resp = forwardResponse{}
		if err := json.Unmarshal(raw, &resp); err != nil {
			return fmt.Errorf("controller: forward: %w: %v", ErrCorrupt, err)
		}
		return resp.Error.err()
	})
	if err != nil {
		return nil, err
	}
	if err := c.waitOffset(ctx, resp.Offset); err != nil {
		return nil, err
	}
	return &resp, nil
}

func (c *Controller) forwardRecords(ctx context.Context, records []record) []error {
	errs := make([]error, len(records))
	setAll := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	if c.peers == nil || isLocalOnly(ctx) {
		return setAll(fmt.Errorf("controller: node %d is not the active controller: %w", c.cfg.NodeID, ErrNotController))
	}
	req := &forwardRequest{Records: make([]json.RawMessage, len(records)), Principal: principalFrom(ctx)}
	for i, r := range records {
		data, err := encodeRecord(r)
		if err != nil {
			return setAll(err)
		}
		req.Records[i] = data
	}
	resp, err := c.forward(ctx, req)
	if err != nil {
		return setAll(err)
	}
	if len(resp.Errors) != len(records) {
		return setAll(fmt.Errorf("controller: forward: %w: %d results for %d records", ErrCorrupt, len(resp.Errors), len(records)))
	}
	for i, w := range resp.Errors {
		errs[i] = w.err()
	}
	return errs
}

func (c *Controller) forwardProducerIDs(ctx context.Context, count int32) (int64, error) {
	if isLocalOnly(ctx) {
		return 0, fmt.Errorf("controller: node %d is not the active controller: %w", c.cfg.NodeID, ErrNotController)
	}
	resp, err := c.forward(ctx, &forwardRequest{ProducerIDs: count})
	if err != nil {
		return 0, err
	}
	return resp.FirstProducerID, nil
}

func (c *Controller) forwardRegistration(ctx context.Context, b Broker) (int64, error) {
	if c.peers == nil || isLocalOnly(ctx) {
		return 0, fmt.Errorf("controller: node %d is not the active controller: %w", c.cfg.NodeID, ErrNotController)
	}
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.Version = 3 // PreviousBrokerEpoch
	req.BrokerID, req.ClusterID = b.NodeID, c.Image().ClusterID
	req.PreviousBrokerEpoch = b.PreviousEpoch
	if b.Rack != "" {
		req.Rack = &b.Rack
	}
	eps := b.Endpoints
	if len(eps) == 0 {
		eps = []Endpoint{{Listener: "PLAINTEXT", Host: b.Host, Port: b.Port}}
	}
	for _, e := range eps {
		l := kmsg.NewBrokerRegistrationRequestListener()
		l.Name, l.Host, l.Port = e.Listener, e.Host, uint16(e.Port)
		req.Listeners = append(req.Listeners, l)
	}
	if b.ControllerAddress != "" {
		host, port, err := net.SplitHostPort(b.ControllerAddress)
		if err != nil {
			return 0, fmt.Errorf("controller: controller address %q: %w", b.ControllerAddress, err)
		}
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return 0, fmt.Errorf("controller: controller address %q: %w", b.ControllerAddress, err)
		}
		l := kmsg.NewBrokerRegistrationRequestListener()
		l.Name, l.Host, l.Port = controllerListenerName, host, uint16(n)
		req.Listeners = append(req.Listeners, l)
	}
	var epoch int64
	err := c.callActive(ctx, "broker registration", func(ctx context.Context, addr string) error {
		var resp kmsg.BrokerRegistrationResponse
		if err := c.peers.call(ctx, addr, req, &resp); err != nil {
			return err
		}
		epoch = resp.BrokerEpoch
		return codeError(fmt.Sprintf("broker %d registration", b.NodeID), resp.ErrorCode)
	})
	return epoch, err
}

// logDirID names a broker's one log directory in OfflineLogDirs; the
// controller only counts the entries.
var logDirID = [16]byte{'g', 'r', 'e', 'g', 'o', 'r', '-', 'l', 'o', 'g', '-', 'd', 'i', 'r', 0, 1}

func (c *Controller) forwardHeartbeat(ctx context.Context, hb Heartbeat) (HeartbeatReply, error) {
	if c.peers == nil || isLocalOnly(ctx) {
		return HeartbeatReply{}, fmt.Errorf("controller: node %d is not the active controller: %w", c.cfg.NodeID, ErrNotController)
	}
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.Version = 1
	req.BrokerID, req.BrokerEpoch, req.CurrentMetadataOffset, req.WantShutdown = hb.NodeID, hb.Epoch, hb.MetadataOffset, hb.WantShutdown
	if hb.LogDirOffline {
		req.OfflineLogDirs = [][16]byte{logDirID}
	}
	if hb.LogEndOffset > 0 {
		req.UnknownTags.Set(heartbeatLogEndTag, encodeLogEnd(hb.LogEndOffset))
	}
	var reply HeartbeatReply
	err := c.callActive(ctx, "broker heartbeat", func(ctx context.Context, addr string) error {
		var resp kmsg.BrokerHeartbeatResponse
		if err := c.peers.call(ctx, addr, req, &resp); err != nil {
			return err
		}
		reply = HeartbeatReply{CaughtUp: resp.IsCaughtUp, Fenced: resp.IsFenced, ShouldShutdown: resp.ShouldShutdown}
		return codeError(fmt.Sprintf("broker %d heartbeat", hb.NodeID), resp.ErrorCode)
	})
	return reply, err
}

func (c *Controller) forwardAlterPartition(ctx context.Context, ar AlterPartitionRequest) (Partition, error) {
	if c.peers == nil || isLocalOnly(ctx) {
		return Partition{}, fmt.Errorf("controller: node %d is not the active controller: %w", c.cfg.NodeID, ErrNotController)
	}
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = 1
	req.BrokerID, req.BrokerEpoch = ar.BrokerID, ar.BrokerEpoch
	if req.BrokerEpoch == -1 {
		if br, ok := c.Image().Brokers[ar.BrokerID]; ok {
			req.BrokerEpoch = br.Epoch
		}
	}
	rt := kmsg.NewAlterPartitionRequestTopic()
	rt.Topic = ar.Topic
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch, rp.NewISR = ar.Partition, ar.LeaderEpoch, ar.PartitionEpoch, ar.ISR
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	var out Partition
	err := c.callActive(ctx, "alter partition", func(ctx context.Context, addr string) error {
		var resp kmsg.AlterPartitionResponse
		if err := c.peers.call(ctx, addr, req, &resp); err != nil {
			return err
		}
		what := fmt.Sprintf("topic %q partition %d", ar.Topic, ar.Partition)
		if err := codeError(what, resp.ErrorCode); err != nil {
			return err
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return fmt.Errorf("controller: %s: %w: malformed AlterPartition response", what, ErrCorrupt)
		}
		sp := resp.Topics[0].Partitions[0]
		if err := codeError(what, sp.ErrorCode); err != nil {
			return err
		}
		out = Partition{Index: ar.Partition, Leader: sp.LeaderID, LeaderEpoch: sp.LeaderEpoch, PartitionEpoch: sp.PartitionEpoch, ISR: sp.ISR}
		return nil
	})
	if err != nil {
		return Partition{}, err
	}
	// Wait until the local image shows the change, so the caller's next
	// look at the image agrees with the answer.
	if err := c.waitPartitionEpoch(ctx, ar.Topic, ar.Partition, out.PartitionEpoch); err != nil {
		return Partition{}, err
	}
	if t, ok := c.Image().Topic(ar.Topic); ok && int(ar.Partition) < len(t.Partitions) {
		return clonePartition(t.Partitions[ar.Partition]), nil
	}
	return out, nil
}

// callActive runs call against the active controller, retrying on another
// candidate while the answer is NOT_CONTROLLER or the peer is unreachable,
// until ctx ends.
func (c *Controller) callActive(ctx context.Context, what string, call func(ctx context.Context, addr string) error) error {
	backoff := 20 * time.Millisecond
	var lastErr error
	for attempt := 0; ; attempt++ {
		addr := c.activeAddress(attempt)
		if addr != "" {
			err := call(ctx, addr)
			if err == nil || !retriable(err) {
				return err
			}
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if lastErr == nil {
				lastErr = fmt.Errorf("no active controller is known: %w", ErrNotController)
			}
			return fmt.Errorf("controller: %s: %w (last: %w)", what, ctx.Err(), lastErr)
		case <-c.done:
			return fmt.Errorf("controller: %s: closed: %w", what, ErrNotController)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 500*time.Millisecond)
	}
}

func retriable(err error) bool {
	var ne net.Error
	return errors.Is(err, ErrNotController) || errors.As(err, &ne) || errors.Is(err, errPeerIO)
}

// activeAddress is where the active controller is reached: the raft
// leader's address when known, otherwise the voters in turn.
func (c *Controller) activeAddress(attempt int) string {
	if addr, _ := c.raft.LeaderWithID(); addr != "" && attempt%4 != 3 {
		return string(addr)
	}
	if len(c.cfg.Voters) == 0 {
		return ""
	}
	return c.cfg.Voters[attempt%len(c.cfg.Voters)].Address
}

// waitOffset waits until this node has applied the metadata log up to
// offset.
func (c *Controller) waitOffset(ctx context.Context, offset uint64) error {
	return c.waitImage(ctx, func(im *Image) bool { return im.Offset >= offset })
}

func (c *Controller) waitPartitionEpoch(ctx context.Context, topic string, partition, epoch int32) error {
	return c.waitImage(ctx, func(im *Image) bool {
		t, ok := im.Topic(topic)
		return !ok || int(partition) >= len(t.Partitions) || t.Partitions[partition].PartitionEpoch >= epoch
	})
}

// waitImage waits until ok holds for the current image.
func (c *Controller) waitImage(ctx context.Context, ok func(*Image) bool) error {
	for {
		c.mu.Lock()
		changed, closed := c.changed, c.closed
		c.mu.Unlock()
		if ok(c.Image()) {
			return nil
		}
		if closed {
			return fmt.Errorf("controller: closed: %w", ErrNotController)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("controller: waiting for the metadata log: %w", ctx.Err())
		}
	}
}

// addNonvoters makes every registered broker that is not a voter a raft
// non-voter, so that it receives the metadata log. The active controller
// calls it when it takes over and after each registration.
func (c *Controller) addNonvoters() {
	if c.peers == nil {
		return
	}
	f := c.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	known := map[raft.ServerID]raft.ServerAddress{}
	for _, s := range f.Configuration().Servers {
		known[s.ID] = s.Address
	}
	for _, id := range c.Image().BrokerIDs() {
		br := c.Image().Brokers[id]
		if br.ControllerAddress == "" {
			continue
		}
		sid := serverID(id)
		if addr, ok := known[sid]; ok && addr == raft.ServerAddress(br.ControllerAddress) {
			continue
		}
		if _, ok := known[sid]; ok && c.isVoterID(id) {
			continue // voters keep their configured address
		}
		if err := c.raft.AddNonvoter(sid, raft.ServerAddress(br.ControllerAddress), 0, 5*time.Second).Error(); err != nil {
			c.log.Warn("cannot add broker to the metadata quorum as a non-voter", "node", id, "err", err)
			continue
		}
		c.log.Info("broker follows the metadata log as a non-voter", "node", id, "address", br.ControllerAddress)
	}
}

func (c *Controller) isVoterID(id int32) bool {
	for _, v := range c.cfg.Voters {
		if v.ID == id {
			return true
		}
	}
	return false
}

// errPeerIO marks a failed exchange with a peer (the connection is
// dropped and the call may be retried elsewhere).
var errPeerIO = errors.New("controller peer i/o")

// peerClient keeps one connection per peer address; calls on a connection
// are serialised.
type peerClient struct {
	mu     sync.Mutex // guards conns, closed
	conns  map[string]*peerConn
	closed bool
	corr   int32
	// sec secures each new connection; nil is PLAINTEXT.
	sec PeerSecurity
}

type peerConn struct {
	mu   sync.Mutex // serialises exchanges on conn
	conn net.Conn
}

func newPeerClient(sec PeerSecurity) *peerClient {
	return &peerClient{conns: map[string]*peerConn{}, sec: sec}
}

func (p *peerClient) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for addr, pc := range p.conns {
		if pc.conn != nil {
			pc.conn.Close()
		}
		delete(p.conns, addr)
	}
}

func (p *peerClient) get(addr string) (*peerConn, int32, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, 0, fmt.Errorf("controller: peer client closed: %w", ErrNotController)
	}
	pc, ok := p.conns[addr]
	if !ok {
		pc = &peerConn{}
		p.conns[addr] = pc
	}
	p.corr++
	return pc, p.corr, nil
}

// exchange writes frame to addr and returns the response frame's body
// after the correlation id.
func (p *peerClient) exchange(ctx context.Context, addr string, frame func(corr int32) []byte) ([]byte, error) {
	pc, corr, err := p.get(addr)
	if err != nil {
		return nil, err
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.conn == nil {
		var d net.Dialer
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		conn, err := d.DialContext(dctx, "tcp", addr)
		if err == nil && p.sec != nil {
			conn, err = secureDial(dctx, p.sec, conn, addr)
		}
		cancel()
		if err != nil {
			return nil, fmt.Errorf("controller: dial %s: %w: %w", addr, errPeerIO, err)
		}
		pc.conn = conn
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(30 * time.Second)
	}
	pc.conn.SetDeadline(deadline)
	fail := func(err error) ([]byte, error) {
		pc.conn.Close()
		pc.conn = nil
		return nil, fmt.Errorf("controller: peer %s: %w: %w", addr, errPeerIO, err)
	}
	if _, err := pc.conn.Write(frame(corr)); err != nil {
		return fail(err)
	}
	resp, err := readFrame(pc.conn)
	if err != nil {
		return fail(err)
	}
	rd := kbin.Reader{Src: resp}
	if got := rd.Int32(); !rd.Ok() || got != corr {
		return fail(fmt.Errorf("correlation id %d, want %d", got, corr))
	}
	return rd.Src, nil
}

// call sends a Kafka request and decodes the response into resp.
func (p *peerClient) call(ctx context.Context, addr string, req kmsg.Request, resp kmsg.Response) error {
	formatter := kmsg.NewRequestFormatter(kmsg.FormatterClientID("gregor-controller"))
	body, err := p.exchange(ctx, addr, func(corr int32) []byte { return formatter.AppendRequest(nil, req, corr) })
	if err != nil {
		return err
	}
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() {
		rd := kbin.Reader{Src: body}
		kmsg.SkipTags(&rd)
		if !rd.Ok() {
			return fmt.Errorf("controller: peer %s: %w: truncated response header", addr, ErrCorrupt)
		}
		body = rd.Src
	}
	if err := resp.ReadFrom(body); err != nil {
		return fmt.Errorf("controller: peer %s: %w: %v", addr, ErrCorrupt, err)
	}
	return nil
}

// callRaw sends a request with a raw body under the given key.
func (p *peerClient) callRaw(ctx context.Context, addr string, key, version int16, body []byte) ([]byte, error) {
	return p.exchange(ctx, addr, func(corr int32) []byte {
		out := make([]byte, 0, 16+len(body))
		out = kbin.AppendInt32(out, 0)
		out = kbin.AppendInt16(out, key)
		out = kbin.AppendInt16(out, version)
		out = kbin.AppendInt32(out, corr)
		out = kbin.AppendNullableString(out, nil)
		out = append(out, body...)
		kbin.AppendInt32(out[:0], int32(len(out)-4))
		return out
	})
}
