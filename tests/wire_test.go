package tests

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// wireTimeout bounds every raw read: a broker that neither answers nor
// closes within it has hung on bad input.
const wireTimeout = 10 * time.Second

// reqHeader encodes a request header: v1 (key, version, correlation id,
// nullable client id) or, when flexible, v2 (v1 plus empty tagged fields).
func reqHeader(key, version int16, corr int32, clientID string, flexible bool) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, uint16(len(clientID)))
	b = append(b, clientID...)
	if flexible {
		b = append(b, 0)
	}
	return b
}

// sized prefixes parts with their total length, as a Kafka frame.
func sized(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(n))
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func int32Bytes(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

// readFrame reads one size-prefixed response frame.
func readFrame(c net.Conn) ([]byte, error) {
	var sz [4]byte
	if _, err := io.ReadFull(c, sz[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(sz[:]))
	if n < 4 || n > 64<<20 {
		return nil, errors.New("response frame size out of range")
	}
	b := make([]byte, n)
	_, err := io.ReadFull(c, b)
	return b, err
}

// isClosed reports whether err means the peer closed the connection.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// apiVersionsRoundTrip sends a valid ApiVersions v3 request on a fresh
// connection and checks the answer.
func apiVersionsRoundTrip(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, wireTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(wireTimeout))
	req := kmsg.NewApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName = "gregor-tests"
	req.ClientSoftwareVersion = "1.0"
	if _, err := c.Write(sized(reqHeader(18, 3, 4242, "wire", true), req.AppendTo(nil))); err != nil {
		t.Fatalf("write ApiVersions: %v", err)
	}
	frame, err := readFrame(c)
	if err != nil {
		t.Fatalf("read ApiVersions response: %v", err)
	}
	if corr := int32(binary.BigEndian.Uint32(frame)); corr != 4242 {
		t.Fatalf("ApiVersions correlation id %d, want 4242", corr)
	}
	resp := kmsg.NewApiVersionsResponse()
	resp.Version = 3
	if err := resp.ReadFrom(frame[4:]); err != nil { // ApiVersions answers with header v0
		t.Fatalf("decode ApiVersions v3 response: %v", err)
	}
	if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		t.Fatalf("ApiVersions v3: error code %d, %d keys", resp.ErrorCode, len(resp.ApiKeys))
	}
}

// TestWireBadInput sends malformed frames on raw connections. Each must end
// in a closed connection or an error response, never a hang, and the broker
// must go on serving new and existing connections.
func TestWireBadInput(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "wire", 1, nil)

	// A client whose connection stays open through every bad input.
	steady, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer steady.Close()

	garbage := []byte{0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 0xff, 0xff, 0x80, 0x01, 0x02, 0x03, 0x7f, 0xff, 0xff, 0xff}
	const (
		mustClose     = iota // the broker closes the connection
		closeOrError         // closed, or an answer with our correlation id
		mustAnswerErr        // an answer whose error code is checked by check
	)
	tests := []struct {
		name       string
		send       []byte
		closeWrite bool // half-close after sending, as a truncated frame ends
		want       int
		check      func(t *testing.T, frame []byte)
	}{
		{name: "negative frame size", send: int32Bytes(-1), want: mustClose},
		{name: "min int32 frame size", send: int32Bytes(-1 << 31), want: mustClose},
		{name: "zero frame size", send: int32Bytes(0), want: mustClose},
		{name: "frame shorter than a header", send: append(int32Bytes(3), 0, 18, 0), want: mustClose},
		{name: "oversized frame size", send: int32Bytes(1<<31 - 1), want: mustClose},
		{name: "frame one byte over the limit", send: int32Bytes(100<<20 + 1), want: mustClose},
		{name: "truncated frame", send: append(int32Bytes(100), reqHeader(3, 1, 7, "x", false)...), closeWrite: true, want: mustClose},
		{name: "truncated size", send: []byte{0, 0}, closeWrite: true, want: mustClose},
		{name: "unknown API key", send: sized(reqHeader(32000, 0, 11, "wire", false)), want: closeOrError},
		{name: "negative API key", send: sized(reqHeader(-7, 0, 12, "wire", false)), want: closeOrError},
		{name: "unsupported Metadata version", send: sized(reqHeader(3, 999, 13, "wire", false)), want: closeOrError},
		{name: "unsupported Produce version", send: sized(reqHeader(0, -1, 14, "wire", false)), want: closeOrError},
		{
			name: "unsupported ApiVersions version", send: sized(reqHeader(18, 999, 15, "wire", true), []byte{0}),
			want: mustAnswerErr,
			check: func(t *testing.T, frame []byte) {
				// KIP-511: the broker answers in v0 with UNSUPPORTED_VERSION
				// and its ApiVersions range, so the client can retry.
				resp := kmsg.NewApiVersionsResponse()
				resp.Version = 0
				if err := resp.ReadFrom(frame[4:]); err != nil {
					t.Fatalf("decode ApiVersions v0 response: %v", err)
				}
				if resp.ErrorCode != kerr.UnsupportedVersion.Code {
					t.Errorf("error code %d, want %d (UNSUPPORTED_VERSION)", resp.ErrorCode, kerr.UnsupportedVersion.Code)
				}
				found := false
				for _, k := range resp.ApiKeys {
					found = found || k.ApiKey == 18
				}
				if !found {
					t.Errorf("response lists no ApiVersions range: %+v", resp.ApiKeys)
				}
			},
		},
		{name: "client id longer than the frame", send: sized(int32Bytes(3<<16|1), int32Bytes(16), []byte{0x7f, 0xff, 'a'}), want: closeOrError},
		{name: "negative client id length", send: sized(int32Bytes(3<<16|1), int32Bytes(17), []byte{0xff, 0xf0}), want: closeOrError},
		{name: "garbage Metadata v12 body", send: sized(reqHeader(3, 12, 18, "wire", true), garbage), want: closeOrError},
		{name: "garbage Metadata v1 body", send: sized(reqHeader(3, 1, 19, "wire", false), garbage), want: closeOrError},
		{name: "Metadata v1 with a huge topic count", send: sized(reqHeader(3, 1, 20, "wire", false), int32Bytes(1<<31-1)), want: closeOrError},
		{name: "Fetch v11 with a huge topic count", send: sized(reqHeader(1, 11, 21, "wire", false), int32Bytes(-1), int32Bytes(500), int32Bytes(1), int32Bytes(1<<20), []byte{0}, int32Bytes(0), int32Bytes(-1), int32Bytes(1<<31-1)), want: closeOrError},
		{name: "garbage ApiVersions v3 body", send: sized(reqHeader(18, 3, 22, "wire", true), garbage), want: closeOrError},
		{
			name: "Produce v7 with a garbage record batch", send: produceGarbage(23), want: mustAnswerErr,
			check: func(t *testing.T, frame []byte) {
				resp := kmsg.NewProduceResponse()
				resp.Version = 7
				if err := resp.ReadFrom(frame[4:]); err != nil {
					t.Fatalf("decode Produce v7 response: %v", err)
				}
				if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
					t.Fatalf("Produce response has %d topics, want 1 with 1 partition", len(resp.Topics))
				}
				if code := resp.Topics[0].Partitions[0].ErrorCode; code == 0 {
					t.Errorf("garbage batch accepted (error code 0)")
				} else {
					t.Logf("garbage batch rejected with %v", kerr.ErrorForCode(code))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.DialTimeout("tcp", b.Addr, wireTimeout)
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(wireTimeout))
			if _, err := c.Write(tt.send); err != nil && !isClosed(err) {
				t.Fatalf("write: %v", err)
			}
			if tt.closeWrite {
				c.(*net.TCPConn).CloseWrite()
			}
			frame, err := readFrame(c)
			switch {
			case err != nil && isClosed(err):
				if tt.want == mustAnswerErr {
					t.Errorf("connection closed; want an error response")
				}
			case err != nil:
				t.Fatalf("neither an answer nor a close within %v: %v", wireTimeout, err)
			case tt.want == mustClose:
				t.Errorf("got a %d-byte answer; want the connection closed", len(frame))
			default:
				wantCorr := int32(binary.BigEndian.Uint32(tt.send[8:12]))
				if corr := int32(binary.BigEndian.Uint32(frame)); corr != wantCorr {
					t.Errorf("answer has correlation id %d, want %d", corr, wantCorr)
				}
				if tt.check != nil {
					tt.check(t, frame)
				}
			}

			// The broker still serves: a new raw connection, a new client,
			// and the client connected before the bad input.
			apiVersionsRoundTrip(t, b.Addr)
			ctx, cancel := context.WithTimeout(context.Background(), wireTimeout)
			defer cancel()
			if err := steady.Ping(ctx); err != nil {
				t.Fatalf("steady client after bad input: %v", err)
			}
			fresh, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Close()
			if err := fresh.ProduceSync(ctx, &kgo.Record{Topic: "wire", Value: []byte(tt.name)}).FirstErr(); err != nil {
				t.Fatalf("produce after bad input: %v", err)
			}
		})
	}
}

// produceGarbage is a Produce v7 request for topic "wire" partition 0 whose
// records field holds bytes that are not a record batch.
func produceGarbage(corr int32) []byte {
	req := kmsg.NewProduceRequest()
	req.Version = 7
	req.Acks = 1
	req.TimeoutMillis = 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "wire"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = 0
	// 61 bytes: the size of a batch header, with a length that lies.
	junk := make([]byte, 61)
	for i := range junk {
		junk[i] = byte(i*37 + 11)
	}
	rp.Records = junk
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return sized(reqHeader(0, 7, corr, "wire", false), req.AppendTo(nil))
}

// TestWirePipelining sends many requests in one write and checks that the
// answers come back in request order, then that a bad frame queued behind a
// good request still gets the good request answered before the close.
func TestWirePipelining(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "pipelined", 2, nil)

	c, err := net.DialTimeout("tcp", b.Addr, wireTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(wireTimeout))

	const n = 100
	var out []byte
	for i := int32(1); i <= n; i++ {
		if i%2 == 1 {
			req := kmsg.NewApiVersionsRequest()
			req.Version = 3
			req.ClientSoftwareName = "gregor-tests"
			req.ClientSoftwareVersion = "1.0"
			out = append(out, sized(reqHeader(18, 3, i, "pipe", true), req.AppendTo(nil))...)
			continue
		}
		req := kmsg.NewMetadataRequest()
		req.Version = 12
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("pipelined")
		req.Topics = append(req.Topics, rt)
		out = append(out, sized(reqHeader(3, 12, i, "pipe", true), req.AppendTo(nil))...)
	}
	if _, err := c.Write(out); err != nil {
		t.Fatalf("write %d pipelined requests: %v", n, err)
	}
	for i := int32(1); i <= n; i++ {
		frame, err := readFrame(c)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		if corr := int32(binary.BigEndian.Uint32(frame)); corr != i {
			t.Fatalf("response %d has correlation id %d: answers out of request order", i, corr)
		}
		if i%2 == 1 {
			resp := kmsg.NewApiVersionsResponse()
			resp.Version = 3
			if err := resp.ReadFrom(frame[4:]); err != nil || resp.ErrorCode != 0 {
				t.Fatalf("ApiVersions response %d: %v, error code %d", i, err, resp.ErrorCode)
			}
			continue
		}
		resp := kmsg.NewMetadataResponse()
		resp.Version = 12
		// Flexible responses other than ApiVersions carry a header tag buffer.
		if len(frame) < 5 || frame[4] != 0 {
			t.Fatalf("Metadata response %d: missing empty header tag buffer", i)
		}
		if err := resp.ReadFrom(frame[5:]); err != nil {
			t.Fatalf("Metadata response %d: %v", i, err)
		}
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != 2 {
			t.Fatalf("Metadata response %d: %+v", i, resp.Topics)
		}
	}

	// A good request followed by a negative frame size: answer, then close.
	req := kmsg.NewApiVersionsRequest()
	req.Version = 0
	good := sized(reqHeader(18, 0, 500, "pipe", false), req.AppendTo(nil))
	if _, err := c.Write(append(good, int32Bytes(-5)...)); err != nil {
		t.Fatalf("write: %v", err)
	}
	frame, err := readFrame(c)
	if err != nil {
		t.Fatalf("the request before the bad frame was not answered: %v", err)
	}
	if corr := int32(binary.BigEndian.Uint32(frame)); corr != 500 {
		t.Fatalf("correlation id %d, want 500", corr)
	}
	if _, err := readFrame(c); !isClosed(err) {
		t.Fatalf("after the bad frame: %v, want the connection closed", err)
	}
}
