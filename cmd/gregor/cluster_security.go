package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Environment defaults of the client security flags; a password is better
// passed this way than on a command line others can read.
const (
	saslMechanismEnv = "GREGOR_SASL_MECHANISM"
	saslUserEnv      = "GREGOR_SASL_USER"
	saslPasswordEnv  = "GREGOR_SASL_PASSWORD"
)

// securityFlags say how a client command authenticates and whether it
// speaks TLS: what a listener with protocol SSL, SASL_PLAINTEXT or
// SASL_SSL asks of its clients.
type securityFlags struct {
	tls           bool
	tlsCA         string
	tlsCert       string
	tlsKey        string
	tlsServerName string
	tlsInsecure   bool
	saslMechanism string
	saslUser      string
	saslPassword  string
}

func (f *securityFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.tls, "tls", false, "connect with TLS (listeners with protocol SSL or SASL_SSL); implied by the other --tls-* flags")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "PEM file of the CA that signed the broker's certificate (default: the system's roots)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM client certificate, for listeners that ask for one (mTLS)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&f.tlsServerName, "tls-server-name", "", "name to verify in the broker's certificate (default: the host dialled)")
	fs.BoolVar(&f.tlsInsecure, "tls-insecure-skip-verify", false, "do not verify the broker's certificate (tests only)")
	fs.StringVar(&f.saslMechanism, "sasl-mechanism", os.Getenv(saslMechanismEnv),
		"SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (env "+saslMechanismEnv+")")
	fs.StringVar(&f.saslUser, "sasl-user", os.Getenv(saslUserEnv), "SASL user name (env "+saslUserEnv+")")
	fs.StringVar(&f.saslPassword, "sasl-password", os.Getenv(saslPasswordEnv), "SASL password (env "+saslPasswordEnv+", preferred)")
}

// opts turns the flags into client options.
func (f *securityFlags) opts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if f.tls || f.tlsCA != "" || f.tlsCert != "" || f.tlsKey != "" || f.tlsServerName != "" || f.tlsInsecure {
		cfg, err := f.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	mech, err := f.mechanism()
	if err != nil {
		return nil, err
	}
	if mech != nil {
		opts = append(opts, kgo.SASL(mech))
	}
	return opts, nil
}

func (f *securityFlags) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.tlsServerName, InsecureSkipVerify: f.tlsInsecure}
	if f.tlsCA != "" {
		pem, err := os.ReadFile(f.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in the file", f.tlsCA)
		}
	}
	switch {
	case (f.tlsCert == "") != (f.tlsKey == ""):
		return nil, usagef("--tls-cert and --tls-key go together")
	case f.tlsCert != "":
		pair, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

func (f *securityFlags) mechanism() (sasl.Mechanism, error) {
	if f.saslMechanism == "" {
		if f.saslUser != "" {
			return nil, usagef("--sasl-user needs --sasl-mechanism")
		}
		return nil, nil
	}
	if f.saslUser == "" {
		return nil, usagef("--sasl-mechanism %s needs --sasl-user", f.saslMechanism)
	}
	switch strings.ToUpper(f.saslMechanism) {
	case "PLAIN":
		return plain.Auth{User: f.saslUser, Pass: f.saslPassword}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: f.saslUser, Pass: f.saslPassword}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: f.saslUser, Pass: f.saslPassword}.AsSha512Mechanism(), nil
	}
	return nil, usagef("unknown --sasl-mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", f.saslMechanism)
}
