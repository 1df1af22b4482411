package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strings"
)

// securityTargets are the target's TLS listeners and the CA that signed their certificates.
type securityTargets struct {
	SSL, SASLSSL string // bootstrap lists; empty when the target has no such listener
	CAFile       string // PEM CA the clients trust
}

// tlsConfig is the client side of a TLS listener at addr. trusted clients verify the server
// against the CA file (host name included); untrusted ones trust no CA at all, so the handshake
// must fail: what the ssl scenario checks a broker does with a client that cannot verify it.
func (s securityTargets) tlsConfig(addr string, trusted bool) (*tls.Config, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("interop: TLS address %q: %w", addr, err)
	}
	cfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12, RootCAs: x509.NewCertPool()}
	if !trusted {
		return cfg, nil
	}
	pem, err := os.ReadFile(s.CAFile)
	if err != nil {
		return nil, fmt.Errorf("interop: CA file: %w", err)
	}
	if !cfg.RootCAs.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("interop: CA file %s holds no PEM certificate", s.CAFile)
	}
	return cfg, nil
}

// secureListener is how a Go driver reaches the listener a security scenario runs on.
type secureListener struct {
	Bootstrap string
	TLS       bool
	Mechanism string // "" for none, else PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
	Value     string // the one record the scenario writes and reads back
}

// listenerFor maps a security scenario to its listener and mechanism (SCENARIOS.md).
func listenerFor(env Env, scenario string) (secureListener, error) {
	switch scenario {
	case "sasl_plain":
		return secureListener{Bootstrap: env.SASLBootstrap, Mechanism: "PLAIN", Value: "sasl"}, nil
	case "sasl_scram":
		return secureListener{Bootstrap: env.SASLBootstrap, Mechanism: "SCRAM-SHA-256", Value: "sasl"}, nil
	case "ssl":
		return secureListener{Bootstrap: env.SSLBootstrap, TLS: true, Value: "ssl"}, nil
	case "sasl_ssl":
		return secureListener{Bootstrap: env.SASLSSLBootstrap, TLS: true, Mechanism: "SCRAM-SHA-512", Value: "sasl_ssl"}, nil
	}
	return secureListener{}, fmt.Errorf("interop: %q is not a security scenario", scenario)
}

// tls is the client TLS configuration for l, nil on a plaintext listener.
func (l secureListener) tls(env Env, trusted bool) (*tls.Config, error) {
	if !l.TLS {
		return nil, nil
	}
	sec := securityTargets{CAFile: env.CAFile}
	return sec.tlsConfig(strings.Split(l.Bootstrap, ",")[0], trusted)
}
