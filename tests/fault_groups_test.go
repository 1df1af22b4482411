package tests

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ackSignal counts acknowledgements (of an offset commit, of a committed
// transaction) and lets a fault wait for the next one, so that a kill can
// follow an acknowledgement within microseconds.
type ackSignal struct {
	mu   sync.Mutex // guards n, next
	n    int
	next chan struct{} // closed at the next acknowledgement
}

func newAckSignal() *ackSignal { return &ackSignal{next: make(chan struct{})} }

func (s *ackSignal) ack() {
	s.mu.Lock()
	s.n++
	close(s.next)
	s.next = make(chan struct{})
	s.mu.Unlock()
}

func (s *ackSignal) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// waitNext waits for the acknowledgement after now; false after limit.
func (s *ackSignal) waitNext(limit time.Duration) bool {
	s.mu.Lock()
	ch := s.next
	s.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-time.After(limit):
		return false
	}
}

// groupWorkload is the consumer-group workload of the fault suite: members
// of one classic group consume a topic, and after processing every poll
// commit its offsets synchronously (rebalances are blocked from the poll to
// the end of the commit, so no other member can own a partition while its
// offsets are being committed). It remembers every record a member
// received and every offset the coordinator acknowledged; the checker then
// holds the group's committed offsets against both.
type groupWorkload struct {
	group, topic string
	commits      *ackSignal

	mu        sync.Mutex               // guards everything below
	received  map[recordAddress]string // every record any member received
	acked     map[int32]int64          // highest acknowledged commit per partition
	seenMax   map[int32]int64          // highest committed offset any check fetched
	backwards []string                 // committed offsets found below an acknowledged or fetched one
	fetchErrs []string                 // checks whose OffsetFetch never succeeded
	commitErr map[string]int           // failed commits by error
	conflicts []string                 // a received record different from the final log
	unseen    []string                 // records below a committed offset never received
	checks    int                      // offset checks done
	polled    int                      // records received, re-deliveries included
	lastFetch map[int32]int64          // the last check's committed offsets
	errs      []string                 // fetch errors members saw
}

func newGroupWorkload(group, topic string) *groupWorkload {
	return &groupWorkload{
		group: group, topic: topic, commits: newAckSignal(),
		received: map[recordAddress]string{}, acked: map[int32]int64{}, seenMax: map[int32]int64{},
		commitErr: map[string]int{}, lastFetch: map[int32]int64{},
	}
}

// member runs one member until ctx is done.
func (g *groupWorkload) member(ctx context.Context, cl *kgo.Client) {
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollRecords(pctx, 500)
		cancel()
		next := map[int32]kgo.EpochOffset{}
		g.mu.Lock()
		fs.EachError(func(topic string, p int32, err error) {
			if ctx.Err() == nil && !errorsIsDeadline(err) && len(g.errs) < 20 {
				g.errs = append(g.errs, fmt.Sprintf("%s-%d: %v", topic, p, err))
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			g.polled++
			g.received[recordAddress{r.Partition, r.Offset}] = string(r.Value)
			if eo, ok := next[r.Partition]; !ok || r.Offset+1 > eo.Offset {
				next[r.Partition] = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset + 1}
			}
		})
		g.mu.Unlock()
		if len(next) > 0 && ctx.Err() == nil {
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			cl.CommitOffsetsSync(cctx, map[string]map[int32]kgo.EpochOffset{g.topic: next},
				func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
					g.mu.Lock()
					defer g.mu.Unlock()
					if err != nil {
						g.commitErr[shortErr(err)]++
						return
					}
					acks := false
					for _, t := range resp.Topics {
						for _, p := range t.Partitions {
							if perr := kerr.ErrorForCode(p.ErrorCode); perr != nil {
								g.commitErr[shortErr(perr)]++
								continue
							}
							if eo, ok := next[p.Partition]; ok {
								g.acked[p.Partition] = max(g.acked[p.Partition], eo.Offset)
								acks = true
							}
						}
					}
					if acks {
						defer g.commits.ack()
					}
				})
			cancel()
		}
		cl.AllowRebalance()
	}
}

func errorsIsDeadline(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// shortErr names an error for a count: its Kafka name when it has one.
func shortErr(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	s := err.Error()
	return s[:min(len(s), 60)]
}

// groupMemberOpts are the options of every member of the group workload.
func groupMemberOpts(group, topic string) []kgo.Opt {
	return []kgo.Opt{
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.SessionTimeout(6 * time.Second), kgo.HeartbeatInterval(500 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		kgo.MetadataMinAge(250 * time.Millisecond),
	}
}

// check fetches the group's committed offsets (after a fault healed) and
// records every partition whose committed offset is below an offset the
// coordinator had acknowledged before the fetch, or below what an earlier
// check fetched.
func (g *groupWorkload) check(ctx context.Context, adm *kadm.Client, when string) {
	g.mu.Lock()
	acked := maps.Clone(g.acked)
	g.mu.Unlock()
	var got kadm.OffsetResponses
	var err error
	deadline := time.Now().Add(30 * time.Second)
	for {
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		got, err = adm.FetchOffsets(fctx, g.group)
		cancel()
		if err == nil {
			err = got.Error()
		}
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond) // polling a coordinator that is loading
	}
	now := map[int32]int64{}
	if err == nil {
		got.Each(func(o kadm.OffsetResponse) {
			if o.Topic == g.topic && o.Err == nil && o.At >= 0 {
				now[o.Partition] = o.At
			}
		})
	}
	g.judge(when, acked, now, err)
}

// judge holds committed offsets fetched (now, or the fetch's error)
// against the commits acknowledged before the fetch and every earlier fetch.
func (g *groupWorkload) judge(when string, acked, now map[int32]int64, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.checks++
	if err != nil {
		g.fetchErrs = append(g.fetchErrs, fmt.Sprintf("%s: %v", when, err))
		return
	}
	for _, p := range slices.Sorted(mapsKeys(acked, g.seenMax)) {
		c, has := now[p]
		if a, ok := acked[p]; ok && (!has || c < a) {
			g.backwards = append(g.backwards, fmt.Sprintf("%s: p%d committed %s below acknowledged %d", when, p, offStr(c, has), a))
		} else if m, ok := g.seenMax[p]; ok && (!has || c < m) {
			g.backwards = append(g.backwards, fmt.Sprintf("%s: p%d committed %s below fetched %d", when, p, offStr(c, has), m))
		}
	}
	for p, c := range now {
		g.seenMax[p] = max(g.seenMax[p], c)
	}
	g.lastFetch = now
}

func offStr(c int64, has bool) string {
	if !has {
		return "none"
	}
	return fmt.Sprint(c)
}

// caughtUp reports whether the last check found the group committed to ends.
func (g *groupWorkload) caughtUp(ends map[int32]int64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for p, e := range ends {
		if e > 0 && g.lastFetch[p] < e {
			return false
		}
	}
	return true
}

// checkReceived holds the final log (a drain of the whole topic) against
// what the members received: every record below the highest committed
// offset must have reached some member, as it is in the log.
func (g *groupWorkload) checkReceived(final []*kgo.Record) {
	g.mu.Lock()
	defer g.mu.Unlock()
	high := maps.Clone(g.seenMax)
	for p, a := range g.acked {
		high[p] = max(high[p], a)
	}
	for _, r := range final {
		at := recordAddress{r.Partition, r.Offset}
		v, ok := g.received[at]
		switch {
		case ok && v != string(r.Value):
			g.conflicts = append(g.conflicts, fmt.Sprintf("p%d@%d:%s|final:%s", at.Partition, at.Offset, v, r.Value))
		case !ok && r.Offset < high[r.Partition]:
			g.unseen = append(g.unseen, fmt.Sprintf("p%d@%d", at.Partition, at.Offset))
		}
	}
}

func (g *groupWorkload) anomalies() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.backwards) + len(g.fetchErrs) + len(g.conflicts) + len(g.unseen)
}

func (g *groupWorkload) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var sum int64
	for _, a := range g.acked {
		sum += a
	}
	return fmt.Sprintf("group %s: %d commits acknowledged (offsets up to %d records), %d checks, %d records received, failed commits %v, fetch errors %q; moved backwards %d [%s], offset fetch failed %d [%s], never received below a committed offset %d [%s], received differs from log %d [%s]",
		g.group, g.commits.count(), sum, g.checks, g.polled, g.commitErr, g.errs,
		len(g.backwards), firstN(g.backwards), len(g.fetchErrs), firstN(g.fetchErrs),
		len(g.unseen), firstN(g.unseen), len(g.conflicts), firstN(g.conflicts))
}

func firstN(s []string) string {
	s = slices.Clone(s)
	slices.Sort(s)
	return strings.Join(s[:min(len(s), 10)], " ")
}

func mapsKeys(ms ...map[int32]int64) func(func(int32) bool) {
	return func(yield func(int32) bool) {
		seen := map[int32]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

// waitGroupCaughtUp checks the group's offsets until they reach ends.
func waitGroupCaughtUp(t *testing.T, ctx context.Context, adm *kadm.Client, g *groupWorkload, ends map[int32]int64, limit time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !g.caughtUp(ends) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(500 * time.Millisecond) // polling the group's progress
		g.check(ctx, adm, "draining")
	}
	return true
}
