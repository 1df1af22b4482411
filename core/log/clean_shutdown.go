package log

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/gregorbroker/gregor/core/log/vfs"
)

// cleanShutdown is the clean-shutdown marker's content, as Kafka's
// CleanShutdownFileHandler writes it: the broker epoch under which the
// data dir was closed (KIP-966), -1 when it had none.
type cleanShutdown struct {
	Version     int    `json:"version"`
	BrokerEpoch *int64 `json:"brokerEpoch"`
}

// maxCleanShutdownBytes bounds the marker we read.
const maxCleanShutdownBytes = 4096

// CleanShutdownEpoch returns the broker epoch that the clean-shutdown
// marker of the data dir at path records, and -1 when there is no marker,
// it names no epoch or it cannot be read. A broker sends it as its previous
// broker epoch when it registers, so that the controller can tell a clean
// restart from a crash. Call it before OpenDir, which removes the marker.
func CleanShutdownEpoch(path string, opts Options) int64 {
	fsys := opts.withDefaults().FS
	f, err := vfs.Open(fsys, filepath.Join(path, cleanShutdownFile))
	if err != nil {
		return -1
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCleanShutdownBytes+1))
	if err != nil || len(data) > maxCleanShutdownBytes {
		return -1
	}
	var c cleanShutdown
	if json.Unmarshal(data, &c) != nil || c.Version != 0 || c.BrokerEpoch == nil {
		return -1
	}
	return *c.BrokerEpoch
}

// SetBrokerEpoch sets the broker epoch Close records in the clean-shutdown
// marker; it is -1 until set.
func (d *Dir) SetBrokerEpoch(epoch int64) {
	d.brokerEpoch.Store(epoch)
}

func (d *Dir) cleanShutdownMarker() []byte {
	return []byte(fmt.Sprintf(`{"version":0,"brokerEpoch":%d}`, d.brokerEpoch.Load()))
}
