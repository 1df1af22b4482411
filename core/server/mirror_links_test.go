package server

import (
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gregorbroker/gregor/core/httpapi"
	"github.com/gregorbroker/gregor/mirror"
)

func TestLinkFromStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   mirror.Status
		want httpapi.MirrorLink
	}{
		{"no partitions yet", mirror.Status{Name: "m", Source: "east"},
			httpapi.MirrorLink{Name: "m", Source: "east", State: linkStarting, Topics: []string{}}},
		{"lagging, sorted", mirror.Status{Name: "m", Source: "east", Partitions: []mirror.PartitionStatus{
			{Topic: "b", Partition: 1, Lag: 3, State: mirror.StateMirroring},
			{Topic: "a", Partition: 0, Lag: 0, State: mirror.StateMirroring},
			{Topic: "b", Partition: 0, Lag: 4, State: mirror.StateResuming},
		}}, httpapi.MirrorLink{Name: "m", Source: "east", State: linkRunning, Topics: []string{"a", "b"}, LagRecords: 7,
			PartitionLags: []httpapi.MirrorLag{lag("a", 0, 0, mirror.StateMirroring), lag("b", 0, 4, mirror.StateResuming),
				lag("b", 1, 3, mirror.StateMirroring)}}},
		{"a failed partition", mirror.Status{Name: "m", Source: "east", Partitions: []mirror.PartitionStatus{
			{Topic: "a", Partition: 0, Lag: 2, State: mirror.StateFailing, Error: "source gap",
				FailedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
			{Topic: "a", Partition: 1, State: mirror.StateMirroring},
		}}, httpapi.MirrorLink{Name: "m", Source: "east", State: linkDegraded, Topics: []string{"a"}, LagRecords: 2,
			LastError: "a: source gap", FailingPartitions: 1, PartitionLags: []httpapi.MirrorLag{
				{Topic: "a", Partition: 0, LagRecords: 2, State: mirror.StateFailing, Error: "source gap", FailedAt: "2026-01-02T03:04:05Z"},
				lag("a", 1, 0, mirror.StateMirroring)}}},
		{"a reported loss is not failing", mirror.Status{Name: "m", Source: "east", Partitions: []mirror.PartitionStatus{
			{Topic: "a", Partition: 0, State: mirror.StateMirroring, Error: "skipped", TooLarge: 1},
		}}, httpapi.MirrorLink{Name: "m", Source: "east", State: linkRunning, Topics: []string{"a"}, LastError: "a: skipped",
			PartitionLags: []httpapi.MirrorLag{{Topic: "a", Partition: 0, State: mirror.StateMirroring, Error: "skipped", TooLarge: 1}}}},
		{"session error kept", mirror.Status{Name: "m", Source: "east", LastError: "dial", Partitions: []mirror.PartitionStatus{
			{Topic: "a", Partition: 0, State: mirror.StatePromoted},
		}}, httpapi.MirrorLink{Name: "m", Source: "east", State: linkPromoted, Topics: []string{"a"}, LastError: "dial",
			PartitionLags: []httpapi.MirrorLag{lag("a", 0, 0, mirror.StatePromoted)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := linkFromStatus(tc.st); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func lag(topic string, p int32, n int64, state string) httpapi.MirrorLag {
	return httpapi.MirrorLag{Topic: topic, Partition: p, LagRecords: n, State: state}
}

func TestRecordAges(t *testing.T) {
	reg := prometheus.NewRegistry()
	age := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gregor_mirror_record_age_seconds"}, []string{"mirror", "partition"})
	reg.MustRegister(age)
	age.WithLabelValues("a", "0").Set(0.25)
	age.WithLabelValues("a", "1").Set(1.5)
	age.WithLabelValues("b", "0").Set(0.001)
	got := recordAges(reg)
	if want := map[string]int64{"a": 1500, "b": 1}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ages %v, want %v", got, want)
	}
	if got := recordAges(nil); len(got) != 0 {
		t.Fatalf("nil gatherer: %v", got)
	}
}
