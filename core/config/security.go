package config

import (
	"fmt"
	"net"
	"strings"
)

// ExtraListener is one more Kafka listener (Kafka's listeners list).
type ExtraListener struct {
	// Name is the listener's name, upper case ("SECURE").
	Name string `toml:"name"`
	// Address is the host:port to bind.
	Address string `toml:"address"`
	// Protocol is PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.
	Protocol string `toml:"protocol"`
	// Advertised is the host:port clients are told; empty means Address.
	Advertised string `toml:"advertised"`
}

// Security configures authentication, authorization and TLS for every
// listener.
type Security struct {
	// SASLMechanisms are offered on SASL listeners: PLAIN, SCRAM-SHA-256,
	// SCRAM-SHA-512, OAUTHBEARER, or a mechanism of an extension.
	SASLMechanisms []string `toml:"sasl_mechanisms"`
	// Authorizer is "none" (everything allowed), "acl" (Kafka's ACLs) or
	// the name of an authorizer extension.
	Authorizer string `toml:"authorizer"`
	// SuperUsers bypass ACLs ("User:admin"); Kafka's super.users. They
	// are the only peers a secured controller listener admits and, without
	// an authorizer, the only principals whose follower fetches an
	// authenticating inter-broker listener answers (when any are listed).
	SuperUsers []string `toml:"super_users"`
	// AllowEveryoneIfNoACL opens resources that have no ACLs at all;
	// Kafka's allow.everyone.if.no.acl.found.
	AllowEveryoneIfNoACL bool `toml:"allow_everyone_if_no_acl"`
	// TLS files in PEM. The CA verifies client certificates.
	TLSCertFile string `toml:"tls_cert_file"`
	TLSKeyFile  string `toml:"tls_key_file"`
	TLSCAFile   string `toml:"tls_ca_file"`
	// TLSClientAuth is none, requested or required (ssl.client.auth).
	TLSClientAuth string `toml:"tls_client_auth"`
	// PrincipalMappingRules map certificate subjects to principals, with
	// the syntax of Kafka's ssl.principal.mapping.rules.
	PrincipalMappingRules string `toml:"principal_mapping_rules"`
	// SessionLifetimeMs bounds an authenticated SASL session before the
	// client must re-authenticate (KIP-368, connections.max.reauth.ms);
	// 0 means sessions do not expire.
	SessionLifetimeMs int64 `toml:"session_lifetime_ms"`
	// FailedAuthDelayMs delays the answer to a failed authentication
	// (connection.failed.authentication.delay.ms).
	FailedAuthDelayMs int64 `toml:"failed_auth_delay_ms"`
	// IdleMs closes connections idle this long (connections.max.idle.ms).
	IdleMs int64 `toml:"connections_max_idle_ms"`
	// OAUTHBEARER: PEM public keys that sign accepted JWTs (the key id is
	// the file's base name without extension), expected issuer and
	// audience, the claim naming the principal, and whether unsecured
	// (alg "none") tokens are accepted; only ever for tests.
	OAuthPublicKeyFiles []string `toml:"oauth_public_key_files"`
	OAuthIssuer         string   `toml:"oauth_issuer"`
	OAuthAudience       string   `toml:"oauth_audience"`
	OAuthSubClaim       string   `toml:"oauth_sub_claim"`
	OAuthAllowUnsecured bool     `toml:"oauth_allow_unsecured"`
}

// Security protocols and client-auth modes.
const (
	ProtocolPlaintext     = "PLAINTEXT"
	ProtocolSSL           = "SSL"
	ProtocolSASLPlaintext = "SASL_PLAINTEXT"
	ProtocolSASLSSL       = "SASL_SSL"
)

func defaultSecurity() Security {
	return Security{
		SASLMechanisms:    []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"},
		Authorizer:        "none",
		TLSClientAuth:     "none",
		FailedAuthDelayMs: 100,
		IdleMs:            600000,
	}
}

// ListenerSpec is one Kafka listener after defaults are applied.
type ListenerSpec struct {
	Name       string
	Address    string
	Protocol   string
	Advertised string
}

// KafkaListeners lists every Kafka listener: the main one (named after its
// protocol, as Kafka names its default listener) and the extra ones.
func (c *Config) KafkaListeners() []ListenerSpec {
	proto := c.Listeners.KafkaProtocol
	if proto == "" {
		proto = ProtocolPlaintext
	}
	out := []ListenerSpec{{Name: proto, Address: c.Listeners.Kafka, Protocol: proto, Advertised: c.AdvertisedKafka()}}
	for _, e := range c.Listeners.Extra {
		adv := e.Advertised
		if adv == "" {
			adv = e.Address
		}
		out = append(out, ListenerSpec{Name: e.Name, Address: e.Address, Protocol: e.Protocol, Advertised: adv})
	}
	return out
}

func validProtocol(p string) bool {
	switch p {
	case ProtocolPlaintext, ProtocolSSL, ProtocolSASLPlaintext, ProtocolSASLSSL:
		return true
	}
	return false
}

func (c *Config) validateSecurity(bad func(key, format string, args ...any) error) error {
	if p := c.Listeners.KafkaProtocol; p != "" && !validProtocol(p) {
		return bad("listeners.kafka_protocol", "%q is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", p)
	}
	names := map[string]bool{}
	needTLS, needSASL := false, false
	for i, l := range c.KafkaListeners() {
		key := fmt.Sprintf("listeners.extra[%d]", i-1)
		if i > 0 {
			if l.Name == "" || strings.ToUpper(l.Name) != l.Name || strings.ContainsAny(l.Name, " :,") {
				return bad(key+".name", "%q must be upper case without spaces, colons or commas", l.Name)
			}
			if _, _, err := net.SplitHostPort(l.Address); err != nil {
				return bad(key+".address", "%q: %v", l.Address, err)
			}
			if _, _, err := net.SplitHostPort(l.Advertised); err != nil {
				return bad(key+".advertised", "%q: %v", l.Advertised, err)
			}
			if !validProtocol(l.Protocol) {
				return bad(key+".protocol", "%q is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", l.Protocol)
			}
		}
		if names[l.Name] {
			return bad(key+".name", "listener name %q is used twice", l.Name)
		}
		names[l.Name] = true
		needTLS = needTLS || l.Protocol == ProtocolSSL || l.Protocol == ProtocolSASLSSL
		needSASL = needSASL || l.Protocol == ProtocolSASLPlaintext || l.Protocol == ProtocolSASLSSL
	}
	s := c.Security
	seen := map[string]bool{}
	for _, m := range s.SASLMechanisms {
		if m == "" || strings.ToUpper(m) != m || seen[m] {
			return bad("security.sasl_mechanisms", "%q must be an upper-case mechanism listed once", m)
		}
		seen[m] = true
	}
	if needSASL && len(s.SASLMechanisms) == 0 {
		return bad("security.sasl_mechanisms", "a SASL listener needs at least one mechanism")
	}
	if s.Authorizer == "" {
		return bad("security.authorizer", "must not be empty (\"none\", \"acl\" or an extension)")
	}
	for _, u := range s.SuperUsers {
		if typ, name, ok := strings.Cut(u, ":"); !ok || typ == "" || name == "" {
			return bad("security.super_users", "%q is not Type:Name", u)
		}
	}
	switch s.TLSClientAuth {
	case "none", "requested", "required":
	default:
		return bad("security.tls_client_auth", "%q is not none, requested or required", s.TLSClientAuth)
	}
	if needTLS && (s.TLSCertFile == "" || s.TLSKeyFile == "") {
		return bad("security.tls_cert_file", "an SSL or SASL_SSL listener needs tls_cert_file and tls_key_file")
	}
	if s.TLSClientAuth != "none" && s.TLSCAFile == "" {
		return bad("security.tls_ca_file", "tls_client_auth %q needs a CA to verify client certificates", s.TLSClientAuth)
	}
	if s.SessionLifetimeMs < 0 {
		return bad("security.session_lifetime_ms", "%d is negative", s.SessionLifetimeMs)
	}
	if s.FailedAuthDelayMs < 0 {
		return bad("security.failed_auth_delay_ms", "%d is negative", s.FailedAuthDelayMs)
	}
	if s.IdleMs < 1 {
		return bad("security.connections_max_idle_ms", "%d is below 1", s.IdleMs)
	}
	return nil
}
