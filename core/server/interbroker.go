package server

import (
	"crypto/tls"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/gregorbroker/gregor/core/config"
)

// interBrokerOpts secure the follower fetch client for the inter-broker
// listener (cluster.inter_broker_listener): TLS verifying the leaders with
// security.tls_ca_file and presenting this broker's own certificate (read
// from the reloader, so a rotated certificate is used for new
// connections), and SASL with cluster.inter_broker_sasl_* credentials.
func (s *Server) interBrokerOpts() ([]kgo.Opt, error) {
	if !s.cfg.MultiNode() {
		// A single node has no peers to fetch from.
		return nil, nil
	}
	l, ok := s.cfg.InterBrokerListener()
	if !ok {
		return nil, fmt.Errorf("server: cluster.inter_broker_listener: no listener is named %q", s.cfg.Cluster.InterBrokerListener)
	}
	var opts []kgo.Opt
	if config.IsTLSProtocol(l.Protocol) {
		tc, err := s.interBrokerTLS()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if config.IsSASLProtocol(l.Protocol) {
		mech, err := interBrokerSASL(s.cfg.Cluster)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(mech))
	}
	return opts, nil
}

// interBrokerTLS is the client side of a TLS inter-broker listener. The
// listeners' reloader has loaded the certificate and the CA at start.
func (s *Server) interBrokerTLS() (*tls.Config, error) {
	r := s.sec.tls
	if r == nil {
		return nil, fmt.Errorf("server: the inter-broker listener uses TLS but no TLS files are loaded")
	}
	cur := r.current()
	if cur.ClientCAs == nil {
		return nil, fmt.Errorf("server: security.tls_ca_file: the inter-broker listener uses TLS: a CA is needed to verify the leaders")
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		RootCAs:    cur.ClientCAs,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			c := r.current()
			if len(c.Certificates) == 0 {
				return &tls.Certificate{}, nil
			}
			return &c.Certificates[0], nil
		},
	}, nil
}

// interBrokerSASL is this broker's SASL mechanism on the inter-broker
// listener; Validate has checked the settings.
func interBrokerSASL(cl config.Cluster) (sasl.Mechanism, error) {
	user, pass := cl.InterBrokerSASLUsername, cl.InterBrokerSASLPassword
	switch cl.InterBrokerSASLMechanism {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("server: cluster.inter_broker_sasl_mechanism %q: the inter-broker listener needs PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512",
		cl.InterBrokerSASLMechanism)
}
