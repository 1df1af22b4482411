package api

import (
	"context"
	"fmt"

	"github.com/gregorbroker/gregor/core/httpapi"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// The Kafka-facing half of produce over HTTP (httpapi.BrokerProducer does
// the rest): WRITE on the topic is authorized by the Kafka listeners'
// authorizer and append errors get Kafka Produce's error codes.

// AuthorizeHTTPWrite refuses a principal the authorizer does not let WRITE
// to topic, with an error wrapping httpapi.ErrNotAuthorized; with no
// authorizer every write is allowed.
func (b *Broker) AuthorizeHTTPWrite(ctx context.Context, principal sdkauth.Principal, topic string) error {
	a := b.Security.Authorizer
	if a == nil {
		return nil
	}
	b.syncACLs()
	act := []sdkauth.Action{{Principal: principal, Host: httpapi.ClientHost(ctx), Operation: sdkauth.OpWrite,
		Resource: sdkauth.Resource{Type: sdkauth.ResourceTopic, Name: topic, Pattern: sdkauth.PatternLiteral}}}
	dec := make([]sdkauth.Decision, 1)
	if err := a.Authorize(ctx, act, dec); err != nil || dec[0] != sdkauth.Allow {
		return fmt.Errorf("%w: %s may not write to %s", httpapi.ErrNotAuthorized, principal, topic)
	}
	return nil
}

// ErrorCode is the Kafka error code this package answers err with.
func ErrorCode(err error) int16 { return errCode(err) }
