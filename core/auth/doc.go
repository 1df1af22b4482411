// Package auth owns Gregor's security model: the SASL mechanisms (PLAIN,
// SCRAM-SHA-256/512, OAUTHBEARER) and their parsers, salted SCRAM
// credentials, the mapping of TLS client certificates to principals, Kafka's
// ACL model with its authorizer, and client quotas.
//
// It speaks the extension contracts of sdk/auth: principals, operations,
// resources and the Authenticator and Authorizer interfaces are sdk types, so
// a WASM or plugin authenticator or authorizer takes part exactly like the
// built-ins. It holds no metadata of its own: credentials and ACLs are read
// through the CredentialStore and ACL snapshots the caller supplies (the
// controller's metadata image), and it must not import other core packages.
package auth
