package api_test

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

// ApiVersions v3+ reports the features Apache Kafka 4.1 reports for what
// Gregor implements, with transaction.version from [transactions] version;
// older versions carry none.
func TestApiVersionsFeatures(t *testing.T) {
	tests := []struct {
		name      string
		txnVer    int16
		reqVer    int16
		finalized map[string]int16 // nil: no feature fields at all
	}{
		{"tv2", 2, 4, map[string]int16{"metadata.version": 27, "transaction.version": 2, "group.version": 1, "share.version": 1, "streams.version": 1, "eligible.leader.replicas.version": 1}},
		{"tv0 leaves transaction.version out", 0, 4, map[string]int16{"metadata.version": 27, "group.version": 1, "share.version": 1, "streams.version": 1, "eligible.leader.replicas.version": 1}},
		{"tv1", 1, 3, map[string]int16{"metadata.version": 27, "transaction.version": 1, "group.version": 1, "share.version": 1, "streams.version": 1, "eligible.leader.replicas.version": 1}},
		{"v2 has no features", 2, 2, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startAdminBroker(t, func(c *config.Config) { c.Transactions.Version = tc.txnVer })
			req := kmsg.NewPtrApiVersionsRequest()
			req.Version = tc.reqVer
			req.ClientSoftwareName, req.ClientSoftwareVersion = "gregor-test", "1.0"
			ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
			defer cancel()
			// kgo sends ApiVersions at the version it negotiated, so the
			// version under test is the client's cap.
			resp, err := req.RequestWith(ctx, e.clientAt(18, tc.reqVer))
			if err != nil {
				t.Fatalf("ApiVersions: %v", err)
			}
			if resp.ErrorCode != 0 {
				t.Fatalf("error code %d", resp.ErrorCode)
			}
			if tc.finalized == nil {
				if len(resp.SupportedFeatures)+len(resp.FinalizedFeatures) != 0 {
					t.Fatalf("v%d answer carries features: %+v %+v", tc.reqVer, resp.SupportedFeatures, resp.FinalizedFeatures)
				}
				return
			}
			supported := map[string][2]int16{}
			for _, f := range resp.SupportedFeatures {
				supported[f.Name] = [2]int16{f.MinVersion, f.MaxVersion}
			}
			for name, want := range map[string][2]int16{"metadata.version": {7, 27}, "kraft.version": {0, 1},
				"transaction.version": {0, 2}, "group.version": {0, 1}, "share.version": {0, 1}, "streams.version": {0, 1}, "eligible.leader.replicas.version": {0, 1}} {
				if supported[name] != want {
					t.Errorf("supported %s = %v, want %v", name, supported[name], want)
				}
			}
			got := map[string]int16{}
			for _, f := range resp.FinalizedFeatures {
				if f.MinVersionLevel != f.MaxVersionLevel {
					t.Errorf("finalized %s is a range %d..%d", f.Name, f.MinVersionLevel, f.MaxVersionLevel)
				}
				got[f.Name] = f.MaxVersionLevel
			}
			if len(got) != len(tc.finalized) {
				t.Errorf("finalized %v, want %v", got, tc.finalized)
			}
			for name, lvl := range tc.finalized {
				if got[name] != lvl {
					t.Errorf("finalized %s = %d, want %d", name, got[name], lvl)
				}
			}
			if resp.FinalizedFeaturesEpoch < 0 {
				t.Errorf("finalized features epoch %d; clients ignore features below 0", resp.FinalizedFeaturesEpoch)
			}
		})
	}
}
