package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func testRegistry() *Registry {
	r := NewRegistry()
	for _, k := range []int16{0, 1, 3, 18} {
		max := kmsg.RequestForKey(k).MaxVersion()
		min := int16(0)
		if k == 1 {
			min = 4
		}
		r.Add(API{Key: k, Min: min, Max: max, Handle: func(*Request) Reply { return Reply{None: true} }})
	}
	return r
}

func encodeRequest(req kmsg.Request, corr int32, clientID string) []byte {
	b := kbin.AppendInt16(nil, req.Key())
	b = kbin.AppendInt16(b, req.GetVersion())
	b = kbin.AppendInt32(b, corr)
	b = kbin.AppendNullableString(b, &clientID)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	return req.AppendTo(b)
}

func TestReadFrame(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      []byte
		wantErr error
		wantEOF bool
	}{
		{"negative size", []byte{0xff, 0xff, 0xff, 0xf0}, ErrFrameSize, false},
		{"too small", []byte{0, 0, 0, 3, 1, 2, 3}, ErrFrameSize, false},
		{"over limit", []byte{0x7f, 0xff, 0xff, 0xff}, ErrFrameSize, false},
		{"truncated", append([]byte{0, 0, 0, 20}, make([]byte, 10)...), io.ErrUnexpectedEOF, false},
		{"empty stream", nil, io.EOF, true},
		{"ok", append([]byte{0, 0, 0, 8}, make([]byte, 8)...), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadFrame(bytes.NewReader(tc.in), 1<<20, nil)
			if tc.wantErr == nil {
				if err != nil || len(got) != 8 {
					t.Fatalf("got %d bytes, err %v", len(got), err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestParseRequest(t *testing.T) {
	reg := testRegistry()
	meta := kmsg.NewPtrMetadataRequest()
	meta.SetVersion(12)
	topic := "orders"
	meta.Topics = []kmsg.MetadataRequestTopic{{Topic: &topic}}
	good := encodeRequest(meta, 7, "cli")

	oldFetch := kmsg.NewPtrFetchRequest()
	oldFetch.SetVersion(3)

	newAV := kmsg.NewPtrApiVersionsRequest()
	newAV.SetVersion(4)
	avBody := encodeRequest(newAV, 9, "x")
	binary.BigEndian.PutUint16(avBody[2:], 99) // a version from the future

	for _, tc := range []struct {
		name    string
		in      []byte
		wantErr error
		check   func(*testing.T, Header, kmsg.Request)
	}{
		{"metadata v12", good, nil, func(t *testing.T, h Header, r kmsg.Request) {
			m := r.(*kmsg.MetadataRequest)
			if h.CorrelationID != 7 || h.ClientID != "cli" || len(m.Topics) != 1 || *m.Topics[0].Topic != "orders" {
				t.Fatalf("bad decode: %+v %+v", h, m)
			}
		}},
		{"unknown key", []byte{0x03, 0xe7, 0, 0, 0, 0, 0, 1, 0xff, 0xff}, ErrUnknownAPI, nil},
		{"unsupported version", encodeRequest(oldFetch, 1, "c"), ErrUnsupportedVer, nil},
		{"short header", []byte{0, 3, 0}, ErrHeader, nil},
		{"garbage body", append(good[:14:14], 0xde, 0xad, 0xbe, 0xef, 0xff), ErrBody, nil},
		{"truncated body", good[:len(good)-3], ErrBody, nil},
		{"api versions from the future", avBody, nil, func(t *testing.T, h Header, r kmsg.Request) {
			if h.Version != 99 || r.GetVersion() != 0 {
				t.Fatalf("want v0 request for a v99 header, got %d/%d", h.Version, r.GetVersion())
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, req, err := ParseRequest(reg, tc.in)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, h, req)
		})
	}
}

func TestAppendResponseHeader(t *testing.T) {
	av := kmsg.NewPtrApiVersionsResponse()
	av.SetVersion(3)
	b := AppendResponse(nil, 5, av)
	// ApiVersions keeps response header v0 even when flexible: size, corr, then the body.
	if got := int(binary.BigEndian.Uint32(b)); got != len(b)-4 {
		t.Fatalf("size %d, frame %d", got, len(b)-4)
	}
	if int32(binary.BigEndian.Uint32(b[4:])) != 5 {
		t.Fatal("correlation id")
	}
	back := kmsg.NewPtrApiVersionsResponse()
	back.SetVersion(3)
	if err := back.ReadFrom(b[8:]); err != nil {
		t.Fatalf("body does not start right after the correlation id: %v", err)
	}
	meta := kmsg.NewPtrMetadataResponse()
	meta.SetVersion(12)
	b = AppendResponse(nil, 6, meta)
	if b[8] != 0 {
		t.Fatal("flexible response header must carry empty tagged fields")
	}
}

func FuzzParseRequest(f *testing.F) {
	reg := testRegistry()
	meta := kmsg.NewPtrMetadataRequest()
	meta.SetVersion(12)
	f.Add(encodeRequest(meta, 1, "c"))
	prod := kmsg.NewPtrProduceRequest()
	prod.SetVersion(9)
	prod.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Records: []byte{1, 2, 3}}}}}
	f.Add(encodeRequest(prod, 2, "c"))
	fetch := kmsg.NewPtrFetchRequest()
	fetch.SetVersion(13)
	f.Add(encodeRequest(fetch, 3, ""))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseRequest(reg, b)
		ReadFrame(bytes.NewReader(b), 1<<16, nil)
	})
}

// TestReadFrameWholeFrameAllocatesOnce checks that a large frame that arrives
// whole (a Java producer's 1 MiB Produce request) costs about its own size:
// growing its buffer by doubling from 64 KiB allocated twice the frame and
// copied every byte once more, a third of the broker's allocations and a
// tenth of its CPU under ProducerPerformance.
func TestReadFrameWholeFrameAllocatesOnce(t *testing.T) {
	for _, size := range []int{1 << 20, 1<<20 + 100, 3 << 20} {
		body := make([]byte, size)
		for i := range body {
			body[i] = byte(i * 7)
		}
		frame := append(binary.BigEndian.AppendUint32(nil, uint32(size)), body...)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := ReadFrame(bytes.NewReader(frame), 100<<20, nil)
		runtime.ReadMemStats(&after)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%d-byte frame: %v, equal %v", size, err, bytes.Equal(got, body))
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(size)+uint64(size)/8+128<<10 {
			t.Fatalf("allocated %d bytes to read a %d-byte frame", alloc, size)
		}
	}
}

// TestReadFrameAllocatesWhatArrives checks that a frame announced large but
// cut short costs memory in proportion to the bytes sent, not the size
// announced.
func TestReadFrameAllocatesWhatArrives(t *testing.T) {
	for _, tc := range []struct {
		name     string
		announce int32
		send     int
		maxAlloc uint64
	}{
		{"large announced, little sent", 90 << 20, 1000, 1 << 20},
		{"large announced, half sent", 8 << 20, 4 << 20, 20 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frame := binary.BigEndian.AppendUint32(nil, uint32(tc.announce))
			frame = append(frame, make([]byte, tc.send)...)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := ReadFrame(bytes.NewReader(frame), 100<<20, nil)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("err = %v, want a truncated frame", err)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > tc.maxAlloc {
				t.Fatalf("allocated %d bytes for %d received", got, tc.send)
			}
		})
	}
	// A whole large frame still reads back intact.
	body := make([]byte, 300<<10)
	for i := range body {
		body[i] = byte(i)
	}
	got, err := ReadFrame(bytes.NewReader(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)), 1<<20, nil)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("large frame: %v, equal %v", err, bytes.Equal(got, body))
	}
}
