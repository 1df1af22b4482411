package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/plugin/pb"
	"github.com/gregorbroker/gregor/sdk/retention"
)

// Config is what the broker hands an extension when it starts it (and again
// after every restart): its name and its `config` table from broker.toml.
type Config struct {
	// Name is the extension's name in broker.toml ([extensions.NAME]).
	Name string
	// JSON is the `config` table as a JSON object; "{}" when there is none.
	JSON []byte
	// Logger writes to the broker's log, tagged with the extension's name.
	Logger *slog.Logger
}

// Decode unmarshals the config table into v, refusing keys v does not
// have, so a typo in broker.toml is an error that names the key.
func (c Config) Decode(v any) error {
	data := c.JSON
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("plugin: %s: config: %w", c.Name, err)
	}
	return nil
}

// Set holds the factories of the kinds a plugin serves; leave a kind nil to
// not serve it. The broker calls a factory once per start of the process,
// before the first call of that kind.
//
// A partitioner is called by one goroutine at a time (a BatchPartitioner may
// keep state, such as a round-robin position); retention policies,
// authenticators, authorizers and interceptors may be called concurrently
// and must be safe for that.
type Set struct {
	Partitioner   func(Config) (partitioner.BatchPartitioner, error)
	Retention     func(Config) (retention.Policy, error)
	Authenticator func(Config) (auth.Authenticator, error)
	Authorizer    func(Config) (auth.Authorizer, error)
	Interceptor   func(Config) (interceptor.Interceptor, error)
}

// Serve runs the plugin until the broker stops it; call it from main. A
// binary run by hand, not by a broker, prints an explanation and exits with
// status 1, as does a Set with no kind in it.
func Serve(s Set) {
	plugins, err := s.pluginSet()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         plugins,
		GRPCServer:      grpcServer,
	})
}

func grpcServer(opts []grpc.ServerOption) *grpc.Server {
	return grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(MaxMessageBytes))...)
}

// pluginSet builds the server side of the kinds s serves.
func (s Set) pluginSet() (goplugin.PluginSet, error) {
	logger := NewLogger(os.Stderr)
	set := goplugin.PluginSet{}
	if s.Partitioner != nil {
		srv := &partitionerServer{conf: newConfigured(s.Partitioner, logger)}
		set[KindPartitioner] = &grpcPlugin{kind: KindPartitioner, server: func(g *grpc.Server) { pb.RegisterPartitionerServer(g, srv) }}
	}
	if s.Retention != nil {
		srv := &retentionServer{conf: newConfigured(s.Retention, logger)}
		set[KindRetention] = &grpcPlugin{kind: KindRetention, server: func(g *grpc.Server) { pb.RegisterRetentionServer(g, srv) }}
	}
	if s.Authenticator != nil {
		srv := &authenticatorServer{conf: newConfigured(s.Authenticator, logger)}
		set[KindAuthenticator] = &grpcPlugin{kind: KindAuthenticator, server: func(g *grpc.Server) { pb.RegisterAuthenticatorServer(g, srv) }}
	}
	if s.Authorizer != nil {
		srv := &authorizerServer{conf: newConfigured(s.Authorizer, logger)}
		set[KindAuthorizer] = &grpcPlugin{kind: KindAuthorizer, server: func(g *grpc.Server) { pb.RegisterAuthorizerServer(g, srv) }}
	}
	if s.Interceptor != nil {
		srv := &interceptorServer{conf: newConfigured(s.Interceptor, logger)}
		set[KindInterceptor] = &grpcPlugin{kind: KindInterceptor, server: func(g *grpc.Server) { pb.RegisterInterceptorServer(g, srv) }}
	}
	if len(set) == 0 {
		return nil, fmt.Errorf("plugin: Serve: the Set serves no kind of extension")
	}
	return set, nil
}

func errUnknownKind(kind string) error {
	return fmt.Errorf("plugin: unknown extension kind %q", kind)
}

// NewLogger returns a logger whose records the broker parses and re-logs at
// their level with their attributes (go-plugin's JSON log lines). Serve's
// Config.Logger is one of these on stderr; use NewLogger in code that runs
// before Serve.
func NewLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level:       slog.LevelDebug,
		ReplaceAttr: hclogAttr,
	}))
}

// hclogTime is the timestamp layout the host's log parser accepts.
const hclogTime = "2006-01-02T15:04:05.000000Z07:00"

func hclogAttr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.TimeKey:
		return slog.String("@timestamp", a.Value.Time().Format(hclogTime))
	case slog.LevelKey:
		lvl, _ := a.Value.Any().(slog.Level)
		return slog.String("@level", hclogLevel(lvl))
	case slog.MessageKey:
		return slog.Attr{Key: "@message", Value: a.Value}
	}
	return a
}

func hclogLevel(l slog.Level) string {
	switch {
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	}
	return "error"
}
