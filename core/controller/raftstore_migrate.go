package controller

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"github.com/gregorbroker/gregor/core/log/vfs"
)

// legacyStoreName is the raft-boltdb store earlier versions kept the raft log
// and stable store in. bbolt writes through *os.File, past the vfs seam, so
// a failed fsync of it could not be made sticky; it is read once, copied into
// the raft store and renamed raft.db.migrated.
const legacyStoreName = "raft.db"

// raft's stable store keys.
var raftStableKeys = []string{"CurrentTerm", "LastVoteTerm", "LastVoteCand"}

// openMetadataStore opens dir's raft store, first migrating a raft.db left by
// an earlier version when the store does not exist yet. The migration writes
// the whole store to a temporary file and renames it into place, so a crash
// midway leaves raft.db to migrate again.
func openMetadataStore(fsys vfs.FS, dir string) (*raftStore, error) {
	store, legacy := filepath.Join(dir, raftStoreName), filepath.Join(dir, legacyStoreName)
	if _, err := fsys.Lstat(store); !errors.Is(err, fs.ErrNotExist) {
		if err != nil {
			return nil, fmt.Errorf("controller: raft store: %w", err)
		}
		return openRaftStore(fsys, dir)
	}
	if _, err := os.Lstat(legacy); err != nil {
		return openRaftStore(fsys, dir)
	}
	buf, err := readLegacyStore(legacy)
	if err != nil {
		return nil, err
	}
	tmp := store + ".migrating"
	if err := vfs.WriteFileSync(fsys, tmp, buf); err != nil {
		return nil, fmt.Errorf("controller: migrate %s: %w", legacy, err)
	}
	if err := fsys.Rename(tmp, store); err != nil {
		return nil, fmt.Errorf("controller: migrate %s: %w", legacy, err)
	}
	if err := fsys.Rename(legacy, legacy+".migrated"); err != nil {
		return nil, fmt.Errorf("controller: migrate %s: %w", legacy, err)
	}
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return nil, fmt.Errorf("controller: migrate %s: %w", legacy, err)
	}
	return openRaftStore(fsys, dir)
}

// readLegacyStore encodes a raft-boltdb store's entries and stable keys as
// raft store records.
func readLegacyStore(path string) ([]byte, error) {
	bs, err := raftboltdb.New(raftboltdb.Options{
		Path: path, BoltOptions: &bbolt.Options{Timeout: time.Second, ReadOnly: true},
	})
	if err != nil {
		return nil, fmt.Errorf("controller: open %s: %w", path, err)
	}
	defer bs.Close()
	var buf []byte
	for _, k := range raftStableKeys {
		v, err := bs.Get([]byte(k))
		if err != nil && err.Error() == errKeyNotFound.Error() {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("controller: read %s: %w", path, err)
		}
		buf = appendRecord(buf, encodeSet(k, v))
	}
	first, err := bs.FirstIndex()
	if err != nil {
		return nil, fmt.Errorf("controller: read %s: %w", path, err)
	}
	last, err := bs.LastIndex()
	if err != nil {
		return nil, fmt.Errorf("controller: read %s: %w", path, err)
	}
	for i := first; first != 0 && i <= last; i++ {
		var l raft.Log
		if err := bs.GetLog(i, &l); err != nil {
			if errors.Is(err, raft.ErrLogNotFound) {
				continue
			}
			return nil, fmt.Errorf("controller: read %s: entry %d: %w", path, i, err)
		}
		buf = appendRecord(buf, encodeRaftLog(&l))
	}
	return buf, nil
}
