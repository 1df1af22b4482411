package tests

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// corruptTail damages the active segment of topic-partition in a stopped
// node's data directory, as a torn or rotted disk would: either it cuts a
// random number of bytes off the end of the file, or it flips one bit in
// the CRC-covered part of a batch that lies beyond the partition's
// recovery point (data the node never claimed to have flushed; a flip in
// flushed data is silent media corruption, which Kafka does not detect at
// start-up either). It returns what it did.
func corruptTail(dataDir, topic string, partition int32, rng *rand.Rand) (string, error) {
	dir := filepath.Join(dataDir, fmt.Sprintf("%s-%d", topic, partition))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var logs []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".log") {
			logs = append(logs, e.Name())
		}
	}
	if len(logs) == 0 {
		return "no segment", nil
	}
	slices.Sort(logs) // 20-digit names sort by base offset
	path := filepath.Join(dir, logs[len(logs)-1])
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if len(data) == 0 {
		return "empty segment", nil
	}
	rp := recoveryPoint(dataDir, topic, partition)
	// The batches that start at or beyond the recovery point.
	var unflushed [][2]int // [start, end) of each batch
	for pos := 0; pos+61 <= len(data); {
		base := int64(binary.BigEndian.Uint64(data[pos:]))
		length := int(int32(binary.BigEndian.Uint32(data[pos+8:])))
		end := pos + 12 + length
		if length < 49 || end > len(data) {
			break
		}
		last := base + int64(int32(binary.BigEndian.Uint32(data[pos+23:])))
		if last >= rp {
			unflushed = append(unflushed, [2]int{pos, end})
		}
		pos = end
	}
	flip := rng.IntN(2) == 0
	if flip && len(unflushed) > 0 {
		b := unflushed[rng.IntN(len(unflushed))]
		at := b[0] + 21 + rng.IntN(b[1]-b[0]-21) // attributes to the end: what the CRC covers
		bit := byte(1) << rng.IntN(8)
		data[at] ^= bit
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return "", err
		}
		return fmt.Sprintf("flipped bit %#x at byte %d of %s (recovery point %d)", bit, at, filepath.Base(path), rp), nil
	}
	cut := 1 + rng.IntN(min(len(data), 64<<10))
	if err := os.Truncate(path, int64(len(data)-cut)); err != nil {
		return "", err
	}
	return fmt.Sprintf("cut %d of %d bytes off %s (recovery point %d)", cut, len(data), filepath.Base(path), rp), nil
}

// recoveryPoint reads a partition's entry of the data directory's
// recovery-point-offset-checkpoint; 0 when there is none.
func recoveryPoint(dataDir, topic string, partition int32) int64 {
	f, err := os.Open(filepath.Join(dataDir, "recovery-point-offset-checkpoint"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 3 && fs[0] == topic && fs[1] == strconv.Itoa(int(partition)) {
			if v, err := strconv.ParseInt(fs[2], 10, 64); err == nil {
				return v
			}
		}
	}
	return 0
}
