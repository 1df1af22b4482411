// Package txn is the transaction coordinator. It owns the transactional ids
// whose __transaction_state partition this broker leads: their producer id
// and epoch, their state (Empty, Ongoing, PrepareCommit/PrepareAbort,
// CompleteCommit/CompleteAbort, with epoch fencing), the partitions each open
// transaction touched, and the proactive abort of transactions open longer
// than their timeout.
//
// Every state change is appended to __transaction_state in Apache Kafka's
// record schemas (TransactionLogKey v0, TransactionLogValue v0/v1) before it
// is acknowledged; the Prepare state is written before any marker is sent,
// so that a coordinator that starts on the partition later (after a restart
// or a leadership change) finishes what was prepared. Markers go out through
// the MarkerWriter the caller supplies, normally Markers.Write, which appends
// to a partition led here and sends WriteTxnMarkers to other leaders. The
// package also hands out producer ids from blocks the controller reserves
// (ProducerIDs). It reaches the network, the controller, the metadata image
// and the group coordinator only through the interfaces and functions it is
// given, and it chooses no Kafka error codes: it returns the errors of
// errors.go and core/api maps them (Markers only reads the codes a remote
// leader answered).
// Time comes from an injected clock; the caller drives the timeout check.
package txn
