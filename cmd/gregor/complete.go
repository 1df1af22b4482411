package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// completionTimeout bounds the request a shell completion makes, so a
// missing broker leaves the prompt usable.
const completionTimeout = 2 * time.Second

// completeTopics completes topic names from the cluster; names already on
// the command line are not offered again.
func completeTopics(cf *clusterFlags) cobra.CompletionFunc {
	return completeNames(cf, func(ctx context.Context, cf *clusterFlags) ([]string, error) {
		adm, err := cf.connectAdmin(ctx)
		if err != nil {
			return nil, err
		}
		defer adm.Close()
		tds, err := adm.ListTopics(ctx)
		if err != nil {
			return nil, err
		}
		return tds.Names(), nil
	})
}

// completeGroups completes group ids from the cluster.
func completeGroups(cf *clusterFlags) cobra.CompletionFunc {
	return completeNames(cf, func(ctx context.Context, cf *clusterFlags) ([]string, error) {
		adm, err := cf.connectAdmin(ctx)
		if err != nil {
			return nil, err
		}
		defer adm.Close()
		listed, err := adm.ListGroups(ctx)
		if err != nil {
			return nil, err
		}
		return listed.Groups(), nil
	})
}

func completeNames(cf *clusterFlags, list func(context.Context, *clusterFlags) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		names, err := list(ctx, cf)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		return filterNames(names, args, prefix), cobra.ShellCompDirectiveNoFileComp
	}
}

// filterNames keeps the names that start with prefix and are not in used.
func filterNames(names, used []string, prefix string) []cobra.Completion {
	seen := make(map[string]bool, len(used))
	for _, u := range used {
		seen[u] = true
	}
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, prefix) && !seen[n] {
			out = append(out, n)
		}
	}
	return out
}

// completeOne offers fn's names for the first positional argument only, for
// commands that take exactly one.
func completeOne(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fn(cmd, args, prefix)
	}
}
