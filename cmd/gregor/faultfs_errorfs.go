//go:build errorfs

package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gregorbroker/gregor/core/log/vfs/errorfs"
	"github.com/gregorbroker/gregor/core/server"
)

// faultFSEnv names the rules file of a broker built with the errorfs tag
// (go build -tags errorfs ./cmd/gregor), for fault tests only: the broker's
// logs run on an errorfs file system armed with the file's rules at start
// and again, replacing them, on every SIGUSR1 (an empty file disarms them).
// The rules are errorfs.ParseRules lines, such as "sync EIO" or
// "write ENOSPC partial path=.log". Without the variable the file system
// passes everything through.
const faultFSEnv = "GREGOR_ERRORFS_RULES"

// faultFS puts the broker's logs on an errorfs file system.
func faultFS(opts *server.Options, logger *slog.Logger) error {
	fsys := errorfs.New(nil)
	opts.LogFS = fsys
	path := os.Getenv(faultFSEnv)
	if path == "" {
		logger.Warn("errorfs build: no rules file; set " + faultFSEnv + " to inject disk faults")
		return nil
	}
	load := func() error {
		b, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("gregor: %s: %w", faultFSEnv, err)
		}
		if err := fsys.Set(string(b)); err != nil {
			return fmt.Errorf("gregor: %s %s: %w", faultFSEnv, path, err)
		}
		logger.Warn("errorfs rules loaded", "file", path, "rules", string(b))
		return nil
	}
	if err := load(); err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		for range sig {
			if err := load(); err != nil {
				logger.Error("errorfs rules not reloaded", "err", err)
			}
		}
	}()
	return nil
}
