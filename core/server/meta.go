package server

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// metaProperties is Kafka's meta.properties: which cluster and node a data
// directory belongs to. A directory formatted for another node or cluster is
// refused rather than silently shared.
type metaProperties struct {
	ClusterID   string
	NodeID      int32
	DirectoryID string
}

// newUUIDBase64 returns a random id in Kafka's form: 16 bytes, URL-safe
// base64 without padding.
func newUUIDBase64() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func readMetaProperties(dir string) (metaProperties, bool, error) {
	f, err := os.Open(filepath.Join(dir, "meta.properties"))
	if os.IsNotExist(err) {
		return metaProperties{}, false, nil
	}
	if err != nil {
		return metaProperties{}, false, fmt.Errorf("server: %w", err)
	}
	defer f.Close()
	m := metaProperties{NodeID: -1}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "cluster.id":
			m.ClusterID = strings.TrimSpace(v)
		case "node.id":
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
			if err != nil {
				return m, true, fmt.Errorf("server: meta.properties: bad node.id %q", v)
			}
			m.NodeID = int32(n)
		case "directory.id":
			m.DirectoryID = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return m, true, fmt.Errorf("server: meta.properties: %w", err)
	}
	if m.ClusterID == "" {
		return m, true, fmt.Errorf("server: meta.properties in %s has no cluster.id", dir)
	}
	return m, true, nil
}

func writeMetaProperties(dir string, m metaProperties) error {
	text := fmt.Sprintf("#\n#Written by Gregor\ncluster.id=%s\ndirectory.id=%s\nnode.id=%d\nversion=1\n",
		m.ClusterID, m.DirectoryID, m.NodeID)
	tmp := filepath.Join(dir, "meta.properties.tmp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "meta.properties")); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

// loadOrFormat returns the data dir's identity, formatting it on first use.
func loadOrFormat(dir string, nodeID int32, clusterID string) (metaProperties, error) {
	m, ok, err := readMetaProperties(dir)
	if err != nil {
		return m, err
	}
	if ok {
		if m.NodeID != nodeID {
			return m, fmt.Errorf("server: data dir %s belongs to node %d, not node_id %d", dir, m.NodeID, nodeID)
		}
		if clusterID != "" && clusterID != m.ClusterID {
			return m, fmt.Errorf("server: data dir %s belongs to cluster %s, not cluster_id %s", dir, m.ClusterID, clusterID)
		}
		return m, nil
	}
	if clusterID == "" {
		clusterID = newUUIDBase64()
	}
	m = metaProperties{ClusterID: clusterID, NodeID: nodeID, DirectoryID: newUUIDBase64()}
	return m, writeMetaProperties(dir, m)
}
