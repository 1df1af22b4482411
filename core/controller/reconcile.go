package controller

// planUnusableCleanup plans, from im, the broker-loss changes still owed
// for every registered broker that is fenced or has its log dir offline
// yet leads a partition or sits in an ISR with other members. A broker's
// loss is proposed as one plan record (proposePlan), so its state record
// and its partition changes apply together; this pass is the safety net
// for what that cannot cover: a metadata log written before plans were one
// entry, where a broker-state record committed alone, and any other path
// that leaves an unusable broker leading. The triggers that plan the loss
// (a heartbeat reporting the dir offline, a session expiry) fire only on
// the state transition, so without this pass such a partition stays led by
// an unusable broker. Each broker's plan starts from the previous one's
// changes. A broker in controlled shutdown is left to its heartbeats.
func (c *Controller) planUnusableCleanup(im *Image) ([]record, error) {
	var out []record
	for _, id := range im.BrokerIDs() {
		br := im.Brokers[id]
		if !br.Fenced && !br.LogDirOffline {
			continue
		}
		loss := c.planBrokerLoss(im, id)
		if len(loss) == 0 {
			continue
		}
		c.log.Warn("unusable broker still leads or is in ISRs; moving them", "node", id,
			"fenced", br.Fenced, "log_dir_offline", br.LogDirOffline, "partition_changes", len(loss))
		var err error
		if im, err = withRecords(im, loss); err != nil {
			return nil, err
		}
		out = append(out, loss...)
	}
	return out, nil
}
