package server

import (
	"context"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gregorbroker/gregor/core/httpapi"
	"github.com/gregorbroker/gregor/mirror"
)

// Mirror link states the admin API reports.
const (
	linkStarting = "starting" // no partition discovered yet
	linkRunning  = "running"  // every partition mirroring or caught up
	linkDegraded = "degraded" // some partitions failing
	linkPromoted = "promoted" // every partition promoted on the target
)

// runningMirror is one [mirror.NAME] mirror in the run group.
type runningMirror struct {
	name string
	m    *mirror.Mirror
}

// mirrorLinks shows the broker's mirrors to the admin API. The record age
// is read from the mirrors' own gauge, so it is the age each partition's
// last mirrored record had when the target acknowledged it.
type mirrorLinks struct {
	mirrors []runningMirror
	gather  prometheus.Gatherer
}

var _ httpapi.MirrorLinks = (*mirrorLinks)(nil)

// MirrorLinks reports each mirror with its lag, sorted by name.
func (l *mirrorLinks) MirrorLinks(ctx context.Context) ([]httpapi.MirrorLink, error) {
	ages := recordAges(l.gather)
	out := make([]httpapi.MirrorLink, 0, len(l.mirrors))
	for _, rm := range l.mirrors {
		link := linkFromStatus(rm.m.Status())
		link.Name = rm.name
		link.RecordAgeMs = ages[rm.name]
		out = append(out, link)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// linkFromStatus turns a mirror's status into the admin API's link: the
// source topics it mirrors, the lag per partition and overall, and a state.
func linkFromStatus(st mirror.Status) httpapi.MirrorLink {
	link := httpapi.MirrorLink{Name: st.Name, Source: st.Source, LastError: st.LastError, Topics: []string{}}
	topics := map[string]bool{}
	failed, promoted := 0, 0
	for _, p := range st.Partitions {
		if !topics[p.Topic] {
			topics[p.Topic] = true
			link.Topics = append(link.Topics, p.Topic)
		}
		link.LagRecords += p.Lag
		link.PartitionLags = append(link.PartitionLags, httpapi.MirrorLag{Topic: p.Topic, Partition: p.Partition,
			LagRecords: p.Lag, State: p.State, Error: p.Error, FailedAt: rfc3339(p.FailedAt), RetryAt: rfc3339(p.RetryAt),
			LastWrite: rfc3339(p.LastWrite), TooLarge: p.TooLarge})
		if p.Error != "" && link.LastError == "" {
			link.LastError = p.Topic + ": " + p.Error
		}
		switch p.State {
		case mirror.StateFailing:
			failed++
		case mirror.StatePromoted:
			promoted++
		}
	}
	sort.Strings(link.Topics)
	sort.Slice(link.PartitionLags, func(i, j int) bool {
		a, b := link.PartitionLags[i], link.PartitionLags[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	link.FailingPartitions = failed
	switch n := len(st.Partitions); {
	case failed > 0:
		link.State = linkDegraded
	case n == 0:
		link.State = linkStarting
	case promoted == n:
		link.State = linkPromoted
	default:
		link.State = linkRunning
	}
	return link
}

// rfc3339 is t in RFC 3339 (UTC), "" when zero.
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// recordAges reads gregor_mirror_record_age_seconds and returns, per
// mirror, the largest partition value in milliseconds. A gather error
// leaves the ages at zero: the links are still worth showing.
func recordAges(g prometheus.Gatherer) map[string]int64 {
	out := map[string]int64{}
	if g == nil {
		return out
	}
	families, _ := g.Gather()
	for _, f := range families {
		if f.GetName() != "gregor_mirror_record_age_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			name := ""
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "mirror" {
					name = lp.GetValue()
				}
			}
			if ms := int64(m.GetGauge().GetValue() * 1000); name != "" && ms > out[name] {
				out[name] = ms
			}
		}
	}
	return out
}
