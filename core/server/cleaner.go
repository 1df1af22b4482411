package server

import (
	"time"

	"github.com/gregorbroker/gregor/core/api"
	"github.com/gregorbroker/gregor/core/log"
)

// runCleaner is the log cleaner actor: every log.cleaner_backoff_ms it
// compacts the hosted logs whose cleanup policy includes compact, never past
// a partition's high watermark, until stop is closed.
func (s *Server) runCleaner(b *api.Broker, logs *log.Dir, stop <-chan struct{}) {
	t := time.NewTicker(time.Duration(s.cfg.Log.CleanerBackoffMs) * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.cleanOnce(b, logs)
		}
	}
}

// cleanOnce runs one cleaner pass over the data dir.
func (s *Server) cleanOnce(b *api.Broker, logs *log.Dir) {
	results, err := logs.Clean(func(l *log.Log) (int64, bool) {
		p, ok := b.Partitions.Get(l.Topic(), l.Partition())
		if !ok || p.Log() != l {
			return 0, false
		}
		// Kafka's first uncleanable offset: open transactions stay out,
		// since committed transactional data below it is compacted.
		return p.Offsets().LastStableOffset, true
	}, log.DefaultMaxMapBytes)
	for _, r := range results {
		s.logger.Info("log compacted", "topic", r.Topic, "partition", r.Partition,
			"dirty_from", r.FirstDirtyOffset, "dirty_to", r.EndOffset, "dirty_ratio", r.DirtyRatio,
			"records_read", r.RecordsRead, "records_kept", r.RecordsKept,
			"bytes_read", r.BytesRead, "bytes_written", r.BytesWritten, "segments", r.SegmentsRewritten)
	}
	if err != nil {
		s.logger.Error("log cleaner failed", "err", err)
	}
}
