package fetchsession

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sessStep is one fetch through the session cache: the request, what the
// partitions read return, and what the fetcher must be told.
type sessStep struct {
	at       time.Duration   // clock, from the start
	session  string          // label of the session the request names; "" is id 0, "?" an id never given
	epoch    int32           // the request's session epoch
	v13      bool            // topics by id (fetch v13+)
	follower bool            // a follower's fetch
	fetch    map[int32]int64 // partitions the request lists, with fetch offsets
	forget   []int32         // forgotten partitions
	hw       map[int32]int64 // high watermark a read returns (default 10)
	records  []int32         // partitions whose read returns records
	errs     map[int32]int16 // partitions whose read fails
	wantErr  int16           // top-level error code
	wantRead []int32         // partitions read, in order (nil: those listed, sorted)
	want     []int32         // partitions in the response, in order
	wantID   string          // label of the response's session id: "" is 0; a new label binds it
	sessions int             // sessions cached after the step
}

func runSessSteps(t *testing.T, slots int, steps []sessStep) {
	t.Helper()
	start := time.Unix(1_700_000_000, 0)
	now := start
	c := New(slots, func() time.Time { return now })
	ids := map[string]int32{"?": 12345}
	offsets := map[int32]int64{} // the fetcher's latest position per partition
	tid := [16]byte{7}
	for i, s := range steps {
		now = start.Add(s.at)
		version := int16(12)
		if s.v13 {
			version = 13
		}
		req := kmsg.NewPtrFetchRequest()
		req.SessionID, req.SessionEpoch = ids[s.session], s.epoch
		rt := kmsg.NewFetchRequestTopic()
		if s.v13 {
			rt.TopicID = tid
		} else {
			rt.Topic = "t"
		}
		listed := make([]int32, 0, len(s.fetch))
		for p := range s.fetch {
			listed = append(listed, p)
		}
		slices.Sort(listed)
		for _, p := range listed {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, s.fetch[p], 1000
			rt.Partitions = append(rt.Partitions, rp)
			offsets[p] = s.fetch[p]
		}
		req.Topics = append(req.Topics, rt)
		if len(s.forget) > 0 {
			ft := kmsg.NewFetchRequestForgottenTopic()
			ft.Topic, ft.TopicID, ft.Partitions = rt.Topic, rt.TopicID, s.forget
			req.ForgottenTopics = append(req.ForgottenTopics, ft)
		}

		plan := c.Begin(version, req, s.follower)
		var resp *kmsg.FetchResponse
		if plan.ErrCode != 0 {
			resp = req.ResponseKind().(*kmsg.FetchResponse)
			resp.ErrorCode = plan.ErrCode
		} else {
			var read []int32
			resp = req.ResponseKind().(*kmsg.FetchResponse)
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, fp := range plan.Parts {
				p := fp.Partition
				read = append(read, p)
				if fp.FetchOffset != offsets[p] || fp.MaxBytes != 1000 {
					t.Errorf("step %d: partition %d read at %d (max %d), want the fetcher's %d", i, p, fp.FetchOffset, fp.MaxBytes, offsets[p])
				}
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.Partition, sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = p, 10, 10, 0
				if hw, ok := s.hw[p]; ok {
					sp.HighWatermark, sp.LastStableOffset = hw, hw
				}
				sp.ErrorCode = s.errs[p]
				sp.RecordBatches = []byte{}
				if slices.Contains(s.records, p) {
					sp.RecordBatches = []byte("batch")
				}
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
			wantRead := s.wantRead
			if wantRead == nil {
				wantRead = listed
			}
			if !slices.Equal(read, wantRead) {
				t.Errorf("step %d: read %v, want %v", i, read, wantRead)
			}
			resp = c.Finish(&plan, resp)
		}
		if resp.ErrorCode != s.wantErr {
			t.Errorf("step %d: error %v, want %v", i, kerr.ErrorForCode(resp.ErrorCode), kerr.ErrorForCode(s.wantErr))
		}
		var got []int32
		for _, st := range resp.Topics {
			if st.Topic != rt.Topic || st.TopicID != rt.TopicID {
				t.Errorf("step %d: response topic %q %x", i, st.Topic, st.TopicID)
			}
			for _, sp := range st.Partitions {
				got = append(got, sp.Partition)
			}
		}
		if !slices.Equal(got, s.want) {
			t.Errorf("step %d: response partitions %v, want %v", i, got, s.want)
		}
		switch id, known := ids[s.wantID]; {
		case s.wantID == "":
			if resp.SessionID != 0 {
				t.Errorf("step %d: session id %d, want 0", i, resp.SessionID)
			}
		case !known:
			if resp.SessionID <= 0 || slices.Contains(mapValues(ids), resp.SessionID) {
				t.Errorf("step %d: session id %d, want a new positive one", i, resp.SessionID)
			}
			ids[s.wantID] = resp.SessionID
		case resp.SessionID != id:
			t.Errorf("step %d: session id %d, want %s's %d", i, resp.SessionID, s.wantID, id)
		}
		if n := c.Stats().Sessions; n != s.sessions {
			t.Errorf("step %d: %d sessions cached, want %d", i, n, s.sessions)
		}
	}
}

func mapValues(m map[string]int32) []int32 {
	var v []int32
	for _, id := range m {
		v = append(v, id)
	}
	return v
}

func TestFetchSessionCache(t *testing.T) {
	off := func(ps ...int32) map[int32]int64 {
		m := map[int32]int64{}
		for _, p := range ps {
			m[p] = 100 + int64(p)
		}
		return m
	}
	sec := time.Second
	for _, tc := range []struct {
		name  string
		slots int
		steps []sessStep
	}{
		{"incremental updates, moves and forgets", 10, []sessStep{
			{fetch: off(0, 1, 2), want: []int32{0, 1, 2}, wantID: "A", sessions: 1},
			// Nothing changed: every cached partition is read, none answered.
			{session: "A", epoch: 1, wantRead: []int32{0, 1, 2}, wantID: "A", sessions: 1},
			{session: "A", epoch: 2, hw: map[int32]int64{1: 11}, wantRead: []int32{0, 1, 2}, want: []int32{1}, wantID: "A", sessions: 1},
			// Records on 0 move it to the back; the new offset is cached.
			{session: "A", epoch: 3, hw: map[int32]int64{1: 11}, records: []int32{0}, wantRead: []int32{0, 1, 2}, want: []int32{0}, wantID: "A", sessions: 1},
			{session: "A", epoch: 4, fetch: map[int32]int64{0: 150}, hw: map[int32]int64{1: 11}, wantRead: []int32{1, 2, 0}, wantID: "A", sessions: 1},
			// Forget 1, add 5 (answered: nothing known of it yet).
			{session: "A", epoch: 5, fetch: off(5), forget: []int32{1}, wantRead: []int32{2, 0, 5}, want: []int32{5}, wantID: "A", sessions: 1},
			// An error is answered, and again once it clears.
			{session: "A", epoch: 6, errs: map[int32]int16{2: kerr.NotLeaderForPartition.Code}, wantRead: []int32{2, 0, 5}, want: []int32{2}, wantID: "A", sessions: 1},
			{session: "A", epoch: 7, wantRead: []int32{2, 0, 5}, want: []int32{2}, wantID: "A", sessions: 1},
			{session: "A", epoch: 8, wantRead: []int32{2, 0, 5}, wantID: "A", sessions: 1},
			// Forgetting every partition closes the session.
			{session: "A", epoch: 9, forget: []int32{0, 2, 5}, wantRead: []int32{}, sessions: 0},
			{session: "A", epoch: 10, wantErr: kerr.FetchSessionIDNotFound.Code, sessions: 0},
		}},
		{"epoch and id errors", 10, []sessStep{
			{v13: true, fetch: off(0, 1), want: []int32{0, 1}, wantID: "A", sessions: 1},
			{session: "?", epoch: 1, v13: true, wantErr: kerr.FetchSessionIDNotFound.Code, sessions: 1},
			{session: "", epoch: 1, v13: true, wantErr: kerr.FetchSessionIDNotFound.Code, sessions: 1},
			{session: "A", epoch: 2, v13: true, wantErr: kerr.InvalidFetchSessionEpoch.Code, sessions: 1},
			{session: "A", epoch: 1, wantErr: kerr.FetchSessionTopicIDError.Code, sessions: 1},
			// The errors left the session as it was.
			{session: "A", epoch: 1, v13: true, hw: map[int32]int64{0: 12}, wantRead: []int32{0, 1}, want: []int32{0}, wantID: "A", sessions: 1},
			// A full fetch naming A closes it and opens B.
			{session: "A", v13: true, fetch: off(3), want: []int32{3}, wantID: "B", sessions: 1},
			{session: "A", epoch: 2, v13: true, wantErr: kerr.FetchSessionIDNotFound.Code, sessions: 1},
			// Epoch -1 closes B and opens nothing.
			{session: "B", epoch: -1, v13: true, fetch: off(3), want: []int32{3}, sessions: 0},
			{session: "B", epoch: 1, v13: true, wantErr: kerr.FetchSessionIDNotFound.Code, sessions: 0},
		}},
		{"no slots", 0, []sessStep{
			{fetch: off(0), want: []int32{0}, sessions: 0},
		}},
		{"eviction by staleness and size", 2, []sessStep{
			{fetch: off(0, 1, 2), want: []int32{0, 1, 2}, wantID: "A", sessions: 1},
			{fetch: off(0), want: []int32{0}, wantID: "B", sessions: 2},
			// Full, and both sessions are younger than two minutes.
			{at: 1 * sec, fetch: off(0, 1), want: []int32{0, 1}, sessions: 2},
			{at: 60 * sec, session: "B", epoch: 1, wantRead: []int32{0}, wantID: "B", sessions: 2},
			// A has been unused for more than two minutes: stale.
			{at: 121 * sec, fetch: off(0, 1), want: []int32{0, 1}, wantID: "C", sessions: 2},
			// B is idle 62 s and was young when last used; C is new.
			{at: 122 * sec, fetch: off(0, 1, 2, 3, 4), want: []int32{0, 1, 2, 3, 4}, sessions: 2},
			// Used again past two minutes of age, B (1 partition) yields
			// to a 5-partition session...
			{at: 130 * sec, session: "B", epoch: 2, wantRead: []int32{0}, wantID: "B", sessions: 2},
			{at: 131 * sec, fetch: off(0, 1, 2, 3, 4), want: []int32{0, 1, 2, 3, 4}, wantID: "D", sessions: 2},
			{at: 132 * sec, session: "B", epoch: 3, wantErr: kerr.FetchSessionIDNotFound.Code, sessions: 2},
			// ...but not to a smaller one.
			{at: 260 * sec, session: "D", epoch: 1, wantRead: []int32{0, 1, 2, 3, 4}, wantID: "D", sessions: 2},
			{at: 261 * sec, session: "C", epoch: 1, wantRead: []int32{0, 1}, wantID: "C", sessions: 2},
			{at: 262 * sec, fetch: off(0), want: []int32{0}, sessions: 2},
			// C (2 partitions, old) yields to a 3-partition one.
			{at: 263 * sec, fetch: off(0, 1, 2), want: []int32{0, 1, 2}, wantID: "E", sessions: 2},
			{at: 264 * sec, session: "C", epoch: 2, wantErr: kerr.FetchSessionIDNotFound.Code, sessions: 2},
		}},
		{"followers are privileged", 1, []sessStep{
			{fetch: off(0, 1, 2), want: []int32{0, 1, 2}, wantID: "A", sessions: 1},
			// A follower evicts a consumer's session at once, whatever its size.
			{at: 1 * sec, follower: true, fetch: off(0), want: []int32{0}, wantID: "F", sessions: 1},
			{at: 2 * sec, fetch: off(0, 1, 2, 3), want: []int32{0, 1, 2, 3}, sessions: 1},
			{at: 3 * sec, follower: true, fetch: off(0, 1), want: []int32{0, 1}, sessions: 1},
			{at: 4 * sec, session: "F", epoch: 1, wantRead: []int32{0}, wantID: "F", sessions: 1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { runSessSteps(t, tc.slots, tc.steps) })
	}
}

// A response finished after a later request of the same session began is a
// duplicate: INVALID_FETCH_SESSION_EPOCH, no partitions.
func TestFetchSessionDuplicateResponse(t *testing.T) {
	c := New(10, nil)
	req := kmsg.NewPtrFetchRequest()
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "t"
	rt.Partitions = []kmsg.FetchRequestTopicPartition{kmsg.NewFetchRequestTopicPartition()}
	req.Topics = []kmsg.FetchRequestTopic{rt}
	respFor := func() *kmsg.FetchResponse {
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		st := kmsg.NewFetchResponseTopic()
		st.Topic = "t"
		sp := kmsg.NewFetchResponseTopicPartition()
		sp.HighWatermark = 5
		sp.RecordBatches = []byte("batch")
		st.Partitions = append(st.Partitions, sp)
		resp.Topics = append(resp.Topics, st)
		return resp
	}
	req.SessionEpoch = 0
	plan := c.Begin(12, req, false)
	id := c.Finish(&plan, respFor()).SessionID
	req.SessionID, req.SessionEpoch, req.Topics = id, 1, nil
	first := c.Begin(12, req, false)
	req.SessionEpoch = 2
	second := c.Begin(12, req, false)
	if r := c.Finish(&first, respFor()); r.ErrorCode != kerr.InvalidFetchSessionEpoch.Code || len(r.Topics) != 0 || r.SessionID != id {
		t.Fatalf("stale response: error %d, %d topics, session %d", r.ErrorCode, len(r.Topics), r.SessionID)
	}
	if r := c.Finish(&second, respFor()); r.ErrorCode != 0 || len(r.Topics) != 1 {
		t.Fatalf("current response: error %d, %d topics", r.ErrorCode, len(r.Topics))
	}
}
