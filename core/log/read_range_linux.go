package log

import "syscall"

const zeroCopyPlatform = true

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
