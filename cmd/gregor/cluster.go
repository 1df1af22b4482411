package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// bootstrapEnv overrides the default of --bootstrap.
	bootstrapEnv = "GREGOR_BOOTSTRAP"
	// defaultBootstrap is where a single-node broker listens by default.
	defaultBootstrap = "127.0.0.1:9092"
	// clientID names the CLI in broker logs and quotas.
	clientID = "gregor-cli"
)

// clusterFlags are the connection flags every client command shares.
type clusterFlags struct {
	bootstrap      string
	connectTimeout time.Duration
	security       securityFlags
}

// register adds --bootstrap and --connect-timeout to fs.
func (f *clusterFlags) register(fs *pflag.FlagSet) {
	def := strings.TrimSpace(os.Getenv(bootstrapEnv))
	if def == "" {
		def = defaultBootstrap
	}
	fs.StringVar(&f.bootstrap, "bootstrap", def,
		"comma-separated host:port list of brokers to contact first (env "+bootstrapEnv+")")
	fs.DurationVar(&f.connectTimeout, "connect-timeout", 10*time.Second,
		"how long to wait for a broker to answer before giving up")
	f.security.register(fs)
}

// parseBootstrap splits and checks a --bootstrap value.
func parseBootstrap(s string) ([]string, error) {
	var seeds []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		host, port, err := net.SplitHostPort(part)
		if err != nil {
			return nil, usagef("invalid --bootstrap address %q: want host:port", part)
		}
		if host == "" {
			return nil, usagef("invalid --bootstrap address %q: missing host", part)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, usagef("invalid --bootstrap address %q: port %q is not a number from 1 to 65535", part, port)
		}
		seeds = append(seeds, part)
	}
	if len(seeds) == 0 {
		return nil, usagef("--bootstrap is empty: give at least one host:port")
	}
	return seeds, nil
}

// connect builds a client for the bootstrap brokers and checks that one of
// them answers, so an unreachable cluster is reported once, clearly, instead
// of as a stream of retries.
func (f *clusterFlags) connect(ctx context.Context, opts ...kgo.Opt) (*kgo.Client, error) {
	seeds, err := parseBootstrap(f.bootstrap)
	if err != nil {
		return nil, err
	}
	if f.connectTimeout <= 0 {
		return nil, usagef("--connect-timeout must be positive, got %v", f.connectTimeout)
	}
	secOpts, err := f.security.opts()
	if err != nil {
		return nil, err
	}
	all := append([]kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.ClientID(clientID),
		kgo.DialTimeout(f.connectTimeout),
	}, secOpts...)
	all = append(all, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("client setup: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, f.connectTimeout)
	defer cancel()
	if err := cl.Ping(pingCtx); err != nil {
		cl.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if isSASLFailure(err) {
			return nil, fmt.Errorf("authentication failed at %s: %w", strings.Join(seeds, ","), err)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %v: %w", f.connectTimeout, err)
		}
		if len(seeds) == 1 {
			return nil, &connectError{fmt.Sprintf("cannot reach broker at %s: %v", seeds[0], err), err}
		}
		return nil, &connectError{fmt.Sprintf("cannot reach any broker of %s: %v", strings.Join(seeds, ","), err), err}
	}
	return cl, nil
}

// connectAdmin is connect for the admin (topic) commands.
func (f *clusterFlags) connectAdmin(ctx context.Context) (*kadm.Client, error) {
	cl, err := f.connect(ctx)
	if err != nil {
		return nil, err
	}
	return kadm.NewClient(cl), nil
}
