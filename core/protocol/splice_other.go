//go:build !linux

package protocol

import (
	"errors"
	"net"
	"time"
)

const sendfilePlatform = false

func sendFile(*net.TCPConn, *FileBytes, time.Duration) error {
	return errors.New("protocol: no sendfile on this platform")
}

func preadFD(int, []byte, int64) (int, error) {
	return 0, errors.New("protocol: no file runs on this platform")
}
