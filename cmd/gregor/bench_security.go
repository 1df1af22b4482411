package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/gregorbroker/gregor/core/config"
)

// Security protocols bench can measure on its in-process broker.
const (
	benchPlaintext = "plaintext"
	benchSSL       = "ssl"
	benchSASLSSL   = "sasl_ssl"
)

// benchTarget is where a bench case connects and how.
type benchTarget struct {
	Security string
	Addr     string
	Opts     []kgo.Opt
}

// parseBenchSecurity checks --security values.
func parseBenchSecurity(vals []string) ([]string, error) {
	var out []string
	for _, v := range vals {
		v = strings.ToLower(strings.TrimSpace(v))
		switch v {
		case benchPlaintext, benchSSL, benchSASLSSL:
			out = append(out, v)
		default:
			return nil, usagef("--security %q: want plaintext, ssl or sasl_ssl", v)
		}
	}
	return out, nil
}

// benchTLS makes a throw-away CA and a server certificate for 127.0.0.1 in
// dir, returning the files and a client config that trusts the CA.
func benchTLS(dir string) (certFile, keyFile string, client *tls.Config, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gregor bench CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return "", "", nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return "", "", nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "gregor bench"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return "", "", nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", nil, err
	}
	certFile, keyFile = filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return "", "", nil, err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", "", nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return certFile, keyFile, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// benchSecurityConfig adds SSL and SASL_SSL listeners to cfg when wanted.
func benchSecurityConfig(cfg *config.Config, dir string, wanted []string) (*tls.Config, error) {
	needTLS := false
	for _, s := range wanted {
		needTLS = needTLS || s != benchPlaintext
	}
	if !needTLS {
		return nil, nil
	}
	certFile, keyFile, client, err := benchTLS(dir)
	if err != nil {
		return nil, fmt.Errorf("bench: certificates: %w", err)
	}
	cfg.Security.TLSCertFile, cfg.Security.TLSKeyFile = certFile, keyFile
	for _, s := range wanted {
		switch s {
		case benchSSL:
			cfg.Listeners.Extra = append(cfg.Listeners.Extra, config.ExtraListener{Name: "BENCH_SSL", Address: "127.0.0.1:0", Protocol: config.ProtocolSSL})
		case benchSASLSSL:
			cfg.Listeners.Extra = append(cfg.Listeners.Extra, config.ExtraListener{Name: "BENCH_SASL_SSL", Address: "127.0.0.1:0", Protocol: config.ProtocolSASLSSL})
		}
	}
	return client, nil
}

// benchTargets lists where each wanted protocol is served; SASL_SSL uses a
// SCRAM-SHA-512 user created here.
func benchTargets(ctx context.Context, plain string, listenerAddr func(string) string, client *tls.Config, wanted []string) ([]benchTarget, error) {
	var out []benchTarget
	for _, s := range wanted {
		switch s {
		case benchPlaintext:
			out = append(out, benchTarget{Security: s, Addr: plain})
		case benchSSL:
			out = append(out, benchTarget{Security: s, Addr: listenerAddr("BENCH_SSL"), Opts: []kgo.Opt{kgo.DialTLSConfig(client)}})
		case benchSASLSSL:
			cl, err := kgo.NewClient(kgo.SeedBrokers(plain))
			if err != nil {
				return nil, err
			}
			res, err := kadm.NewClient(cl).AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "bench", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "bench"}})
			cl.Close()
			if err == nil {
				err = res.Error()
			}
			if err != nil {
				return nil, fmt.Errorf("bench: SCRAM user: %w", err)
			}
			out = append(out, benchTarget{Security: s, Addr: listenerAddr("BENCH_SASL_SSL"), Opts: []kgo.Opt{kgo.DialTLSConfig(client),
				kgo.SASL(scram.Auth{User: "bench", Pass: "bench"}.AsSha512Mechanism())}})
		}
	}
	return out, nil
}
