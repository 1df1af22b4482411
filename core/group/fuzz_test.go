package group

import (
	"errors"
	"testing"
)

// FuzzApplyRecord feeds arbitrary keys and values to the replay decoder: it
// must never panic, and anything it refuses must be ErrCorrupt.
func FuzzApplyRecord(f *testing.F) {
	f.Add(encodeOffsetKey("g", TopicPartition{"t", 1}), encodeOffsetValue(Offset{Offset: 5, LeaderEpoch: 2, Metadata: "m", ExpireTime: -1}))
	f.Add(encodeOffsetKey("g", TopicPartition{"t", 1}), encodeOffsetValue(Offset{Offset: 5, ExpireTime: 99}))
	cg := newClassic(&group{id: "g"}, testStart)
	cg.protocolType, cg.protocol, cg.generation = "consumer", "range", 3
	f.Add(encodeGroupKey("g"), encodeGroupValue(cg.metadataValue(nil)))
	f.Add(encodeGroupKey("g"), []byte(nil))
	f.Add([]byte{0, 9, 1}, []byte{1})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		ls := newLoadState()
		if err := ls.apply(key, value); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error outside the corruption class: %v", err)
		}
	})
}
