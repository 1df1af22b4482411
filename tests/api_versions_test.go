package tests

import (
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiVersionsV5 sends ApiVersions v5 naming cluster and node on a fresh
// connection and returns the answer.
func apiVersionsV5(t *testing.T, addr string, cluster *string, node int32) *kmsg.ApiVersionsResponse {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, wireTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(wireTimeout))
	req := kmsg.NewApiVersionsRequest()
	req.Version = 5
	req.ClientSoftwareName, req.ClientSoftwareVersion = "gregor-tests", "1.0"
	req.ClusterID, req.NodeID = cluster, node
	if _, err := c.Write(sized(reqHeader(18, 5, 77, "v5", true), req.AppendTo(nil))); err != nil {
		t.Fatalf("write ApiVersions: %v", err)
	}
	frame, err := readFrame(c)
	if err != nil {
		t.Fatalf("read ApiVersions response: %v", err)
	}
	if corr := int32(binary.BigEndian.Uint32(frame)); corr != 77 {
		t.Fatalf("correlation id %d, want 77", corr)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 5
	if err := resp.ReadFrom(frame[4:]); err != nil {
		t.Fatalf("decode ApiVersions v5 response: %v", err)
	}
	return resp
}

// TestApiVersionsV5ExpectedBroker: a client stating the cluster and node it
// expects (KIP-1242) is served by that broker and told to bootstrap again
// by any other.
func TestApiVersionsV5ExpectedBroker(t *testing.T) {
	b := startBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := newAdmin(t, b.Addr).BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cluster := md.Cluster
	other := "AAAAAAAAAAAAAAAAAAAAAA"
	for _, c := range []struct {
		name    string
		cluster *string
		node    int32
		want    *kerr.Error
	}{
		{"bootstrapping", nil, -1, nil},
		{"this broker", &cluster, b.Config.NodeID, nil},
		{"another cluster", &other, b.Config.NodeID, kerr.RebootstrapRequired},
		{"another node", &cluster, b.Config.NodeID + 1, kerr.RebootstrapRequired},
		{"cluster without node", &cluster, -1, kerr.InvalidRequest},
		{"node without cluster", nil, b.Config.NodeID, kerr.InvalidRequest},
	} {
		resp := apiVersionsV5(t, b.Addr, c.cluster, c.node)
		if c.want == nil {
			if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
				t.Errorf("%s: error %d, %d keys; want success with the key list", c.name, resp.ErrorCode, len(resp.ApiKeys))
			}
			continue
		}
		if resp.ErrorCode != c.want.Code {
			t.Errorf("%s: error %d, want %d (%s)", c.name, resp.ErrorCode, c.want.Code, c.want.Message)
		}
	}
}
