// Package server wires Gregor together: it opens the data directory, the
// metadata controller, the partition logs and the listeners, and runs them as
// one oklog/run group. It holds no broker logic of its own.
package server
