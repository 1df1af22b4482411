package tests

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/mirror"
)

// kafkaRefEnv names the Apache Kafka bootstrap for the interop mirror
// tests; `make mirror-interop` starts Kafka through scripts/kafka-ref.sh
// and sets it. Without it the tests are skipped (they are not in make test).
const kafkaRefEnv = "GREGOR_MIRROR_KAFKA"

// TestMirrorApacheKafka mirrors from Apache Kafka to Gregor (copy and link)
// and from Gregor to Apache Kafka (copy): records match partition by
// partition, and a group's offsets translate so that it resumes on the
// target at the record after the last one it read.
func TestMirrorApacheKafka(t *testing.T) {
	kafka := os.Getenv(kafkaRefEnv)
	if kafka == "" {
		t.Skipf("%s is not set (run make mirror-interop)", kafkaRefEnv)
	}
	gregor := startBroker(t, fastLog)
	suffix := fmt.Sprint(time.Now().UnixNano())
	tests := []struct {
		name           string
		source, target string
		mode           string
	}{
		{"kafka-to-gregor-copy", kafka, gregor.Addr, mirror.ModeCopy},
		{"kafka-to-gregor-link", kafka, gregor.Addr, mirror.ModeLink},
		{"gregor-to-kafka-copy", gregor.Addr, kafka, mirror.ModeCopy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topic := "mk" + suffix + "." + tt.name
			createTopic(t, tt.source, topic, 3, nil)
			produceMirrorRecords(t, tt.source, topic, 0, 3000)
			section := fmt.Sprintf("include = [%q]\nrename = \"prefix\"\n", topic)
			_, cfg := mirrorConfig(t, tt.source, tt.target, tt.mode, section)
			// Names of their own: mirrors of earlier subtests (and runs) left
			// heartbeats and offset syncs under theirs.
			cfg.Source.Name, cfg.Target.Name = "src"+tt.mode+suffix, "dst"+tt.mode+suffix
			group := "g" + suffix + tt.mode
			consumed := consumeHalfInGroup(t, tt.source, topic, group, 1500)
			startMirror(t, cfg)
			target := cfg.Source.Name + "." + topic
			ends := endOffsets(t, tt.source, topic)
			waitMirrored(t, tt.target, target, ends, 60*time.Second)
			src := readPartitions(t, tt.source, topic, ends)
			dst := readPartitions(t, tt.target, target, ends)
			for p := range ends {
				if len(src[p]) != len(dst[p]) {
					t.Fatalf("partition %d: %d source records, %d target", p, len(src[p]), len(dst[p]))
				}
				for i := range src[p] {
					a, b := src[p][i], dst[p][i]
					if a.Key != b.Key || a.Value != b.Value || a.Headers != b.Headers || a.Timestamp != b.Timestamp {
						t.Fatalf("partition %d record %d: %+v vs %+v", p, i, a, b)
					}
					if tt.mode == mirror.ModeLink && a.Offset != b.Offset {
						t.Fatalf("partition %d record %d: offset %d became %d in link mode", p, i, a.Offset, b.Offset)
					}
				}
			}
			eventually(t, 30*time.Second, "group offsets synced", func() error {
				got := fetchGroupOffsetsOf(t, tt.target, group, target)
				for p, c := range consumed {
					if got[p] != c {
						return fmt.Errorf("partition %d: %d, want %d", p, got[p], c)
					}
				}
				return nil
			})
		})
	}
}
