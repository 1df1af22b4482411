package api

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/protocol"
)

// checkProduceRecords runs the record checks of one partition of a Kafka
// Produce request: none for a mirror link's appends (the source checked
// them), else placement and interception, on the records p's Check
// decodes (CheckProduced). It may replace rp.Records with the
// interceptor's rewrite, and it fills sp's record errors (Produce v8+)
// when the interceptor rejects listed records. The Checked it returns is
// zero when the records are still to be checked.
func (b *Broker) checkProduceRecords(r *protocol.Request, im *controller.Image, p *partition.Partition, topic string, rp *kmsg.ProduceRequestTopicPartition, sp *kmsg.ProduceResponseTopicPartition, isLink bool) (partition.Checked, int16, error) {
	if isLink {
		return partition.Checked{}, 0, nil
	}
	records, checked, code, err := b.CheckProduced(context.Background(), im, p, topic, rp.Partition, rp.Records, principalOf(r))
	if code == 0 && err != nil {
		code = errCode(err) // the record set failed validation
	}
	if code == 0 {
		rp.Records = records
		return checked, 0, nil
	}
	var rej *extension.RejectedError
	if errors.As(err, &rej) && r.Version >= 8 {
		for _, e := range rej.Errors {
			re := kmsg.NewProduceResponseTopicPartitionErrorRecord()
			re.RelativeOffset = e.Index
			msg := e.Message
			re.ErrorMessage = &msg
			sp.ErrorRecords = append(sp.ErrorRecords, re)
		}
	}
	return partition.Checked{}, code, err
}
