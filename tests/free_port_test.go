package tests

import (
	"testing"

	"github.com/gregorbroker/gregor/internal/testport"
)

// freePort returns a loopback port below the kernel's ephemeral range,
// reserved against other test processes until t ends (see testport).
func freePort(t testing.TB) int {
	t.Helper()
	return testport.Port(t)
}
