package log

import "syscall"

const zeroCopyPlatform = true

// The descriptors ranges may hold stay a quarter of the process's limit, so
// that held ranges never make accepts or segment opens fail.
func init() {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur/4 < uint64(MaxOpenRanges) {
		MaxOpenRanges = max(64, int64(rl.Cur/4))
	}
}

// dupFD duplicates fd with close-on-exec set, so that plugin processes the
// broker starts never inherit it.
func dupFD(fd uintptr) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

func closeDup(fd int) { _ = syscall.Close(fd) }
