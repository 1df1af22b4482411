//go:build !unix

package log

// DiskSpace is unknown off Unix; DescribeLogDirs then reports -1, as Kafka
// does when it cannot tell.
func DiskSpace(string) (total, usable int64, err error) { return -1, -1, nil }
