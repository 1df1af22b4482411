package main

import "sort"

// Scenario is one behaviour every client driver exercises the same way. The driver-side
// contract (topic names, record counts, what is checked) is written down in
// interop/SCENARIOS.md; every driver follows it.
type Scenario struct {
	Name string
	// Needs lists API keys the target must advertise in ApiVersions; a target that lacks one
	// reports the scenario as "skip (not implemented)" without running any client.
	Needs []int16
	// AnyOf lists alternatives of which the target must advertise at least one.
	AnyOf []int16
	// Mechanism, when set, must be among the SASL mechanisms the target's SASL listener
	// (its SASL_SSL listener when Listener is "sasl_ssl") enables.
	Mechanism string
	// Listener is "ssl" or "sasl_ssl" for a scenario that needs that listener of the target.
	Listener string
	Smoke    bool
}

// Kafka API keys, named as in the protocol guide.
const (
	keyProduce             = 0
	keyFetch               = 1
	keyListOffsets         = 2
	keyMetadata            = 3
	keyOffsetCommit        = 8
	keyOffsetFetch         = 9
	keyFindCoordinator     = 10
	keyJoinGroup           = 11
	keyHeartbeat           = 12
	keyLeaveGroup          = 13
	keySyncGroup           = 14
	keySaslHandshake       = 17
	keyApiVersions         = 18
	keyCreateTopics        = 19
	keyDeleteTopics        = 20
	keyDeleteRecords       = 21
	keyInitProducerID      = 22
	keyAddPartitionsToTxn  = 24
	keyEndTxn              = 26
	keyDescribeConfigs     = 32
	keyAlterConfigs        = 33
	keySaslAuthenticate    = 36
	keyCreatePartitions    = 37
	keyIncrementalAlterCfg = 44
	keyDescribeCluster     = 60
	keyShareGroupHeartbeat = 76
	keyShareFetch          = 78
	keyShareAcknowledge    = 79
)

var groupKeys = []int16{keyFindCoordinator, keyJoinGroup, keySyncGroup, keyHeartbeat, keyLeaveGroup, keyOffsetCommit, keyOffsetFetch}

// Scenarios is the matrix's row order.
var Scenarios = []Scenario{
	{Name: "metadata", Needs: []int16{keyApiVersions, keyMetadata}, Smoke: true},
	{Name: "topic_admin", Needs: []int16{keyCreateTopics, keyDeleteTopics, keyDescribeConfigs, keyMetadata}, AnyOf: []int16{keyAlterConfigs, keyIncrementalAlterCfg}},
	{Name: "produce_consume", Needs: []int16{keyProduce, keyFetch, keyListOffsets, keyMetadata}, Smoke: true},
	{Name: "consume_timestamp", Needs: []int16{keyProduce, keyFetch, keyListOffsets}, Smoke: true},
	{Name: "idempotent", Needs: []int16{keyProduce, keyFetch, keyInitProducerID}, Smoke: true},
	{Name: "consumer_group", Needs: append([]int16{keyProduce, keyFetch}, groupKeys...), Smoke: true},
	{Name: "share_group", Needs: []int16{keyShareGroupHeartbeat, keyShareFetch, keyShareAcknowledge, keyIncrementalAlterCfg, keyProduce, keyCreateTopics}},
	{Name: "transactions", Needs: []int16{keyInitProducerID, keyFindCoordinator, keyAddPartitionsToTxn, keyEndTxn, keyFetch, keyListOffsets}},
	{Name: "admin", Needs: []int16{keyDescribeConfigs, keyCreatePartitions, keyDeleteRecords, keyDescribeCluster, keyListOffsets}},
	{Name: "sasl_plain", Needs: []int16{keySaslHandshake, keySaslAuthenticate}, Mechanism: "PLAIN"},
	{Name: "sasl_scram", Needs: []int16{keySaslHandshake, keySaslAuthenticate}, Mechanism: "SCRAM-SHA-256"},
	{Name: "ssl", Needs: []int16{keyProduce, keyFetch, keyCreateTopics}, Listener: "ssl"},
	{Name: "sasl_ssl", Needs: []int16{keySaslHandshake, keySaslAuthenticate, keyProduce, keyFetch, keyCreateTopics},
		Listener: "sasl_ssl", Mechanism: "SCRAM-SHA-512"},
}

// Clients is the matrix's column order. Smoke marks the CI subset.
var Clients = []struct {
	Name  string
	Smoke bool
}{
	{"java", true}, {"kcat", true}, {"python", true}, {"kafkajs", true},
	{"franz-go", true}, {"kafka-go", false}, {"sarama", false},
}

var apiNames = map[int16]string{
	0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch",
	10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup",
	17: "SaslHandshake", 18: "ApiVersions", 19: "CreateTopics", 20: "DeleteTopics", 21: "DeleteRecords",
	22: "InitProducerId", 24: "AddPartitionsToTxn", 26: "EndTxn", 32: "DescribeConfigs",
	33: "AlterConfigs", 36: "SaslAuthenticate", 37: "CreatePartitions", 44: "IncrementalAlterConfigs",
	60: "DescribeCluster", 76: "ShareGroupHeartbeat", 78: "ShareFetch", 79: "ShareAcknowledge",
}

func apiName(k int16) string {
	if n, ok := apiNames[k]; ok {
		return n
	}
	return "key " + itoa(int(k))
}

// missing reports why the target cannot run s, or "" when it can.
func (s Scenario) missing(c Capabilities) string {
	var lack []string
	for _, k := range s.Needs {
		if !c.Has(k) {
			lack = append(lack, apiName(k))
		}
	}
	if len(s.AnyOf) > 0 {
		ok := false
		for _, k := range s.AnyOf {
			ok = ok || c.Has(k)
		}
		if !ok {
			var alts []string
			for _, k := range s.AnyOf {
				alts = append(alts, apiName(k))
			}
			lack = append(lack, join(alts, "|"))
		}
	}
	if len(lack) > 0 {
		sort.Strings(lack)
		return "not implemented: target does not advertise " + join(lack, ", ")
	}
	switch s.Listener {
	case "ssl":
		if c.SSLAddr == "" {
			return "not implemented: no SSL listener given (--ssl-bootstrap)"
		}
		return ""
	case "sasl_ssl":
		if c.SASLSSLAddr == "" {
			return "not implemented: no SASL_SSL listener given (--sasl-ssl-bootstrap)"
		}
		if c.SASLSSLErr != "" {
			return "" // the listener was given but does not answer: the clients show why
		}
		for _, m := range c.SASLSSLMechanisms {
			if m == s.Mechanism {
				return ""
			}
		}
		return "not implemented: SASL_SSL listener " + c.SASLSSLAddr + " does not enable " + s.Mechanism
	}
	if s.Mechanism != "" {
		if c.SASLErr != "" {
			return "not implemented: SASL listener " + c.SASLAddr + ": " + c.SASLErr
		}
		if !c.HasMechanism(s.Mechanism) {
			return "not implemented: SASL listener " + c.SASLAddr + " does not enable " + s.Mechanism
		}
	}
	return ""
}

func scenarioByName(name string) (Scenario, bool) {
	for _, s := range Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}
