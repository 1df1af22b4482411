package controller

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/google/uuid"
	"github.com/hashicorp/raft"
)

// maxSnapshotBytes bounds what Restore reads: far above any real metadata
// image, it stops a damaged or hostile snapshot from exhausting memory.
const maxSnapshotBytes = 1 << 30

// fsm applies committed records to the controller's image. Raft calls it from
// a single goroutine (Restore never runs concurrently with ApplyBatch), so
// the fsm needs no lock of its own; it publishes each new image through the
// controller.
type fsm struct {
	c *Controller
}

var _ raft.BatchingFSM = (*fsm)(nil)

// Apply applies a single log entry.
func (f *fsm) Apply(l *raft.Log) any {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch applies committed entries in order and publishes one image for
// the batch. Each command's response is nil or the error that rejected it.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	if len(logs) == 0 {
		return out
	}
	b := newBuilder(f.c.image.Load())
	for i, l := range logs {
		b.im.Offset = l.Index
		if l.Type != raft.LogCommand {
			continue
		}
		r, err := decodeRecord(l.Data)
		if err == nil {
			err = r.apply(b, l.Index)
		}
		if err != nil {
			f.c.log.Warn("metadata record rejected", "index", l.Index, "err", err)
			out[i] = err
		}
	}
	f.c.publish(b.im)
	return out
}

// Snapshot captures the current image; images are immutable, so Persist can
// run alongside later applies.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	return &fsmSnapshot{im: f.c.image.Load()}, nil
}

// Restore replaces the image with the snapshot's.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	im, err := readSnapshot(io.LimitReader(rc, maxSnapshotBytes), f.c.image.Load().ClusterID)
	if err != nil {
		return err
	}
	f.c.publish(im)
	return nil
}

type fsmSnapshot struct {
	im *Image
}

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := writeSnapshot(sink, s.im); err != nil {
		_ = sink.Cancel()
		return err
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("controller: snapshot: %w", err)
	}
	return nil
}

func (s *fsmSnapshot) Release() {}

type snapshotConfig struct {
	Type    ResourceType      `json:"type"`
	Name    string            `json:"name"`
	Configs map[string]string `json:"configs"`
}

type snapshotFile struct {
	Version        int              `json:"v"`
	Offset         uint64           `json:"offset"`
	ControllerID   int32            `json:"controller_id"`
	NextProducerID int64            `json:"next_producer_id"`
	Brokers        []Broker         `json:"brokers"`
	Topics         []*Topic         `json:"topics"`
	Configs        []snapshotConfig `json:"configs"`
	Security       securitySnapshot `json:"security"`
}

func writeSnapshot(w io.Writer, im *Image) error {
	s := snapshotFile{
		Version:        recordVersion,
		Offset:         im.Offset,
		ControllerID:   im.ControllerID,
		NextProducerID: im.NextProducerID,
		Brokers:        make([]Broker, 0, len(im.Brokers)),
		Topics:         make([]*Topic, 0, len(im.Topics)),
		Configs:        make([]snapshotConfig, 0, len(im.Configs)),
		Security:       snapshotSecurity(im),
	}
	for _, id := range im.BrokerIDs() {
		s.Brokers = append(s.Brokers, im.Brokers[id])
	}
	for _, t := range im.Topics {
		s.Topics = append(s.Topics, t)
	}
	sort.Slice(s.Topics, func(i, j int) bool { return s.Topics[i].Name < s.Topics[j].Name })
	for res, m := range im.Configs {
		s.Configs = append(s.Configs, snapshotConfig{Type: res.Type, Name: res.Name, Configs: m})
	}
	sort.Slice(s.Configs, func(i, j int) bool {
		if s.Configs[i].Type != s.Configs[j].Type {
			return s.Configs[i].Type < s.Configs[j].Type
		}
		return s.Configs[i].Name < s.Configs[j].Name
	})
	if err := json.NewEncoder(w).Encode(&s); err != nil {
		return fmt.Errorf("controller: snapshot: %w", err)
	}
	return nil
}

// readSnapshot decodes and checks a snapshot; anything malformed is
// ErrCorrupt.
func readSnapshot(r io.Reader, clusterID string) (*Image, error) {
	var s snapshotFile
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("controller: snapshot: %w: %v", ErrCorrupt, err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("controller: snapshot: %w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if s.Version != recordVersion {
		return nil, bad("unsupported version %d", s.Version)
	}
	if s.NextProducerID < 0 {
		return nil, bad("negative next producer id %d", s.NextProducerID)
	}
	im := emptyImage(clusterID)
	im.Offset, im.ControllerID, im.NextProducerID = s.Offset, s.ControllerID, s.NextProducerID
	for _, br := range s.Brokers {
		if err := validateBroker(br); err != nil {
			return nil, bad("%v", err)
		}
		if _, dup := im.Brokers[br.NodeID]; dup {
			return nil, bad("broker %d listed twice", br.NodeID)
		}
		im.Brokers[br.NodeID] = br
	}
	for _, t := range s.Topics {
		if t == nil {
			return nil, bad("null topic")
		}
		if err := ValidateTopicName(t.Name); err != nil {
			return nil, bad("%v", err)
		}
		if t.ID == uuid.Nil {
			return nil, bad("topic %q has a zero id", t.Name)
		}
		if _, dup := im.Topics[t.Name]; dup {
			return nil, bad("topic %q listed twice", t.Name)
		}
		if _, dup := im.TopicsByID[t.ID]; dup {
			return nil, bad("topic id %s listed twice", t.ID)
		}
		if len(t.Partitions) == 0 {
			return nil, bad("topic %q has no partitions", t.Name)
		}
		if err := checkPartitions(t.Name, t.Partitions, 0); err != nil {
			return nil, bad("%v", err)
		}
		im.Topics[t.Name] = t
		im.TopicsByID[t.ID] = t
	}
	for _, c := range s.Configs {
		res := ConfigResource{Type: c.Type, Name: c.Name}
		switch {
		case c.Type != ResourceTopic && c.Type != ResourceBroker && c.Type != ResourceClientMetrics:
			return nil, bad("config resource type %d", c.Type)
		case c.Type == ResourceTopic && im.Topics[c.Name] == nil:
			return nil, bad("configs for missing topic %q", c.Name)
		case len(c.Configs) == 0:
			return nil, bad("empty config set for %v", res)
		}
		if _, dup := im.Configs[res]; dup {
			return nil, bad("configs for %v listed twice", res)
		}
		im.Configs[res] = c.Configs
	}
	if err := restoreSecurity(im, s.Security); err != nil {
		return nil, bad("%v", err)
	}
	return im, nil
}
