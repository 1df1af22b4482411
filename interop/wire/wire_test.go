package wire

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// serve answers one request on a loopback listener with reply(correlation id).
func serve(t *testing.T, reply func(corr int32) []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var sz [4]byte
		if _, err := io.ReadFull(c, sz[:]); err != nil {
			return
		}
		req := make([]byte, binary.BigEndian.Uint32(sz[:]))
		if _, err := io.ReadFull(c, req); err != nil {
			return
		}
		_, _ = c.Write(reply(int32(binary.BigEndian.Uint32(req[4:8]))))
	}()
	return ln.Addr().String()
}

func frame(corr int32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	return append(b, body...)
}

func TestRoundTrip(t *testing.T) {
	good := kmsg.NewPtrApiVersionsResponse()
	good.Version = 3
	k := kmsg.NewApiVersionsResponseApiKey()
	k.ApiKey, k.MinVersion, k.MaxVersion = 0, 3, 11
	good.ApiKeys = []kmsg.ApiVersionsResponseApiKey{k}
	cases := []struct {
		name    string
		reply   func(corr int32) []byte
		wantErr string
	}{
		{"answer decodes", func(c int32) []byte { return frame(c, good.AppendTo(nil)) }, ""},
		{"size over the limit", func(int32) []byte { return binary.BigEndian.AppendUint32(nil, maxResponse+1) }, "out of range"},
		{"negative size", func(int32) []byte { return binary.BigEndian.AppendUint32(nil, 0xffffffff) }, "out of range"},
		{"wrong correlation id", func(c int32) []byte { return frame(c+1, good.AppendTo(nil)) }, "correlation id"},
		{"truncated body", func(c int32) []byte { return frame(c, []byte{0, 0, 0}) }, "decode"},
		{"connection closed", func(int32) []byte { return nil }, "size"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, err := Dial(serve(t, c.reply), 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			req := kmsg.NewPtrApiVersionsRequest()
			req.Version = 3
			resp := kmsg.NewPtrApiVersionsResponse()
			err = conn.RoundTrip(req, resp)
			if c.wantErr == "" {
				if err != nil || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].MaxVersion != 11 {
					t.Fatalf("RoundTrip: %v, keys %+v", err, resp.ApiKeys)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("RoundTrip error %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}
