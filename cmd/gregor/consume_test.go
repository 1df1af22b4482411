package main

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestParseFrom(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want kgo.Offset
	}{
		{"beginning", kgo.NewOffset().AtStart()},
		{"earliest", kgo.NewOffset().AtStart()},
		{"END", kgo.NewOffset().AtEnd()},
		{"latest", kgo.NewOffset().AtEnd()},
		{"0", kgo.NewOffset().At(0)},
		{"1200", kgo.NewOffset().At(1200)},
		{"-10", kgo.NewOffset().AtEnd().Relative(-10)},
		{"-15m", kgo.NewOffset().AfterMilli(now.Add(-15 * time.Minute).UnixMilli())},
		{"-1h30m", kgo.NewOffset().AfterMilli(now.Add(-90 * time.Minute).UnixMilli())},
		{"@1714564800000", kgo.NewOffset().AfterMilli(1714564800000)},
		{"2024-05-01T12:00:00Z", kgo.NewOffset().AfterMilli(1714564800000)},
		{"2024-05-01T14:00:00.250+02:00", kgo.NewOffset().AfterMilli(1714564800250)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseFrom(tt.in, now)
			if err != nil {
				t.Fatalf("parseFrom(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("parseFrom(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseFromErrors(t *testing.T) {
	for _, in := range []string{"", "soon", "@", "@-5", "@x", "-", "-abc", "--5", "1969-12-31T23:59:59Z", "2024-05-01", "12e3"} {
		t.Run(in, func(t *testing.T) {
			_, err := parseFrom(in, time.Unix(0, 0))
			if err == nil {
				t.Fatalf("parseFrom(%q) succeeded", in)
			}
			var ue usageError
			if !errors.As(err, &ue) {
				t.Errorf("error %v is not a usage error", err)
			}
		})
	}
}
