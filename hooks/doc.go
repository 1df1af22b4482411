// Package hooks will host WebAssembly extension modules (wazero): the
// versioned ABI, module cache, instance pools and limits, and adapters that
// implement the sdk contracts for the broker. It is empty until the extension
// points land; the broker uses its built-in partitioner, retention and auth.
package hooks
