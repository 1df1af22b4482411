package controller

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// metaFile is Kafka's name for the file that binds a metadata directory to a
// cluster and a node.
const metaFile = "meta.properties"

// loadOrCreateMeta reads dir/meta.properties, checking that it belongs to
// node and (if want is set) to cluster want, or writes a new one. It returns
// the cluster id.
func loadOrCreateMeta(dir string, node int32, want string, now time.Time) (string, error) {
	path := filepath.Join(dir, metaFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		id := want
		if id == "" {
			id = newClusterID()
		}
		if err := validateClusterID(id); err != nil {
			return "", err
		}
		return id, writeMeta(path, id, node, now)
	}
	if err != nil {
		return "", fmt.Errorf("controller: %w", err)
	}
	props, err := parseProperties(data)
	if err != nil {
		return "", fmt.Errorf("controller: %s: %w: %v", path, ErrCorrupt, err)
	}
	if v := props["version"]; v != "1" {
		return "", fmt.Errorf("controller: %s: %w: unsupported version %q", path, ErrCorrupt, v)
	}
	id := props["cluster.id"]
	if err := validateClusterID(id); err != nil {
		return "", fmt.Errorf("controller: %s: %w: %w", path, ErrCorrupt, err)
	}
	if want != "" && want != id {
		return "", fmt.Errorf("controller: %s: cluster id %q does not match the configured %q", path, id, want)
	}
	stored, err := strconv.ParseInt(props["node.id"], 10, 32)
	if err != nil {
		return "", fmt.Errorf("controller: %s: %w: node.id %q", path, ErrCorrupt, props["node.id"])
	}
	if int32(stored) != node {
		return "", fmt.Errorf("controller: %s: node.id %d does not match the configured node id %d", path, stored, node)
	}
	return id, nil
}

// newClusterID is Kafka's form: a random UUID in unpadded URL-safe base64.
func newClusterID() string {
	id := uuid.New()
	return base64.RawURLEncoding.EncodeToString(id[:])
}

func validateClusterID(id string) error {
	if id == "" || len(id) > 64 || strings.ContainsAny(id, "\r\n=#:\\ ") {
		return fmt.Errorf("controller: invalid cluster id %q", id)
	}
	return nil
}

func parseProperties(data []byte) (map[string]string, error) {
	props := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %d has no '='", n)
		}
		props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return props, sc.Err()
}

// writeMeta writes the file atomically: temp file, fsync, rename, fsync dir.
func writeMeta(path, clusterID string, node int32, now time.Time) error {
	body := fmt.Sprintf("#\n#%s\ncluster.id=%s\nnode.id=%d\nversion=1\n", now.UTC().Format(time.RFC1123), clusterID, node)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	if _, err := f.WriteString(body); err != nil {
		f.Close()
		return fmt.Errorf("controller: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("controller: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	return nil
}
