package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

const rootLong = `Gregor is a Kafka-compatible message broker in one binary.

It speaks the Kafka wire protocol, so any ordinary Kafka client (Java, librdkafka,
franz-go, kafka-go, sarama, kcat, ...) works against it unmodified. Partitions are
stored as Kafka-format segmented logs and replicated with Kafka's ISR model.

"gregor serve" runs a broker. The other commands are a small Kafka client for
day-to-day work: managing topics and writing or reading records from a shell.
They find the cluster through --bootstrap (default: $GREGOR_BOOTSTRAP, or
127.0.0.1:9092 when it is unset).

Listing and describe commands print a table, or JSON or YAML with --output.
"gregor completion SHELL" prints a completion script (bash, zsh, fish,
powershell); topic and group names complete from the cluster.

Exit codes: 0 success, 1 an error (the broker refused, a topic is missing,
the cluster is unreachable, ...), 2 a usage error in the command line itself.`

const rootExample = `  # Run a single-node broker with ./broker.toml
  gregor serve

  # Create a topic, write two keyed records and read them back
  gregor topic create orders --partitions 3
  printf 'alice:1\nbob:2\n' | gregor produce orders --key-separator :
  gregor consume orders --count 2 --format '%k=%v (partition %p, offset %o)\n'`

// newRootCmd builds the whole command tree.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "gregor",
		Short:         "Gregor, a Kafka-compatible message broker",
		Long:          rootLong,
		Example:       rootExample,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Subcommands only; "gregor" alone prints help.
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newServeCmd())
	root.AddCommand(newTopicCmd())
	root.AddCommand(newGroupCmd())
	root.AddCommand(newTxnCmd())
	root.AddCommand(newProducersCmd())
	root.AddCommand(newACLCmd())
	root.AddCommand(newUserCmd())
	root.AddCommand(newProduceCmd())
	root.AddCommand(newConsumeCmd())
	root.AddCommand(newBenchCmd())
	root.AddCommand(newExtensionCmd())
	root.AddCommand(newMirrorCmd())
	root.AddCommand(newClusterCmd())
	return root
}

// usageError marks a mistake in the command line itself (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef builds a usageError.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// reportError prints err for a person and returns the exit code.
func reportError(w io.Writer, cmd *cobra.Command, err error) int {
	fmt.Fprintf(w, "gregor: %v\n", err)
	if !isUsageError(err) {
		if hint := nextStep(err); hint != "" {
			fmt.Fprintf(w, "Next: %s.\n", hint)
		}
		return exitError
	}
	path := "gregor"
	if cmd != nil {
		path = cmd.CommandPath()
	}
	fmt.Fprintf(w, "Run '%s --help' for usage.\n", path)
	return exitUsage
}

// argsOne requires exactly one positional argument, called name in errors.
func argsOne(name string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return usagef("missing %s argument", name)
		case len(args) > 1:
			return usagef("expected one %s, got %d arguments: %s", name, len(args), strings.Join(args, " "))
		}
		return nil
	}
}

// argsAtLeastOne requires one or more positional arguments.
func argsAtLeastOne(name string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef("missing %s argument", name)
		}
		return nil
	}
}
