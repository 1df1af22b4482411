package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// feature is one feature flag ApiVersions v3+ reports (KIP-584): the
// version range this broker supports and the level finalized for the
// cluster. Level 0 means "off" and is left out of the finalized list, as
// Kafka does.
type feature struct {
	name      string
	min, max  int16
	finalized int16
}

// features are the flags Apache Kafka 4.1 reports, for what Gregor
// implements: clients read transaction.version (KIP-890 part 2) and
// group.version (KIP-848) from here, and share.version (KIP-932) at 1, as a
// Kafka 4.4 cluster finalizes it: share consumers refuse a cluster without
// it. eligible.leader.replicas.version (KIP-966) is finalized at the
// configured level, 1 by default as on a new Kafka 4.4 cluster.
func (b *Broker) features() []feature {
	return []feature{
		{name: "metadata.version", min: 7, max: 27, finalized: 27}, // 3.3-IV3 .. 4.1-IV1
		{name: "kraft.version", min: 0, max: 1, finalized: 0},
		{name: "transaction.version", min: 0, max: 2, finalized: b.Config.Transactions.Version},
		{name: "group.version", min: 0, max: 1, finalized: 1},
		{name: "share.version", min: 0, max: 1, finalized: 1},
		{name: "streams.version", min: 0, max: 1, finalized: 1}, // KIP-1071, GA in Kafka 4.2
		{name: "eligible.leader.replicas.version", min: 0, max: 1, finalized: b.Config.Replication.EligibleLeaderReplicasVersion},
	}
}

// addFeatures fills the feature fields of an ApiVersions v3+ answer. The
// epoch is the metadata offset the answer reflects, so clients that keep
// the answer with the highest epoch keep the newest.
func (b *Broker) addFeatures(resp *kmsg.ApiVersionsResponse) {
	resp.FinalizedFeaturesEpoch = int64(b.Controller.Image().Offset)
	for _, f := range b.features() {
		sf := kmsg.NewApiVersionsResponseSupportedFeature()
		sf.Name, sf.MinVersion, sf.MaxVersion = f.name, f.min, f.max
		resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
		if f.finalized > 0 {
			ff := kmsg.NewApiVersionsResponseFinalizedFeature()
			ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = f.name, f.finalized, f.finalized
			resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
		}
	}
}
