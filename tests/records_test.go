package tests

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// testRecord is a record as written by a test.
type testRecord struct {
	Key, Value []byte
	Headers    []testHeader
	Timestamp  time.Time // millisecond precision
}

type testHeader struct {
	Key   string
	Value []byte
}

// gotRecord is a record as read back, with where the broker put it.
type gotRecord struct {
	testRecord
	Partition int32
	Offset    int64
}

// makeRecords builds n keyed records with unique keys, varied values (empty,
// binary, compressible text), varied headers (none, binary, repeated keys)
// and timestamps increasing by one millisecond from base. The same seed
// gives the same records.
func makeRecords(seed string, n int, base time.Time) []testRecord {
	var s1 uint64
	for _, c := range seed {
		s1 = s1*131 + uint64(c)
	}
	rng := rand.New(rand.NewPCG(s1, uint64(n)))
	randBytes := func(max int) []byte {
		b := make([]byte, rng.IntN(max+1))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	recs := make([]testRecord, n)
	for i := range recs {
		r := testRecord{
			Key:       []byte(fmt.Sprintf("%s-key-%06d", seed, i)),
			Timestamp: base.Add(time.Duration(i) * time.Millisecond),
		}
		switch i % 4 {
		case 0:
			r.Value = randBytes(300)
		case 1:
			r.Value = bytes.Repeat([]byte(fmt.Sprintf("value %d of %s; ", i, seed)), 1+rng.IntN(8))
		case 2:
			r.Value = []byte{}
		case 3:
			r.Value = make([]byte, 256)
			for j := range r.Value {
				r.Value[j] = byte(j + i)
			}
		}
		if i%5 != 0 {
			r.Headers = []testHeader{
				{Key: "seq", Value: []byte(strconv.Itoa(i))},
				{Key: "bin", Value: randBytes(16)},
			}
			if i%11 == 0 {
				r.Headers = append(r.Headers, testHeader{Key: "seq", Value: []byte("repeated key")})
			}
		}
		recs[i] = r
	}
	return recs
}

// murmur2Partition is Kafka's default partition for a key: the Java
// client's (murmur2(key) & 0x7fffffff) % n.
func murmur2Partition(key []byte, n int) int32 {
	return int32(kgo.StickyKeyPartitioner(nil).ForTopic("").Partition(&kgo.Record{Key: key}, n))
}

// verifyRoundTrip checks that got holds exactly the sent records, byte for
// byte, each once, in the partition murmur2 picks for its key, and that
// every partition's offsets run from 0 without gaps.
func verifyRoundTrip(t *testing.T, sent []testRecord, got []gotRecord, partitions int) {
	t.Helper()
	errs := 0
	fail := func(format string, args ...any) {
		t.Helper()
		errs++
		if errs <= 10 {
			t.Errorf(format, args...)
		}
	}
	if len(got) != len(sent) {
		fail("read %d records, wrote %d", len(got), len(sent))
	}
	byKey := make(map[string]*testRecord, len(sent))
	for i := range sent {
		byKey[string(sent[i].Key)] = &sent[i]
	}
	seen := make(map[string]bool, len(got))
	offsets := map[int32][]int64{}
	for _, g := range got {
		k := string(g.Key)
		offsets[g.Partition] = append(offsets[g.Partition], g.Offset)
		want, ok := byKey[k]
		switch {
		case !ok:
			fail("read a record with unknown key %q at partition %d offset %d", k, g.Partition, g.Offset)
			continue
		case seen[k]:
			fail("record %q read twice (partition %d offset %d)", k, g.Partition, g.Offset)
			continue
		}
		seen[k] = true
		if !bytes.Equal(g.Value, want.Value) {
			fail("record %q: value %s, want %s", k, short(g.Value), short(want.Value))
		}
		if !g.Timestamp.Equal(want.Timestamp) {
			fail("record %q: timestamp %v, want %v", k, g.Timestamp.UnixMilli(), want.Timestamp.UnixMilli())
		}
		if len(g.Headers) != len(want.Headers) {
			fail("record %q: %d headers, want %d", k, len(g.Headers), len(want.Headers))
		} else {
			for i, h := range g.Headers {
				if h.Key != want.Headers[i].Key || !bytes.Equal(h.Value, want.Headers[i].Value) {
					fail("record %q: header %d is %q=%s, want %q=%s", k, i, h.Key, short(h.Value), want.Headers[i].Key, short(want.Headers[i].Value))
				}
			}
		}
		if p := murmur2Partition(g.Key, partitions); g.Partition != p {
			fail("record %q in partition %d, murmur2 says %d", k, g.Partition, p)
		}
	}
	for p, offs := range offsets {
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		for i, o := range offs {
			if o != int64(i) {
				fail("partition %d: offsets are not 0..%d without gaps (position %d holds %d)", p, len(offs)-1, i, o)
				break
			}
		}
	}
	if errs > 10 {
		t.Errorf("... and %d more errors", errs-10)
	}
}

// expectedOffsetForTime is what ListOffsets must answer for a timestamp:
// the earliest offset in the partition whose timestamp is at or after ms,
// or -1 if there is none.
func expectedOffsetForTime(got []gotRecord, partition int32, ms int64) int64 {
	best := int64(-1)
	for _, g := range got {
		if g.Partition == partition && g.Timestamp.UnixMilli() >= ms && (best < 0 || g.Offset < best) {
			best = g.Offset
		}
	}
	return best
}

// short renders bytes for an error message: hex, cut after 32 bytes.
func short(b []byte) string {
	if len(b) <= 32 {
		return fmt.Sprintf("%x (%d bytes)", b, len(b))
	}
	return fmt.Sprintf("%x... (%d bytes)", b[:32], len(b))
}
