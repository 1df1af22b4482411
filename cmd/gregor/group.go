package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
)

func newGroupCmd() *cobra.Command {
	cf := &clusterFlags{}
	cmd := &cobra.Command{
		Use:   "group",
		Short: "List, describe and delete consumer groups, and reset their offsets",
		Long: `Manage consumer groups on a running cluster through the Kafka admin API.

"describe" shows each group's members and, per partition, the committed offset,
the log end offset and the lag. "reset-offsets" moves a group's committed
offsets; it only prints the plan unless --execute is given, and the group must
have no members.`,
		Example: `  gregor group list
  gregor group describe orders-service
  gregor group reset-offsets orders-service --topic orders --to-earliest
  gregor group reset-offsets orders-service --topic orders:0,1 --to-offset 42 --execute
  gregor group delete orders-service`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cf.register(cmd.PersistentFlags())
	cmd.AddCommand(
		newGroupListCmd(cf),
		newGroupDescribeCmd(cf),
		newGroupDeleteCmd(cf),
		newGroupResetCmd(cf),
	)
	return cmd
}

func newGroupListCmd(cf *clusterFlags) *cobra.Command {
	var states []string
	var output *outputFlag
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List groups with their type, state and protocol type",
		Example: `  gregor group list
  gregor group list --state Stable --state Empty`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.check(); err != nil {
				return err
			}
			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()
			listed, err := adm.ListGroups(ctx, states...)
			if err != nil {
				return fmt.Errorf("list groups: %w", err)
			}
			if output.structured() {
				return output.write(cmd.OutOrStdout(), groupListView(listed))
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "GROUP\tTYPE\tSTATE\tPROTOCOL-TYPE")
			for _, g := range listed.Sorted() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", g.Group, dash(g.GroupType), dash(g.State), dash(g.ProtocolType))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringArrayVar(&states, "state", nil, "only groups in this state (Empty, Stable, PreparingRebalance, ...); repeatable")
	output = addOutputFlag(cmd)
	return cmd
}

func newGroupDeleteCmd(cf *clusterFlags) *cobra.Command {
	return &cobra.Command{
		Use:               "delete GROUP [GROUP...]",
		Short:             "Delete groups that have no members, with their committed offsets",
		Args:              argsAtLeastOne("GROUP"),
		ValidArgsFunction: completeGroups(cf),
		RunE: func(cmd *cobra.Command, groups []string) error {
			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()
			resps, err := adm.DeleteGroups(ctx, groups...)
			if err != nil {
				return fmt.Errorf("delete groups: %w", err)
			}
			var errs []error
			for _, g := range groups {
				r, ok := resps[g]
				switch {
				case !ok:
					errs = append(errs, fmt.Errorf("group %q: missing from the broker's answer", g))
				case r.Err != nil:
					errs = append(errs, groupError(g, r.Err))
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "deleted group %q\n", g)
				}
			}
			return multiError(cmd.ErrOrStderr(), "group deletions", len(groups), errs)
		},
	}
}

// groupError turns a Kafka error about one group into a sentence a person
// can act on.
func groupError(group string, err error) error {
	switch {
	case errors.Is(err, kerr.GroupIDNotFound):
		return explain(err, "group %q does not exist", group)
	case errors.Is(err, kerr.NonEmptyGroup):
		return explain(err, "group %q still has members; stop its consumers first", group)
	case errors.Is(err, kerr.CoordinatorNotAvailable), errors.Is(err, kerr.CoordinatorLoadInProgress):
		return explain(err, "group %q: its coordinator is not available yet; try again", group)
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return explain(err, "group %q: %s", group, ke.Description)
	}
	return fmt.Errorf("group %q: %w", group, err)
}

func newGroupDescribeCmd(cf *clusterFlags) *cobra.Command {
	var output *outputFlag
	cmd := &cobra.Command{
		Use:   "describe GROUP [GROUP...]",
		Short: "Show a group's members and its committed offsets, log end offsets and lag",
		Long: `Describe groups: state, protocol and members, then one line per partition the
group consumes or has committed: the committed offset (CURRENT-OFFSET), the log
end offset (the high watermark), the lag between them, and the member that
consumes the partition. Without a commit the lag counts from the log start.`,
		Args:              argsAtLeastOne("GROUP"),
		ValidArgsFunction: completeGroups(cf),
		RunE: func(cmd *cobra.Command, groups []string) error {
			if err := output.check(); err != nil {
				return err
			}
			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()
			lags, err := adm.Lag(ctx, groups...)
			if err != nil && len(lags) == 0 {
				return fmt.Errorf("describe groups: %w", err)
			}
			var errs []error
			var views []groupView
			for _, g := range groups {
				l, ok := lags[g]
				notClassic := ok && (errors.Is(l.DescribeErr, kerr.GroupIDNotFound) || (l.Error() == nil && l.State == "Dead"))
				if notClassic {
					// Perhaps a consumer group of the KIP-848 protocol, or a
					// share group.
					v, found, err := describeConsumerProtocolGroup(ctx, adm, g)
					if err == nil && !found {
						v, found, err = describeShareGroup(ctx, adm, g)
					}
					switch {
					case err != nil:
						errs = append(errs, err)
					case !found:
						errs = append(errs, groupError(g, kerr.GroupIDNotFound))
					default:
						views = append(views, v)
					}
					continue
				}
				switch {
				case !ok:
					errs = append(errs, fmt.Errorf("group %q: missing from the broker's answer", g))
					continue
				case l.Error() != nil:
					errs = append(errs, groupError(g, l.Error()))
					continue
				}
				views = append(views, groupLagView(l))
			}
			out := cmd.OutOrStdout()
			if output.structured() {
				if views == nil {
					views = []groupView{}
				}
				if err := output.write(out, views); err != nil {
					return err
				}
				return multiError(cmd.ErrOrStderr(), "group descriptions", len(groups), errs)
			}
			for i, v := range views {
				if i > 0 {
					fmt.Fprintln(out)
				}
				if err := writeGroupView(out, v); err != nil {
					return err
				}
			}
			return multiError(cmd.ErrOrStderr(), "group descriptions", len(groups), errs)
		},
	}
	output = addOutputFlag(cmd)
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
