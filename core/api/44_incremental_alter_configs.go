package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
)

// IncrementalAlterConfigs (KIP-339) sets, deletes, appends to or subtracts
// from single configs, leaving the others as they are.
func init() { reg(44, 0, 1, (*Broker).handleIncrementalAlterConfigs) }

func (b *Broker) handleIncrementalAlterConfigs(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.IncrementalAlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	changes := make([]configChange, len(req.Resources))
	for i, rr := range req.Resources {
		c := configChange{typ: rr.ResourceType, name: rr.ResourceName}
		for _, rc := range rr.Configs {
			c.ops = append(c.ops, controller.ConfigOp{Name: rc.Name, Value: rc.Value, Op: controller.OpType(rc.Op)})
		}
		changes[i] = c
	}
	errs := b.alterConfigs(r, changes, req.ValidateOnly)
	for i, rr := range req.Resources {
		res := kmsg.NewIncrementalAlterConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		if e := errs[i]; e != nil {
			res.ErrorCode, res.ErrorMessage = e.code, e.message()
		}
		resp.Resources = append(resp.Resources, res)
	}
	return protocol.Reply{Resp: resp}
}
