// Package plugins hosts out-of-process extensions over hashicorp/go-plugin:
// it launches a plugin binary, checks the versioned handshake, configures
// the extension over gRPC, forwards the process's stderr into the broker's
// log, bounds every call with a timeout, restarts a crashed or hung process
// with exponential backoff, and adapts the process to the sdk contracts
// (partitioner.BatchPartitioner, retention.Policy, auth.Authenticator,
// auth.Authorizer, interceptor.Interceptor).
//
// When a call fails (the process is down, restarting, too slow, or answers
// with an error or an invalid answer) an adapter returns an error that
// says which (ErrUnavailable, ErrTimeout, ErrExtension): the fallback, the
// failure policy and the call statistics are the broker's (core/extension),
// the same for plugin processes and WebAssembly modules. A failing plugin
// never takes the broker down.
//
// It must not import core: the server injects these adapters where core
// expects the sdk contracts.
package plugins
