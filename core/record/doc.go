// Package record owns the facts of Kafka's v2 RecordBatch format (magic 2): the
// 61-byte batch header, CRC-32C validation, record iteration, compression codecs
// and an encoder for building batches. A produced batch is checked in one pass
// (Inspect), whose Facts the layers above pass down instead of reading the batch
// again.
//
// It is a leaf package: it imports no other Gregor package, performs no I/O and
// keeps batches as bytes. It must not interpret record contents (keys, values,
// control records); that belongs to the layers above it.
package record
