//go:build !errorfs

package main

import (
	"log/slog"

	"github.com/gregorbroker/gregor/core/server"
)

// faultFS does nothing in an ordinary build; see faultfs_errorfs.go.
func faultFS(*server.Options, *slog.Logger) error { return nil }
