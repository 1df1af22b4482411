package controller

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The quorum view (Kafka's DescribeQuorum) is the active controller's:
// raft gives the leader, its term (the leader epoch), the commit index (the
// high watermark), the last log index and the membership. Raft does not
// publish how far each follower has replicated, so every node reports its
// own last raft log index in its broker heartbeat (in-process, or as a
// tagged field of BrokerHeartbeat on the RPC path); a heartbeat is the
// follower's "fetch" in Kafka's terms. A new active controller knows no
// progress until the first heartbeats arrive (log end offset -1, as Kafka
// answers for a replica it has not heard from).

// heartbeatLogEndTag is the Gregor-private tagged field of a
// BrokerHeartbeat request carrying the sender's last raft log index as a
// big-endian uint64. Kafka ignores unknown tags.
const heartbeatLogEndTag = 0x4752

// QuorumReplica is one quorum member's replication progress.
type QuorumReplica struct {
	NodeID int32
	// LogEndOffset is the member's last raft log index; -1 when unknown.
	LogEndOffset int64
	// LastFetch is when the active controller last heard from it (zero:
	// never).
	LastFetch time.Time
	// LastCaughtUp is the last time its log end offset had reached the
	// high watermark (zero: never).
	LastCaughtUp time.Time
}

// QuorumState is the metadata quorum as the active controller sees it.
type QuorumState struct {
	LeaderID      int32
	LeaderEpoch   int32
	HighWatermark int64
	Voters        []QuorumReplica
	Observers     []QuorumReplica
	// Endpoints are the voters' controller listener addresses (host:port)
	// where known.
	Endpoints map[int32]string
}

// quorumProgress remembers each member's last reported log end offset
// (active controller only; reset on every leadership change).
type quorumProgress struct {
	mu    sync.Mutex // guards nodes
	nodes map[int32]QuorumReplica
}

func (p *quorumProgress) report(id int32, logEnd, highWatermark int64, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.nodes == nil {
		p.nodes = map[int32]QuorumReplica{}
	}
	r := p.nodes[id]
	r.NodeID, r.LastFetch, r.LogEndOffset = id, now, logEnd
	if logEnd >= highWatermark {
		r.LastCaughtUp = now
	}
	p.nodes[id] = r
}

func (p *quorumProgress) get(id int32) QuorumReplica {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.nodes[id]; ok {
		return r
	}
	return QuorumReplica{NodeID: id, LogEndOffset: -1}
}

func (p *quorumProgress) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nodes = nil
}

// logEndOffset is this node's last raft log index.
func (c *Controller) logEndOffset() int64 { return int64(c.raft.LastIndex()) }

// recordProgress notes a heartbeat's log end offset on the active
// controller. A heartbeat that does not carry one (an older sender)
// reports its applied metadata offset instead.
func (c *Controller) recordProgress(hb Heartbeat) {
	leo := hb.LogEndOffset
	if leo <= 0 {
		leo = hb.MetadataOffset
	}
	c.progress.report(hb.NodeID, leo, int64(c.raft.CommitIndex()), c.now())
}

// DescribeQuorum is the quorum's state as the active controller sees it;
// on another node it asks the active controller.
func (c *Controller) DescribeQuorum(ctx context.Context) (QuorumState, error) {
	if !c.isActive() {
		return c.forwardDescribeQuorum(ctx)
	}
	return c.localQuorum()
}

func (c *Controller) localQuorum() (QuorumState, error) {
	f := c.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return QuorumState{}, fmt.Errorf("controller: raft configuration: %w: %w", ErrNotController, err)
	}
	now := c.now()
	qs := QuorumState{
		LeaderID:      c.cfg.NodeID,
		LeaderEpoch:   int32(c.raft.CurrentTerm()),
		HighWatermark: int64(c.raft.CommitIndex()),
		Endpoints:     map[int32]string{},
	}
	im := c.Image()
	for _, s := range f.Configuration().Servers {
		id, err := strconv.ParseInt(string(s.ID), 10, 32)
		if err != nil {
			continue
		}
		node := int32(id)
		r := c.progress.get(node)
		if node == c.cfg.NodeID {
			r = QuorumReplica{NodeID: node, LogEndOffset: c.logEndOffset(), LastFetch: now, LastCaughtUp: now}
		}
		if s.Suffrage != raft.Voter {
			qs.Observers = append(qs.Observers, r)
			continue
		}
		qs.Voters = append(qs.Voters, r)
		addr := string(s.Address)
		if _, _, err := net.SplitHostPort(addr); err != nil {
			addr = ""
			if br, ok := im.Brokers[node]; ok {
				addr = br.ControllerAddress
			}
		}
		if addr != "" {
			qs.Endpoints[node] = addr
		}
	}
	byID := func(a, b QuorumReplica) int { return int(a.NodeID) - int(b.NodeID) }
	slices.SortFunc(qs.Voters, byID)
	slices.SortFunc(qs.Observers, byID)
	return qs, nil
}

// The metadata log's topic and partition, as Kafka names them.
const (
	MetadataTopic     = "__cluster_metadata"
	MetadataPartition = 0
)

func (c *Controller) forwardDescribeQuorum(ctx context.Context) (QuorumState, error) {
	if c.peers == nil || isLocalOnly(ctx) {
		return QuorumState{}, fmt.Errorf("controller: node %d is not the active controller: %w", c.cfg.NodeID, ErrNotController)
	}
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.Version = 2
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = MetadataTopic
	t.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{{Partition: MetadataPartition}}
	req.Topics = append(req.Topics, t)
	var qs QuorumState
	err := c.callActive(ctx, "describe quorum", func(ctx context.Context, addr string) error {
		var resp kmsg.DescribeQuorumResponse
		if err := c.peers.call(ctx, addr, req, &resp); err != nil {
			return err
		}
		if err := codeError("describe quorum", resp.ErrorCode); err != nil {
			return err
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return fmt.Errorf("controller: describe quorum: %d topics in the answer: %w", len(resp.Topics), ErrInvalidRequest)
		}
		p := resp.Topics[0].Partitions[0]
		if err := codeError("describe quorum", p.ErrorCode); err != nil {
			return err
		}
		qs = quorumFromResponse(&resp, &p)
		return nil
	})
	return qs, err
}

// QuorumResponse fills a DescribeQuorum response (any version) with qs.
func QuorumResponse(resp *kmsg.DescribeQuorumResponse, qs QuorumState) {
	t := kmsg.NewDescribeQuorumResponseTopic()
	t.Topic = MetadataTopic
	p := kmsg.NewDescribeQuorumResponseTopicPartition()
	p.Partition = MetadataPartition
	p.LeaderID, p.LeaderEpoch, p.HighWatermark = qs.LeaderID, qs.LeaderEpoch, qs.HighWatermark
	replica := func(r QuorumReplica) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
		s := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		s.ReplicaID, s.LogEndOffset = r.NodeID, r.LogEndOffset
		s.LastFetchTimestamp, s.LastCaughtUpTimestamp = -1, -1
		if !r.LastFetch.IsZero() {
			s.LastFetchTimestamp = r.LastFetch.UnixMilli()
		}
		if !r.LastCaughtUp.IsZero() {
			s.LastCaughtUpTimestamp = r.LastCaughtUp.UnixMilli()
		}
		return s
	}
	for _, r := range qs.Voters {
		p.CurrentVoters = append(p.CurrentVoters, replica(r))
	}
	for _, r := range qs.Observers {
		p.Observers = append(p.Observers, replica(r))
	}
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	for _, v := range qs.Voters {
		addr, ok := qs.Endpoints[v.NodeID]
		if !ok {
			continue
		}
		host, port, err := net.SplitHostPort(addr)
		n, perr := strconv.ParseUint(port, 10, 16)
		if err != nil || perr != nil {
			continue
		}
		node := kmsg.NewDescribeQuorumResponseNode()
		node.NodeID = v.NodeID
		l := kmsg.NewDescribeQuorumResponseNodeListener()
		l.Name, l.Host, l.Port = controllerListenerName, host, uint16(n)
		node.Listeners = append(node.Listeners, l)
		resp.Nodes = append(resp.Nodes, node)
	}
}

func quorumFromResponse(resp *kmsg.DescribeQuorumResponse, p *kmsg.DescribeQuorumResponseTopicPartition) QuorumState {
	qs := QuorumState{LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HighWatermark: p.HighWatermark, Endpoints: map[int32]string{}}
	replica := func(s kmsg.DescribeQuorumResponseTopicPartitionReplicaState) QuorumReplica {
		r := QuorumReplica{NodeID: s.ReplicaID, LogEndOffset: s.LogEndOffset}
		if s.LastFetchTimestamp >= 0 {
			r.LastFetch = time.UnixMilli(s.LastFetchTimestamp)
		}
		if s.LastCaughtUpTimestamp >= 0 {
			r.LastCaughtUp = time.UnixMilli(s.LastCaughtUpTimestamp)
		}
		return r
	}
	for _, s := range p.CurrentVoters {
		qs.Voters = append(qs.Voters, replica(s))
	}
	for _, s := range p.Observers {
		qs.Observers = append(qs.Observers, replica(s))
	}
	for _, n := range resp.Nodes {
		for _, l := range n.Listeners {
			if l.Name == controllerListenerName {
				qs.Endpoints[n.NodeID] = net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))
			}
		}
	}
	return qs
}

// serveDescribeQuorum answers a peer's DescribeQuorum on the active
// controller.
func (c *Controller) serveDescribeQuorum(r *kmsg.DescribeQuorumRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.DescribeQuorumResponse)
	if !c.isActive() {
		resp.ErrorCode = errorCode(ErrNotController)
		return resp
	}
	qs, err := c.localQuorum()
	if err != nil {
		resp.ErrorCode = errorCode(err)
		return resp
	}
	QuorumResponse(resp, qs)
	return resp
}

func encodeLogEnd(leo int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(leo)) }

// heartbeatLogEnd reads the tagged log end offset of a heartbeat (0: none).
func heartbeatLogEnd(r *kmsg.BrokerHeartbeatRequest) int64 {
	var leo int64
	r.UnknownTags.Each(func(key uint32, val []byte) {
		if key == heartbeatLogEndTag && len(val) == 8 {
			leo = int64(binary.BigEndian.Uint64(val))
		}
	})
	return leo
}
