package api

import (
	"strings"

	"github.com/gregorbroker/gregor/core/group"
)

// shareGroupType is the group type and protocol type Kafka lists share
// groups with.
const shareGroupType = "share"

// listShareGroups lists the share groups this broker coordinates that
// pass the ListGroups filters.
func (b *Broker) listShareGroups(states, types []string) []group.GroupListing {
	match := func(set []string, v string) bool {
		if len(set) == 0 {
			return true
		}
		for _, x := range set {
			if strings.EqualFold(x, v) {
				return true
			}
		}
		return false
	}
	var out []group.GroupListing
	for _, g := range b.share().groups.List() {
		if b.Groups == nil || b.Groups.Partition(g.GroupID) == nil {
			continue
		}
		if match(states, g.State) && match(types, shareGroupType) {
			out = append(out, group.GroupListing{Group: g.GroupID, ProtocolType: shareGroupType, State: group.State(g.State), Type: shareGroupType})
		}
	}
	return out
}

// deleteShareGroup deletes an empty share group and the state of its
// share-partitions on this broker.
func (b *Broker) deleteShareGroup(id string) error {
	st := b.share()
	if err := st.groups.Delete(id); err != nil {
		return err
	}
	for _, k := range st.parts.Group(id) {
		st.parts.Delete(k)
		if err := b.persistShare(k, nil); err != nil {
			return err
		}
	}
	return nil
}
