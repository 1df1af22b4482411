package group

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/partition"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var testStart = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func testConfig() Config {
	return Config{
		InitialRebalanceDelay:     3 * time.Second,
		MinSessionTimeout:         time.Second,
		MaxSessionTimeout:         time.Minute,
		OffsetsRetention:          time.Hour,
		RetentionCheckInterval:    time.Minute,
		OffsetMetadataMaxBytes:    16,
		ConsumerSessionTimeout:    45 * time.Second,
		ConsumerHeartbeatInterval: 5 * time.Second,
		ConsumerAssignors:         []string{"uniform", "range"},
	}
}

// env is a coordinator over real __consumer_offsets partitions in a
// temporary directory, driven by a manual clock.
type env struct {
	t     *testing.T
	dir   string
	n     int32
	clock *ManualClock
	cfg   Config
	logs  *log.Dir
	parts map[int32]*partition.Partition
	c     *Coordinator
	// topics is what Options.Topics reports.
	topics map[string]TopicInfo
	// groupConfigs is what Options.GroupConfigs reports, by group.
	groupConfigs map[string]map[string]string
}

func newEnv(t *testing.T, n int32, mod ...func(*Config)) *env {
	t.Helper()
	cfg := testConfig()
	for _, m := range mod {
		m(&cfg)
	}
	e := &env{t: t, dir: t.TempDir(), n: n, clock: NewManualClock(testStart), cfg: cfg, topics: map[string]TopicInfo{},
		groupConfigs: map[string]map[string]string{}}
	e.open()
	t.Cleanup(e.close)
	return e
}

// open opens the partitions and a coordinator that leads all of them, and
// waits for it to load.
func (e *env) open() {
	t := e.t
	t.Helper()
	lc := log.DefaultConfig()
	lc.SegmentBytes = 1 << 20
	now := func() time.Time { return e.clock.Now() }
	d, err := log.OpenDir(e.dir, log.Options{Now: now, Logger: quiet}, func(string, int32) log.Config { return lc })
	if err != nil {
		t.Fatal(err)
	}
	e.logs = d
	e.parts = map[int32]*partition.Partition{}
	led := map[int32]Leader{}
	for i := int32(0); i < e.n; i++ {
		l, err := d.Create(OffsetsTopic, i, lc)
		if err != nil {
			t.Fatal(err)
		}
		p, err := partition.New(l, [16]byte{9}, partition.Config{Log: lc, MaxMessageBytes: 1 << 20,
			TimestampBeforeMaxMs: -1, TimestampAfterMaxMs: -1, MinInsyncReplicas: 1},
			partition.Options{Now: now, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		p.SetLeadership(1, 0, []int32{1}, []int32{1})
		e.parts[i] = p
		led[i] = Leader{Partition: p, Epoch: 0}
	}
	e.c = New(e.cfg, Options{Clock: e.clock, Logger: quiet, Topics: func() map[string]TopicInfo { return e.topics },
		GroupConfigs: func(id string) map[string]string { return e.groupConfigs[id] }})
	e.c.Assign(e.n, led)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.c.WaitLoaded(ctx); err != nil {
		t.Fatal(err)
	}
}

func (e *env) close() {
	if e.c == nil {
		return
	}
	e.c.Close()
	for _, p := range e.parts {
		p.Close()
	}
	e.logs.Close()
	e.c = nil
}

// restart closes everything and opens it again on the same files, with the
// clock where it is.
func (e *env) restart() {
	e.close()
	e.open()
}

// consumerMeta is a consumer protocol subscription to topics.
func consumerMeta(topics ...string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Topics = topics
	return m.AppendTo(nil)
}

func joinReq(group, member string, mods ...func(*JoinRequest)) JoinRequest {
	r := JoinRequest{Group: group, MemberID: member, ProtocolType: "consumer",
		Protocols:      []Protocol{{Name: "range", Metadata: consumerMeta("t")}},
		SessionTimeout: 10 * time.Second, RebalanceTimeout: 20 * time.Second, ClientID: "client", ClientHost: "/127.0.0.1",
		RequireKnownMemberID: true, SupportsSkipAssignment: true}
	for _, m := range mods {
		m(&r)
	}
	return r
}

func withInstance(id string) func(*JoinRequest) {
	return func(r *JoinRequest) { r.InstanceID = &id }
}

// joinCall is a JoinGroup in flight.
type joinCall struct {
	t    *testing.T
	now  JoinResponse
	wait <-chan JoinResponse
	got  *JoinResponse
}

func (e *env) join(r JoinRequest) *joinCall {
	resp, wait := e.c.JoinGroup(r)
	jc := &joinCall{t: e.t, now: resp, wait: wait}
	if wait == nil {
		jc.got = &resp
	}
	return jc
}

// answer returns the answer if it has arrived.
func (jc *joinCall) answer() (JoinResponse, bool) {
	if jc.got != nil {
		return *jc.got, true
	}
	select {
	case r := <-jc.wait:
		jc.got = &r
		return r, true
	default:
		return JoinResponse{}, false
	}
}

// must returns the answer, failing if it has not arrived or is an error.
func (jc *joinCall) must() JoinResponse {
	jc.t.Helper()
	r, ok := jc.answer()
	if !ok {
		jc.t.Fatal("JoinGroup has not been answered")
	}
	if r.Err != nil {
		jc.t.Fatalf("JoinGroup: %v", r.Err)
	}
	return r
}

func (jc *joinCall) pending() {
	jc.t.Helper()
	if r, ok := jc.answer(); ok {
		jc.t.Fatalf("JoinGroup answered early: %+v", r)
	}
}

// newMember joins a group with v4+ semantics: the MEMBER_ID_REQUIRED round
// trip, then the real join, which is returned in flight.
func (e *env) newMember(group string, mods ...func(*JoinRequest)) (string, *joinCall) {
	e.t.Helper()
	first := e.join(joinReq(group, "", mods...))
	if isStatic(mods) {
		return "", first
	}
	r, ok := first.answer()
	if !ok {
		e.t.Fatal("first JoinGroup not answered")
	}
	if !errors.Is(r.Err, ErrMemberIDRequired) || r.MemberID == "" {
		e.t.Fatalf("first JoinGroup = %+v, want MEMBER_ID_REQUIRED with an id", r)
	}
	return r.MemberID, e.join(joinReq(group, r.MemberID, mods...))
}

// isStatic says whether mods make a static member, which skips
// MEMBER_ID_REQUIRED; its id is known only from the join's answer.
func isStatic(mods []func(*JoinRequest)) bool {
	var r JoinRequest
	for _, m := range mods {
		m(&r)
	}
	return r.InstanceID != nil
}

func (e *env) sync(group, member string, gen int32, assignments map[string][]byte) (SyncResponse, <-chan SyncResponse) {
	return e.c.SyncGroup(SyncRequest{Group: group, MemberID: member, Generation: gen, Assignments: assignments})
}

func syncAnswer(t *testing.T, now SyncResponse, wait <-chan SyncResponse) (SyncResponse, bool) {
	t.Helper()
	if wait == nil {
		return now, true
	}
	select {
	case r := <-wait:
		return r, true
	default:
		return SyncResponse{}, false
	}
}

func (e *env) heartbeat(group, member string, gen int32) error {
	return e.c.Heartbeat(HeartbeatRequest{Group: group, MemberID: member, Generation: gen})
}

func (e *env) state(group string) State {
	e.t.Helper()
	d, err := e.c.DescribeGroup(group)
	if err != nil {
		e.t.Fatalf("describe %s: %v", group, err)
	}
	return d.State
}
