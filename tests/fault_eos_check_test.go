package tests

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// outRec is what the exactly-once checker needs of one record.
type outRec struct {
	at              recordAddress
	producerID      int64
	control, txnal  bool
	commitMarker    bool // a control record of type COMMIT (1)
	key, value, txn string
}

func toOutRecs(rs []*kgo.Record) []outRec {
	out := make([]outRec, 0, len(rs))
	for _, r := range rs {
		o := outRec{at: recordAddress{r.Partition, r.Offset}, producerID: r.ProducerID,
			control: r.Attrs.IsControl(), txnal: r.Attrs.IsTransactional(), key: string(r.Key), value: string(r.Value)}
		if o.control && len(r.Key) >= 4 && binary.BigEndian.Uint16(r.Key[2:]) == 1 {
			o.commitMarker = true
		}
		for _, h := range r.Headers {
			if h.Key == "txn" {
				o.txn = string(h.Value)
			}
		}
		out = append(out, o)
	}
	return out
}

// txnState is the fate of one output offset by the log's own markers.
type txnState int

func (s txnState) String() string {
	switch s {
	case stateData:
		return "data"
	case stateCommit:
		return "committed-by-marker"
	case stateAbort:
		return "aborted-by-marker"
	case stateOpen:
		return "no-marker"
	case stateControl:
		return "marker"
	}
	return "not-in-log"
}

const (
	stateData    txnState = iota + 1 // non-transactional data
	stateCommit                      // transactional data followed by its COMMIT marker
	stateAbort                       // transactional data followed by its ABORT marker
	stateOpen                        // transactional data with no marker yet
	stateControl                     // a marker
)

// markerFates reads raw records (read_uncommitted, control records kept,
// each partition in offset order) and decides every offset by the markers
// of its producer.
func markerFates(raw []outRec) map[recordAddress]txnState {
	fate := map[recordAddress]txnState{}
	open := map[[2]int64][]recordAddress{} // partition, producer id -> undecided offsets
	for _, r := range raw {
		pid := [2]int64{int64(r.at.Partition), r.producerID}
		switch {
		case r.control:
			fate[r.at] = stateControl
			end := stateAbort
			if r.commitMarker {
				end = stateCommit
			}
			for _, o := range open[pid] {
				fate[o] = end
			}
			delete(open, pid)
		case r.txnal:
			fate[r.at] = stateOpen
			open[pid] = append(open[pid], r.at)
		default:
			fate[r.at] = stateData
		}
	}
	return fate
}

// visibleTarget is, per partition of hw, the last offset below the LSO that
// read_committed must return (a marker or committed data), -1 for none.
func visibleTarget(fate map[recordAddress]txnState, hw, lso map[int32]int64) map[int32]int64 {
	want := map[int32]int64{}
	for p := range hw {
		want[p] = -1
	}
	for at, f := range fate {
		if at.Offset < lso[at.Partition] && (f == stateControl || f == stateCommit || f == stateData) {
			want[at.Partition] = max(want[at.Partition], at.Offset)
		}
	}
	return want
}

// eosEvidence is everything the exactly-once checker judges.
type eosEvidence struct {
	inAcked  map[string]recordAddress // acknowledged input values
	outcome  map[string]string        // transaction tag -> what its member was told
	values   map[string][]string      // transaction tag -> the values it produced
	outAcked map[string]string        // "tag:value" -> where its produce was acknowledged
	input    []outRec                 // the input topic, each partition in offset order
	raw      []outRec                 // the output, read_uncommitted with markers
	visible  []outRec                 // the output, read_committed
	lso      map[int32]int64
	notReach map[int32]int64 // partitions read_committed never brought to their target
}

// analyzeEOS finds every anomaly in the evidence.
func analyzeEOS(ev eosEvidence, rep *eosReport) {
	for _, o := range ev.outcome {
		switch o {
		case "commit":
			rep.Committed++
		case "abort":
			rep.Aborted++
		default:
			rep.Unknown++
		}
	}
	fate := markerFates(ev.raw)
	for p, w := range ev.notReach {
		rep.Invisible = append(rep.Invisible, fmt.Sprintf("p%d:read_committed-never-reached-%d", p, w))
	}
	for at, f := range fate {
		if f == stateOpen {
			rep.Hanging = append(rep.Hanging, fmt.Sprintf("p%d@%d", at.Partition, at.Offset))
		}
	}

	// The input in per-key order.
	inSeq := map[string]int{} // value -> its index in its key's input order
	keyOf := map[string]string{}
	perKey := map[string]int{}
	for _, r := range ev.input {
		inSeq[r.value] = perKey[r.key]
		perKey[r.key]++
		keyOf[r.value] = r.key
	}
	rep.InRead = len(ev.input)
	for v := range ev.inAcked {
		if _, ok := keyOf[v]; !ok {
			rep.LostInput = append(rep.LostInput, v)
		}
	}

	seen := map[string]int{}
	seenAt := map[recordAddress]bool{}
	lastIdx := map[string]int{}
	for _, r := range ev.visible {
		if r.control {
			continue
		}
		seenAt[r.at] = true
		rep.OutRead++
		if f := fate[r.at]; f == stateAbort || f == stateOpen {
			rep.AbortedRead = append(rep.AbortedRead, fmt.Sprintf("p%d@%d:%s(markers)", r.at.Partition, r.at.Offset, r.value))
		} else if ev.outcome[r.txn] == "abort" {
			rep.AbortedRead = append(rep.AbortedRead, fmt.Sprintf("p%d@%d:%s(txn-%s-aborted,%s)", r.at.Partition, r.at.Offset, r.value, r.txn, fate[r.at]))
		}
		k, ok := keyOf[r.value]
		if !ok {
			rep.Foreign = append(rep.Foreign, fmt.Sprintf("p%d@%d:%q", r.at.Partition, r.at.Offset, r.value))
			continue
		}
		seen[r.value]++
		if seen[r.value] > 1 {
			rep.Duplicated = append(rep.Duplicated, fmt.Sprintf("%s@p%d:%d", r.value, r.at.Partition, r.at.Offset))
			continue
		}
		if last, ok := lastIdx[k]; ok && inSeq[r.value] < last {
			rep.OutOfOrder = append(rep.OutOfOrder, fmt.Sprintf("%s-after-input#%d", r.value, last))
		}
		lastIdx[k] = max(lastIdx[k], inSeq[r.value])
	}
	for at, f := range fate {
		if f == stateCommit && at.Offset < ev.lso[at.Partition] && !seenAt[at] {
			rep.Invisible = append(rep.Invisible, fmt.Sprintf("p%d@%d", at.Partition, at.Offset))
		}
	}
	for v := range keyOf {
		if seen[v] == 0 {
			rep.Missing = append(rep.Missing, v)
		}
	}
	rawFate := map[string]txnState{} // value -> its fate in the raw log (the last copy's)
	for _, r := range ev.raw {
		if !r.control {
			rawFate[r.value] = fate[r.at]
		}
	}
	for tag, o := range ev.outcome {
		if o != "commit" {
			continue
		}
		for _, v := range ev.values[tag] {
			if seen[v] == 0 {
				lost := fmt.Sprintf("%s:%s(%s)", tag, v, rawFate[v])
				if at, ok := ev.outAcked[tag+":"+v]; ok {
					lost += "[" + at + "]"
				}
				rep.CommittedLost = append(rep.CommittedLost, lost)
			}
		}
	}
}

// check runs once the members have stopped: it waits (bounded) until no
// transaction of the output is open (LSO = high watermark), drains the
// input and the output (raw, and with read_committed) and analyses them.
func (e *eosWorkload) check(t *testing.T, ctx context.Context, adm *kadm.Client, seeds []string, stalled string) eosReport {
	t.Helper()
	rep := eosReport{Stalled: stalled}
	e.mu.Lock()
	rep.InAcked, rep.InFailed, rep.Restarts, rep.EndErrs = len(e.inAcked), e.inFailed, e.restarts, maps.Clone(e.endErrs)
	ev := eosEvidence{inAcked: maps.Clone(e.inAcked), outcome: maps.Clone(e.outcome), values: maps.Clone(e.values), outAcked: maps.Clone(e.outAcked)}
	e.mu.Unlock()

	// A transaction left open by a dead coordinator is aborted by its
	// timeout (10s) within the coordinator's check interval.
	var hw map[int32]int64
	deadline := time.Now().Add(45 * time.Second)
	for {
		ev.lso = listStable(t, ctx, adm, e.out)
		hw = listEnds(t, ctx, adm, e.out)
		if maps.Equal(ev.lso, hw) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond) // polling the last stable offset
	}
	input, left, err := drainAll(ctx, seeds, e.in, lastOffsets(listEnds(t, ctx, adm, e.in)), 60*time.Second)
	if err != nil || len(left) > 0 {
		t.Fatalf("eos: draining %s: %v, partitions not at their end %v", e.in, err, left)
	}
	raw, left, err := drainAll(ctx, seeds, e.out, lastOffsets(hw), 60*time.Second, kgo.KeepControlRecords())
	if err != nil || len(left) > 0 {
		t.Fatalf("eos: draining %s raw: %v, partitions not at their end %v", e.out, err, left)
	}
	ev.input, ev.raw = toOutRecs(input), toOutRecs(raw)
	visible, notReach, err := drainAll(ctx, seeds, e.out, visibleTarget(markerFates(ev.raw), hw, ev.lso), 30*time.Second,
		kgo.KeepControlRecords(), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatalf("eos: draining %s read_committed: %v", e.out, err)
	}
	ev.visible, ev.notReach = toOutRecs(visible), notReach
	analyzeEOS(ev, &rep)
	return rep
}
