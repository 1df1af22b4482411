package httpapi

import (
	"context"
	"fmt"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/extension"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// fetchPass is what browsing a topic's records passes the log's batches
// through: the topic's fetch interceptor (gregor.interceptor.fetch) with
// the request's principal, as a consumer's Fetch does, so the console
// never shows what a consumer of the same principal would get masked or
// dropped. It is nil for a topic without one; a name broker.toml does not
// declare is an error, and the records are withheld.
func (v *BrokerView) fetchPass(ctx context.Context, im *controller.Image, topic string, partition int32) (func([]byte) ([]byte, error), error) {
	configs := im.Configs[controller.ConfigResource{Type: controller.ResourceTopic, Name: topic}]
	name, ok := configs[extension.ConfigInterceptFetch]
	if !ok || name == "" || name == config.NoInterceptor {
		return nil, nil
	}
	if v.ExtensionSet == nil {
		return nil, fmt.Errorf("httpapi: %w: %s = %q, and the broker has no extensions", ErrUnavailable, extension.ConfigInterceptFetch, name)
	}
	ic, err := v.ExtensionSet.TopicFetchInterceptor(configs)
	if err != nil || ic == nil {
		return nil, fmt.Errorf("httpapi: %w: %v", ErrUnavailable, err)
	}
	var principal sdkauth.Principal
	if ps, fromHTTP := RequestPrincipal(ctx); fromHTTP {
		if principal, err = sdkauth.ParsePrincipal(ps); err != nil {
			return nil, fmt.Errorf("httpapi: principal %q: %w", ps, err)
		}
	}
	return func(batches []byte) ([]byte, error) {
		out, err := extension.InterceptFetched(ctx, ic, batches, topic, partition, principal, maxRecordsDecompressed)
		if err != nil {
			return nil, fmt.Errorf("%w: records withheld: %w", ErrUnavailable, err)
		}
		return out, nil
	}, nil
}
