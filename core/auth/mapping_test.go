package auth

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"
)

func TestMappingRules(t *testing.T) {
	// The rules from Kafka's documentation of ssl.principal.mapping.rules.
	rules := `RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L,DEFAULT`
	m, err := ParseMappingRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dn, want string }{
		{"CN=serviceuser,OU=ServiceUsers,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "serviceuser"},
		{"CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "adminuser@admin"},
		{"CN=kafka1.Example.com,O=x", "kafka1.example.com"},
		{"O=NoCommonName", "O=NoCommonName"},
	} {
		got, err := m.Map(tc.dn)
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.dn, got, err, tc.want)
		}
	}
	upper, err := ParseMappingRules(`RULE:^CN=([^,]*).*$/$1/U`)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := upper.Map("CN=bob,O=x"); got != "BOB" {
		t.Errorf("upper: %q", got)
	}
	if _, err := upper.Map("O=x"); err == nil {
		t.Error("no rule matched, yet a name came back")
	}
	escaped, err := ParseMappingRules(`RULE:^CN=([^,]*),O=a\/b$/$1-ab/`)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := escaped.Map("CN=x,O=a/b"); got != "x-ab" {
		t.Errorf("escaped slash: %q", got)
	}
	for _, bad := range []string{"RULE:abc", "RULE:(/x/", "NOPE", "DEFAULT DEFAULT"} {
		if _, err := ParseMappingRules(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestTLSPrincipal(t *testing.T) {
	m, err := ParseMappingRules("")
	if err != nil {
		t.Fatal(err)
	}
	cert := &x509.Certificate{Subject: pkix.Name{CommonName: "alice", Organization: []string{"Example"}}}
	got, err := m.TLSPrincipal(&tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}})
	if err != nil || got != "User:CN=alice,O=Example" {
		t.Fatalf("got %q, %v", got, err)
	}
	if got, _ := m.TLSPrincipal(&tls.ConnectionState{}); got != "User:ANONYMOUS" {
		t.Fatalf("no certificate: %q", got)
	}
}
