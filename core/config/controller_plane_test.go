package config

import (
	"strings"
	"testing"
)

func TestControllerListenerProtocol(t *testing.T) {
	node := func(addr string) string {
		return "node_id = 1\n[listeners]\ncontroller = \"" + addr + "\"\n"
	}
	const voters = "[cluster]\nvoters = [\"1@10.0.0.1:9093\"]\n"
	const acl = "[security]\nauthorizer = \"acl\"\nsuper_users = [\"User:broker\", \"User:CN=broker\"]\n"
	const tlsFiles = "tls_cert_file = \"c.pem\"\ntls_key_file = \"k.pem\"\ntls_ca_file = \"ca.pem\"\n"
	const creds = "inter_broker_sasl_mechanism = \"SCRAM-SHA-512\"\ninter_broker_sasl_username = \"broker\"\ninter_broker_sasl_password = \"pw\"\n"
	for _, tc := range []struct{ name, toml, wantErr string }{
		{"default PLAINTEXT, single node", "", ""},
		{"unknown protocol", "[cluster]\ncontroller_listener_protocol = \"TLS\"\n",
			"invalid cluster.controller_listener_protocol: \"TLS\" is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"},
		{"multi-node, wildcard, authorizer, PLAINTEXT", node("0.0.0.0:9093") + voters + acl,
			"invalid cluster.controller_listener_protocol: PLAINTEXT on listeners.controller 0.0.0.0:9093"},
		{"multi-node, routable address, authorizer, PLAINTEXT", node("10.0.0.1:9093") + voters + acl,
			"invalid cluster.controller_listener_protocol"},
		{"insecure allowed explicitly", node("0.0.0.0:9093") + voters + "allow_insecure_controller = true\n" + acl, ""},
		{"loopback only", node("127.0.0.1:9093") + voters + acl, ""},
		{"no authorizer", node("0.0.0.0:9093") + voters, ""},
		{"SSL with the TLS files", node("0.0.0.0:9093") + voters + "controller_listener_protocol = \"SSL\"\n" + acl + tlsFiles, ""},
		{"SSL without a CA", node("0.0.0.0:9093") + voters + "controller_listener_protocol = \"SSL\"\n" + acl + "tls_cert_file = \"c.pem\"\ntls_key_file = \"k.pem\"\n",
			"invalid security.tls_ca_file: controller_listener_protocol SSL needs a CA"},
		{"SSL without super users", node("0.0.0.0:9093") + voters + "controller_listener_protocol = \"SSL\"\n[security]\n" + tlsFiles,
			"invalid security.super_users: controller_listener_protocol SSL accepts only super users"},
		{"SASL_PLAINTEXT with credentials", node("0.0.0.0:9093") + voters + "controller_listener_protocol = \"SASL_PLAINTEXT\"\n" + creds + acl, ""},
		{"SASL_SSL with credentials", node("0.0.0.0:9093") + voters + "controller_listener_protocol = \"SASL_SSL\"\n" + creds + acl + tlsFiles, ""},
		{"SASL without credentials", node("0.0.0.0:9093") + voters + "controller_listener_protocol = \"SASL_PLAINTEXT\"\n" + acl,
			"invalid cluster.inter_broker_sasl_mechanism: controller_listener_protocol SASL_PLAINTEXT needs PLAIN"},
		{"SASL user not a super user", node("0.0.0.0:9093") + voters + "controller_listener_protocol = \"SASL_PLAINTEXT\"\n" +
			strings.Replace(creds, "\"broker\"", "\"other\"", 1) + acl,
			"invalid security.super_users: controller_listener_protocol SASL_PLAINTEXT accepts super users only: add User:other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.toml)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
