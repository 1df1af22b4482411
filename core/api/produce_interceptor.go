package api

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// interceptDecoded runs the topic's produce interceptor on a decoded record
// set. A rejection answers INVALID_RECORD, as Kafka answers a batch with
// invalid records. A failed interceptor under on_error = reject answers
// UNKNOWN_SERVER_ERROR with the message, as a failed placement check does:
// Kafka has no code for a failed broker-side check, and a retriable code
// would make clients resend into the same failure.
func interceptDecoded(ctx context.Context, ic *extension.Interceptor, set *extension.Produced, records []byte, topic string, partition int32, principal sdkauth.Principal) ([]byte, int16, error) {
	out, err := extension.InterceptProduced(ctx, ic, set, records, topic, partition, principal)
	var rej *extension.RejectedError
	switch {
	case err == nil:
		return out, 0, nil
	case errors.As(err, &rej):
		return nil, kerr.InvalidRecord.Code, err
	}
	return nil, kerr.UnknownServerError.Code, err
}

// checkProduceRecords runs the record checks of one partition of a Kafka
// Produce request: none for a mirror link's appends (the source checked
// them), else placement and interception, on the records p's Check
// decodes (checkProduced). It may replace rp.Records with the
// interceptor's rewrite, and it fills sp's record errors (Produce v8+)
// when the interceptor rejects listed records. The Checked it returns is
// zero when the records are still to be checked.
func (b *Broker) checkProduceRecords(r *protocol.Request, im *controller.Image, p *partition.Partition, topic string, rp *kmsg.ProduceRequestTopicPartition, sp *kmsg.ProduceResponseTopicPartition, isLink bool) (partition.Checked, int16, error) {
	if isLink {
		return partition.Checked{}, 0, nil
	}
	records, checked, code, err := b.checkProduced(context.Background(), im, p, topic, rp.Partition, rp.Records, principalOf(r))
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
