package api

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// AlterConfigs replaces a resource's whole set of dynamic configs; it is
// deprecated in favour of IncrementalAlterConfigs but still in Kafka 4.
func init() { reg(33, 0, 2, (*Broker).handleAlterConfigs) }

func (b *Broker) handleAlterConfigs(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	changes := make([]configChange, len(req.Resources))
	for i, rr := range req.Resources {
		c := configChange{typ: rr.ResourceType, name: rr.ResourceName, replace: true}
		for _, rc := range rr.Configs {
			c.ops = append(c.ops, controller.ConfigOp{Name: rc.Name, Value: rc.Value, Op: controller.OpSet})
		}
		changes[i] = c
	}
	errs := b.alterConfigs(r, changes, req.ValidateOnly)
	for i, rr := range req.Resources {
		res := kmsg.NewAlterConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		if e := errs[i]; e != nil {
			res.ErrorCode, res.ErrorMessage = e.code, e.message()
		}
		resp.Resources = append(resp.Resources, res)
	}
	return protocol.Reply{Resp: resp}
}

// configChange is one resource of an AlterConfigs or IncrementalAlterConfigs
// request.
type configChange struct {
	typ  kmsg.ConfigResourceType
	name string
	// replace is AlterConfigs: the ops (all sets) become the resource's
	// whole set of dynamic configs.
	replace bool
	ops     []controller.ConfigOp
}

// alterConfigs applies Kafka's checks (duplicates, then ALTER_CONFIGS on the
// resource, then the values) to each resource and hands the valid
// topic changes to the controller. The result holds one error (or nil) per
// change.
func (b *Broker) alterConfigs(r *protocol.Request, changes []configChange, validateOnly bool) []*apiError {
	errs := make([]*apiError, len(changes))
	type key struct {
		typ  kmsg.ConfigResourceType
		name string
	}
	count := map[key]int{}
	for _, c := range changes {
		count[key{c.typ, c.name}]++
	}
	var reqs []controller.AlterConfig
	var reqOf []int
	for i, c := range changes {
		if count[key{c.typ, c.name}] > 1 {
			errs[i] = newAPIError(kerr.InvalidRequest, "Each resource must appear at most once.")
			continue
		}
		if e := b.configResourceDenied(r, sdkauth.OpAlterConfigs, c.typ, c.name); e != nil {
			errs[i] = e
			continue
		}
		if e := b.checkConfigChange(c); e != nil {
			errs[i] = e
			continue
		}
		res := controller.ConfigResource{Type: controller.ResourceTopic, Name: c.name}
		switch {
		case c.typ == kmsg.ConfigResourceTypeBroker && (len(c.ops) > 0 || c.replace):
			// Dynamic broker configs, committed through the metadata log
			// so that every broker applies them.
			res.Type = controller.ResourceBroker
		case c.typ == kmsg.ConfigResourceTypeGroupConfig:
			res.Type = controller.ResourceGroup
		case c.typ == kmsg.ConfigResourceTypeClientMetrics:
			res.Type = controller.ResourceClientMetrics
		case c.typ != kmsg.ConfigResourceTypeTopic:
			continue // a broker resource without changes: nothing to do
		}
		reqs = append(reqs, controller.AlterConfig{Resource: res, Replace: c.replace, Ops: c.ops})
		reqOf = append(reqOf, i)
	}
	if len(reqs) == 0 {
		return errs
	}
	ctx, cancel := b.adminCtx(r, 0)
	results := b.Controller.AlterConfigs(ctx, reqs, validateOnly)
	cancel()
	changed := false
	for j, res := range results {
		errs[reqOf[j]] = fromErr(res.Err)
		if res.Err == nil && !validateOnly {
			changed = true
			switch res.Resource.Type {
			case controller.ResourceBroker:
				b.Logger.Info("altered dynamic broker configs", "broker", res.Resource.Name)
			case controller.ResourceGroup:
				b.Logger.Info("altered group configs", "group", res.Resource.Name)
			default:
				b.Logger.Info("altered topic configs", "topic", res.Resource.Name)
			}
		}
	}
	if changed {
		// Partitions (and the replication throttles) pick up their new
		// rules before the client hears back.
		ctx, cancel := b.ctx(0)
		if err := b.WaitImage(ctx); err != nil {
			b.Logger.Warn("applying topic configs", "err", err)
		}
		cancel()
	}
	return errs
}

// checkConfigChange applies the checks Kafka makes before a change reaches
// the controller: no key twice, a value for every op but DELETE, a valid
// resource name, and, for a broker, changes to dynamic settings only with
// valid values (the replication throttle rates; Gregor's other broker
// settings come from broker.toml and are read-only at run time).
func (b *Broker) checkConfigChange(c configChange) *apiError {
	seen := make(map[string]bool, len(c.ops))
	var nulls []string
	for _, op := range c.ops {
		if seen[op.Name] {
			return newAPIError(kerr.InvalidRequest, "Error due to duplicate config keys")
		}
		seen[op.Name] = true
		if op.Value == nil && (c.replace || op.Op != controller.OpDelete) {
			nulls = append(nulls, op.Name)
		}
	}
	if len(nulls) > 0 {
		return newAPIError(kerr.InvalidRequest, "Null value not supported for : "+strings.Join(nulls, ", "))
	}
	switch {
	case c.typ == kmsg.ConfigResourceTypeTopic:
		if c.name == "" {
			return newAPIError(kerr.InvalidRequest, "Default topic resources are not allowed.")
		}
		if err := controller.ValidateTopicName(c.name); err != nil {
			return newAPIError(kerr.InvalidTopicException, err.Error())
		}
		return nil
	case c.typ == kmsg.ConfigResourceTypeBroker:
		if c.name != "" {
			if e := b.checkNodeID(c.name, "Node id"); e != nil {
				return e
			}
		}
		return checkBrokerConfigOps(c.ops)
	case c.typ == kmsg.ConfigResourceTypeBrokerLogger && !c.replace:
		return b.checkLoggerChange(c)
	case c.typ == kmsg.ConfigResourceTypeGroupConfig:
		return b.checkGroupConfigOps(c)
	case c.typ == kmsg.ConfigResourceTypeClientMetrics:
		return checkClientMetricsChange(c)
	}
	return newAPIError(kerr.InvalidRequest, "Unknown resource type "+itoa(int64(c.typ)))
}

// checkBrokerConfigOps accepts changes to dynamic broker settings and
// answers others as Kafka does for a setting that cannot change at run
// time: INVALID_REQUEST naming them.
func checkBrokerConfigOps(ops []controller.ConfigOp) *apiError {
	var static []string
	for _, op := range ops {
		if op.Op < controller.OpSet || op.Op > controller.OpSubtract {
			return newAPIError(kerr.InvalidRequest, "Unknown operations type "+itoa(int64(op.Op)))
		}
		def, ok := config.LookupDynamicBrokerConfig(op.Name)
		if !ok {
			static = append(static, op.Name)
			continue
		}
		switch op.Op {
		case controller.OpAppend, controller.OpSubtract:
			if def.Type != config.TypeList {
				return newAPIError(kerr.InvalidConfig, "Config value "+opVerb(op.Op)+" is not allowed for config key: "+op.Name)
			}
		case controller.OpSet:
			if err := def.Validate(*op.Value); err != nil {
				return newAPIError(kerr.InvalidRequest, "Invalid value "+*op.Value+" for configuration "+op.Name+": "+err.Error())
			}
		}
	}
	if len(static) > 0 {
		return newAPIError(kerr.InvalidRequest, "Cannot update these configs dynamically: "+strings.Join(static, ", ")+
			" (Gregor reads broker settings other than the replication throttle rates from broker.toml at start; change them there and restart the broker)")
	}
	return nil
}

func opVerb(op controller.OpType) string {
	if op == controller.OpAppend {
		return "append"
	}
	return "subtract"
}

// checkLoggerChange answers an IncrementalAlterConfigs on a BROKER_LOGGER
// resource as Kafka does for loggers that do not exist: Gregor logs through
// one structured logger and has no named loggers whose level could change.
func (b *Broker) checkLoggerChange(c configChange) *apiError {
	if e := b.checkNodeID(c.name, "Node id"); e != nil {
		return e
	}
	for _, op := range c.ops {
		switch op.Op {
		case controller.OpSet, controller.OpDelete:
			return newAPIError(kerr.InvalidConfig, "Logger "+op.Name+" does not exist!")
		case controller.OpAppend:
			return newAPIError(kerr.InvalidRequest, "APPEND operation is not allowed for the BROKER_LOGGER resource")
		case controller.OpSubtract:
			return newAPIError(kerr.InvalidRequest, "SUBTRACT operation is not allowed for the BROKER_LOGGER resource")
		default:
			return newAPIError(kerr.InvalidRequest, "Unknown operation type "+itoa(int64(op.Op))+" is not allowed for the BROKER_LOGGER resource")
		}
	}
	return nil
}
