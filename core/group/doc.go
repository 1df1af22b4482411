// Package group is the group coordinator. It owns the state of consumer
// groups whose __consumer_offsets partition this broker leads: classic groups
// (JoinGroup, SyncGroup, Heartbeat, LeaveGroup with generations, protocol
// selection, rebalance and session timeouts, static membership), consumer
// groups of KIP-848 with server-side assignors, streams groups of KIP-1071
// with the server-side task assignor, and committed offsets.
//
// Every change is written to __consumer_offsets in Apache Kafka's record
// schemas (offset commit key v1, group metadata key v2, the consumer group
// records of keys 3 to 8, the streams group records of keys 17 to 23, their
// values) before it is acknowledged, and the state of a partition is
// rebuilt by replaying it when this broker becomes its leader. The package chooses no Kafka error
// codes: it returns the errors declared in errors.go and the protocol edge
// (core/api) maps them. It must not reach the controller or the network; the
// caller tells it which partitions it leads, what topics exist and which
// configs are set on a group.
package group
