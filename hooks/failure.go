package hooks

import (
	"errors"

	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/retention"
)

// isInstanceFailure reports whether err leaves an instance in an unknown
// state, so that it must be discarded: a trap, an exit, a timeout, a
// memory limit, a bad buffer or a canceled call. A result code, an answer
// out of range or an input too large leave the guest as it was.
func isInstanceFailure(err error) bool {
	for _, e := range []error{ErrGuest, ErrTooLarge, partitioner.ErrPartitionOutOfRange, retention.ErrOutOfRange} {
		if errors.Is(err, e) {
			return false
		}
	}
	return err != nil
}
