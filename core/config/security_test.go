package config

import (
	"strings"
	"testing"
)

func TestSecuritySection(t *testing.T) {
	good := `
[listeners]
kafka = "127.0.0.1:9092"
kafka_protocol = "PLAINTEXT"
[[listeners.extra]]
name = "SECURE"
address = "127.0.0.1:9093"
protocol = "SASL_SSL"
advertised = ""
[security]
sasl_mechanisms = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
authorizer = "acl"
super_users = ["User:admin"]
allow_everyone_if_no_acl = false
tls_cert_file = "server.pem"
tls_key_file = "server-key.pem"
tls_ca_file = "ca.pem"
tls_client_auth = "none"
`
	cfg, err := Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	ls := cfg.KafkaListeners()
	if len(ls) != 2 || ls[0].Protocol != "PLAINTEXT" || ls[1].Name != "SECURE" || ls[1].Advertised != "127.0.0.1:9093" {
		t.Fatalf("listeners %+v", ls)
	}
	for _, tc := range []struct{ name, toml, want string }{
		{"bad main protocol", "[listeners]\nkafka_protocol = \"TLS\"", "listeners.kafka_protocol"},
		{"bad extra protocol", "[[listeners.extra]]\nname = \"X\"\naddress = \"127.0.0.1:1\"\nprotocol = \"SASL\"", "listeners.extra[0].protocol"},
		{"lower-case name", "[[listeners.extra]]\nname = \"x\"\naddress = \"127.0.0.1:1\"\nprotocol = \"SSL\"", "listeners.extra[0].name"},
		{"duplicate name", "[[listeners.extra]]\nname = \"PLAINTEXT\"\naddress = \"127.0.0.1:1\"\nprotocol = \"PLAINTEXT\"", "used twice"},
		{"bad address", "[[listeners.extra]]\nname = \"X\"\naddress = \"nope\"\nprotocol = \"PLAINTEXT\"", "listeners.extra[0].address"},
		{"tls without cert", "[listeners]\nkafka_protocol = \"SSL\"", "security.tls_cert_file"},
		{"client auth without CA", "[security]\ntls_client_auth = \"required\"", "security.tls_ca_file"},
		{"bad client auth", "[security]\ntls_client_auth = \"maybe\"", "security.tls_client_auth"},
		{"bad super user", "[security]\nsuper_users = [\"admin\"]", "security.super_users"},
		{"no mechanisms on SASL", "[listeners]\nkafka_protocol = \"SASL_PLAINTEXT\"\n[security]\nsasl_mechanisms = []", "security.sasl_mechanisms"},
		{"duplicate mechanism", "[security]\nsasl_mechanisms = [\"PLAIN\", \"PLAIN\"]", "security.sasl_mechanisms"},
		{"empty authorizer", "[security]\nauthorizer = \"\"", "security.authorizer"},
		{"negative lifetime", "[security]\nsession_lifetime_ms = -1", "security.session_lifetime_ms"},
		{"unknown key", "[security]\nsasl_mechanism = []", "unknown key security.sasl_mechanism"},
		{"per-ip limit", "[limits]\nmax_connections_per_ip = -1", "limits.max_connections_per_ip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.toml)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}
