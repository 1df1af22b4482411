package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
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
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List groups with their type, state and protocol type",
		Example: `  gregor group list
  gregor group list --state Stable --state Empty`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "GROUP\tTYPE\tSTATE\tPROTOCOL-TYPE")
			for _, g := range listed.Sorted() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", g.Group, dash(g.GroupType), dash(g.State), dash(g.ProtocolType))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringArrayVar(&states, "state", nil, "only groups in this state (Empty, Stable, PreparingRebalance, ...); repeatable")
	return cmd
}

func newGroupDeleteCmd(cf *clusterFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "delete GROUP [GROUP...]",
		Short: "Delete groups that have no members, with their committed offsets",
		Args:  argsAtLeastOne("GROUP"),
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
	return &cobra.Command{
		Use:   "describe GROUP [GROUP...]",
		Short: "Show a group's members and its committed offsets, log end offsets and lag",
		Long: `Describe groups: state, protocol and members, then one line per partition the
group consumes or has committed: the committed offset (CURRENT-OFFSET), the log
end offset (the high watermark), the lag between them, and the member that
consumes the partition. Without a commit the lag counts from the log start.`,
		Args: argsAtLeastOne("GROUP"),
		RunE: func(cmd *cobra.Command, groups []string) error {
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
			out := cmd.OutOrStdout()
			first := true
			for _, g := range groups {
				l, ok := lags[g]
				notClassic := ok && (errors.Is(l.DescribeErr, kerr.GroupIDNotFound) || (l.Error() == nil && l.State == "Dead"))
				if notClassic {
					// Perhaps a consumer group of the KIP-848 protocol.
					var buf strings.Builder
					found, err := describeConsumerProtocolGroup(ctx, adm, &buf, g)
					switch {
					case err != nil:
						errs = append(errs, err)
					case !found:
						errs = append(errs, groupError(g, kerr.GroupIDNotFound))
					default:
						if !first {
							fmt.Fprintln(out)
						}
						first = false
						io.WriteString(out, buf.String())
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
				if !first {
					fmt.Fprintln(out)
				}
				first = false
				if err := writeGroupLag(out, l); err != nil {
					return err
				}
			}
			return multiError(cmd.ErrOrStderr(), "group descriptions", len(groups), errs)
		},
	}
}

// writeGroupLag prints one described group with its lag table.
func writeGroupLag(w io.Writer, l kadm.DescribedGroupLag) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	protocol := l.ProtocolType
	if l.Protocol != "" {
		protocol += "/" + l.Protocol
	}
	fmt.Fprintf(tw, "GROUP\t%s\nSTATE\t%s\nPROTOCOL\t%s\nMEMBERS\t%d\n\n", l.Group, l.State, dash(protocol), len(l.Members))
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tMEMBER-ID\tCLIENT-ID\tHOST")
	consuming := map[string]bool{}
	for _, ml := range l.Lag.Sorted() {
		member, client, host := "-", "-", "-"
		if ml.Member != nil {
			member, client, host = ml.Member.MemberID, ml.Member.ClientID, ml.Member.ClientHost
			consuming[member] = true
		}
		current, end, lag := "-", "-", "-"
		if ml.Commit.At >= 0 {
			current = strconv.FormatInt(ml.Commit.At, 10)
		}
		if ml.End.Err == nil {
			end = strconv.FormatInt(ml.End.Offset, 10)
		}
		if ml.Err == nil && ml.Lag >= 0 {
			lag = strconv.FormatInt(ml.Lag, 10)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", ml.Topic, ml.Partition, current, end, lag, member, client, host)
	}
	members := append([]kadm.DescribedGroupMember(nil), l.Members...)
	sort.Slice(members, func(i, j int) bool { return members[i].MemberID < members[j].MemberID })
	for _, m := range members {
		if !consuming[m.MemberID] {
			fmt.Fprintf(tw, "-\t-\t-\t-\t-\t%s\t%s\t%s\n", m.MemberID, m.ClientID, m.ClientHost)
		}
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
