package api

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/auth"
	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/httpapi"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func groupErr(id string, err error) error {
	switch {
	case errors.Is(err, group.ErrGroupIDNotFound):
		return fmt.Errorf("api: group %s: %w", id, httpapi.ErrNotFound)
	case errors.Is(err, group.ErrCoordinatorLoadInProgress), errors.Is(err, group.ErrNotCoordinator),
		errors.Is(err, group.ErrCoordinatorNotAvailable):
		return fmt.Errorf("api: group %s: %w: %v", id, httpapi.ErrUnavailable, err)
	}
	return fmt.Errorf("api: group %s: %w", id, err)
}

// Groups implements httpapi.Admin: the groups the principal may describe,
// with their total lag.
func (v adminView) Groups(ctx context.Context) ([]httpapi.GroupSummary, error) {
	b := v.b
	if b.Groups == nil {
		return nil, fmt.Errorf("api: %w: no group coordinator", httpapi.ErrUnavailable)
	}
	ls, err := b.Groups.ListGroups(nil, nil)
	if err != nil && len(ls) == 0 {
		return nil, groupErr("list", err)
	}
	ids := make([]string, len(ls))
	for i, l := range ls {
		ids[i] = l.Group
	}
	ok := b.httpAllowed(ctx, sdkauth.OpDescribe, sdkauth.ResourceGroup, ids...)
	out := make([]httpapi.GroupSummary, 0, len(ls))
	for i, l := range ls {
		if !ok[i] {
			continue
		}
		s := httpapi.GroupSummary{Group: l.Group, Type: l.Type, State: string(l.State), ProtocolType: l.ProtocolType}
		if d, err := b.Groups.DescribeGroup(l.Group); err == nil {
			s.Members = len(d.Members)
		}
		if d, err := b.Groups.DescribeConsumerGroup(l.Group); err == nil {
			s.Members = len(d.Members)
		}
		lags, _ := b.groupLag(ctx, l.Group, nil)
		for _, pl := range lags {
			if pl.Lag > 0 {
				s.Lag += pl.Lag
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// groupLag lists a group's committed offsets on topics the principal may
// describe, with lag against the high watermark of partitions hosted here.
func (b *Broker) groupLag(ctx context.Context, id string, owner map[group.TopicPartition]string) ([]httpapi.PartitionLag, error) {
	offs, err := b.Groups.FetchOffsets(group.FetchRequest{Group: id})
	if err != nil {
		return nil, err
	}
	topics := map[string]bool{}
	var names []string
	for _, o := range offs {
		if _, seen := topics[o.Topic]; !seen {
			topics[o.Topic] = false
			names = append(names, o.Topic)
		}
	}
	for i, ok := range b.httpAllowed(ctx, sdkauth.OpDescribe, sdkauth.ResourceTopic, names...) {
		topics[names[i]] = ok
	}
	out := make([]httpapi.PartitionLag, 0, len(offs))
	for _, o := range offs {
		if !topics[o.Topic] || o.Offset.Offset < 0 {
			continue
		}
		pl := httpapi.PartitionLag{Topic: o.Topic, Partition: o.Partition, CommittedOffset: o.Offset.Offset,
			HighWatermark: -1, Lag: -1, Metadata: o.Metadata, MemberID: owner[o.TopicPartition]}
		if p, ok := b.Partitions.Get(o.Topic, o.Partition); ok {
			pl.HighWatermark = p.Offsets().HighWatermark
			pl.Lag = max(0, pl.HighWatermark-pl.CommittedOffset)
		}
		out = append(out, pl)
	}
	return out, nil
}

// Group implements httpapi.Admin: DESCRIBE on the group shows its members,
// their assignments and the lag of each committed partition.
func (v adminView) Group(ctx context.Context, id string) (httpapi.GroupDetail, error) {
	b := v.b
	if b.Groups == nil {
		return httpapi.GroupDetail{}, fmt.Errorf("api: %w: no group coordinator", httpapi.ErrUnavailable)
	}
	if err := b.httpDenied(ctx, sdkauth.OpDescribe, sdkauth.ResourceGroup, id); err != nil {
		return httpapi.GroupDetail{}, err
	}
	d, err := b.Groups.DescribeGroup(id)
	if err != nil {
		return httpapi.GroupDetail{}, groupErr(id, err)
	}
	gd := httpapi.GroupDetail{GroupSummary: httpapi.GroupSummary{Group: id, Type: d.Type, State: string(d.State),
		ProtocolType: d.ProtocolType}, Protocol: d.Protocol, MemberList: []httpapi.GroupMember{}, LagByTopic: map[string]int64{}}
	owner := map[group.TopicPartition]string{}
	// DescribeGroup shows a consumer (KIP-848) group's type and state only;
	// its members and assignments come from DescribeConsumerGroup.
	if cd, err := b.Groups.DescribeConsumerGroup(id); err == nil {
		gd.Protocol = cd.Assignor
		for _, m := range cd.Members {
			gd.MemberList = append(gd.MemberList, httpapi.GroupMember{MemberID: m.MemberID, ClientID: m.ClientID,
				ClientHost: m.ClientHost, InstanceID: deref(m.InstanceID), Assignment: m.Assignment})
		}
	}
	for _, m := range d.Members {
		gm := httpapi.GroupMember{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost,
			InstanceID: deref(m.InstanceID), Assignment: map[string][]int32{}}
		if d.ProtocolType == "consumer" && len(m.Assignment) > 0 {
			var a kmsg.ConsumerMemberAssignment
			if a.ReadFrom(m.Assignment) == nil {
				for _, t := range a.Topics {
					gm.Assignment[t.Topic] = append(gm.Assignment[t.Topic], t.Partitions...)
				}
			}
		}
		gd.MemberList = append(gd.MemberList, gm)
	}
	for _, m := range gd.MemberList {
		for t, ps := range m.Assignment {
			for _, p := range ps {
				owner[group.TopicPartition{Topic: t, Partition: p}] = m.MemberID
			}
		}
	}
	gd.Members = len(gd.MemberList)
	lags, err := b.groupLag(ctx, id, owner)
	if err != nil {
		return httpapi.GroupDetail{}, groupErr(id, err)
	}
	gd.Offsets = lags
	for _, pl := range lags {
		if pl.Lag > 0 {
			gd.Lag += pl.Lag
			gd.LagByTopic[pl.Topic] += pl.Lag
		} else if _, ok := gd.LagByTopic[pl.Topic]; !ok {
			gd.LagByTopic[pl.Topic] = 0
		}
	}
	return gd, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Extensions implements httpapi.Admin: the extensions broker.toml
// declares, the topics that pick them and their call counts; DESCRIBE on
// the cluster is needed.
func (v adminView) Extensions(ctx context.Context) ([]httpapi.Extension, error) {
	b := v.b
	if err := b.httpDenied(ctx, sdkauth.OpDescribe, sdkauth.ResourceCluster, sdkauth.ClusterName); err != nil {
		return nil, err
	}
	stats := map[string]extension.StatsSnapshot{}
	if b.Extensions != nil {
		for _, s := range b.Extensions.Stats() {
			stats[s.Name] = s
		}
	}
	im := b.Controller.Image()
	users := map[string][]string{}
	for name := range im.Topics {
		c := im.TopicConfig(name)
		for _, k := range []string{extension.ConfigPartitioner, extension.ConfigRetention} {
			if v := c[k]; v != "" {
				users[v] = append(users[v], name)
			}
		}
	}
	names := make([]string, 0, len(b.Config.Extensions))
	for n := range b.Config.Extensions {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]httpapi.Extension, 0, len(names))
	for _, n := range names {
		decl := b.Config.Extensions[n]
		e := httpapi.Extension{Name: n, Kind: decl.Kind, Runtime: "plugin", Path: decl.Exec,
			Fallback: decl.EffectiveFallback(), Topics: users[n]}
		if decl.WASM != "" {
			e.Runtime, e.Path = "wasm", decl.WASM
		}
		if e.Topics == nil {
			e.Topics = []string{}
		}
		sort.Strings(e.Topics)
		if s, ok := stats[n]; ok {
			e.Calls, e.Errors, e.Fallbacks = s.Calls, s.Errors, s.Fallbacks
			if s.Calls > 0 {
				e.MeanMs = float64(s.Total.Microseconds()) / 1000 / float64(s.Calls)
			}
			e.MaxMs = float64(s.Max.Microseconds()) / 1000
		}
		out = append(out, e)
	}
	return out, nil
}

var _ httpapi.Authenticator = (*Broker)(nil)

// AuthenticateHTTP implements httpapi.Authenticator with the Kafka
// listener's SASL mechanisms: Basic credentials go through PLAIN when it
// is enabled (so an extension's PLAIN authenticator decides too), else
// through the SCRAM credentials when a SCRAM mechanism is enabled; a
// Bearer token goes through OAUTHBEARER.
func (b *Broker) AuthenticateHTTP(ctx context.Context, c httpapi.Credentials) (string, error) {
	ms := b.Security.Mechanisms
	facts := auth.ConnFacts{Listener: "HTTP", ClientHost: c.ClientHost}
	switch c.Scheme {
	case "basic":
		if m, ok := ms.Lookup("PLAIN"); ok {
			ex := m.Start(facts)
			_, done, err := ex.Step(ctx, []byte("\x00"+c.Username+"\x00"+c.Password))
			if err != nil || !done {
				return "", fmt.Errorf("api: HTTP basic: %w", httpapi.ErrUnauthenticated)
			}
			return ex.Outcome().Principal.String(), nil
		}
		_, s256 := ms.Lookup(auth.ScramSHA256.String())
		_, s512 := ms.Lookup(auth.ScramSHA512.String())
		if (s256 || s512) && auth.VerifyPassword(ImageCredentials{Controller: b.Controller}, c.Username, c.Password) {
			return sdkauth.User(c.Username).String(), nil
		}
		return "", fmt.Errorf("api: HTTP basic: %w", httpapi.ErrUnauthenticated)
	case "bearer":
		m, ok := ms.Lookup("OAUTHBEARER")
		if !ok {
			return "", fmt.Errorf("api: HTTP bearer: %w: OAUTHBEARER is not enabled", httpapi.ErrUnauthenticated)
		}
		ex := m.Start(facts)
		msg := "n,,\x01auth=Bearer " + strings.TrimSpace(c.Token) + "\x01\x01"
		_, done, err := ex.Step(ctx, []byte(msg))
		if err != nil || !done {
			return "", fmt.Errorf("api: HTTP bearer: %w", httpapi.ErrUnauthenticated)
		}
		return ex.Outcome().Principal.String(), nil
	}
	return "", fmt.Errorf("api: HTTP %q: %w", c.Scheme, httpapi.ErrUnauthenticated)
}

// HTTPRequiresAuth reports whether the admin API must refuse requests
// without credentials: when SASL is enabled and every Kafka listener
// authenticates with it.
func HTTPRequiresAuth(cfg config.Config) bool {
	if len(cfg.Security.SASLMechanisms) == 0 {
		return false
	}
	for _, l := range cfg.KafkaListeners() {
		if !strings.HasPrefix(strings.ToUpper(l.Protocol), "SASL_") {
			return false
		}
	}
	return true
}
