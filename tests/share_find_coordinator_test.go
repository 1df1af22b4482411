package tests

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/share"
)

func findShare(t *testing.T, cl kmsg.Requestor, version int16, keys ...string) *kmsg.FindCoordinatorResponse {
	t.Helper()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorType, req.CoordinatorKeys = version, 2, keys
	if len(keys) > 0 {
		req.CoordinatorKey = keys[0]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("FindCoordinator v%d: %v", version, err)
	}
	return resp
}

// FindCoordinator key type SHARE (2) in a 3-node cluster, as Kafka 4.4
// serves it: every broker answers a "groupId:topicId:partition" key with
// the leader of the __share_group_state partition of the Java hash of the
// key (the topic id in Kafka's base64 form), creating the topic on first
// use; versions before 6 and malformed keys are INVALID_REQUEST.
func TestFindShareCoordinator(t *testing.T) {
	nodes := startCluster(t, 3, shareConfig)
	var seeds []string
	for _, nd := range nodes {
		seeds = append(seeds, nd.addr)
	}
	cl := newShareClient(t, seeds[0], kgo.SeedBrokers(seeds...))
	adm := kadm.NewClient(cl)
	topic := "share-find-coordinator"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 2, 3, nil, topic); err != nil {
		t.Fatal(err)
	}
	var id [16]byte
	eventually(t, 30*time.Second, "the topic id", func() error {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return err
		}
		if err := md.Topics[topic].Err; err != nil {
			return err
		}
		id = md.Topics[topic].ID
		return nil
	})
	var keys []string
	for i := 0; i < 12; i++ {
		keys = append(keys, fmt.Sprintf("sg-find-%d:%s:%d", i, base64.RawURLEncoding.EncodeToString(id[:]), i%2))
	}

	eventually(t, 60*time.Second, "every broker names the state partition leaders", func() error {
		md, err := adm.Metadata(ctx, share.StateTopic)
		if err != nil {
			return err
		}
		parts := md.Topics[share.StateTopic].Partitions
		if len(parts) == 0 {
			// The first lookup creates the topic.
			findShare(t, cl, 6, keys...)
			return fmt.Errorf("no %s partitions yet", share.StateTopic)
		}
		for nid := range nodes {
			resp := findShare(t, cl.Broker(int(nid)), 6, keys...)
			if len(resp.Coordinators) != len(keys) {
				return fmt.Errorf("broker %d: %d coordinators for %d keys", nid, len(resp.Coordinators), len(keys))
			}
			for i, c := range resp.Coordinators {
				if c.Key != keys[i] {
					return fmt.Errorf("broker %d: key %q answered as %q", nid, keys[i], c.Key)
				}
				want := parts[group.PartitionFor(keys[i], int32(len(parts)))].Leader
				if err := kerr.ErrorForCode(c.ErrorCode); err != nil || c.NodeID != want || want < 0 {
					return fmt.Errorf("broker %d: %s -> node %d (%v), want the leader %d", nid, keys[i], c.NodeID, err, want)
				}
				if c.Host != "127.0.0.1" || c.Port <= 0 || fmt.Sprintf("%s:%d", c.Host, c.Port) != nodes[want].addr {
					return fmt.Errorf("broker %d: %s at %s:%d, want %s", nid, keys[i], c.Host, c.Port, nodes[want].addr)
				}
			}
		}
		return nil
	})

	// Before v6 the key type is not known; v3 answers at the top level.
	pinned := func(v int16) *kgo.Client {
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(10, v)
		return newShareClient(t, seeds[0], kgo.MaxVersions(vs))
	}
	if c := findShare(t, pinned(5), 5, keys[0]).Coordinators; len(c) != 1 || c[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("v5: %+v, want INVALID_REQUEST", c)
	}
	if r := findShare(t, pinned(3), 3, keys[0]); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("v3: %v, want INVALID_REQUEST", kerr.ErrorForCode(r.ErrorCode))
	}
	bad := []string{"", "sg-find", "sg-find:" + base64.RawURLEncoding.EncodeToString(id[:]), "sg-find:nope:0",
		"sg-find:" + base64.RawURLEncoding.EncodeToString(id[:]) + ":x", " :" + base64.RawURLEncoding.EncodeToString(id[:]) + ":0"}
	// The answers may come in any order: each is matched by its key.
	resp := findShare(t, cl, 6, bad...)
	if len(resp.Coordinators) != len(bad) {
		t.Fatalf("%d answers for %d keys", len(resp.Coordinators), len(bad))
	}
	answered := make(map[string]bool)
	for _, c := range resp.Coordinators {
		if c.ErrorCode != kerr.InvalidRequest.Code || c.NodeID != -1 {
			t.Fatalf("key %q: node %d %v, want INVALID_REQUEST", c.Key, c.NodeID, kerr.ErrorForCode(c.ErrorCode))
		}
		answered[c.Key] = true
	}
	for _, k := range bad {
		if !answered[k] {
			t.Fatalf("key %q not answered", k)
		}
	}
}
