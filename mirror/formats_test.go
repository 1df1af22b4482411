package mirror

import (
	"bytes"
	"errors"
	"testing"
)

func TestFormatsLayout(t *testing.T) {
	// Kafka's struct encoding: int16-length strings, big-endian integers;
	// checkpoint and heartbeat values start with version 0.
	c := Checkpoint{Group: "g", Topic: "east.t", Partition: 3, Upstream: 10, Downstream: 7, Metadata: "m"}
	wantKey := []byte{0, 1, 'g', 0, 6, 'e', 'a', 's', 't', '.', 't', 0, 0, 0, 3}
	wantValue := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 7, 0, 1, 'm'}
	if !bytes.Equal(c.Key(), wantKey) || !bytes.Equal(c.Value(), wantValue) {
		t.Fatalf("checkpoint = %v / %v", c.Key(), c.Value())
	}
	h := Heartbeat{Source: "a", Target: "b", Timestamp: 258}
	if got := h.Value(); !bytes.Equal(got, []byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 2}) {
		t.Fatalf("heartbeat value = %v", got)
	}
	s := OffsetSync{Topic: "t", Partition: 1, Upstream: -1, Downstream: 2}
	if got := s.Value(); !bytes.Equal(got, []byte{255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 2}) {
		t.Fatalf("offset sync value = %v", got)
	}
}

func TestFormatsRoundTrip(t *testing.T) {
	c := Checkpoint{Group: "billing", Topic: "east.orders", Partition: 5, Upstream: 1 << 40, Downstream: 12, Metadata: ""}
	if got, err := DecodeCheckpoint(c.Key(), c.Value()); err != nil || got != c {
		t.Fatalf("checkpoint round trip = %+v, %v", got, err)
	}
	h := Heartbeat{Source: "east", Target: "west", Timestamp: 1700000000000}
	if got, err := DecodeHeartbeat(h.Key(), h.Value()); err != nil || got != h {
		t.Fatalf("heartbeat round trip = %+v, %v", got, err)
	}
	s := OffsetSync{Topic: "orders", Partition: 2, Upstream: 99, Downstream: 41}
	if got, err := DecodeOffsetSync(s.Key(), s.Value()); err != nil || got != s {
		t.Fatalf("offset sync round trip = %+v, %v", got, err)
	}
}

func TestFormatsCorrupt(t *testing.T) {
	c := Checkpoint{Group: "g", Topic: "t", Partition: 1, Upstream: 1, Downstream: 1}
	s := OffsetSync{Topic: "t", Partition: 1}
	h := Heartbeat{Source: "a", Target: "b"}
	badVersion := append([]byte{0, 1}, c.Value()[2:]...)
	tests := []struct {
		name string
		err  error
	}{
		{"checkpoint short key", second(DecodeCheckpoint(c.Key()[:3], c.Value()))},
		{"checkpoint trailing value", second(DecodeCheckpoint(c.Key(), append(c.Value(), 0)))},
		{"checkpoint version", second(DecodeCheckpoint(c.Key(), badVersion))},
		{"checkpoint negative string", second(DecodeCheckpoint([]byte{0xff, 0xff}, c.Value()))},
		{"sync short value", second(DecodeOffsetSync(s.Key(), s.Value()[:15]))},
		{"sync empty key", second(DecodeOffsetSync(nil, s.Value()))},
		{"heartbeat long string", second(DecodeHeartbeat([]byte{0, 9, 'a'}, h.Value()))},
		{"heartbeat empty value", second(DecodeHeartbeat(h.Key(), nil))},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, ErrCorruptRecord) {
			t.Errorf("%s: err = %v, want ErrCorruptRecord", tt.name, tt.err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func FuzzDecodeRecords(f *testing.F) {
	c := Checkpoint{Group: "g", Topic: "t", Partition: 1, Upstream: 2, Downstream: 3, Metadata: "x"}
	f.Add(c.Key(), c.Value())
	s := OffsetSync{Topic: "t", Partition: 1, Upstream: 2, Downstream: 3}
	f.Add(s.Key(), s.Value())
	h := Heartbeat{Source: "a", Target: "b", Timestamp: 4}
	f.Add(h.Key(), h.Value())
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if c, err := DecodeCheckpoint(key, value); err == nil {
			if !bytes.Equal(c.Key(), key) || !bytes.Equal(c.Value(), value) {
				t.Fatalf("checkpoint does not re-encode to its input")
			}
		}
		if s, err := DecodeOffsetSync(key, value); err == nil {
			if !bytes.Equal(s.Key(), key) || !bytes.Equal(s.Value(), value) {
				t.Fatalf("offset sync does not re-encode to its input")
			}
		}
		if h, err := DecodeHeartbeat(key, value); err == nil {
			if !bytes.Equal(h.Key(), key) || !bytes.Equal(h.Value(), value) {
				t.Fatalf("heartbeat does not re-encode to its input")
			}
		}
	})
}
