// Command wasm-region is a Gregor partitioner module in Go: a record with a
// `region` header goes to that region's share of the topic's partitions,
// chosen within the share by Kafka's murmur2 of the key, so one region's
// traffic never lands on another's partitions. Records without a known
// region are placed as Kafka's clients place them.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o region.wasm .
package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gregorbroker/gregor/sdk/wasm/guest"
	"github.com/gregorbroker/gregor/sdk/wasm/partitioner"
)

// regions lists the regions in order; region i owns partitions
// [i*n/len, (i+1)*n/len) of a topic with n partitions.
var regions = []string{"eu", "us", "ap"}

type config struct {
	Regions []string `json:"regions"`
}

func configure(raw []byte) error {
	var c config
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("region: config: %w", err)
	}
	if c.Regions == nil {
		return nil // keep the defaults
	}
	if len(c.Regions) == 0 {
		return errors.New("region: config: regions is empty")
	}
	seen := map[string]bool{}
	for _, r := range c.Regions {
		if r == "" || seen[r] {
			return fmt.Errorf("region: config: region %q is empty or repeated", r)
		}
		seen[r] = true
	}
	regions = c.Regions
	return nil
}

// place chooses the partition of r among n.
func place(r partitioner.Record, n int) int {
	idx := -1
	for _, h := range r.Headers {
		if h.Key != "region" {
			continue
		}
		for i, name := range regions {
			if string(h.Value) == name {
				idx = i
				break
			}
		}
		break
	}
	if idx < 0 {
		return partitioner.KeyPartition(r.Key, n)
	}
	if n < len(regions) {
		return idx % n
	}
	lo, hi := idx*n/len(regions), (idx+1)*n/len(regions)
	return lo + partitioner.KeyPartition(r.Key, hi-lo)
}

func init() {
	partitioner.Uses(partitioner.Key | partitioner.Headers)
	guest.OnConfigure(configure)
	partitioner.Register(place)
}

func main() {}
