package log

import (
	"errors"

	"github.com/gregorbroker/gregor/core/record"
)

var (
	// ErrOffsetOutOfRange is returned for reads below the log start offset or
	// past the log end offset (Kafka's OFFSET_OUT_OF_RANGE).
	ErrOffsetOutOfRange = errors.New("log: offset out of range")
	// ErrCorrupt is the class of damaged on-disk data and malformed batches.
	// It is record.ErrCorrupt, so either name matches with errors.Is.
	ErrCorrupt = record.ErrCorrupt
	// ErrCorruptIndex marks an index file that failed its sanity checks; it
	// is also ErrCorrupt-class.
	ErrCorruptIndex error = corruptIndexError{}
	// ErrBatchTooLarge is returned by Append for a batch larger than a
	// segment (Kafka's RECORD_LIST_TOO_LARGE).
	ErrBatchTooLarge = errors.New("log: batch larger than the segment size")
	// ErrClosed is returned by every operation on a closed log.
	ErrClosed = errors.New("log: closed")
	// ErrStorage marks a log that hit an I/O error during a write and
	// refuses further writes (Kafka's KAFKA_STORAGE_ERROR).
	ErrStorage = errors.New("log: storage error")
)

type corruptIndexError struct{}

func (corruptIndexError) Error() string        { return "log: corrupt index" }
func (corruptIndexError) Is(target error) bool { return target == record.ErrCorrupt }
