package txn

import (
	"errors"
	"fmt"
)

// Errors of the coordinator; the protocol edge maps each to a Kafka code.
var (
	ErrNotCoordinator            = errors.New("txn: not the coordinator of this transactional id")
	ErrCoordinatorLoadInProgress = errors.New("txn: coordinator is loading")
	ErrCoordinatorNotAvailable   = errors.New("txn: coordinator not available")
	ErrInvalidProducerIDMapping  = errors.New("txn: producer id does not match the transactional id")
	ErrProducerFenced            = errors.New("txn: producer fenced by a newer epoch")
	ErrConcurrentTransactions    = errors.New("txn: a transaction of this id is completing")
	ErrInvalidTxnState           = errors.New("txn: invalid transaction state")
	// ErrNotInTransaction is a verified partition (KIP-890 part 1) that is
	// not in the producer's open transaction. The protocol edge answers
	// TRANSACTION_ABORTABLE to clients that know it and INVALID_TXN_STATE to
	// older ones, as Kafka 4.x does.
	ErrNotInTransaction        = errors.New("txn: partition is not in the open transaction")
	ErrInvalidTimeout          = errors.New("txn: invalid transaction timeout")
	ErrInvalidRequest          = errors.New("txn: invalid request")
	ErrTransactionalIDNotFound = errors.New("txn: transactional id not found")
	// ErrStorage is a failed append to __transaction_state; the state did
	// not change.
	ErrStorage = errors.New("txn: cannot write the transaction log")
	// ErrCorrupt is a __transaction_state record that does not decode.
	ErrCorrupt = errors.New("txn: corrupt transaction log record")
)

// ErrTransactionAbortable is an error the client can get past by aborting
// its transaction (TRANSACTION_ABORTABLE, KIP-890).
var ErrTransactionAbortable = errors.New("txn: transaction abortable")

// AbortableFor turns a partition missing from the transaction into
// ErrTransactionAbortable for clients that know that code: Produce v11+ and
// the broker-to-coordinator AddPartitionsToTxn v4+. Older clients get
// INVALID_TXN_STATE, as from Kafka 4.x.
func AbortableFor(err error, supported bool) error {
	if supported && errors.Is(err, ErrNotInTransaction) {
		return fmt.Errorf("%w: %w", ErrTransactionAbortable, err)
	}
	return err
}
