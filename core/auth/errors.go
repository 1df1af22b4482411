package auth

import (
	"errors"

	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// Error classes. Each is wrapped with detail; callers test with errors.Is.
var (
	// ErrAuthenticationFailed means wrong credentials: the client gets
	// SASL_AUTHENTICATION_FAILED and nothing more. It is sdk/auth's error,
	// so extension authenticators and the built-ins fail alike.
	ErrAuthenticationFailed = sdkauth.ErrAuthenticationFailed
	// ErrMalformed means a SASL message that does not parse.
	ErrMalformed = errors.New("auth: malformed SASL message")
	// ErrUnsupportedMechanism means a mechanism that is not enabled.
	ErrUnsupportedMechanism = sdkauth.ErrUnsupportedMechanism
	// ErrInvalidACL means an ACL binding Kafka would reject.
	ErrInvalidACL = errors.New("auth: invalid ACL")
	// ErrInvalidCredential means a SCRAM credential that cannot be used.
	ErrInvalidCredential = errors.New("auth: invalid SCRAM credential")
	// ErrInvalidQuota means a client quota Kafka would reject.
	ErrInvalidQuota = errors.New("auth: invalid quota")
)
