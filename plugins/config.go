package plugins

import (
	"fmt"
	"log/slog"
	"time"

	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
)

// Config describes one extension process, as [extensions.NAME] in
// broker.toml declares it.
type Config struct {
	// Name is the extension's name ([extensions.NAME]); it tags the log.
	Name string
	// Kind is sdkplugin.KindPartitioner, KindRetention, KindAuthenticator,
	// KindAuthorizer or KindInterceptor.
	Kind string
	// Path is the plugin executable; Args are passed to it.
	Path string
	Args []string
	// ConfigJSON is the extension's config table as a JSON object; nil
	// sends "{}".
	ConfigJSON []byte

	// CallTimeout bounds one call; a call that takes longer fails with
	// ErrTimeout and the process is restarted. Default 2s.
	CallTimeout time.Duration
	// StartTimeout bounds starting the process, the handshake and the
	// Configure call. Default 10s.
	StartTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait before a restart after a
	// crash: MinBackoff doubled for each consecutive failure, at most
	// MaxBackoff; a successful call resets it. Defaults 100ms and 30s.
	MinBackoff time.Duration
	MaxBackoff time.Duration

	// Logger receives the host's events and the plugin's stderr. Default
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock for backoff. Default
	// time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.CallTimeout == 0 {
		c.CallTimeout = 2 * time.Second
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 10 * time.Second
	}
	if c.MinBackoff == 0 {
		c.MinBackoff = 100 * time.Millisecond
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.ConfigJSON == nil {
		c.ConfigJSON = []byte("{}")
	}
	return c
}

func (c Config) validate(kind string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("plugins: %s: %s", c.Name, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Name == "":
		return fmt.Errorf("plugins: extension without a name")
	case c.Kind != kind:
		return bad("kind %q, want %q", c.Kind, kind)
	case c.Path == "":
		return bad("no executable path")
	case c.CallTimeout < 0:
		return bad("call timeout %v is negative", c.CallTimeout)
	case c.StartTimeout < 0:
		return bad("start timeout %v is negative", c.StartTimeout)
	case c.MinBackoff < 0 || c.MaxBackoff < c.MinBackoff:
		return bad("backoff %v..%v is not a range", c.MinBackoff, c.MaxBackoff)
	}
	known := false
	for _, k := range sdkplugin.Kinds {
		known = known || k == kind
	}
	if !known {
		return bad("unknown kind %q", kind)
	}
	return nil
}
