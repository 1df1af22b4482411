package tests

import (
	"testing"
	"time"

	"github.com/gregorbroker/gregor/mirror"
)

// TestMirrorCopySendsWithoutLinger pins copy mode's send policy: a target
// producer with nothing outstanding sends at once, and records that
// gathered behind a write go out when it is answered; linger_ms only
// bounds the gathering. With a 20 s linger, a lone record, and then a
// burst spread over many source polls, must each reach the target well
// within 10 s.
func TestMirrorCopySendsWithoutLinger(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	const parts = 2
	east := startBroker(t, fastLog)
	west := startBroker(t, fastLog)
	createTopic(t, east.Addr, "orders", parts, nil)
	_, cfg := mirrorConfig(t, east.Addr, west.Addr, mirror.ModeCopy, "")
	cfg.Mirror.LingerMs = 20000
	cfg.Mirror.TargetConnectionsPerBroker = 1 // both partitions share one producer
	startMirror(t, cfg)

	// Start-up (topic creation on the target, the first fetch) is not
	// timed; the first record is.
	began := time.Now()
	produceToEach(t, east.Addr, "orders", parts, 1)
	waitMirrored(t, west.Addr, "east.orders", map[int32]int64{0: 1, 1: 1}, 60*time.Second)
	t.Logf("start-up and the first record: %v", time.Since(began).Round(time.Millisecond))

	total := int64(1)
	for round := range 3 {
		began := time.Now()
		produceToEach(t, east.Addr, "orders", parts, 1)
		total++
		waitMirrored(t, west.Addr, "east.orders", map[int32]int64{0: total, 1: total}, 10*time.Second)
		t.Logf("round %d: one record a partition mirrored in %v", round, time.Since(began).Round(time.Millisecond))
	}

	// A burst: records written one by one arrive over many polls, most
	// while an earlier write of the same producer is outstanding.
	began = time.Now()
	for range 50 {
		produceToEach(t, east.Addr, "orders", parts, 1)
	}
	total += 50
	waitMirrored(t, west.Addr, "east.orders", map[int32]int64{0: total, 1: total}, 10*time.Second)
	t.Logf("burst of %d records written and mirrored in %v", 50*parts, time.Since(began).Round(time.Millisecond))
}
