//go:build linux

package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// spliceFile writes data to a file and returns a run of it, counting releases.
func spliceFile(t *testing.T, data []byte, released *int) (FileBytes, *os.File) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "seg.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(append([]byte("head"), data...)); err != nil {
		t.Fatal(err)
	}
	return FileBytes{FD: int(f.Fd()), Off: 4, Len: len(data), Release: func() { *released++ }}, f
}

// fetchResponse builds a two-partition fetch response whose records are
// markers of sp, and the same response with the real bytes.
func fetchResponse(version int16, sp *Splice, runs []FileBytes, data [][]byte) (spliced, plain *kmsg.FetchResponse) {
	mk := func(records func(i int) []byte) *kmsg.FetchResponse {
		r := kmsg.NewPtrFetchResponse()
		r.Version = version
		tp := kmsg.NewFetchResponseTopic()
		tp.Topic = "orders"
		for i := range data {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition = int32(i)
			p.HighWatermark = 100
			p.RecordBatches = records(i)
			tp.Partitions = append(tp.Partitions, p)
		}
		r.Topics = append(r.Topics, tp)
		return r
	}
	plain = mk(func(i int) []byte { return data[i] })
	spliced = mk(func(i int) []byte { return sp.Add(runs[i]) })
	return spliced, plain
}

// TestSplitAndWriteMatchesPlainEncoding: a spliced fetch response sent over
// loopback TCP (sendfile) and over a pipe (the copy path) is byte for byte
// the response encoded with the records in it, for classic and flexible
// versions, and every run is released.
func TestSplitAndWriteMatchesPlainEncoding(t *testing.T) {
	data := [][]byte{bytes.Repeat([]byte("a"), 300), bytes.Repeat([]byte("b"), 70_000)}
	for _, version := range []int16{4, 11, 12, 16} {
		for _, transport := range []string{"tcp", "pipe"} {
			released := 0
			sp := NewSplice(version >= 12)
			var runs []FileBytes
			for _, d := range data {
				r, _ := spliceFile(t, d, &released)
				runs = append(runs, r)
			}
			spliced, plain := fetchResponse(version, sp, runs, data)
			want := AppendResponse(nil, 7, plain)
			enc := AppendResponse(nil, 7, spliced)
			pieces, n, err := sp.split(enc)
			if err != nil {
				t.Fatalf("v%d: split: %v", version, err)
			}
			if n != len(want) {
				t.Fatalf("v%d: split says %d bytes, the plain encoding has %d", version, n, len(want))
			}
			got := sendOver(t, transport, pieces, len(want))
			if !bytes.Equal(got, want) {
				t.Fatalf("v%d over %s: the spliced bytes differ from the plain encoding", version, transport)
			}
			sp.Release()
			if released != len(runs) {
				t.Fatalf("v%d: %d of %d runs released", version, released, len(runs))
			}
		}
	}
}

func sendOver(t *testing.T, transport string, pieces []piece, n int) []byte {
	t.Helper()
	var a, b net.Conn
	if transport == "pipe" {
		a, b = net.Pipe()
	} else {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		acc := make(chan net.Conn, 1)
		go func() { c, _ := ln.Accept(); acc <- c }()
		if b, err = net.Dial("tcp", ln.Addr().String()); err != nil {
			t.Fatal(err)
		}
		a = <-acc
	}
	defer a.Close()
	defer b.Close()
	errc := make(chan error, 1)
	go func() {
		direct, err := writePieces(a, pieces, 5*time.Second)
		if want := transport == "tcp"; (direct > 0) != want {
			err = errors.Join(err, fmt.Errorf("%s: %d bytes by sendfile", transport, direct))
		}
		errc <- err
	}()
	got := make([]byte, n)
	if _, err := io.ReadFull(b, got); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("writePieces: %v", err)
	}
	return got
}

// TestWriteTruncatedRunFails: a file cut shorter than its run since the read
// is an error, never a short frame the client would misread.
func TestWriteTruncatedRunFails(t *testing.T) {
	for _, transport := range []string{"tcp", "pipe"} {
		released := 0
		run, f := spliceFile(t, bytes.Repeat([]byte("z"), 50_000), &released)
		if err := f.Truncate(1000); err != nil {
			t.Fatal(err)
		}
		var a, b net.Conn
		if transport == "pipe" {
			a, b = net.Pipe()
		} else {
			ln, _ := net.Listen("tcp", "127.0.0.1:0")
			acc := make(chan net.Conn, 1)
			go func() { c, _ := ln.Accept(); acc <- c }()
			b, _ = net.Dial("tcp", ln.Addr().String())
			a = <-acc
			ln.Close()
		}
		go io.Copy(io.Discard, b)
		_, err := writePieces(a, []piece{{b: []byte{0, 0, 0, 1}}, {f: &run}}, 5*time.Second)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("%s: writePieces of a truncated run: %v, want ErrUnexpectedEOF", transport, err)
		}
		a.Close()
		b.Close()
	}
}

// TestSplitRejectsForgedMarker: a marker found where no length prefix of
// its size stands is refused, not spliced into the wrong place.
func TestSplitRejectsForgedMarker(t *testing.T) {
	released := 0
	sp := NewSplice(false)
	run, _ := spliceFile(t, []byte("records"), &released)
	m := sp.Add(run)
	enc := append([]byte{0, 0, 0, 0, 9, 9, 9, 9}, m...) // no int32(16) before it
	if _, _, err := sp.split(enc); !errors.Is(err, errMarker) {
		t.Fatalf("split: %v, want errMarker", err)
	}
	sp.Release()
}

// TestSplitManyRuns: a response of 2,000 partitions, each a run, splits in
// one pass into the plain encoding's length with every run in place.
func TestSplitManyRuns(t *testing.T) {
	released := 0
	sp := NewSplice(true)
	var runs []FileBytes
	var data [][]byte
	for i := range 2000 {
		d := bytes.Repeat([]byte{byte(i)}, 10+i%300)
		r, _ := spliceFile(t, d, &released)
		runs, data = append(runs, r), append(data, d)
	}
	spliced, plain := fetchResponse(16, sp, runs, data)
	want := AppendResponse(nil, 1, plain)
	pieces, n, err := sp.split(AppendResponse(nil, 1, spliced))
	if err != nil || n != len(want) {
		t.Fatalf("split: %d bytes, %v; want %d", n, err, len(want))
	}
	files := 0
	for _, p := range pieces {
		if p.f != nil {
			if p.f.Len != len(data[files]) {
				t.Fatalf("run %d out of order", files)
			}
			files++
		}
	}
	if files != len(runs) {
		t.Fatalf("%d of %d runs found", files, len(runs))
	}
	sp.Release()
}

// TestSpliceReleasedWhenHandlerPanics: a fetch handler that has taken file
// runs and then panics (or answers without them) leaves no descriptor held:
// the server releases the request's splice on every path.
func TestSpliceReleasedWhenHandlerPanics(t *testing.T) {
	var released atomic.Int32
	run := FileBytes{FD: -1, Len: 100, Release: func() { released.Add(1) }}
	r := NewRegistry()
	r.Add(API{Key: 1, Min: 4, Max: 12, Handle: func(req *Request) Reply {
		sp := req.NewSplice(false)
		sp.Add(run)
		if req.CorrelationID == 1 {
			panic("boom")
		}
		return Reply{None: true}
	}})
	ts := startServer(t, &Server{Registry: r})
	for i, want := range []int32{1, 2} {
		c := dial(t, ts.addr, nil)
		c.corr = int32(i)
		req := kmsg.NewPtrFetchRequest()
		req.Version = 4
		c.send(req)
		if i == 0 {
			if err := c.recv(kmsg.NewPtrFetchResponse()); err == nil {
				t.Fatal("a panicking handler answered")
			}
		}
		deadline := time.Now().Add(5 * time.Second)
		for released.Load() != want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := released.Load(); got != want {
			t.Fatalf("request %d: %d runs released, want %d", i+1, got, want)
		}
	}
}

// TestSpliceRunsBoundedPerConnection: a client that pipelines fetches and
// reads none of the answers is muted by the bytes queued for it; file runs
// of small batches cost almost nothing there (a 100-byte run counts 84
// bytes), so one such connection could pin thousands of descriptors, the
// whole broker-wide log.MaxOpenRanges (4096) that every consumer shares.
// A connection must hold well under that.
func TestSpliceRunsBoundedPerConnection(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "seg.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	var held atomic.Int64
	const parts = 200
	r := NewRegistry()
	r.Add(API{Key: 1, Min: 4, Max: 12, Handle: func(req *Request) Reply {
		sp := req.NewSplice(false)
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = req.Version
		tp := kmsg.NewFetchResponseTopic()
		tp.Topic = "t"
		for i := range parts {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition = int32(i)
			held.Add(1)
			p.RecordBatches = sp.Add(FileBytes{FD: int(f.Fd()), Off: 0, Len: 100, Release: func() { held.Add(-1) }})
			tp.Partitions = append(tp.Partitions, p)
		}
		resp.Topics = append(resp.Topics, tp)
		return Reply{Resp: resp, Splice: sp}
	}})
	ts := startServer(t, &Server{Registry: r, MaxQueuedResponseBytes: 1 << 20, IdleTimeout: 30 * time.Second})
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	c, err := d.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		req := kmsg.NewPtrFetchRequest()
		req.Version = 4
		for i := range 2000 {
			b := encodeRequest(req, int32(i), "hog")
			if _, err := c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)); err != nil {
				return
			}
		}
	}()
	var most int64
	for range 30 {
		time.Sleep(100 * time.Millisecond)
		most = max(most, held.Load())
	}
	if most > 1024 {
		t.Fatalf("one connection that reads nothing holds %d file runs", most)
	}
}
