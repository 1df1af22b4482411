package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Environment default of --password for "user create".
const userPasswordEnv = "GREGOR_USER_PASSWORD"

// Kafka's bounds on SCRAM iterations (kafka-configs refuses others).
const (
	minScramIterations     = 4096
	maxScramIterations     = 16384
	defaultScramIterations = 8192
)

func newUserCmd() *cobra.Command {
	cf := &clusterFlags{}
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Create, list and delete SCRAM users",
		Long: `Manage the SCRAM-SHA-256 and SCRAM-SHA-512 credentials brokers check SASL
clients against. Credentials are salted and hashed by the broker and stored in
the metadata log; the password itself is never stored. These commands use
Kafka's AlterUserScramCredentials and DescribeUserScramCredentials APIs, so
kafka-configs --entity-type users sees the same users.`,
		Example: `  printf '%s' "$PW" | gregor user create alice --password-stdin
  GREGOR_USER_PASSWORD=s3cret gregor user create bob --mechanism SCRAM-SHA-512
  gregor user list
  gregor user delete alice`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cf.register(cmd.PersistentFlags())
	cmd.AddCommand(newUserCreateCmd(cf), newUserListCmd(cf), newUserDeleteCmd(cf))
	return cmd
}

// parseScramMechanisms reads --mechanism values; none means both.
func parseScramMechanisms(vals []string) ([]kadm.ScramMechanism, error) {
	if len(vals) == 0 {
		return []kadm.ScramMechanism{kadm.ScramSha256, kadm.ScramSha512}, nil
	}
	var out []kadm.ScramMechanism
	seen := map[kadm.ScramMechanism]bool{}
	for _, v := range vals {
		var m kadm.ScramMechanism
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case "SCRAM-SHA-256":
			m = kadm.ScramSha256
		case "SCRAM-SHA-512":
			m = kadm.ScramSha512
		default:
			return nil, usagef("unknown --mechanism %q: want SCRAM-SHA-256 or SCRAM-SHA-512", v)
		}
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out, nil
}

// readPassword takes the password from stdin (first line), or else from
// the flag or its environment default.
func readPassword(fromStdin bool, flag string, stdin io.Reader) (string, error) {
	if fromStdin {
		if flag != "" {
			return "", usagef("--password and --password-stdin exclude each other")
		}
		line, err := bufio.NewReader(io.LimitReader(stdin, 4096)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("reading the password from stdin: %w", err)
		}
		flag = strings.TrimRight(line, "\r\n")
	}
	if flag == "" {
		return "", usagef("no password: give --password-stdin, $%s or --password", userPasswordEnv)
	}
	return flag, nil
}

func newUserCreateCmd(cf *clusterFlags) *cobra.Command {
	var (
		password   string
		fromStdin  bool
		mechanisms []string
		iterations int32
	)
	cmd := &cobra.Command{
		Use:   "create USER",
		Short: "Create a SCRAM user, or change its password",
		Args:  argsOne("USER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			user := args[0]
			mechs, err := parseScramMechanisms(mechanisms)
			if err != nil {
				return err
			}
			if iterations < minScramIterations || iterations > maxScramIterations {
				return usagef("--iterations %d: want %d to %d", iterations, minScramIterations, maxScramIterations)
			}
			pw, err := readPassword(fromStdin, password, cmd.InOrStdin())
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()
			ups := make([]kadm.UpsertSCRAM, len(mechs))
			for i, m := range mechs {
				ups[i] = kadm.UpsertSCRAM{User: user, Mechanism: m, Iterations: iterations, Password: pw}
			}
			res, err := adm.AlterUserSCRAMs(ctx, nil, ups)
			if err != nil {
				return fmt.Errorf("create user %s: %w", user, err)
			}
			if err := res.Error(); err != nil {
				return scramError(user, err)
			}
			names := make([]string, len(mechs))
			for i, m := range mechs {
				names[i] = m.String()
			}
			fmt.Fprintf(cmd.OutOrStdout(), "user %q: %s credentials set (%d iterations)\n", user, strings.Join(names, ", "), iterations)
			return nil
		},
	}
	cmd.Flags().StringVar(&password, "password", os.Getenv(userPasswordEnv), "the password (env "+userPasswordEnv+"); --password-stdin keeps it off the command line")
	cmd.Flags().BoolVar(&fromStdin, "password-stdin", false, "read the password from the first line of stdin")
	cmd.Flags().StringSliceVar(&mechanisms, "mechanism", nil, "SCRAM-SHA-256 and/or SCRAM-SHA-512 (default: both)")
	cmd.Flags().Int32Var(&iterations, "iterations", defaultScramIterations, "PBKDF2 iterations of the salted password")
	return cmd
}

func newUserListCmd(cf *clusterFlags) *cobra.Command {
	var output *outputFlag
	cmd := &cobra.Command{
		Use:   "list [USER...]",
		Short: "List SCRAM users with their mechanisms and iterations",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.check(); err != nil {
				return err
			}
			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()
			described, err := adm.DescribeUserSCRAMs(ctx, args...)
			if err != nil {
				return fmt.Errorf("list users: %w", err)
			}
			if output.structured() {
				var failed []error
				for _, d := range described.Sorted() {
					if d.Err != nil {
						failed = append(failed, scramError(d.User, d.Err))
					}
				}
				if err := output.write(cmd.OutOrStdout(), userListView(described)); err != nil {
					return err
				}
				return multiError(cmd.ErrOrStderr(), "users", len(args), failed)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "USER\tMECHANISM\tITERATIONS")
			var failed []error
			for _, d := range described.Sorted() {
				if d.Err != nil {
					failed = append(failed, scramError(d.User, d.Err))
					continue
				}
				infos := d.CredInfos
				sort.Slice(infos, func(i, j int) bool { return infos[i].Mechanism < infos[j].Mechanism })
				for _, ci := range infos {
					fmt.Fprintf(tw, "%s\t%s\t%d\n", d.User, ci.Mechanism, ci.Iterations)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return multiError(cmd.ErrOrStderr(), "users", len(args), failed)
		},
	}
	output = addOutputFlag(cmd)
	return cmd
}

func newUserDeleteCmd(cf *clusterFlags) *cobra.Command {
	var mechanisms []string
	cmd := &cobra.Command{
		Use:   "delete USER [USER...]",
		Short: "Delete SCRAM users (all their credentials, or those of --mechanism)",
		Args:  argsAtLeastOne("USER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()
			var dels []kadm.DeleteSCRAM
			var failed []error
			if len(mechanisms) > 0 {
				mechs, err := parseScramMechanisms(mechanisms)
				if err != nil {
					return err
				}
				for _, u := range args {
					for _, m := range mechs {
						dels = append(dels, kadm.DeleteSCRAM{User: u, Mechanism: m})
					}
				}
			} else {
				// Every credential the user has: deleting one it lacks
				// would fail.
				described, err := adm.DescribeUserSCRAMs(ctx, args...)
				if err != nil {
					return fmt.Errorf("delete users: %w", err)
				}
				for _, u := range args {
					d := described[u]
					if d.Err != nil {
						failed = append(failed, scramError(u, d.Err))
						continue
					}
					for _, ci := range d.CredInfos {
						dels = append(dels, kadm.DeleteSCRAM{User: u, Mechanism: ci.Mechanism})
					}
				}
			}
			if len(dels) > 0 {
				res, err := adm.AlterUserSCRAMs(ctx, dels, nil)
				if err != nil {
					return fmt.Errorf("delete users: %w", err)
				}
				for _, r := range res.Sorted() {
					if r.Err != nil {
						failed = append(failed, scramError(r.User, r.Err))
						continue
					}
					fmt.Fprintf(cmd.OutOrStdout(), "user %q deleted\n", r.User)
				}
			}
			return multiError(cmd.ErrOrStderr(), "users", len(args), failed)
		},
	}
	cmd.Flags().StringSliceVar(&mechanisms, "mechanism", nil, "delete only these credentials (SCRAM-SHA-256, SCRAM-SHA-512)")
	return cmd
}

// scramError explains a per-user failure.
func scramError(user string, err error) error {
	switch {
	case errors.Is(err, kerr.ResourceNotFound):
		return explain(err, "user %q: no such SCRAM user", user)
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		return explain(err, "user %q: not allowed (SCRAM users need ALTER or DESCRIBE on the cluster)", user)
	}
	return fmt.Errorf("user %q: %w", user, err)
}
