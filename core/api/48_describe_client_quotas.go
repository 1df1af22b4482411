package api

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/auth"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// DescribeClientQuotas (KIP-546) lists the quotas of the entities that
// match a filter; kafka-configs --describe uses it.
func init() { reg(48, 0, 1, (*Broker).handleDescribeClientQuotas) }

// Match types of a filter component.
const (
	quotaMatchExact   = 0
	quotaMatchDefault = 1
	quotaMatchAny     = 2
)

func (b *Broker) handleDescribeClientQuotas(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DescribeClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	fail := func(code *kerr.Error, msg string) protocol.Reply {
		resp.ErrorCode, resp.ErrorMessage, resp.Entries = code.Code, &msg, nil
		return protocol.Reply{Resp: resp}
	}
	if !b.authorizeCluster(r, sdkauth.OpDescribeConfigs) {
		return fail(kerr.ClusterAuthorizationFailed, "Cluster authorization failed.")
	}
	seen := map[string]bool{}
	for _, c := range req.Components {
		switch {
		case seen[c.EntityType]:
			return fail(kerr.InvalidRequest, "Duplicate entity type "+c.EntityType+" in filter.")
		case c.EntityType != auth.QuotaEntityUser && c.EntityType != auth.QuotaEntityClientID && c.EntityType != auth.QuotaEntityIP:
			return fail(kerr.InvalidRequest, "Unknown entity type "+c.EntityType+".")
		case c.MatchType == quotaMatchExact && c.Match == nil:
			return fail(kerr.InvalidRequest, "An exact match needs a name.")
		case c.MatchType != quotaMatchExact && c.MatchType != quotaMatchDefault && c.MatchType != quotaMatchAny:
			return fail(kerr.InvalidRequest, "Unknown match type "+itoa(int64(c.MatchType))+".")
		}
		seen[c.EntityType] = true
	}
	im := b.Controller.Image()
	keys := make([]string, 0, len(im.Quotas))
	for k := range im.Quotas {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	for _, k := range keys {
		q := im.Quotas[k]
		if !quotaMatches(q.Entity, req.Components, req.Strict) {
			continue
		}
		e := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, p := range q.Entity {
			ep := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			ep.Type = p.Type
			if !p.Default {
				ep.Name = strPtr(p.Name)
			}
			e.Entity = append(e.Entity, ep)
		}
		names := make([]string, 0, len(q.Values))
		for n := range q.Values {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = n, q.Values[n]
			e.Values = append(e.Values, v)
		}
		resp.Entries = append(resp.Entries, e)
	}
	return protocol.Reply{Resp: resp}
}

// quotaMatches applies a DescribeClientQuotas filter: every component must
// match, and a strict filter admits no entity with other components.
func quotaMatches(entity controller.QuotaEntity, comps []kmsg.DescribeClientQuotasRequestComponent, strict bool) bool {
	if strict && len(entity) != len(comps) {
		return false
	}
	for _, c := range comps {
		var part *controller.QuotaEntityPart
		for i := range entity {
			if entity[i].Type == c.EntityType {
				part = &entity[i]
			}
		}
		if part == nil {
			return false
		}
		switch c.MatchType {
		case quotaMatchExact:
			if part.Default || part.Name != *c.Match {
				return false
			}
		case quotaMatchDefault:
			if !part.Default {
				return false
			}
		}
	}
	return true
}
