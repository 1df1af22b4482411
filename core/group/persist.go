package group

import (
	"bytes"
	"sort"
)

// The consumer and streams groups keep their state in __consumer_offsets
// the same way: each remembers what its records in the log say
// (persisted, by key), computes the records its state should have
// (desired) after a change, writes those whose value differs and, when it
// rewrote everything, tombstones the keys that no longer apply. A failed
// write leaves persisted as it was, so the next change writes the
// difference again. Only the record formats differ (consumer_records.go,
// streams_records.go).

// recordChanges are the records that turn persisted into desired, sorted
// by key: those whose value differs and, when all is set, a tombstone for
// every persisted key desired no longer has.
func recordChanges(persisted, desired map[string][]byte, all bool) []kv {
	var recs []kv
	for k, v := range desired {
		if old, ok := persisted[k]; !ok || !bytes.Equal(old, v) {
			recs = append(recs, kv{key: []byte(k), value: v})
		}
	}
	if all {
		for k := range persisted {
			if _, ok := desired[k]; !ok {
				recs = append(recs, kv{key: []byte(k)})
			}
		}
	}
	sortRecords(recs)
	return recs
}

// recordsWritten updates persisted with records the log now holds: a
// tombstone removes its key; a value is remembered when keep is nil or
// says so.
func recordsWritten(persisted map[string][]byte, recs []kv, keep func(key []byte) bool) {
	for _, r := range recs {
		if r.value == nil {
			delete(persisted, string(r.key))
		} else if keep == nil || keep(r.key) {
			persisted[string(r.key)] = r.value
		}
	}
}

// recordTombstones are the tombstones that remove every persisted key,
// sorted by key.
func recordTombstones(persisted map[string][]byte) []kv {
	out := make([]kv, 0, len(persisted))
	for k := range persisted {
		out = append(out, kv{key: []byte(k)})
	}
	sortRecords(out)
	return out
}

func sortRecords(recs []kv) {
	sort.Slice(recs, func(i, j int) bool { return bytes.Compare(recs[i].key, recs[j].key) < 0 })
}

// replayRecords rebuilds a group from its records of kind: apply reads
// each; a record apply cannot decode is logged and left out, the others
// are remembered in persisted. what names the group type in the log.
func (s *shard) replayRecords(g *group, what string, kind recordKind, recs, persisted map[string][]byte,
	apply func(k recordKey, value []byte) error) {
	for key, value := range recs {
		k, err := decodeKey([]byte(key))
		if err != nil || k.kind != kind {
			continue
		}
		if err := apply(k, value); err != nil {
			s.c.log.Error("skipping a "+what+" group record", "group", g.id, "member", k.member, "err", err)
			continue
		}
		persisted[key] = value
	}
}

// storedMember is how a current assignment record (consumer and streams
// alike) holds a member's epochs and state: a static member that left for
// a moment is written with Kafka's epoch -2 and its epoch as the previous
// one, from where it is restored.
func storedMember(epoch, previous int32, departed bool, st memberState) (int32, int32, int8) {
	state := kafkaStateStable
	switch st {
	case memberUnrevoked:
		state = kafkaStateUnrevoked
	case memberUnreleased:
		state = kafkaStateUnreleased
	}
	if departed {
		epoch, previous = epochStaticLeave, epoch
	}
	return epoch, previous, state
}

// restoredMember is storedMember undone: the member's epoch, previous
// epoch, whether it had left for a moment, and its state.
func restoredMember(epoch, previous int32, state int8) (int32, int32, bool, memberState) {
	departed := epoch == epochStaticLeave
	if departed {
		epoch = previous
	}
	st := memberStable
	switch state {
	case kafkaStateUnrevoked:
		st = memberUnrevoked
	case kafkaStateUnreleased:
		st = memberUnreleased
	}
	return epoch, previous, departed, st
}
