//go:build pprof

package main

import (
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/ on http.DefaultServeMux
	"os"
)

// pprofEnv names the loopback address on which a broker built with the
// pprof tag (go build -tags pprof ./cmd/gregor) serves net/http/pprof, for
// profiling only: an ordinary build carries no profiling endpoint. Without
// the variable nothing is served.
const pprofEnv = "GREGOR_PPROF_ADDR"

func init() {
	addr := os.Getenv(pprofEnv)
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gregor: %s %s: %v\n", pprofEnv, addr, err)
		os.Exit(exitError)
	}
	go func() { _ = http.Serve(ln, nil) }()
}
