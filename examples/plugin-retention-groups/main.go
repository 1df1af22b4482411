// Command plugin-retention-groups is a Gregor retention policy run as a
// go-plugin process: a segment may be deleted only once every named
// consumer group has committed an offset past its last record. An optional
// age limit lets segments go anyway once they are old enough, so a group
// that stopped consuming cannot fill the disk.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gregorbroker/gregor/sdk/plugin"
	"github.com/gregorbroker/gregor/sdk/retention"
)

// Config is the extension's `config` table in broker.toml.
type Config struct {
	// Groups must all have consumed a segment before it goes.
	Groups []string `json:"groups"`
	// MaxAgeMs, when positive, deletes a segment whose newest record is
	// older than this many milliseconds even if a group has not read it.
	MaxAgeMs int64 `json:"max_age_ms"`
}

// Policy is the retention policy.
type Policy struct {
	cfg Config
	log *slog.Logger
}

// New checks the config and builds the policy.
func New(cfg Config, log *slog.Logger) (*Policy, error) {
	if len(cfg.Groups) == 0 {
		return nil, errors.New("config: groups must name at least one consumer group")
	}
	for _, g := range cfg.Groups {
		if g == "" {
			return nil, errors.New("config: groups holds an empty name")
		}
	}
	if cfg.MaxAgeMs < 0 {
		return nil, fmt.Errorf("config: max_age_ms %d is negative", cfg.MaxAgeMs)
	}
	return &Policy{cfg: cfg, log: log}, nil
}

// Groups implements retention.GroupInterest: the broker sends the committed
// offsets of exactly these groups.
func (p *Policy) Groups() []string { return p.cfg.Groups }

// DeletableSegments implements retention.Policy.
func (p *Policy) DeletableSegments(_ context.Context, part retention.Partition) (int, error) {
	committed := make(map[string]int64, len(part.Groups))
	for _, g := range part.Groups {
		committed[g.Group] = g.Offset
	}
	// The lowest commit among the named groups; a group without a commit
	// (or missing from the facts) has read nothing.
	low := int64(-1)
	for i, g := range p.cfg.Groups {
		off, ok := committed[g]
		if !ok {
			off = -1
		}
		if i == 0 || off < low {
			low = off
		}
	}
	n := 0
	for n < len(part.Segments)-1 {
		s := part.Segments[n]
		consumed := low >= 0 && s.NextOffset <= low
		expired := p.cfg.MaxAgeMs > 0 && s.LargestTimestampMs >= 0 && part.NowMs-s.LargestTimestampMs > p.cfg.MaxAgeMs
		if !consumed && !expired {
			break
		}
		n++
	}
	if n > 0 {
		p.log.Debug("segments consumed by every group", "topic", part.Topic, "partition", part.Partition,
			"segments", n, "lowest_commit", low)
	}
	return n, nil
}

func main() {
	plugin.Serve(plugin.Set{
		Retention: func(c plugin.Config) (retention.Policy, error) {
			var cfg Config
			if err := c.Decode(&cfg); err != nil {
				return nil, err
			}
			return New(cfg, c.Logger)
		},
	})
}
