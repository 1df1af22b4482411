//go:build unix

package log

import (
	"math"
	"syscall"
)

// DiskSpace returns the total and usable bytes of the file system holding
// path, as Java's FileStore reports them (usable: what an unprivileged
// process may still write).
func DiskSpace(path string) (total, usable int64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return -1, -1, err
	}
	return clampBytes(uint64(st.Blocks), uint64(st.Bsize)), clampBytes(uint64(st.Bavail), uint64(st.Bsize)), nil
}

// clampBytes multiplies without overflow; Kafka reports Long.MAX_VALUE for
// file systems larger than that.
func clampBytes(blocks, size uint64) int64 {
	if size != 0 && blocks > math.MaxInt64/size {
		return math.MaxInt64
	}
	return int64(blocks * size)
}
