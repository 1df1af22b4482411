package server

import (
	"reflect"
	"testing"

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
			PartitionLags: []httpapi.MirrorLag{lag("a", 0, 0), lag("b", 0, 4), lag("b", 1, 3)}}},
		{"a failed partition", mirror.Status{Name: "m", Source: "east", Partitions: []mirror.PartitionStatus{
			{Topic: "a", Partition: 0, Lag: 2, State: mirror.StateStopped, Error: "source gap"},
			{Topic: "a", Partition: 1, State: mirror.StateMirroring},
		}}, httpapi.MirrorLink{Name: "m", Source: "east", State: linkDegraded, Topics: []string{"a"}, LagRecords: 2,
			LastError: "a: source gap", PartitionLags: []httpapi.MirrorLag{lag("a", 0, 2), lag("a", 1, 0)}}},
		{"session error kept", mirror.Status{Name: "m", Source: "east", LastError: "dial", Partitions: []mirror.PartitionStatus{
			{Topic: "a", Partition: 0, State: mirror.StatePromoted},
		}}, httpapi.MirrorLink{Name: "m", Source: "east", State: linkPromoted, Topics: []string{"a"}, LastError: "dial",
			PartitionLags: []httpapi.MirrorLag{lag("a", 0, 0)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := linkFromStatus(tc.st); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func lag(topic string, p int32, n int64) httpapi.MirrorLag {
	return httpapi.MirrorLag{Topic: topic, Partition: p, LagRecords: n}
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
