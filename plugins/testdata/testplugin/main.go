// Command testplugin is a plugin for the host's tests: it serves every kind
// and misbehaves on request. A partitioner places a record by the length of
// its key, and the keys "crash", "hang", "error" and "range" make it exit,
// never answer, fail, or answer a partition out of range.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/plugin"
	"github.com/gregorbroker/gregor/sdk/retention"
)

type config struct {
	// Refuse makes Configure fail.
	Refuse bool `json:"refuse"`
	// Users are the PLAIN users and their passwords.
	Users map[string]string `json:"users"`
	// Allow are the principals the authorizer allows.
	Allow []string `json:"allow"`
	// Groups are the groups the retention policy needs.
	Groups []string `json:"groups"`
}

func load(c plugin.Config) (config, error) {
	var cfg config
	if err := c.Decode(&cfg); err != nil {
		return cfg, err
	}
	if cfg.Refuse {
		return cfg, errors.New("refusing this configuration")
	}
	c.Logger.Info("configured", "name", c.Name)
	fmt.Fprintln(os.Stderr, "plain stderr line from", c.Name)
	return cfg, nil
}

func misbehave(what string) error {
	switch what {
	case "crash":
		os.Exit(3)
	case "hang":
		time.Sleep(time.Hour)
	case "error":
		return errors.New("asked to fail")
	}
	return nil
}

// intercept upper-cases values; a value "reject" rejects its record,
// "shrink" answers one record too few, "garbage" an unknown action,
// "badindex" a record error outside the batch, and "crash", "hang" and
// "error" misbehave.
func intercept(_ context.Context, b *interceptor.Batch) (interceptor.Decision, error) {
	out := make([]interceptor.Record, len(b.Records))
	for i, r := range b.Records {
		switch string(r.Value) {
		case "reject":
			return interceptor.RejectRecords("asked to reject", interceptor.RecordError{Index: int32(i), Message: "value is reject"}), nil
		case "shrink":
			return interceptor.RewriteBatch(out[:i]), nil
		case "garbage":
			return interceptor.Decision{Action: 9, Message: "not an action"}, nil
		case "badindex":
			return interceptor.RejectRecords("outside", interceptor.RecordError{Index: int32(len(b.Records) + 98), Message: "no such record"}), nil
		}
		if err := misbehave(string(r.Value)); err != nil {
			return interceptor.Decision{}, err
		}
		out[i] = interceptor.Record{Key: r.Key, Headers: r.Headers}
		if r.Value != nil {
			out[i].Value = []byte(strings.ToUpper(string(r.Value)))
		}
	}
	return interceptor.RewriteBatch(out), nil
}

type lengthPartitioner struct{}

func (lengthPartitioner) PartitionBatch(records []partitioner.Record, n int32, out []int32) error {
	if err := partitioner.CheckBatch(records, n, out); err != nil {
		return err
	}
	for i, r := range records {
		if err := misbehave(string(r.Key)); err != nil {
			return err
		}
		out[i] = int32(len(r.Key)) % n
		if string(r.Key) == "range" {
			out[i] = n
		}
	}
	return nil
}

type groupsPolicy struct{ groups []string }

func (p groupsPolicy) DeletableSegments(_ context.Context, part retention.Partition) (int, error) {
	if err := misbehave(part.Topic); err != nil {
		return 0, err
	}
	if part.Topic == "range" {
		return len(part.Segments), nil
	}
	return retention.ConsumedByAll(part), nil
}

func (p groupsPolicy) Groups() []string { return p.groups }

type users map[string]string

func (u users) Mechanisms() []string { return []string{"PLAIN"} }

func (u users) Authenticate(_ context.Context, c auth.Credentials) (auth.Principal, error) {
	if err := misbehave(c.Username); err != nil {
		return auth.Principal{}, err
	}
	if pw, ok := u[c.Username]; !ok || pw != string(c.Password) {
		return auth.Principal{}, fmt.Errorf("user %q: %w", c.Username, auth.ErrAuthenticationFailed)
	}
	return auth.User(c.Username), nil
}

func main() {
	plugin.Serve(plugin.Set{
		Partitioner: func(c plugin.Config) (partitioner.BatchPartitioner, error) {
			_, err := load(c)
			return lengthPartitioner{}, err
		},
		Retention: func(c plugin.Config) (retention.Policy, error) {
			cfg, err := load(c)
			return groupsPolicy{groups: cfg.Groups}, err
		},
		Authenticator: func(c plugin.Config) (auth.Authenticator, error) {
			cfg, err := load(c)
			return users(cfg.Users), err
		},
		Interceptor: func(c plugin.Config) (interceptor.Interceptor, error) {
			_, err := load(c)
			return interceptor.Func(intercept), err
		},
		Authorizer: func(c plugin.Config) (auth.Authorizer, error) {
			cfg, err := load(c)
			allowed := map[string]bool{}
			for _, p := range cfg.Allow {
				allowed[p] = true
			}
			return auth.Func(func(_ context.Context, a auth.Action) (auth.Decision, error) {
				if err := misbehave(a.Principal.Name); err != nil {
					return auth.Deny, err
				}
				if allowed[a.Principal.String()] {
					return auth.Allow, nil
				}
				return auth.Deny, nil
			}), err
		},
	})
}
