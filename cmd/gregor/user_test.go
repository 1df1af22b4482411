package main

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

func TestParseScramMechanisms(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		want    []kadm.ScramMechanism
		wantErr bool
	}{
		{nil, []kadm.ScramMechanism{kadm.ScramSha256, kadm.ScramSha512}, false},
		{[]string{"scram-sha-512"}, []kadm.ScramMechanism{kadm.ScramSha512}, false},
		{[]string{"SCRAM-SHA-256", "SCRAM-SHA-256"}, []kadm.ScramMechanism{kadm.ScramSha256}, false},
		{[]string{"PLAIN"}, nil, true},
	} {
		got, err := parseScramMechanisms(tc.in)
		if (err != nil) != tc.wantErr || len(got) != len(tc.want) {
			t.Errorf("%v = %v, %v", tc.in, got, err)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%v = %v", tc.in, got)
			}
		}
	}
}

func TestReadPassword(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fromStdin bool
		flag      string
		stdin     string
		want      string
		wantErr   string
	}{
		{"flag", false, "pw", "", "pw", ""},
		{"stdin first line", true, "", "s3cret\nignored\n", "s3cret", ""},
		{"stdin without newline", true, "", "s3cret", "s3cret", ""},
		{"stdin crlf", true, "", "s3cret\r\n", "s3cret", ""},
		{"both", true, "pw", "x\n", "", "exclude"},
		{"none", false, "", "", "", "no password"},
		{"empty stdin", true, "", "", "", "no password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readPassword(tc.fromStdin, tc.flag, strings.NewReader(tc.stdin))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestSecurityFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		f       securityFlags
		opts    int
		wantErr string
	}{
		{"nothing", securityFlags{}, 0, ""},
		{"tls", securityFlags{tls: true}, 1, ""},
		{"sasl", securityFlags{saslMechanism: "scram-sha-256", saslUser: "a", saslPassword: "p"}, 1, ""},
		{"sasl over tls", securityFlags{tls: true, saslMechanism: "PLAIN", saslUser: "a"}, 2, ""},
		{"user without mechanism", securityFlags{saslUser: "a"}, 0, "--sasl-mechanism"},
		{"mechanism without user", securityFlags{saslMechanism: "PLAIN"}, 0, "--sasl-user"},
		{"unknown mechanism", securityFlags{saslMechanism: "GSSAPI", saslUser: "a"}, 0, "unknown --sasl-mechanism"},
		{"cert without key", securityFlags{tlsCert: "c.pem"}, 0, "go together"},
		{"missing ca file", securityFlags{tlsCA: "/nonexistent/ca.pem"}, 0, "--tls-ca"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := tc.f.opts()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(opts) != tc.opts {
				t.Fatalf("%d options, %v; want %d", len(opts), err, tc.opts)
			}
		})
	}
}
