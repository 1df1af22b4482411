package api

import (
	"errors"
	"maps"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/auth"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// AlterClientQuotas (KIP-546) sets and removes quota values of entities;
// kafka-configs --alter --entity-type users/clients/ips uses it.
func init() { reg(49, 0, 1, (*Broker).handleAlterClientQuotas) }

func (b *Broker) handleAlterClientQuotas(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.AlterClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	allowed := b.authorizeCluster(r, sdkauth.OpAlterConfigs)
	errs := make([]*apiError, len(req.Entries))
	var changes []controller.ClientQuota
	var changeOf []int
	im := b.Controller.Image()
	for i, e := range req.Entries {
		if !allowed {
			errs[i] = newAPIError(kerr.ClusterAuthorizationFailed, "Cluster authorization failed.")
			continue
		}
		entity, values, err := quotaChange(im, e)
		if err != nil {
			errs[i] = newAPIError(kerr.InvalidRequest, err.Error())
			continue
		}
		if !req.ValidateOnly {
			changes = append(changes, controller.ClientQuota{Entity: entity, Values: values})
			changeOf = append(changeOf, i)
		}
	}
	if len(changes) > 0 {
		ctx, cancel := b.adminCtx(r, 0)
		res := b.Controller.SetClientQuotas(ctx, changes)
		cancel()
		for j, err := range res {
			errs[changeOf[j]] = fromErr(err)
		}
		b.syncQuotas()
	}
	for i, e := range req.Entries {
		re := kmsg.NewAlterClientQuotasResponseEntry()
		for _, p := range e.Entity {
			ep := kmsg.NewAlterClientQuotasResponseEntryEntity()
			ep.Type, ep.Name = p.Type, p.Name
			re.Entity = append(re.Entity, ep)
		}
		if errs[i] != nil {
			re.ErrorCode, re.ErrorMessage = errs[i].code, errs[i].message()
		}
		resp.Entries = append(resp.Entries, re)
	}
	return protocol.Reply{Resp: resp}
}

// quotaChange checks one entry with Kafka's rules (known entity types in a
// valid combination, each key once, valid values) and returns the entity's
// values after the change.
func quotaChange(im *controller.Image, e kmsg.AlterClientQuotasRequestEntry) (controller.QuotaEntity, map[string]float64, error) {
	var entity controller.QuotaEntity
	var types []string
	for _, p := range e.Entity {
		switch p.Type {
		case auth.QuotaEntityUser, auth.QuotaEntityClientID, auth.QuotaEntityIP:
		default:
			return nil, nil, errors.New("Unknown entity type " + p.Type)
		}
		part := controller.QuotaEntityPart{Type: p.Type, Default: p.Name == nil}
		if p.Name != nil {
			part.Name = *p.Name
		}
		entity = append(entity, part)
		types = append(types, p.Type)
	}
	sort.Strings(types)
	switch {
	case len(types) == 1, len(types) == 2 && types[0] == auth.QuotaEntityClientID && types[1] == auth.QuotaEntityUser:
	default:
		return nil, nil, errors.New("Invalid quota entity combination")
	}
	entity, err := entity.Normalize()
	if err != nil {
		return nil, nil, err
	}
	values := map[string]float64{}
	if cur, ok := im.Quotas[entity.Key()]; ok {
		values = maps.Clone(cur.Values)
	}
	seen := map[string]bool{}
	for _, op := range e.Ops {
		if seen[op.Key] {
			return nil, nil, errors.New("Duplicate quota key " + op.Key)
		}
		seen[op.Key] = true
		if op.Remove {
			delete(values, op.Key)
			continue
		}
		if err := auth.ValidateQuota(types, op.Key, op.Value); err != nil {
			return nil, nil, err
		}
		values[op.Key] = op.Value
	}
	return entity, values, nil
}
