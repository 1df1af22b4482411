package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/record"
)

// HasTransactionalRecords reports whether any partition of a produce
// request starts with a transactional batch, as Kafka's
// RequestUtils.hasTransactionalRecords: such a request needs a
// transactional id the principal may WRITE, and without one Kafka refuses
// all of it with TRANSACTIONAL_ID_AUTHORIZATION_FAILED. Accepting it would
// open a transaction that no coordinator knows of, that producer expiry
// skips and that holds back the last stable offset until someone aborts it.
func HasTransactionalRecords(req *kmsg.ProduceRequest) bool {
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			if h, err := record.ParseHeader(p.Records); err == nil && h.IsTransactional() {
				return true
			}
		}
	}
	return false
}
