package main

import (
	"encoding/base64"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// The structured (--output json|yaml) forms of the listing and describe
// commands. Field names follow the table's columns in snake case; a value
// the broker did not give is null rather than "-".

// topicSummary is one row of topic list.
type topicSummary struct {
	Topic             string `json:"topic"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replication_factor"`
	Error             string `json:"error,omitempty"`
}

func topicListView(tds kadm.TopicDetails) []topicSummary {
	out := []topicSummary{}
	for _, td := range tds.Sorted() {
		if td.Err != nil {
			out = append(out, topicSummary{Topic: td.Topic, Error: td.Err.Error()})
			continue
		}
		out = append(out, topicSummary{Topic: td.Topic, Partitions: len(td.Partitions), ReplicationFactor: td.Partitions.NumReplicas()})
	}
	return out
}

// topicView is one topic of topic describe.
type topicView struct {
	Topic             string `json:"topic"`
	ID                string `json:"id,omitempty"`
	Internal          bool   `json:"internal"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replication_factor"`
	// Configs are the topic's own settings; null when they could not be read.
	Configs          map[string]string    `json:"configs"`
	PartitionDetails []topicPartitionView `json:"partition_details"`
}

type topicPartitionView struct {
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	OfflineReplicas []int32 `json:"offline_replicas,omitempty"`
	LogStartOffset  *int64  `json:"log_start_offset"`
	LogEndOffset    *int64  `json:"log_end_offset"`
	Error           string  `json:"error,omitempty"`
}

func topicDescribeView(td kadm.TopicDetail, info describeInfo) topicView {
	v := topicView{Topic: td.Topic, Internal: td.IsInternal, Partitions: len(td.Partitions),
		ReplicationFactor: td.Partitions.NumReplicas(), PartitionDetails: []topicPartitionView{}}
	if td.ID != (kadm.TopicID{}) {
		v.ID = base64.RawURLEncoding.EncodeToString(td.ID[:])
	}
	if rc, ok := info.configs[td.Topic]; ok {
		v.Configs = map[string]string{}
		for _, kv := range topicOverrides(rc) {
			for i := 0; i < len(kv); i++ {
				if kv[i] == '=' {
					v.Configs[kv[:i]] = kv[i+1:]
					break
				}
			}
		}
	}
	for _, p := range td.Partitions.Sorted() {
		pv := topicPartitionView{Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
			Replicas: nonNil(p.Replicas), ISR: nonNil(p.ISR), OfflineReplicas: p.OfflineReplicas,
			LogStartOffset: offsetPtr(info.starts, td.Topic, p.Partition), LogEndOffset: offsetPtr(info.ends, td.Topic, p.Partition)}
		if p.Err != nil {
			pv.Error = p.Err.Error()
		}
		v.PartitionDetails = append(v.PartitionDetails, pv)
	}
	return v
}

func nonNil(xs []int32) []int32 {
	if xs == nil {
		return []int32{}
	}
	return xs
}

func offsetPtr(l kadm.ListedOffsets, topic string, p int32) *int64 {
	o, ok := l.Lookup(topic, p)
	if !ok || o.Err != nil {
		return nil
	}
	return &o.Offset
}

// groupSummary is one row of group list.
type groupSummary struct {
	Group        string `json:"group"`
	Type         string `json:"type"`
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
}

func groupListView(listed kadm.ListedGroups) []groupSummary {
	out := []groupSummary{}
	for _, g := range listed.Sorted() {
		out = append(out, groupSummary{Group: g.Group, Type: g.GroupType, State: g.State, ProtocolType: g.ProtocolType})
	}
	return out
}

// aclView is one ACL of acl list.
type aclView struct {
	ResourceType string `json:"resource_type"`
	Name         string `json:"name"`
	Pattern      string `json:"pattern"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
}

// userView is one SCRAM user of user list.
type userView struct {
	User        string           `json:"user"`
	Credentials []credentialView `json:"credentials"`
}

type credentialView struct {
	Mechanism  string `json:"mechanism"`
	Iterations int32  `json:"iterations"`
}

func userListView(described kadm.DescribedUserSCRAMs) []userView {
	out := []userView{}
	for _, d := range described.Sorted() {
		if d.Err != nil {
			continue
		}
		u := userView{User: d.User, Credentials: []credentialView{}}
		infos := d.CredInfos
		sort.Slice(infos, func(i, j int) bool { return infos[i].Mechanism < infos[j].Mechanism })
		for _, ci := range infos {
			u.Credentials = append(u.Credentials, credentialView{Mechanism: ci.Mechanism.String(), Iterations: ci.Iterations})
		}
		out = append(out, u)
	}
	return out
}

// txnSummary is one row of txn list.
type txnSummary struct {
	TransactionalID string `json:"transactional_id"`
	ProducerID      int64  `json:"producer_id"`
	ProducerEpoch   int16  `json:"producer_epoch"`
	State           string `json:"state"`
	OpenForMs       int64  `json:"open_for_ms"`
}

// producerView is one active producer of producers describe.
type producerView struct {
	Partition             int32  `json:"partition"`
	ProducerID            int64  `json:"producer_id"`
	ProducerEpoch         int64  `json:"producer_epoch"`
	LastSequence          int64  `json:"last_sequence"`
	LastTimestamp         *int64 `json:"last_timestamp_ms"`
	CoordinatorEpoch      int64  `json:"coordinator_epoch"`
	CurrentTxnStartOffset *int64 `json:"current_txn_start_offset"`
	Error                 string `json:"error,omitempty"`
}

// durationMs is a duration in whole milliseconds, 0 when not positive.
func durationMs(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return d.Milliseconds()
}
