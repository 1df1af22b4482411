package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// connectError is a failure to talk to any bootstrap broker; its message
// names the addresses tried.
type connectError struct {
	msg string
	err error
}

func (e *connectError) Error() string { return e.msg }
func (e *connectError) Unwrap() error { return e.err }

// isSASLFailure reports whether err is the broker refusing the client's
// credentials or mechanism.
func isSASLFailure(err error) bool {
	return errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.UnsupportedSaslMechanism) ||
		errors.Is(err, kerr.IllegalSaslState)
}

// nextStep says what to do about err, or "" when its message says enough.
// It covers the common failures: an unreachable broker, TLS or SASL
// refused, a missing ACL, an unknown group.
func nextStep(err error) string {
	var (
		cerr    *connectError
		unknown x509.UnknownAuthorityError
		hostErr x509.HostnameError
		certErr x509.CertificateInvalidError
		recErr  tls.RecordHeaderError
	)
	switch {
	case isSASLFailure(err):
		return "check --sasl-mechanism, --sasl-user and --sasl-password (or " + saslMechanismEnv + ", " + saslUserEnv + ", " +
			saslPasswordEnv + "); an admin creates SCRAM users with `gregor user create`"
	case errors.As(err, &unknown), errors.As(err, &certErr):
		return "give the CA that signed the broker's certificate with --tls-ca"
	case errors.As(err, &hostErr):
		return "connect by a name in the broker's certificate, or set --tls-server-name"
	case errors.As(err, &recErr):
		return "that listener does not speak TLS: drop --tls, or point --bootstrap at the TLS listener"
	case errors.As(err, &cerr):
		return "check that a broker is running there and that --bootstrap (or " + bootstrapEnv +
			") names its Kafka listener; TLS and SASL listeners also need --tls and --sasl-* flags"
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.GroupAuthorizationFailed),
		errors.Is(err, kerr.ClusterAuthorizationFailed), errors.Is(err, kerr.TransactionalIDAuthorizationFailed),
		errors.Is(err, kerr.DelegationTokenAuthorizationFailed):
		return "the principal you connect as lacks an ACL for this; `gregor acl list` shows the ACLs and an admin adds one with " +
			"`gregor acl add --principal User:NAME --operation OPERATION --topic|--group|--cluster ...`"
	case errors.Is(err, kerr.GroupIDNotFound):
		return "`gregor group list` shows the groups the cluster knows"
	}
	return ""
}

// cobraUsagePrefixes start the messages of cobra's own command-line errors
// (unknown commands and flags, argument counts, required flags).
var cobraUsagePrefixes = []string{
	"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least",
	"required flag(s)", "if any flags in the group", "invalid argument", "flag needs an argument",
}

// isUsageError reports whether err is a mistake in the command line, which
// exits with code 2.
func isUsageError(err error) bool {
	var ue usageError
	if errors.As(err, &ue) {
		return true
	}
	msg := err.Error()
	for _, p := range cobraUsagePrefixes {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
