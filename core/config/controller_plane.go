package config

import (
	"net"
	"slices"
)

// ControllerProtocol is cluster.controller_listener_protocol, with the
// default filled in.
func (c *Config) ControllerProtocol() string {
	if c.Cluster.ControllerListenerProtocol == "" {
		return ProtocolPlaintext
	}
	return c.Cluster.ControllerListenerProtocol
}

// controllerLoopbackOnly reports whether listeners.controller binds a
// loopback address only (nobody off the host can reach it).
func (c *Config) controllerLoopbackOnly() bool {
	host, _, err := net.SplitHostPort(c.Listeners.Controller)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validateControllerPlane checks how the controller listener (Raft and
// the controller RPCs) is secured. It runs after the security settings are
// validated.
func (c *Config) validateControllerPlane(bad func(key, format string, args ...any) error) error {
	cl := c.Cluster
	p := c.ControllerProtocol()
	if !validProtocol(p) {
		return bad("cluster.controller_listener_protocol", "%q is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", p)
	}
	if !c.MultiNode() {
		return nil
	}
	s := c.Security
	if IsTLSProtocol(p) {
		switch {
		case s.TLSCertFile == "" || s.TLSKeyFile == "":
			return bad("security.tls_cert_file", "controller_listener_protocol %s needs tls_cert_file and tls_key_file", p)
		case s.TLSCAFile == "":
			return bad("security.tls_ca_file", "controller_listener_protocol %s needs a CA: peers' certificates are required and verified", p)
		}
	}
	if IsSASLProtocol(p) {
		switch cl.InterBrokerSASLMechanism {
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		default:
			return bad("cluster.inter_broker_sasl_mechanism", "controller_listener_protocol %s needs PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, not %q",
				p, cl.InterBrokerSASLMechanism)
		}
		if cl.InterBrokerSASLUsername == "" || cl.InterBrokerSASLPassword == "" {
			return bad("cluster.inter_broker_sasl_username", "controller_listener_protocol %s needs inter_broker_sasl_username and inter_broker_sasl_password", p)
		}
		if !slices.Contains(s.SuperUsers, "User:"+cl.InterBrokerSASLUsername) {
			return bad("security.super_users", "controller_listener_protocol %s accepts super users only: add User:%s",
				p, cl.InterBrokerSASLUsername)
		}
	}
	if p != ProtocolPlaintext && len(s.SuperUsers) == 0 {
		return bad("security.super_users", "controller_listener_protocol %s accepts only super users, and none are listed", p)
	}
	if p == ProtocolPlaintext && s.Authorizer != "none" && !c.controllerLoopbackOnly() && !cl.AllowInsecureController {
		return bad("cluster.controller_listener_protocol", "PLAINTEXT on listeners.controller %s lets anyone who reaches it change ACLs, credentials and topics while an authorizer is configured: use SSL, SASL_PLAINTEXT or SASL_SSL, bind it to loopback, or set cluster.allow_insecure_controller = true",
			c.Listeners.Controller)
	}
	return nil
}
