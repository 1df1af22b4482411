//go:build unix

package log

import (
	"fmt"
	"syscall"

	"github.com/gregorbroker/gregor/core/log/vfs"
)

// mapFile maps a whole file read-only. An empty file yields nil. The mapping
// survives closing f and must be released with unmapFile.
func mapFile(f vfs.File, size int64) ([]byte, bool, error) {
	if size == 0 {
		return nil, false, nil
	}
	if size > 1<<31-1 {
		return nil, false, fmt.Errorf("log: %s: %d bytes is too large to map", f.Name(), size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, false, fmt.Errorf("log: mmap %s: %w", f.Name(), err)
	}
	return b, true, nil
}

func unmapFile(b []byte) error { return syscall.Munmap(b) }
