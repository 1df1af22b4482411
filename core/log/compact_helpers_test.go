package log

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gregorbroker/gregor/core/record"
)

// kv is one record for a keyed test batch; a nil value is a tombstone and
// a nil key a keyless record.
type kv struct {
	key, value []byte
}

func k(key, value string) kv { return kv{[]byte(key), []byte(value)} }
func tomb(key string) kv     { return kv{key: []byte(key)} }

// keyedSpec is the header of a keyed test batch.
type keyedSpec struct {
	codec         record.Codec
	ts            int64
	pid           int64 // 0 means no producer id
	seq           int32
	transactional bool
	control       bool
}

func keyedBatch(t testing.TB, s keyedSpec, kvs ...kv) []byte {
	t.Helper()
	rs := make([]record.Record, len(kvs))
	for i, x := range kvs {
		rs[i] = record.Record{TimestampDelta: int64(i), Key: x.key, Value: x.value}
		if i%2 == 1 {
			rs[i].Headers = []record.RecordHeader{{Key: "h", Value: []byte(fmt.Sprint(i))}}
		}
	}
	spec := record.BatchSpec{Codec: s.codec, FirstTimestamp: s.ts, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		Transactional: s.transactional, Control: s.control}
	if s.pid > 0 {
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = s.pid, 3, s.seq
	}
	b, err := record.Encode(spec, rs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// got is a record as read back from a log.
type got struct {
	offset    int64
	key       string
	value     string
	tombstone bool
	ts        int64
	headers   int
}

// allRecords scans the whole log, checking every batch's framing and CRC.
func allRecords(t testing.TB, l *Log) ([]got, []record.Header) {
	t.Helper()
	var out []got
	var hs []record.Header
	err := l.Scan(0, func(h record.Header, b []byte) error {
		hs = append(hs, h)
		return record.Records(b, 1<<20, func(r record.Record) error {
			out = append(out, got{offset: h.BaseOffset + int64(r.OffsetDelta), key: string(r.Key), value: string(r.Value),
				tombstone: r.Value == nil, ts: r.Timestamp(h), headers: len(r.Headers)})
			return nil
		})
	})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return out, hs
}

// latestByKey is what compaction must leave: each key's last record.
func latestByKey(rs []got) map[string]got {
	m := map[string]got{}
	for _, r := range rs {
		m[r.key] = r
	}
	return m
}

// latestBelow is latestByKey over the records below offset end.
func latestBelow(rs []got, end int64) map[string]got {
	m := map[string]got{}
	for _, r := range rs {
		if r.offset < end {
			m[r.key] = r
		}
	}
	return m
}

func mustClean(t testing.TB, l *Log, o CleanOptions) CleanResult {
	t.Helper()
	res, err := l.Clean(o)
	if err != nil {
		t.Fatalf("Clean: %v", err)
	}
	return res
}

func compactConfig() Config {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 400
	cfg.IndexIntervalBytes = 100
	cfg.Compact, cfg.Delete = true, false
	return cfg
}

// copyDir copies a partition directory's regular files.
func copyDir(t testing.TB, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		copyFile(t, filepath.Join(from, e.Name()), filepath.Join(to, e.Name()))
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
}
