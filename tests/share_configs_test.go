package tests

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupConfigsOf describes a group's configs (DescribeConfigs, resource
// type 32) and returns values and sources by name.
func groupConfigsOf(t *testing.T, cl *kgo.Client, group string) (map[string]string, map[string]kmsg.ConfigSource) {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	req.Resources = append(req.Resources, rr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("DescribeConfigs: %v", err)
	}
	res := resp.Resources[0]
	if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
		t.Fatalf("DescribeConfigs group %s: %v (%v)", group, err, res.ErrorMessage)
	}
	vals, srcs := map[string]string{}, map[string]kmsg.ConfigSource{}
	for _, c := range res.Configs {
		if c.Value != nil {
			vals[c.Name] = *c.Value
		}
		srcs[c.Name] = c.Source
	}
	return vals, srcs
}

// alterGroupConfig sets (value non-nil) or deletes one group config and
// returns the resource's error.
func alterGroupConfig(t *testing.T, cl *kgo.Client, group, name string, value *string) error {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value, c.Op = name, value, kmsg.IncrementalAlterConfigOpSet
	if value == nil {
		c.Op = kmsg.IncrementalAlterConfigOpDelete
	}
	rr.Configs = append(rr.Configs, c)
	req.Resources = append(req.Resources, rr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("IncrementalAlterConfigs: %v", err)
	}
	return kerr.ErrorForCode(resp.Resources[0].ErrorCode)
}

// The GROUP config resource: every config of Kafka 4.4's GroupConfig with
// the broker's settings as defaults, changes validated against the
// broker's min/max, kept in the metadata log.
func TestGroupConfigsDescribeAlter(t *testing.T) {
	b := startBroker(t)
	cl := newShareClient(t, b.Addr)
	vals, srcs := groupConfigsOf(t, cl, "g-cfg")
	for name, want := range map[string]string{
		"consumer.session.timeout.ms":      "45000",
		"consumer.heartbeat.interval.ms":   "5000",
		"share.session.timeout.ms":         "45000",
		"share.heartbeat.interval.ms":      "5000",
		"share.record.lock.duration.ms":    "30000",
		"share.delivery.count.limit":       "5",
		"share.partition.max.record.locks": "2000",
		"share.auto.offset.reset":          "latest",
		"share.isolation.level":            "read_uncommitted",
		"streams.session.timeout.ms":       "45000",
	} {
		if vals[name] != want || srcs[name] != kmsg.ConfigSourceDefaultConfig {
			t.Errorf("%s = %q (source %v), want %q DEFAULT_CONFIG", name, vals[name], srcs[name], want)
		}
	}
	set := func(v string) *string { return &v }
	for _, ok := range []struct{ name, value string }{
		{"share.isolation.level", "read_committed"},
		{"share.auto.offset.reset", "earliest"},
		{"share.record.lock.duration.ms", "15000"},
		{"consumer.session.timeout.ms", "50000"},
	} {
		if err := alterGroupConfig(t, cl, "g-cfg", ok.name, set(ok.value)); err != nil {
			t.Fatalf("set %s=%s: %v", ok.name, ok.value, err)
		}
	}
	for _, bad := range []struct{ name, value string }{
		{"share.isolation.level", "serializable"},
		{"share.record.lock.duration.ms", "14999"}, // below group.share.min.record.lock.duration.ms
		{"share.delivery.count.limit", "11"},       // above group.share.max.delivery.count.limit
		{"consumer.heartbeat.interval.ms", "16000"},
		{"share.auto.offset.reset", "yesterday"},
		{"no.such.config", "1"},
	} {
		if err := alterGroupConfig(t, cl, "g-cfg", bad.name, set(bad.value)); err != kerr.InvalidConfig {
			t.Errorf("set %s=%s: %v, want INVALID_CONFIG", bad.name, bad.value, err)
		}
	}
	vals, srcs = groupConfigsOf(t, cl, "g-cfg")
	if vals["share.isolation.level"] != "read_committed" || srcs["share.isolation.level"] != kmsg.ConfigSourceGroupConfig ||
		vals["share.record.lock.duration.ms"] != "15000" || vals["consumer.session.timeout.ms"] != "50000" {
		t.Fatalf("after alter: %v %v", vals, srcs)
	}
	if err := alterGroupConfig(t, cl, "g-cfg", "share.isolation.level", nil); err != nil {
		t.Fatal(err)
	}
	vals, srcs = groupConfigsOf(t, cl, "g-cfg")
	if vals["share.isolation.level"] != "read_uncommitted" || srcs["share.isolation.level"] != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("after delete: %q %v", vals["share.isolation.level"], srcs["share.isolation.level"])
	}
}

func newShareClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}
