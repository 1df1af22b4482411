package protocol

import (
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

const sendfilePlatform = true

// sendFile moves a run from its file to the socket in the kernel. It waits
// for the socket to drain through the runtime's poller, within timeout of
// each step.
func sendFile(tc *net.TCPConn, f *FileBytes, timeout time.Duration) error {
	rc, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	off, left := f.Off, f.Len
	var serr error
	for left > 0 && serr == nil {
		// The deadline bounds each wait for the client to read, not the
		// whole run: a slow reader that keeps reading is not cut off.
		tc.SetWriteDeadline(time.Now().Add(timeout))
		mark := left
		werr := rc.Write(func(fd uintptr) bool {
			for left > 0 {
				n, err := syscall.Sendfile(int(fd), f.FD, &off, min(left, 1<<30))
				if n > 0 {
					left -= n
				}
				switch {
				case err == syscall.EAGAIN:
					// Progress since the deadline was set: return to set
					// it again; none: wait until the socket drains.
					return left < mark
				case err == syscall.EINTR:
					continue
				case err != nil:
					serr = fmt.Errorf("protocol: sendfile: %w", err)
					return true
				case n == 0:
					serr = fmt.Errorf("protocol: file run at %d: %w (%d bytes short)", off, io.ErrUnexpectedEOF, left)
					return true
				}
			}
			return true
		})
		if werr != nil {
			return werr
		}
	}
	return serr
}

func preadFD(fd int, b []byte, off int64) (int, error) { return syscall.Pread(fd, b, off) }
