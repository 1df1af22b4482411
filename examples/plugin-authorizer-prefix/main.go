// Command plugin-authorizer-prefix is a Gregor authorizer run as a
// go-plugin process: only the listed principals may write to topics whose
// name starts with a given prefix. Every other action is allowed, so it
// guards a namespace of topics and leaves the rest of the cluster open.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/plugin"
)

// Config is the extension's `config` table in broker.toml.
type Config struct {
	// Prefix is the topic name prefix that is guarded ("payments.").
	Prefix string `json:"prefix"`
	// Writers are the principals ("User:billing") that may write there.
	Writers []string `json:"writers"`
}

// Authorizer is the authorizer.
type Authorizer struct {
	prefix  string
	writers map[auth.Principal]bool
	log     *slog.Logger
}

// New checks the config and builds the authorizer.
func New(cfg Config, log *slog.Logger) (*Authorizer, error) {
	if cfg.Prefix == "" {
		return nil, errors.New("config: prefix must not be empty (it would guard every topic)")
	}
	a := &Authorizer{prefix: cfg.Prefix, writers: make(map[auth.Principal]bool, len(cfg.Writers)), log: log}
	for _, w := range cfg.Writers {
		p, err := auth.ParsePrincipal(w)
		if err != nil {
			return nil, fmt.Errorf("config: writers: %w", err)
		}
		a.writers[p] = true
	}
	return a, nil
}

// guarded reports whether an action writes to a guarded topic. ALL covers
// WRITE in Kafka's model, so it is guarded too.
func (a *Authorizer) guarded(act auth.Action) bool {
	if act.Resource.Type != auth.ResourceTopic || !strings.HasPrefix(act.Resource.Name, a.prefix) {
		return false
	}
	return act.Operation == auth.OpWrite || act.Operation == auth.OpAll
}

// Authorize implements auth.Authorizer.
func (a *Authorizer) Authorize(_ context.Context, actions []auth.Action, decisions []auth.Decision) error {
	if err := auth.CheckBatch(actions, decisions); err != nil {
		return err
	}
	for i, act := range actions {
		decisions[i] = auth.Allow
		if a.guarded(act) && !a.writers[act.Principal] {
			decisions[i] = auth.Deny
			a.log.Info("write denied", "principal", act.Principal.String(), "topic", act.Resource.Name, "host", act.Host)
		}
	}
	return nil
}

func main() {
	plugin.Serve(plugin.Set{
		Authorizer: func(c plugin.Config) (auth.Authorizer, error) {
			var cfg Config
			if err := c.Decode(&cfg); err != nil {
				return nil, err
			}
			return New(cfg, c.Logger)
		},
	})
}
