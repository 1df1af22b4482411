package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestNextStep(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string // "" for no advice
	}{
		{"unreachable", &connectError{"cannot reach broker at x:1: refused", errors.New("refused")}, "--bootstrap (or GREGOR_BOOTSTRAP)"},
		{"sasl refused", fmt.Errorf("authentication failed at x:1: %w", kerr.SaslAuthenticationFailed), "--sasl-user and --sasl-password"},
		{"sasl mechanism", kerr.UnsupportedSaslMechanism, "--sasl-mechanism"},
		{"unknown CA", &connectError{"cannot reach", x509.UnknownAuthorityError{}}, "--tls-ca"},
		{"not TLS", &connectError{"cannot reach", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}, "does not speak TLS"},
		{"topic ACL", explain(kerr.TopicAuthorizationFailed, "topic %q: not authorized", "t"), "gregor acl add"},
		{"group ACL", fmt.Errorf("describe: %w", kerr.GroupAuthorizationFailed), "gregor acl list"},
		{"cluster ACL", kerr.ClusterAuthorizationFailed, "lacks an ACL"},
		{"unknown group", groupError("g", kerr.GroupIDNotFound), "gregor group list"},
		{"unknown topic says enough", topicError("t", kerr.UnknownTopicOrPartition, ""), ""},
		{"other", errors.New("boom"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nextStep(tt.err)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("nextStep = %q, want one containing %q", got, tt.want)
			}
		})
	}
}

func TestIsUsageError(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{usagef("--output %q: want table, json or yaml", "xml"), true},
		{fmt.Errorf("wrapped: %w", usagef("x")), true},
		{errors.New(`unknown command "x" for "gregor"`), true},
		{errors.New("unknown shorthand flag: 'z' in -z"), true},
		{errors.New("accepts 1 arg(s), received 2"), true},
		{errors.New("requires at least 1 arg(s), only received 0"), true},
		{errors.New(`required flag(s) "config" not set`), true},
		{errors.New("cannot reach broker at 127.0.0.1:1"), false},
		{kerr.UnknownTopicOrPartition, false},
	}
	for _, tt := range tests {
		if got := isUsageError(tt.err); got != tt.want {
			t.Errorf("isUsageError(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
