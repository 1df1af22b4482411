// Package plugins will host out-of-process extensions over hashicorp/go-plugin
// (gRPC): launching, handshake, restart and adapters implementing the sdk
// contracts. It is empty until the extension points land.
package plugins
