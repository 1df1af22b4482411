package config

import (
	"errors"
	"slices"
	"testing"
)

func TestParseThrottledReplicas(t *testing.T) {
	tests := []struct {
		in      string
		all     bool
		want    []ThrottledReplica
		invalid bool
	}{
		{in: ""},
		{in: "*", all: true},
		{in: " * ", all: true},
		{in: "*,", all: true},
		{in: "0:1", want: []ThrottledReplica{{0, 1}}},
		{in: " 0:1 , 2:3,,", want: []ThrottledReplica{{0, 1}, {2, 3}}},
		{in: "0:1,*", invalid: true},
		{in: "*,*", invalid: true},
		{in: "0", invalid: true},
		{in: "0:", invalid: true},
		{in: ":1", invalid: true},
		{in: "-1:1", invalid: true},
		{in: "0:+1", invalid: true},
		{in: "0 : 1", invalid: true},
		{in: "a:1", invalid: true},
		{in: "0:1:2", invalid: true},
		{in: "0:99999999999", invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseThrottledReplicas(tt.in)
			if tt.invalid {
				if err == nil {
					t.Fatalf("accepted %q as %+v", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.All != tt.all || !slices.Equal(got.Replicas, tt.want) {
				t.Fatalf("got %+v, want all=%v %v", got, tt.all, tt.want)
			}
		})
	}
}

func TestThrottledReplicasOnBroker(t *testing.T) {
	r, err := ParseThrottledReplicas("0:1,1:2,2:1")
	if err != nil {
		t.Fatal(err)
	}
	if ps, all := r.OnBroker(1); all || !slices.Equal(ps, []int32{0, 2}) {
		t.Fatalf("broker 1: %v %v, want [0 2]", ps, all)
	}
	if ps, all := r.OnBroker(3); all || len(ps) != 0 {
		t.Fatalf("broker 3: %v %v, want none", ps, all)
	}
	if _, all := (ThrottledReplicas{All: true}).OnBroker(7); !all {
		t.Fatal("the wildcard does not cover broker 7")
	}
}

func TestThrottleConfigs(t *testing.T) {
	for _, name := range []string{LeaderReplicationThrottledReplicas, FollowerReplicationThrottledReplicas} {
		if err := ValidateTopicConfigs(map[string]string{name: "0:1,1:2"}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := ValidateTopicConfigs(map[string]string{name: "0-1"}); !errors.Is(err, ErrInvalidTopicConfig) {
			t.Errorf("%s=0-1: %v, want ErrInvalidTopicConfig", name, err)
		}
	}
	for _, name := range []string{LeaderReplicationThrottledRate, FollowerReplicationThrottledRate} {
		d, ok := LookupDynamicBrokerConfig(name)
		if !ok {
			t.Fatalf("%s is not a dynamic broker config", name)
		}
		if d.BrokerDefault(nil) != "9223372036854775807" || d.Type != TypeLong {
			t.Errorf("%s: default %s type %s, want Long.MAX_VALUE, long", name, d.BrokerDefault(nil), d.Type)
		}
		for v, ok := range map[string]bool{"0": true, "102400": true, "-1": false, "1k": false} {
			if err := d.Validate(v); (err == nil) != ok {
				t.Errorf("%s=%s: %v", name, v, err)
			}
		}
	}
	if _, ok := LookupDynamicBrokerConfig("log.retention.ms"); ok {
		t.Error("log.retention.ms is listed as dynamic")
	}
}
