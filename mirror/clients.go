package mirror

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// clientOpts are the connection options for one cluster: seeds, client id,
// TLS and SASL.
func clientOpts(c Cluster, clientID string) ([]kgo.Opt, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Bootstrap...),
		kgo.ClientID(clientID),
		kgo.DialTimeout(10 * time.Second),
		kgo.RetryTimeout(30 * time.Second),
	}
	if c.usesTLS() {
		tc, err := tlsConfig(c)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	switch c.SASLMechanism {
	case "":
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: c.SASLUsername, Pass: c.SASLPassword}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: c.SASLUsername, Pass: c.SASLPassword}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: c.SASLUsername, Pass: c.SASLPassword}.AsSha512Mechanism()))
	default:
		return nil, fmt.Errorf("mirror: %s: unsupported SASL mechanism %q", c.Name, c.SASLMechanism)
	}
	return opts, nil
}

func tlsConfig(c Cluster) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.TLSServerName,
		InsecureSkipVerify: c.TLSInsecureSkipVerify} //nolint:gosec // opt-in, for tests
	if tc.ServerName == "" && len(c.Bootstrap) > 0 {
		if host, _, err := net.SplitHostPort(c.Bootstrap[0]); err == nil {
			tc.ServerName = host
		}
	}
	if c.TLSCAFile != "" {
		pem, err := os.ReadFile(c.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("mirror: %s: tls_ca_file: %w", c.Name, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("mirror: %s: tls_ca_file %s holds no PEM certificate", c.Name, c.TLSCAFile)
		}
		tc.RootCAs = pool
	}
	if c.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("mirror: %s: client certificate: %w", c.Name, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// newClient builds a client for one cluster with extra options.
func newClient(c Cluster, clientID string, extra ...kgo.Opt) (*kgo.Client, error) {
	opts, err := clientOpts(c, clientID)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("mirror: %s: client: %w", c.Name, err)
	}
	return cl, nil
}
