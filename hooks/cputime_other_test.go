//go:build !linux

package hooks

import "time"

// threadCPU is not measured here (cputime_linux_test.go).
func threadCPU() time.Duration { return 0 }
