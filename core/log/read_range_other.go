//go:build !linux

package log

const zeroCopyPlatform = false

func dupFD(uintptr) (int, error) { return -1, nil }

func closeDup(int) {}
