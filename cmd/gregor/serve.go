package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newServeCmd is a placeholder until the broker's serve command lands; it
// keeps the command tree building and says plainly that it cannot serve.
func newServeCmd() *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a broker",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("serve: this build does not contain the broker yet")
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "./broker.toml", "path of the broker configuration")
	return cmd
}
