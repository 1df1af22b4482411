// Package share owns the state of share groups (KIP-932) on one broker: the
// share-partition state machine (in-flight records with their delivery
// state, delivery counts and acquisition locks, the share-partition start
// and end offsets), share group membership with the simple server-side
// assignor, and share sessions.
//
// It reads no log and writes none: the caller hands it the batch headers it
// read and the aborted transactions that overlap them, and persists the
// snapshots it returns. It chooses no Kafka error codes: it returns the
// errors of errors.go and the protocol edge (core/api) maps them. Time comes
// from an injected clock so lock expiry and session timeouts are tested
// without sleeping.
package share
