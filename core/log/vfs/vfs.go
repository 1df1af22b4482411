// Package vfs is the file-system seam of core/log: the few file operations a
// partition log makes (open and create, positioned reads and writes, fsync,
// truncate, rename, remove, stat, directory listing), with the operating
// system's implementation as the default. Tests and fault builds wrap it
// (vfs/errorfs) to inject I/O errors without touching a real disk.
//
// It imports nothing from core. The OS implementation hands out *os.File
// values unchanged, so the seam costs the hot path one interface call and no
// allocation.
package vfs

import (
	"io"
	"io/fs"
	"os"
	"time"
)

// File is an open file as the log uses it. *os.File implements it.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.WriterAt
	io.Closer
	Sync() error
	Truncate(size int64) error
	Stat() (fs.FileInfo, error)
	Name() string
	// Fd is the operating-system descriptor, for read-only mappings of
	// index files.
	Fd() uintptr
}

// FS is the file system a log lives on.
type FS interface {
	// OpenFile is os.OpenFile.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	Remove(name string) error
	RemoveAll(name string) error
	Rename(oldpath, newpath string) error
	MkdirAll(path string, perm fs.FileMode) error
	ReadDir(name string) ([]fs.DirEntry, error)
	Lstat(name string) (fs.FileInfo, error)
	Chtimes(name string, atime, mtime time.Time) error
}

// Default is the operating system's file system.
var Default FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		// A nil *os.File in a File interface would not compare equal to nil.
		return nil, err
	}
	return f, nil
}

func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) RemoveAll(name string) error                  { return os.RemoveAll(name) }
func (osFS) Rename(oldpath, newpath string) error         { return os.Rename(oldpath, newpath) }
func (osFS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error)   { return os.ReadDir(name) }
func (osFS) Lstat(name string) (fs.FileInfo, error)       { return os.Lstat(name) }
func (osFS) Chtimes(name string, atime, mtime time.Time) error {
	return os.Chtimes(name, atime, mtime)
}

// Open opens a file read-only.
func Open(fsys FS, name string) (File, error) { return fsys.OpenFile(name, os.O_RDONLY, 0) }

// ReadFile reads a whole file.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := Open(fsys, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// SyncDir fsyncs a directory, so that the files created, renamed or removed
// in it survive a crash.
func SyncDir(fsys FS, dir string) error {
	d, err := Open(fsys, dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteFileSync writes data to path (created or truncated) and fsyncs it
// before closing, so that a rename of it that follows is durable.
func WriteFileSync(fsys FS, path string, data []byte) error {
	f, err := fsys.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
