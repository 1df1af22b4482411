package plugins

import (
	"context"
	"fmt"

	"github.com/gregorbroker/gregor/sdk/interceptor"
	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
	"github.com/gregorbroker/gregor/sdk/plugin/pb"
)

// Interceptor is an interceptor.Interceptor served by a plugin process, one
// call per batch. It is safe for concurrent use. It has no fallback: the
// broker applies the extension's on_error policy to its errors.
type Interceptor struct {
	extension
}

var _ interceptor.Interceptor = (*Interceptor)(nil)

// OpenInterceptor starts an interceptor plugin.
func OpenInterceptor(cfg Config) (*Interceptor, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(sdkplugin.KindInterceptor); err != nil {
		return nil, err
	}
	proc, err := startProcess(cfg, func(ctx context.Context, raw any) error {
		_, err := raw.(pb.InterceptorClient).Configure(ctx, configureRequest(cfg))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Interceptor{extension: extension{proc: proc}}, nil
}

// InterceptProduce implements interceptor.Interceptor. A crashed or hung
// process fails the call (and is restarted); an answer that does not fit
// the batch is an ErrExtension.
func (ic *Interceptor) InterceptProduce(ctx context.Context, b *interceptor.Batch) (interceptor.Decision, error) {
	var d interceptor.Decision
	err := ic.proc.call(ctx, "intercept", func(ctx context.Context, raw any) error {
		resp, err := raw.(pb.InterceptorClient).InterceptProduce(ctx, &pb.InterceptProduceRequest{
			Topic: b.Topic, Partition: b.Partition,
			Principal: &pb.Principal{Type: b.Principal.Type, Name: b.Principal.Name},
			Records:   sdkplugin.InterceptRecordsToProto(b.Records),
		})
		if err != nil {
			return err
		}
		d = sdkplugin.DecisionFromProto(resp)
		if err := interceptor.Check(&d, len(b.Records)); err != nil {
			return fmt.Errorf("%w: %w", ErrExtension, err)
		}
		if d.Action == interceptor.Rewrite {
			for i := range d.Records {
				d.Records[i].Timestamp, d.Records[i].OffsetDelta = b.Records[i].Timestamp, b.Records[i].OffsetDelta
			}
		}
		return nil
	})
	if err != nil {
		return interceptor.Decision{}, err
	}
	return d, nil
}
