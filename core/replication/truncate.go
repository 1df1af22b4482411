package replication

// truncation is where a follower cuts its log after its leader reported a
// diverging epoch, and whether that ends the divergence or another round
// (a fetch with the new last epoch) is needed.
type truncation struct {
	offset   int64
	complete bool
}

// truncationFor applies Kafka's rule (AbstractFetcherThread's
// getOffsetTruncationState) to a leader's answer (leaderEpoch, leaderEnd):
// localEnd is the follower's own OffsetForLeaderEpoch lookup, leo and hw its
// log end and high watermark.
//
//   - the leader knows no end: truncate to the high watermark;
//   - the leader knows no epoch, or the follower knows nothing of it:
//     truncate to the leader's end;
//   - the follower's largest epoch at or below the leader's is another one:
//     truncate to where that one ends and ask again;
//   - the same epoch: truncate to the smaller of both ends.
//
// The result never passes the log end offset.
func truncationFor(leaderEpoch int32, leaderEnd int64, localEnd func(int32) (int32, int64), leo, hw int64) truncation {
	switch {
	case leaderEnd < 0:
		return truncation{min(hw, leo), true}
	case leaderEpoch < 0:
		return truncation{min(leaderEnd, leo), true}
	}
	fe, fend := localEnd(leaderEpoch)
	switch {
	case fe < 0 || fend < 0:
		return truncation{min(leaderEnd, leo), true}
	case fe != leaderEpoch:
		return truncation{min(fend, leo), false}
	}
	return truncation{min(fend, leaderEnd, leo), true}
}
