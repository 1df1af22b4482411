//go:build !unix

package log

import (
	"fmt"
	"io"

	"github.com/gregorbroker/gregor/core/log/vfs"
)

// mapFile reads a whole file into memory where mmap is unavailable.
func mapFile(f vfs.File, size int64) ([]byte, bool, error) {
	if size > 1<<31-1 {
		return nil, false, fmt.Errorf("log: %s: %d bytes is too large to load", f.Name(), size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), b); err != nil {
		return nil, false, fmt.Errorf("log: read %s: %w", f.Name(), err)
	}
	return b, false, nil
}

func unmapFile([]byte) error { return nil }
