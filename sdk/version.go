package sdk

// ContractVersion is the version of the extension contracts in this module:
// the Go types in partitioner, retention and auth, the WASM ABI built on them
// (hooks/ABI.md in the broker) and the go-plugin protocol. It changes only
// when a contract changes incompatibly; a host refuses an extension built
// for a version it does not speak, with an error naming both versions.
const ContractVersion = 1
