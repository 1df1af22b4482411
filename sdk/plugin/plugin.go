// Package plugin is the go-plugin side of Gregor's extension contracts: a Go
// program calls Serve with factories for the partitioner, retention policy,
// authenticator, authorizer or record interceptor it implements (an
// interceptor: Set{Interceptor: ...} with an interceptor.Interceptor, or a
// function through interceptor.Func), and the broker runs it as a
// separate process, talking gRPC over the protocol in proto/extension.proto.
//
// It owns the handshake (magic cookie and protocol version), the gRPC
// servers that adapt the sdk contracts, the conversions between sdk types
// and their protobuf form (which the broker's host uses too), and a logger
// whose output the broker forwards into its own log. It never imports the
// broker: a plugin depends on sdk and this module only.
//
// It is a module of its own (github.com/gregorbroker/gregor/sdk/plugin)
// because gRPC and go-plugin bring a dozen modules that the contracts in sdk,
// and the WebAssembly guests built on them, must not pull in.
package plugin

//go:generate protoc --proto_path=proto --go_out=pb --go_opt=paths=source_relative --go-grpc_out=pb --go-grpc_opt=paths=source_relative extension.proto

import (
	"context"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/gregorbroker/gregor/sdk/plugin/pb"
)

// ProtocolVersion is the version of the gRPC protocol in
// proto/extension.proto, checked during the go-plugin handshake. A broker
// and a plugin that disagree refuse each other with an error naming both
// versions.
const ProtocolVersion = 1

// MagicCookieKey and MagicCookieValue tell a plugin binary that it was started
// by a Gregor broker; run by hand it says so and exits. They are not a
// secret.
const (
	MagicCookieKey   = "GREGOR_PLUGIN"
	MagicCookieValue = "7f3c1e9a5b2d4086a1c9e0f2b4d6a8c1"
)

// Handshake is the go-plugin handshake both sides use.
var Handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   MagicCookieKey,
	MagicCookieValue: MagicCookieValue,
}

// The kinds of extension, as broker.toml's `kind` names them; each is a
// plugin name in the go-plugin plugin set.
const (
	KindPartitioner   = "partitioner"
	KindRetention     = "retention"
	KindAuthenticator = "authenticator"
	KindAuthorizer    = "authorizer"
	KindInterceptor   = "interceptor"
)

// Kinds lists every kind.
var Kinds = []string{KindPartitioner, KindRetention, KindAuthenticator, KindAuthorizer, KindInterceptor}

// MaxMessageBytes bounds one gRPC message between the broker and a plugin.
// The broker sends at most a request's worth of records to a partitioner
// (its own frame limit is 100 MiB); a plugin's answers are small, and the
// broker keeps gRPC's 4 MiB default for what it receives.
const MaxMessageBytes = 128 << 20

// ClientPlugins is the plugin set of the broker's side: dispensing a kind
// gives the generated gRPC client for it (pb.PartitionerClient,
// pb.RetentionClient, pb.AuthenticatorClient, pb.AuthorizerClient,
// pb.InterceptorClient).
func ClientPlugins() goplugin.PluginSet {
	set := goplugin.PluginSet{}
	for _, k := range Kinds {
		set[k] = &grpcPlugin{kind: k}
	}
	return set
}

// grpcPlugin is one kind in a plugin set. On the plugin's side it registers
// the kind's server (when the plugin serves that kind); on the broker's side
// it hands out the kind's client.
type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	kind   string
	server func(*grpc.Server)
}

func (p *grpcPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	if p.server != nil {
		p.server(s)
	}
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	switch p.kind {
	case KindPartitioner:
		return pb.NewPartitionerClient(c), nil
	case KindRetention:
		return pb.NewRetentionClient(c), nil
	case KindAuthenticator:
		return pb.NewAuthenticatorClient(c), nil
	case KindAuthorizer:
		return pb.NewAuthorizerClient(c), nil
	case KindInterceptor:
		return pb.NewInterceptorClient(c), nil
	}
	return nil, errUnknownKind(p.kind)
}
