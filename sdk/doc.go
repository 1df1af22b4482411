// Package sdk is the home of Gregor's extension contracts for plugin authors:
// partitioners, retention policies and authenticators/authorizers, built once
// and run as WebAssembly modules or go-plugin processes. It is its own Go
// module with no dependency on the broker, so an extension never imports core.
//
// The contracts are plain Go types and interfaces:
//
//   - partitioner: a record and a partition count to a partition, one record
//     at a time (Partitioner) or a batch at a time (BatchPartitioner).
//   - retention: facts about a partition's segments to how many leading
//     segments may be deleted (Policy).
//   - auth: SASL credentials to a principal (Authenticator) and a principal's
//     actions on resources to allow or deny (Authorizer), with Kafka's ACL
//     operation, resource and pattern codes.
//
// ContractVersion versions all three together. Guest-side helpers for
// WebAssembly modules live in sdk/wasm; they import nothing outside the
// standard library.
package sdk
