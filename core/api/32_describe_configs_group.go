package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
)

// Group configs (the GROUP config resource, type 32) live in the metadata
// log like topic configs; a group need not exist to have them, as in
// Kafka.

// groupConfigs returns the configs explicitly set on a group.
func (b *Broker) groupConfigs(groupID string) map[string]string {
	return b.Controller.Image().Configs[controller.ConfigResource{Type: controller.ResourceGroup, Name: groupID}]
}

// describeGroupConfigs lists every group config: GROUP_CONFIG for a value
// set on the group, DEFAULT_CONFIG (the broker's setting) otherwise.
func (b *Broker) describeGroupConfigs(im *controller.Image, groupID string, wanted func(string) bool, opts describeOpts) ([]kmsg.DescribeConfigsResponseResourceConfig, *apiError) {
	if groupID == "" {
		return nil, newAPIError(kerr.InvalidRequest, "Group name must not be empty")
	}
	set := im.Configs[controller.ConfigResource{Type: controller.ResourceGroup, Name: groupID}]
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for _, def := range config.GroupConfigDefs(&b.Config) {
		if !wanted(def.Name) {
			continue
		}
		var syns []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
		v, ok := set[def.Name]
		if ok {
			syns = append(syns, synonym(def.Name, v, kmsg.ConfigSourceGroupConfig, false))
		} else {
			v = def.BrokerDefault(&b.Config)
		}
		if def.BrokerSynonym != "" {
			syns = append(syns, synonym(def.BrokerSynonym, def.BrokerDefault(&b.Config), kmsg.ConfigSourceDefaultConfig, false))
		}
		out = append(out, configEntry(def.Name, v, def.Type, def.Doc, false, syns, opts))
	}
	return out, nil
}

// checkGroupConfigOps applies Kafka's checks to a change of group configs
// before it reaches the controller: known names, set and delete only.
func (b *Broker) checkGroupConfigOps(c configChange) *apiError {
	if c.name == "" {
		return newAPIError(kerr.InvalidRequest, "Group name must not be empty")
	}
	if c.replace {
		return newAPIError(kerr.InvalidRequest, "AlterConfigs does not support the GROUP resource; use IncrementalAlterConfigs")
	}
	for _, op := range c.ops {
		if _, ok := config.LookupGroupConfig(&b.Config, op.Name); !ok {
			return newAPIError(kerr.InvalidConfig, "Unknown group config name: "+op.Name)
		}
		if op.Op != controller.OpSet && op.Op != controller.OpDelete {
			return newAPIError(kerr.InvalidConfig, "Config "+op.Name+" is not a list; append and subtract apply to lists only")
		}
	}
	return nil
}
