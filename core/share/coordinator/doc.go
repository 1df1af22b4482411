// Package coordinator runs share groups (KIP-932) on one broker: the share
// group coordinator (membership and assignment of the groups whose
// __consumer_offsets partition this broker leads), the share-partitions of
// the partitions this broker leads (acquire, acknowledge, redeliver), and
// the share coordinator: the share-partition state kept in the
// __share_group_state partitions this broker leads, served to every broker
// through Kafka's share-state RPCs (InitializeShareGroupState,
// ReadShareGroupState, WriteShareGroupState, DeleteShareGroupState,
// ReadShareGroupStateSummary).
//
// It holds the state machines of core/share and the glue between them and
// the logs. It reaches the rest of the broker only through the Broker
// interface (partition lookup, the metadata image, internal topic creation,
// the inter-broker client) and never imports core/api. It chooses no Kafka
// error codes: it returns the errors of errors.go and the protocol edge maps
// them.
package coordinator
