package config

import (
	"strings"
	"testing"
)

func TestInterBrokerListener(t *testing.T) {
	const multi = "node_id = 1\n[listeners]\ncontroller = \"127.0.0.1:9093\"\n"
	const voters = "voters = [\"1@127.0.0.1:9093\"]\n"
	const secure = "[[listeners.extra]]\nname = \"SECURE\"\naddress = \"127.0.0.1:9094\"\nprotocol = \"SASL_SSL\"\n"
	const tlsFiles = "[security]\ntls_cert_file = \"c.pem\"\ntls_key_file = \"k.pem\"\n"
	const creds = "inter_broker_sasl_mechanism = \"SCRAM-SHA-512\"\ninter_broker_sasl_username = \"broker\"\ninter_broker_sasl_password = \"pw\"\n"
	for _, tc := range []struct {
		name, toml, wantErr string
		wantName, wantProto string
	}{
		{"default is the primary listener", "", "", "PLAINTEXT", "PLAINTEXT"},
		{"primary named by its protocol", "[listeners]\nkafka_protocol = \"SASL_PLAINTEXT\"\n[cluster]\ninter_broker_listener = \"SASL_PLAINTEXT\"\n" + creds,
			"", "SASL_PLAINTEXT", "SASL_PLAINTEXT"},
		{"extra listener, multi-node, SASL_SSL with everything", multi + secure + tlsFiles + "tls_ca_file = \"ca.pem\"\n[cluster]\n" + voters +
			"inter_broker_listener = \"SECURE\"\n" + creds, "", "SECURE", "SASL_SSL"},
		{"unknown listener", "[cluster]\ninter_broker_listener = \"NOPE\"", "invalid cluster.inter_broker_listener: no listener is named \"NOPE\" (listeners: PLAINTEXT)", "", ""},
		{"bad mechanism", "[listeners]\nkafka_protocol = \"SASL_PLAINTEXT\"\n[cluster]\ninter_broker_sasl_mechanism = \"GSSAPI\"",
			"invalid cluster.inter_broker_sasl_mechanism: \"GSSAPI\"", "", ""},
		{"credentials on a plaintext listener", "[cluster]\n" + creds, "invalid cluster.inter_broker_sasl_mechanism: the inter-broker listener PLAINTEXT is PLAINTEXT, not SASL", "", ""},
		{"mechanism without user", "[listeners]\nkafka_protocol = \"SASL_PLAINTEXT\"\n[cluster]\ninter_broker_sasl_mechanism = \"PLAIN\"\ninter_broker_sasl_password = \"pw\"",
			"invalid cluster.inter_broker_sasl_username", "", ""},
		{"user without mechanism", "[listeners]\nkafka_protocol = \"SASL_PLAINTEXT\"\n[cluster]\ninter_broker_sasl_username = \"u\"\ninter_broker_sasl_password = \"pw\"",
			"invalid cluster.inter_broker_sasl_mechanism: must be set", "", ""},
		{"mechanism without password", "[listeners]\nkafka_protocol = \"SASL_PLAINTEXT\"\n[cluster]\ninter_broker_sasl_mechanism = \"PLAIN\"\ninter_broker_sasl_username = \"u\"",
			"invalid cluster.inter_broker_sasl_password", "", ""},
		{"mechanism the listeners do not offer", "[listeners]\nkafka_protocol = \"SASL_PLAINTEXT\"\n[security]\nsasl_mechanisms = [\"PLAIN\"]\n[cluster]\n" + creds,
			"invalid cluster.inter_broker_sasl_mechanism: SCRAM-SHA-512 is not offered", "", ""},
		{"single node SASL listener needs no credentials", "[listeners]\nkafka_protocol = \"SASL_PLAINTEXT\"", "", "SASL_PLAINTEXT", "SASL_PLAINTEXT"},
		{"multi-node SASL listener without credentials", multi + "kafka_protocol = \"SASL_PLAINTEXT\"\n[cluster]\n" + voters,
			"invalid cluster.inter_broker_sasl_mechanism: the inter-broker listener SASL_PLAINTEXT is SASL_PLAINTEXT: followers need", "", ""},
		{"multi-node TLS listener without a CA", multi + secure + tlsFiles + "[cluster]\n" + voters + "inter_broker_listener = \"SECURE\"\n" + creds,
			"invalid security.tls_ca_file: the inter-broker listener SECURE is SASL_SSL", "", ""},
		{"multi-node SASL inter-broker user not among the super users, no authorizer", multi + secure + tlsFiles + "tls_ca_file = \"ca.pem\"\nsuper_users = [\"User:admin\"]\n[cluster]\n" + voters +
			"inter_broker_listener = \"SECURE\"\n" + creds, "invalid security.super_users: the inter-broker listener SECURE is SASL_SSL: followers fetch as User:broker", "", ""},
		{"multi-node SASL inter-broker user among the super users", multi + secure + tlsFiles + "tls_ca_file = \"ca.pem\"\nsuper_users = [\"User:admin\", \"User:broker\"]\n[cluster]\n" + voters +
			"inter_broker_listener = \"SECURE\"\n" + creds, "", "SECURE", "SASL_SSL"},
		{"multi-node SASL inter-broker user granted by the authorizer", multi + secure + tlsFiles + "tls_ca_file = \"ca.pem\"\nsuper_users = [\"User:admin\"]\nauthorizer = \"acl\"\n[cluster]\n" + voters +
			"inter_broker_listener = \"SECURE\"\n" + creds, "", "SECURE", "SASL_SSL"},
		{"multi-node plaintext inter-broker listener beside a secure one", multi + secure + tlsFiles + "[cluster]\n" + voters, "", "PLAINTEXT", "PLAINTEXT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse(tc.toml)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			l, ok := cfg.InterBrokerListener()
			if !ok || l.Name != tc.wantName || l.Protocol != tc.wantProto {
				t.Fatalf("inter-broker listener %+v (ok %v), want %s/%s", l, ok, tc.wantName, tc.wantProto)
			}
		})
	}
}
