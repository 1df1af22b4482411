package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// diskFaultRules are the errorfs rules (core/log/vfs/errorfs.ParseRules)
// of the disk fault kinds: every fsync of the node's logs fails with EIO,
// or every write to a segment file fails with ENOSPC after writing part of
// its bytes (a disk filling up mid-batch).
var diskFaultRules = map[string]string{
	"disk-fsync-eio": "sync EIO",
	"disk-enospc":    "write ENOSPC partial path=.log",
}

// diskMoveLimit bounds how long the controller may take to move every
// leadership off a node whose log dir failed: the broker reports it in its
// next heartbeat (every 200 ms in the fault cluster).
const diskMoveLimit = 30 * time.Second

// armDisk replaces a node's errorfs rules with rules and has the running
// broker re-read them (SIGUSR1); "" disarms them. A stopped node reads the
// file when it starts.
func (c *childCluster) armDisk(id int32, rules string) error {
	nd := c.nodes[id]
	if nd.rules == "" {
		return fmt.Errorf("node %d does not run the errorfs build", id)
	}
	if err := os.WriteFile(nd.rules, []byte(rules), 0o644); err != nil {
		return err
	}
	if nd.proc == nil {
		return nil
	}
	return nd.proc.cmd.Process.Signal(syscall.SIGUSR1)
}

// ledBy says which partitions node id leads: those of the workloads'
// topics by name ("topic-p"), the internal topics' as a count.
func ledBy(md kadm.Metadata, id int32) string {
	var named []string
	internal := 0
	for _, td := range md.Topics {
		for _, p := range td.Partitions {
			switch {
			case p.Leader != id:
			case strings.HasPrefix(td.Topic, "__"):
				internal++
			default:
				named = append(named, fmt.Sprintf("%s-%d", td.Topic, p.Partition))
			}
		}
	}
	slices.Sort(named)
	return fmt.Sprintf("%s and %d internal partitions", strings.Join(named, ","), internal)
}

// diskOffline reports whether metadata shows node id's log dir offline and
// its leaderships moved: the node is an offline replica of some partition,
// leads none and is in no ISR. Otherwise it says what is still missing.
func diskOffline(md kadm.Metadata, id int32) (bool, string) {
	offline := 0
	var leads, inISR []string
	for _, td := range md.Topics {
		for _, p := range td.Partitions {
			name := fmt.Sprintf("%s-%d", td.Topic, p.Partition)
			if slices.Contains(p.OfflineReplicas, id) {
				offline++
			}
			if p.Leader == id {
				leads = append(leads, name)
			}
			if slices.Contains(p.ISR, id) {
				inISR = append(inISR, name)
			}
		}
	}
	if offline > 0 && len(leads) == 0 && len(inISR) == 0 {
		return true, ""
	}
	return false, fmt.Sprintf("an offline replica of %d partitions, leading %s, in the ISR of %s", offline, firstFew(leads), firstFew(inISR))
}

// firstFew sorts names and lists at most five of them and how many there are.
func firstFew(names []string) string {
	slices.Sort(names)
	if len(names) <= 5 {
		return fmt.Sprintf("%d %v", len(names), names)
	}
	return fmt.Sprintf("%d %v...", len(names), names[:5])
}

// diskFault fails the disk of node target, which leads partitions: it arms
// kind's rules through the seam, waits until metadata shows the node's log
// dir offline and its leaderships moved to other in-sync replicas, leaves
// it so for down while the workloads go on, then heals it: disarms the
// rules and stops the node (SIGTERM or SIGKILL, as frng draws) and starts
// it again, so that it recovers its logs and rejoins the ISRs. It returns
// what it did, and an anomaly when the broker did not take the dir offline
// or leadership did not move within diskMoveLimit (the node is healed all
// the same, so the checkers still run).
func diskFault(ctx context.Context, c *childCluster, md kadm.Metadata, kind string, target int32, down time.Duration, frng *rand.Rand) (what, anomaly string, err error) {
	led := ledBy(md, target)
	if err := c.armDisk(target, diskFaultRules[kind]); err != nil {
		return "", "", err
	}
	armed := time.Now()
	var moved time.Duration
	last := "no metadata"
	for time.Since(armed) <= diskMoveLimit {
		mctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		md, err := c.metadata(mctx)
		cancel()
		if err != nil {
			last = err.Error()
		} else if ok, why := diskOffline(md, target); ok {
			moved = time.Since(armed)
			break
		} else {
			last = why
		}
		time.Sleep(100 * time.Millisecond) // polling a remote condition, not synchronising
	}
	how := []string{"SIGTERM", "SIGKILL"}[frng.IntN(2)]
	what = fmt.Sprintf("%q on node %d leading %s", diskFaultRules[kind], target, led)
	if moved > 0 {
		what += fmt.Sprintf(", log dir offline and leaderships moved after %v", moved.Round(100*time.Millisecond))
		time.Sleep(down) // the node runs with its dir offline this long
	} else {
		anomaly = fmt.Sprintf("node %d: %q armed, but after %v metadata shows it %s", target, diskFaultRules[kind], diskMoveLimit, last)
		what += ", NOT offline after " + diskMoveLimit.String()
	}
	if err := c.armDisk(target, ""); err != nil {
		return what, anomaly, err
	}
	if how == "SIGTERM" {
		c.stop(target)
	} else {
		c.kill(target)
	}
	c.restart(target)
	return what + ", healed by " + how + " and restart", anomaly, nil
}

// TestDiskOffline: the disk faults' wait ends only when metadata shows the
// node an offline replica that leads nothing and is in no ISR, of any topic.
func TestDiskOffline(t *testing.T) {
	part := func(topic string, p, leader int32, isr, offline []int32) kadm.PartitionDetail {
		return kadm.PartitionDetail{Topic: topic, Partition: p, Leader: leader, Replicas: []int32{1, 2, 3}, ISR: isr, OfflineReplicas: offline}
	}
	md := func(ps ...kadm.PartitionDetail) kadm.Metadata {
		m := kadm.Metadata{Topics: kadm.TopicDetails{}}
		for _, p := range ps {
			td := m.Topics[p.Topic]
			td.Topic = p.Topic
			if td.Partitions == nil {
				td.Partitions = kadm.PartitionDetails{}
			}
			td.Partitions[p.Partition] = p
			m.Topics[p.Topic] = td
		}
		return m
	}
	for _, tc := range []struct {
		name string
		md   kadm.Metadata
		want bool
	}{
		{"moved", md(part("fault", 0, 1, []int32{1, 3}, []int32{2}), part("__consumer_offsets", 3, 3, []int32{3, 1}, []int32{2})), true},
		{"not reported offline", md(part("fault", 0, 1, []int32{1, 3}, nil)), false},
		{"still leads an internal partition", md(part("fault", 0, 1, []int32{1, 3}, []int32{2}), part("__transaction_state", 7, 2, []int32{2, 1}, []int32{2})), false},
		{"still in an ISR", md(part("fault", 0, 1, []int32{1, 2, 3}, []int32{2})), false},
	} {
		if got, why := diskOffline(tc.md, 2); got != tc.want {
			t.Errorf("%s: diskOffline = %v (%s), want %v", tc.name, got, why, tc.want)
		}
	}
	if got := ledBy(md(part("fault", 4, 2, nil, nil), part("fault", 1, 2, nil, nil), part("__consumer_offsets", 0, 2, nil, nil), part("fault", 2, 3, nil, nil)), 2); got != "fault-1,fault-4 and 1 internal partitions" {
		t.Errorf("ledBy = %q", got)
	}
}
