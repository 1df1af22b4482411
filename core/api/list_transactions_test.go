package api_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

// ListTransactions v2 filters by a transactional id pattern matched against
// the whole id; a pattern that does not compile is INVALID_REGULAR_EXPRESSION.
func TestListTransactionsPattern(t *testing.T) {
	e := startAdminBroker(t, func(c *config.Config) {
		c.Transactions.StateLogPartitions = 1
		c.Transactions.StateLogReplicationFactor = 1
	})
	ids := []string{"app-1", "app-2", "other", "xapp-1"}
	for _, id := range ids {
		initTxnID(t, e, id)
	}
	str := func(s string) *string { return &s }
	tests := []struct {
		name    string
		version int16
		pattern *string
		want    []string
		code    int16
	}{
		{"null matches all", 2, nil, ids, 0},
		{"empty matches all", 2, str(""), ids, 0},
		{"prefix", 2, str("app-.*"), []string{"app-1", "app-2"}, 0},
		{"whole id only", 2, str("app"), nil, 0},
		{"alternation is anchored as a whole", 2, str("app-1|other"), []string{"app-1", "other"}, 0},
		{"bad pattern", 2, str("app-["), nil, kerr.InvalidRegularExpression.Code},
		{"too long", 2, str(strings.Repeat("a", 5000)), nil, kerr.InvalidRegularExpression.Code},
		{"v1 has no pattern", 1, str("app-.*"), ids, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := kmsg.NewPtrListTransactionsRequest()
			req.TransactionalIDPattern = tc.pattern
			resp := e.request(e.clientAt(66, tc.version), req).(*kmsg.ListTransactionsResponse)
			if resp.ErrorCode != tc.code {
				t.Fatalf("error %v, want %v", kerr.ErrorForCode(resp.ErrorCode), kerr.ErrorForCode(tc.code))
			}
			var got []string
			for _, s := range resp.TransactionStates {
				got = append(got, s.TransactionalID)
			}
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("listed %v, want %v", got, tc.want)
			}
		})
	}
}

// initTxnID finds the coordinator of id (creating __transaction_state) and
// gives it a producer id.
func initTxnID(t *testing.T, e *adminEnv, id string) (int64, int16) {
	t.Helper()
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorType, fc.CoordinatorKeys = 1, []string{id}
	for i := 0; ; i++ {
		r := e.request(nil, fc).(*kmsg.FindCoordinatorResponse)
		if len(r.Coordinators) == 1 && r.Coordinators[0].ErrorCode == 0 {
			break
		}
		if i == 50 {
			t.Fatalf("FindCoordinator: %+v", r.Coordinators)
		}
	}
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID, ip.TransactionTimeoutMillis = &id, 60000
	for i := 0; ; i++ {
		r := e.request(nil, ip).(*kmsg.InitProducerIDResponse)
		if r.ErrorCode == 0 {
			return r.ProducerID, r.ProducerEpoch
		}
		if r.ErrorCode != kerr.CoordinatorLoadInProgress.Code || i == 200 {
			t.Fatalf("InitProducerId(%s): %v", id, kerr.ErrorForCode(r.ErrorCode))
		}
	}
}
