// Package partition owns one replica of a partition on this broker: its log,
// its high watermark, its leader epoch and its producer state (idempotent
// sequence checks). It validates what clients append, in one pass outside the
// partition's lock (Check), and reads what they may see. It knows nothing of the wire protocol or of the controller; the server
// tells it which partitions exist and who leads them.
package partition
