package server

import (
	"context"
	"fmt"
	"sort"

	"github.com/oklog/run"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gregorbroker/gregor/core/httpapi"
	"github.com/gregorbroker/gregor/mirror"
)

// mirrorSpec is one [mirror.NAME] section, decoded.
type mirrorSpec struct {
	name string
	cfg  mirror.Config
}

// decodeMirrors decodes and validates the [mirror.NAME] sections. A section
// without target.bootstrap mirrors into this broker, through its advertised
// Kafka address.
func (s *Server) decodeMirrors() error {
	names := make([]string, 0, len(s.cfg.Mirrors))
	for name := range s.cfg.Mirrors {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		table := map[string]any{}
		for k, v := range s.cfg.Mirrors[name] {
			table[k] = v
		}
		if target, ok := table["target"].(map[string]any); ok {
			if _, set := target["bootstrap"]; !set {
				host, port, err := s.advertised()
				if err != nil {
					return err
				}
				own := map[string]any{"bootstrap": []any{fmt.Sprintf("%s:%d", host, port)}}
				for k, v := range target {
					own[k] = v
				}
				table["target"] = own
			}
		}
		cfg, err := mirror.FromTable("mirror."+name, table)
		if err != nil {
			return fmt.Errorf("server: %w", err)
		}
		s.mirrors = append(s.mirrors, mirrorSpec{name: name, cfg: cfg})
	}
	return nil
}

// addMirrors adds one actor per configured mirror to the run group; their
// metrics go to reg, labelled with the section name. The answer shows the
// mirrors to the admin API; it is nil when no mirror is configured.
func (s *Server) addMirrors(g *run.Group, reg *prometheus.Registry) (httpapi.MirrorLinks, error) {
	if len(s.mirrors) == 0 {
		return nil, nil
	}
	links := &mirrorLinks{gather: reg}
	for _, spec := range s.mirrors {
		m, err := mirror.New(spec.cfg, mirror.RunOptions{Name: spec.name, Registerer: reg, Now: s.now,
			Logger: s.logger.With("component", "mirror")})
		if err != nil {
			return nil, fmt.Errorf("server: mirror.%s: %w", spec.name, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		g.Add(func() error { return m.Run(ctx) }, func(error) { cancel() })
		links.mirrors = append(links.mirrors, runningMirror{name: spec.name, m: m})
	}
	return links, nil
}
