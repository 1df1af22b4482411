package tests

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClientMetricsConfigResources: client-metrics subscriptions (config
// resource type 16) are altered and described like other configs and
// listed by ListConfigResources, as kafka-client-metrics and kafka-configs
// --entity-type client-metrics use them.
func TestClientMetricsConfigResources(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "cm-topic", 1, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	for _, c := range []struct{ name, metrics, interval string }{{"sub-a", "org.apache.kafka.producer.", "1000"}, {"sub-bad", "*", "5"}} {
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeClientMetrics, c.name
		for k, v := range map[string]string{"metrics": c.metrics, "interval.ms": c.interval} {
			rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			rc.Name, rc.Value = k, kmsg.StringPtr(v)
			rr.Configs = append(rr.Configs, rc)
		}
		alter.Resources = append(alter.Resources, rr)
	}
	aresp, err := alter.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if aresp.Resources[0].ErrorCode != 0 || aresp.Resources[1].ErrorCode != kerr.InvalidConfig.Code {
		t.Fatalf("alter: %d, %d; want success, then INVALID_CONFIG for interval.ms=5", aresp.Resources[0].ErrorCode, aresp.Resources[1].ErrorCode)
	}

	desc := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName = kmsg.ConfigResourceTypeClientMetrics, "sub-a"
	desc.Resources = append(desc.Resources, dr)
	dresp, err := desc.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range dresp.Resources[0].Configs {
		got[c.Name] = *c.Value
		if (c.Name == "match") != (c.Source == kmsg.ConfigSourceDefaultConfig) {
			t.Errorf("%s: source %v", c.Name, c.Source)
		}
	}
	if dresp.Resources[0].ErrorCode != 0 || got["metrics"] != "org.apache.kafka.producer." || got["interval.ms"] != "1000" || got["match"] != "" {
		t.Fatalf("describe sub-a: error %d, %v", dresp.Resources[0].ErrorCode, got)
	}

	list := func(types ...int8) []kmsg.ListConfigResourcesResponseConfigResource {
		t.Helper()
		req := kmsg.NewPtrListConfigResourcesRequest()
		req.ResourceTypes = types
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 {
			t.Fatalf("ListConfigResources %v: error %d", types, resp.ErrorCode)
		}
		return resp.ConfigResources
	}
	if l := list(16); len(l) != 1 || l[0].Name != "sub-a" || l[0].Type != 16 {
		t.Fatalf("client-metrics resources: %+v, want only sub-a", l)
	}
	seen := map[int8][]string{}
	for _, r := range list() {
		seen[r.Type] = append(seen[r.Type], r.Name)
	}
	if len(seen[2]) != 1 || seen[2][0] != "cm-topic" || len(seen[4]) != 1 || len(seen[16]) != 1 {
		t.Fatalf("every resource: %v", seen)
	}
	req := kmsg.NewPtrListConfigResourcesRequest()
	req.ResourceTypes = []int8{3}
	if resp, err := req.RequestWith(ctx, cl); err != nil || resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("an unknown resource type: %v, %+v", err, resp)
	}
}
