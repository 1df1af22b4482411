// Package sdk is the home of Gregor's extension contracts for plugin authors:
// partitioners, retention policies and authenticators/authorizers, built once
// and run as WebAssembly modules or go-plugin processes. It is its own Go
// module with no dependency on the broker, so an extension never imports core.
package sdk
