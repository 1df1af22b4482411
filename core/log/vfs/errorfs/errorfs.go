// Package errorfs wraps a vfs.FS and injects I/O errors into chosen file
// operations, in the spirit of pebble's vfs/errorfs: EIO on write or fsync,
// ENOSPC, short writes. It exists for tests and fault-injection builds; a
// production broker never constructs one.
//
// Rules are added and cleared while the file system is in use. With no rule
// armed, every call goes straight to the wrapped file system after one atomic
// load.
package errorfs

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gregorbroker/gregor/core/log/vfs"
)

// Op is a set of file operations a rule applies to.
type Op uint16

// The operations a rule can fail.
const (
	OpCreate   Op = 1 << iota // OpenFile with O_CREATE
	OpWrite                   // Write and WriteAt
	OpSync                    // fsync of a file or a directory
	OpTruncate                // Truncate
	OpRename                  // Rename
	OpRemove                  // Remove and RemoveAll
	OpRead                    // Read and ReadAt
	OpOpen                    // OpenFile without O_CREATE

	// OpAnyWrite is every operation that changes the disk.
	OpAnyWrite = OpCreate | OpWrite | OpSync | OpTruncate | OpRename | OpRemove
)

var opNames = []struct {
	op   Op
	name string
}{
	{OpCreate, "create"}, {OpWrite, "write"}, {OpSync, "sync"}, {OpTruncate, "truncate"},
	{OpRename, "rename"}, {OpRemove, "remove"}, {OpRead, "read"}, {OpOpen, "open"},
	{OpAnyWrite, "anywrite"},
}

// Rule says which operations fail and how.
type Rule struct {
	// Ops are the operations the rule fails.
	Ops Op
	// Path, when set, limits the rule to paths containing it.
	Path string
	// Err is the error returned, typically syscall.EIO or syscall.ENOSPC; nil
	// means EIO.
	Err error
	// Partial makes a failing write a short write: the first half of the
	// bytes reach the file before the error, as a disk filling up mid-write
	// does.
	Partial bool
	// After lets this many matching operations succeed before the first
	// failure.
	After int
	// Times is how many failures the rule injects before it stops; 0 means
	// it never stops.
	Times int
}

type armedRule struct {
	Rule
	seen, failed int
}

// FS injects the errors of its rules into the operations of an inner FS.
type FS struct {
	inner vfs.FS
	armed atomic.Bool
	count atomic.Int64
	// mu guards rules.
	mu    sync.Mutex
	rules []*armedRule
}

// New wraps inner; it passes every operation through until a rule is added.
func New(inner vfs.FS) *FS {
	if inner == nil {
		inner = vfs.Default
	}
	return &FS{inner: inner}
}

// Add arms a rule.
func (f *FS) Add(r Rule) {
	if r.Err == nil {
		r.Err = syscall.EIO
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &armedRule{Rule: r})
	f.armed.Store(true)
}

// Clear disarms every rule: the disk works again.
func (f *FS) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
	f.armed.Store(false)
}

// Injected counts the errors injected so far.
func (f *FS) Injected() int64 { return f.count.Load() }

// check returns the injected error for op on path, if a rule fires, and
// whether the failure is a short write.
func (f *FS) check(op Op, path string) (error, bool) {
	if !f.armed.Load() {
		return nil, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.rules {
		if r.Ops&op == 0 || (r.Path != "" && !strings.Contains(path, r.Path)) {
			continue
		}
		if r.Times > 0 && r.failed >= r.Times {
			continue
		}
		r.seen++
		if r.seen <= r.After {
			continue
		}
		r.failed++
		f.count.Add(1)
		return &fs.PathError{Op: opName(op), Path: path, Err: r.Err}, r.Partial
	}
	return nil, false
}

func opName(op Op) string {
	for _, n := range opNames {
		if n.op == op {
			return "errorfs " + n.name
		}
	}
	return "errorfs"
}

// OpenFile implements vfs.FS.
func (f *FS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	op := OpOpen
	if flag&syscall.O_CREAT != 0 {
		op = OpCreate
	}
	if err, _ := f.check(op, name); err != nil {
		return nil, err
	}
	file, err := f.inner.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &errFile{File: file, fs: f}, nil
}

// Remove implements vfs.FS.
func (f *FS) Remove(name string) error {
	if err, _ := f.check(OpRemove, name); err != nil {
		return err
	}
	return f.inner.Remove(name)
}

// RemoveAll implements vfs.FS.
func (f *FS) RemoveAll(name string) error {
	if err, _ := f.check(OpRemove, name); err != nil {
		return err
	}
	return f.inner.RemoveAll(name)
}

// Rename implements vfs.FS.
func (f *FS) Rename(oldpath, newpath string) error {
	if err, _ := f.check(OpRename, newpath); err != nil {
		return err
	}
	return f.inner.Rename(oldpath, newpath)
}

// MkdirAll implements vfs.FS.
func (f *FS) MkdirAll(path string, perm fs.FileMode) error {
	if err, _ := f.check(OpCreate, path); err != nil {
		return err
	}
	return f.inner.MkdirAll(path, perm)
}

// ReadDir implements vfs.FS.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err, _ := f.check(OpRead, name); err != nil {
		return nil, err
	}
	return f.inner.ReadDir(name)
}

// Lstat implements vfs.FS.
func (f *FS) Lstat(name string) (fs.FileInfo, error) { return f.inner.Lstat(name) }

// Chtimes implements vfs.FS.
func (f *FS) Chtimes(name string, atime, mtime time.Time) error {
	if err, _ := f.check(OpWrite, name); err != nil {
		return err
	}
	return f.inner.Chtimes(name, atime, mtime)
}

type errFile struct {
	vfs.File
	fs *FS
}

func (e *errFile) Write(p []byte) (int, error) {
	if err, partial := e.fs.check(OpWrite, e.Name()); err != nil {
		if partial && len(p) > 1 {
			n, _ := e.File.Write(p[:len(p)/2])
			return n, err
		}
		return 0, err
	}
	return e.File.Write(p)
}

func (e *errFile) WriteAt(p []byte, off int64) (int, error) {
	if err, partial := e.fs.check(OpWrite, e.Name()); err != nil {
		if partial && len(p) > 1 {
			n, _ := e.File.WriteAt(p[:len(p)/2], off)
			return n, err
		}
		return 0, err
	}
	return e.File.WriteAt(p, off)
}

func (e *errFile) Read(p []byte) (int, error) {
	if err, _ := e.fs.check(OpRead, e.Name()); err != nil {
		return 0, err
	}
	return e.File.Read(p)
}

func (e *errFile) ReadAt(p []byte, off int64) (int, error) {
	if err, _ := e.fs.check(OpRead, e.Name()); err != nil {
		return 0, err
	}
	return e.File.ReadAt(p, off)
}

func (e *errFile) Sync() error {
	if err, _ := e.fs.check(OpSync, e.Name()); err != nil {
		return err
	}
	return e.File.Sync()
}

func (e *errFile) Truncate(size int64) error {
	if err, _ := e.fs.check(OpTruncate, e.Name()); err != nil {
		return err
	}
	return e.File.Truncate(size)
}

// ParseRules reads rules from text, one a line or separated by ';':
//
//	<ops> <errno> [partial] [path=<substring>] [after=<n>] [times=<n>]
//
// where ops is a '|'-separated list of create, write, sync, truncate, rename,
// remove, read, open or anywrite, and errno is EIO, ENOSPC, EROFS or EDQUOT.
// Blank lines and lines starting with '#' are ignored.
func ParseRules(text string) ([]Rule, error) {
	var out []Rule
	for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ';' }) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			return nil, fmt.Errorf("errorfs: rule %q: want <ops> <errno> [options]", line)
		}
		var r Rule
		for _, name := range strings.Split(fields[0], "|") {
			op, ok := lookupOp(name)
			if !ok {
				return nil, fmt.Errorf("errorfs: rule %q: unknown operation %q", line, name)
			}
			r.Ops |= op
		}
		switch strings.ToUpper(fields[1]) {
		case "EIO":
			r.Err = syscall.EIO
		case "ENOSPC":
			r.Err = syscall.ENOSPC
		case "EROFS":
			r.Err = syscall.EROFS
		case "EDQUOT":
			r.Err = syscall.EDQUOT
		default:
			return nil, fmt.Errorf("errorfs: rule %q: unknown errno %q", line, fields[1])
		}
		for _, opt := range fields[2:] {
			k, v, _ := strings.Cut(opt, "=")
			var err error
			switch k {
			case "partial":
				r.Partial = true
			case "path":
				r.Path = v
			case "after":
				r.After, err = strconv.Atoi(v)
			case "times":
				r.Times, err = strconv.Atoi(v)
			default:
				err = fmt.Errorf("unknown option")
			}
			if err != nil || r.After < 0 || r.Times < 0 {
				return nil, fmt.Errorf("errorfs: rule %q: option %q: invalid", line, opt)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

func lookupOp(name string) (Op, bool) {
	for _, n := range opNames {
		if n.name == name {
			return n.op, true
		}
	}
	return 0, false
}

// Set replaces every rule with the rules ParseRules reads from text; an
// empty text disarms them all.
func (f *FS) Set(text string) error {
	rules, err := ParseRules(text)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = f.rules[:0]
	for _, r := range rules {
		if r.Err == nil {
			r.Err = syscall.EIO
		}
		f.rules = append(f.rules, &armedRule{Rule: r})
	}
	f.armed.Store(len(f.rules) > 0)
	return nil
}
