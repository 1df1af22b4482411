package api

import (
	"fmt"
	"regexp"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/txn"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// ListTransactions v0-2; v1 adds the duration filter (KIP-994), v2 the
// transactional id pattern (KIP-1152).
func init() { reg(66, 0, 2, (*Broker).handleListTransactions) }

// maxIDPatternBytes bounds the transactional id pattern a client may send.
const maxIDPatternBytes = 4096

// idPattern compiles a ListTransactions v2 pattern. Kafka matches it against
// the whole id (Java's Matcher.matches); nil, empty and "" patterns match all.
func idPattern(p *string) (*regexp.Regexp, error) {
	if p == nil || *p == "" {
		return nil, nil
	}
	if len(*p) > maxIDPatternBytes {
		return nil, fmt.Errorf("api: transactional id pattern of %d bytes, at most %d", len(*p), maxIDPatternBytes)
	}
	re, err := regexp.Compile("^(?:" + *p + ")$")
	if err != nil {
		return nil, fmt.Errorf("api: transactional id pattern: %w", err)
	}
	return re, nil
}

func (b *Broker) handleListTransactions(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ListTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	if b.Txns == nil {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return protocol.Reply{Resp: resp}
	}
	f := txn.ListFilter{ProducerIDs: req.ProducerIDFilters, MinDurationMs: -1}
	if r.Version >= 1 && req.DurationFilterMillis >= 0 {
		f.MinDurationMs = req.DurationFilterMillis
	}
	if r.Version >= 2 {
		re, err := idPattern(req.TransactionalIDPattern)
		if err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			return protocol.Reply{Resp: resp}
		}
		f.IDPattern = re
	}
	for _, name := range req.StateFilters {
		s, ok := txn.ParseState(name)
		if !ok {
			// Kafka lists unknown state names and matches nothing for them.
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
			continue
		}
		f.States = append(f.States, s)
	}
	if len(req.StateFilters) > 0 && len(f.States) == 0 {
		return protocol.Reply{Resp: resp}
	}
	list, loading := b.Txns.List(f)
	if loading > 0 {
		resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
	}
	var ids []string
	for _, d := range list {
		ids = append(ids, d.TransactionalID)
	}
	allowed := b.authorizeAll(r, sdkauth.OpDescribe, sdkauth.ResourceTransactionalID, ids)
	for i, d := range list {
		if !allowed[i] {
			continue
		}
		st := kmsg.NewListTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.TransactionState = d.TransactionalID, d.ProducerID, d.State.String()
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return protocol.Reply{Resp: resp}
}
