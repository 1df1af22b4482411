// Package api answers Kafka requests: one file per API key (NN_name.go, with
// NN_name_part.go beside it where a handler has more to it), each registering
// its handler and version range in init; broker.go holds the registry and the
// Broker struct, errors.go the mapping to Kafka error codes, security.go,
// security_quotas.go and acls.go the security edge (authentication,
// authorization, quotas, and feeding the image's ACLs and quotas to their
// enforcers), features.go the ApiVersions feature flags and helpers.go the
// helpers handlers share. What the handlers ask about (hosted partitions,
// internal topics, transaction verification, markers, peers) is owned by
// core/broker and the packages below it. Beyond the request-side caches the
// Broker struct wires in (registry, share coordinator, fetch sessions) and
// the security edge's synced ACL and quota state, it holds no state.
package api
