package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/auth"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func newACLCmd() *cobra.Command {
	cf := &clusterFlags{}
	cmd := &cobra.Command{
		Use:   "acl",
		Short: "Add, list and remove access control lists",
		Long: `Manage Kafka ACLs through the CreateAcls, DescribeAcls and DeleteAcls APIs,
as kafka-acls does. The broker enforces them when broker.toml sets
[security] authorizer = "acl".

An ACL lets (or, with --permission deny, forbids) a principal perform an
operation on a resource from a host. Resources are named with --topic, --group,
--transactional-id, --user or --cluster; --pattern prefixed makes the name a
prefix, and the literal name * means every resource of the type. DENY wins
over ALLOW; READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies
DESCRIBE_CONFIGS.`,
		Example: `  gregor acl add --principal User:alice --operation read --operation describe --topic orders
  gregor acl add --principal User:alice --operation read --group orders- --pattern prefixed
  gregor acl add --principal User:ops --operation alter --cluster
  gregor acl add --principal User:mallory --permission deny --operation all --topic '*'
  gregor acl list --topic orders --pattern match
  gregor acl remove --principal User:alice --topic orders`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cf.register(cmd.PersistentFlags())
	cmd.AddCommand(newACLAddCmd(cf), newACLListCmd(cf), newACLRemoveCmd(cf))
	return cmd
}

// aclFlags name ACLs (add) or filter them (list, remove).
type aclFlags struct {
	principals []string
	hosts      []string
	operations []string
	permission string
	pattern    string
	topics     []string
	groups     []string
	txnIDs     []string
	users      []string
	cluster    bool
}

func (f *aclFlags) register(fs *pflag.FlagSet, adding bool) {
	fs.StringArrayVar(&f.principals, "principal", nil, "principal, as Type:name (User:alice, User:*); repeatable")
	fs.StringArrayVar(&f.hosts, "host", nil, "client IP address the ACL applies to, * for any; repeatable (default *)")
	fs.StringSliceVar(&f.operations, "operation", nil,
		"operation: all, read, write, create, delete, alter, describe, cluster_action, describe_configs, alter_configs, idempotent_write; repeatable")
	fs.StringArrayVar(&f.topics, "topic", nil, "topic name (or prefix, or *); repeatable")
	fs.StringArrayVar(&f.groups, "group", nil, "consumer group id (or prefix, or *); repeatable")
	fs.StringArrayVar(&f.txnIDs, "transactional-id", nil, "transactional id (or prefix, or *); repeatable")
	fs.StringArrayVar(&f.users, "user", nil, "user resource, for delegation tokens (or prefix, or *); repeatable")
	fs.BoolVar(&f.cluster, "cluster", false, "the cluster resource")
	if adding {
		fs.StringVar(&f.permission, "permission", "allow", "allow or deny")
		fs.StringVar(&f.pattern, "pattern", "literal", "literal or prefixed: how the resource name matches")
		return
	}
	fs.StringVar(&f.permission, "permission", "any", "allow, deny or any")
	fs.StringVar(&f.pattern, "pattern", "any",
		"literal, prefixed, any (either, as written) or match (every ACL that applies to the named resource)")
}

// resources lists the named resources; with none named, adding is an
// error and filtering means any resource.
func (f *aclFlags) resources() []sdkauth.Resource {
	var out []sdkauth.Resource
	add := func(t sdkauth.ResourceType, names []string) {
		for _, n := range names {
			out = append(out, sdkauth.Resource{Type: t, Name: n})
		}
	}
	add(sdkauth.ResourceTopic, f.topics)
	add(sdkauth.ResourceGroup, f.groups)
	add(sdkauth.ResourceTransactionalID, f.txnIDs)
	add(sdkauth.ResourceUser, f.users)
	if f.cluster {
		out = append(out, sdkauth.Resource{Type: sdkauth.ResourceCluster, Name: sdkauth.ClusterName})
	}
	return out
}

func parseOperations(vals []string) ([]sdkauth.Operation, error) {
	var out []sdkauth.Operation
	for _, v := range vals {
		op, err := sdkauth.ParseOperation(strings.ReplaceAll(strings.TrimSpace(v), "-", "_"))
		if err != nil || op <= sdkauth.OpAny {
			return nil, usagef("unknown --operation %q", v)
		}
		out = append(out, op)
	}
	return out, nil
}

// bindings expands add's flags into every principal × host × operation ×
// resource combination.
func (f *aclFlags) bindings() ([]auth.ACL, error) {
	if len(f.principals) == 0 {
		return nil, usagef("give at least one --principal")
	}
	if len(f.operations) == 0 {
		return nil, usagef("give at least one --operation")
	}
	res := f.resources()
	if len(res) == 0 {
		return nil, usagef("name a resource: --topic, --group, --transactional-id, --user or --cluster")
	}
	ops, err := parseOperations(f.operations)
	if err != nil {
		return nil, err
	}
	perm, err := auth.ParsePermission(f.permission)
	if err != nil || perm == auth.PermissionAny {
		return nil, usagef("--permission %q: want allow or deny", f.permission)
	}
	pat, err := auth.ParsePatternType(f.pattern)
	if err != nil || (pat != sdkauth.PatternLiteral && pat != sdkauth.PatternPrefixed) {
		return nil, usagef("--pattern %q: want literal or prefixed", f.pattern)
	}
	hosts := f.hosts
	if len(hosts) == 0 {
		hosts = []string{auth.WildcardHost}
	}
	var out []auth.ACL
	for _, r := range res {
		r.Pattern = pat
		for _, p := range f.principals {
			for _, h := range hosts {
				for _, op := range ops {
					a := auth.ACL{Resource: r, Principal: p, Host: h, Operation: op, Permission: perm}
					if err := a.Validate(); err != nil {
						return nil, usageError{err}
					}
					out = append(out, a)
				}
			}
		}
	}
	return out, nil
}

// filters expands list's and remove's flags; each unset dimension matches
// anything.
func (f *aclFlags) filters() ([]auth.Filter, error) {
	perm, err := auth.ParsePermission(f.permission)
	if err != nil {
		return nil, usagef("--permission %q: want allow, deny or any", f.permission)
	}
	pat, err := auth.ParsePatternType(f.pattern)
	if err != nil {
		return nil, usagef("--pattern %q: want literal, prefixed, any or match", f.pattern)
	}
	ops := []sdkauth.Operation{sdkauth.OpAny}
	if len(f.operations) > 0 {
		if ops, err = parseOperations(f.operations); err != nil {
			return nil, err
		}
	}
	res := f.resources()
	if len(res) == 0 {
		if pat == sdkauth.PatternMatch {
			return nil, usagef("--pattern match needs a named resource")
		}
		res = []sdkauth.Resource{{Type: sdkauth.ResourceAny}}
	}
	principals := optionalList(f.principals)
	hosts := optionalList(f.hosts)
	var out []auth.Filter
	for _, r := range res {
		var name *string
		if r.Type != sdkauth.ResourceAny {
			n := r.Name
			name = &n
		}
		for _, p := range principals {
			for _, h := range hosts {
				for _, op := range ops {
					flt := auth.Filter{ResourceType: r.Type, Name: name, Pattern: pat, Principal: p, Host: h, Operation: op, Permission: perm}
					if err := flt.Validate(); err != nil {
						return nil, usageError{err}
					}
					out = append(out, flt)
				}
			}
		}
	}
	return out, nil
}

// optionalList is vals as pointers, or one nil (match anything) when empty.
func optionalList(vals []string) []*string {
	if len(vals) == 0 {
		return []*string{nil}
	}
	out := make([]*string, len(vals))
	for i := range vals {
		out[i] = &vals[i]
	}
	return out
}

func newACLAddCmd(cf *clusterFlags) *cobra.Command {
	f := &aclFlags{}
	cmd := &cobra.Command{
		Use:   "add",
		Short: "Add ACLs: every --principal × --host × --operation × resource",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			acls, err := f.bindings()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			cl, err := cf.connect(ctx)
			if err != nil {
				return err
			}
			defer cl.Close()
			req := kmsg.NewPtrCreateACLsRequest()
			for _, a := range acls {
				c := kmsg.NewCreateACLsRequestCreation()
				c.ResourceType, c.ResourceName = kmsg.ACLResourceType(a.Resource.Type), a.Resource.Name
				c.ResourcePatternType = kmsg.ACLResourcePatternType(a.Resource.Pattern)
				c.Principal, c.Host = a.Principal, a.Host
				c.Operation, c.PermissionType = kmsg.ACLOperation(a.Operation), kmsg.ACLPermissionType(a.Permission)
				req.Creations = append(req.Creations, c)
			}
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return fmt.Errorf("add ACLs: %w", err)
			}
			var failed []error
			for i, r := range resp.Results {
				if i >= len(acls) {
					break
				}
				if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
					failed = append(failed, aclError(acls[i].String(), err, r.ErrorMessage))
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "added %s\n", acls[i])
			}
			return multiError(cmd.ErrOrStderr(), "ACLs", len(acls), failed)
		},
	}
	f.register(cmd.Flags(), true)
	return cmd
}

func newACLListCmd(cf *clusterFlags) *cobra.Command {
	f := &aclFlags{}
	var output *outputFlag
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List ACLs, all or those matching the filters",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.check(); err != nil {
				return err
			}
			filters, err := f.filters()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			cl, err := cf.connect(ctx)
			if err != nil {
				return err
			}
			defer cl.Close()
			seen := map[string]bool{}
			var found []auth.ACL
			for _, flt := range filters {
				req := kmsg.NewPtrDescribeACLsRequest()
				req.ResourceType, req.ResourceName = kmsg.ACLResourceType(flt.ResourceType), flt.Name
				req.ResourcePatternType = kmsg.ACLResourcePatternType(flt.Pattern)
				req.Principal, req.Host = flt.Principal, flt.Host
				req.Operation, req.PermissionType = kmsg.ACLOperation(flt.Operation), kmsg.ACLPermissionType(flt.Permission)
				resp, err := req.RequestWith(ctx, cl)
				if err != nil {
					return fmt.Errorf("list ACLs: %w", err)
				}
				if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
					return aclError("list", err, resp.ErrorMessage)
				}
				for _, r := range resp.Resources {
					for _, e := range r.ACLs {
						a := auth.ACL{
							Resource:  sdkauth.Resource{Type: sdkauth.ResourceType(r.ResourceType), Name: r.ResourceName, Pattern: sdkauth.PatternType(r.ResourcePatternType)},
							Principal: e.Principal, Host: e.Host, Operation: sdkauth.Operation(e.Operation), Permission: auth.Permission(e.PermissionType),
						}
						if k := a.String(); !seen[k] {
							seen[k] = true
							found = append(found, a)
						}
					}
				}
			}
			return printACLs(cmd, output, found)
		},
	}
	f.register(cmd.Flags(), false)
	output = addOutputFlag(cmd)
	return cmd
}

func newACLRemoveCmd(cf *clusterFlags) *cobra.Command {
	f := &aclFlags{}
	var all bool
	cmd := &cobra.Command{
		Use:   "remove",
		Short: "Remove the ACLs matching the filters",
		Long: `Remove every ACL matching the filters. Unset filters match anything, so a
filter naming neither a resource nor a principal would remove every ACL: that
takes --all.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(f.resources()) == 0 && len(f.principals) == 0 && !all {
				return usagef("name a resource or a --principal, or give --all to remove every matching ACL")
			}
			filters, err := f.filters()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			cl, err := cf.connect(ctx)
			if err != nil {
				return err
			}
			defer cl.Close()
			req := kmsg.NewPtrDeleteACLsRequest()
			for _, flt := range filters {
				d := kmsg.NewDeleteACLsRequestFilter()
				d.ResourceType, d.ResourceName = kmsg.ACLResourceType(flt.ResourceType), flt.Name
				d.ResourcePatternType = kmsg.ACLResourcePatternType(flt.Pattern)
				d.Principal, d.Host = flt.Principal, flt.Host
				d.Operation, d.PermissionType = kmsg.ACLOperation(flt.Operation), kmsg.ACLPermissionType(flt.Permission)
				req.Filters = append(req.Filters, d)
			}
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return fmt.Errorf("remove ACLs: %w", err)
			}
			var removed []auth.ACL
			var failed []error
			for _, r := range resp.Results {
				if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
					failed = append(failed, aclError("remove", err, r.ErrorMessage))
					continue
				}
				for _, m := range r.MatchingACLs {
					if kerr.ErrorForCode(m.ErrorCode) != nil {
						failed = append(failed, aclError("remove", kerr.ErrorForCode(m.ErrorCode), m.ErrorMessage))
						continue
					}
					removed = append(removed, auth.ACL{
						Resource:  sdkauth.Resource{Type: sdkauth.ResourceType(m.ResourceType), Name: m.ResourceName, Pattern: sdkauth.PatternType(m.ResourcePatternType)},
						Principal: m.Principal, Host: m.Host, Operation: sdkauth.Operation(m.Operation), Permission: auth.Permission(m.PermissionType),
					})
				}
			}
			for _, a := range removed {
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", a)
			}
			if len(removed) == 0 && len(failed) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no ACL matched")
			}
			return multiError(cmd.ErrOrStderr(), "filters", len(filters), failed)
		},
	}
	f.register(cmd.Flags(), false)
	cmd.Flags().BoolVar(&all, "all", false, "allow a filter that names neither a resource nor a principal")
	return cmd
}

// printACLs prints ACLs sorted by resource then principal.
func printACLs(cmd *cobra.Command, output *outputFlag, acls []auth.ACL) error {
	sort.Slice(acls, func(i, j int) bool {
		a, b := acls[i], acls[j]
		if a.Resource != b.Resource {
			if a.Resource.Type != b.Resource.Type {
				return a.Resource.Type < b.Resource.Type
			}
			if a.Resource.Name != b.Resource.Name {
				return a.Resource.Name < b.Resource.Name
			}
			return a.Resource.Pattern < b.Resource.Pattern
		}
		return a.String() < b.String()
	})
	if output.structured() {
		views := make([]aclView, 0, len(acls))
		for _, a := range acls {
			views = append(views, aclView{ResourceType: fmt.Sprint(a.Resource.Type), Name: a.Resource.Name,
				Pattern: fmt.Sprint(a.Resource.Pattern), Principal: a.Principal, Host: a.Host,
				Operation: fmt.Sprint(a.Operation), Permission: fmt.Sprint(a.Permission)})
		}
		return output.write(cmd.OutOrStdout(), views)
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE-TYPE\tNAME\tPATTERN\tPRINCIPAL\tHOST\tOPERATION\tPERMISSION")
	for _, a := range acls {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Resource.Type, a.Resource.Name, a.Resource.Pattern,
			a.Principal, a.Host, a.Operation, a.Permission)
	}
	return tw.Flush()
}

// aclError explains a failed ACL request.
func aclError(what string, err error, msg *string) error {
	switch {
	case errors.Is(err, kerr.SecurityDisabled):
		return explain(err, "%s: the broker has no ACL authorizer (set [security] authorizer = \"acl\" in broker.toml)", what)
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		return explain(err, "%s: not allowed (managing ACLs needs ALTER on the cluster, listing them DESCRIBE)", what)
	}
	if msg != nil && *msg != "" {
		return fmt.Errorf("%s: %s: %w", what, *msg, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
