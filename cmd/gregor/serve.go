package main

import (
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/server"
	"github.com/gregorbroker/gregor/loader"
)

func newServeCmd() *cobra.Command {
	var configPath, logLevel, logFormat string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a broker",
		Long: `Run a Gregor broker with the configuration in --config (default ./broker.toml).

The file is decoded strictly: an unknown key or an invalid value stops the broker
with an error naming the key. A missing default file means the built-in defaults
(a single node on 127.0.0.1:9092, data in ./data). SIGINT or SIGTERM shuts down
cleanly: listeners close, logs are flushed and checkpointed.`,
		Example: `  gregor serve
  gregor serve --config /etc/gregor/broker.toml --log-level debug`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := newLogger(cmd, logLevel, logFormat)
			if err != nil {
				return err
			}
			cfg := config.Default()
			if _, statErr := os.Stat(configPath); statErr == nil || cmd.Flags().Changed("config") {
				cfg, err = config.Load(configPath)
				if err != nil {
					return err
				}
			} else {
				logger.Warn("no config file; using defaults", "config", configPath)
			}
			opts := server.Options{Logger: logger}
			if err := faultFS(&opts, logger); err != nil {
				return err
			}
			closeExtensions, err := loader.Open(cmd.Context(), cfg, &opts, logger)
			if err != nil {
				return err
			}
			defer closeExtensions()
			srv, err := server.New(cfg, opts)
			if err != nil {
				return err
			}
			return srv.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "./broker.toml", "path of the broker configuration (TOML)")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	cmd.Flags().StringVar(&logFormat, "log-format", "text", "log format: text or json")
	return cmd
}

func newLogger(cmd *cobra.Command, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), opts)), nil
	}
	return nil, usagef("--log-format %q: want text or json", format)
}
