package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
)

// runCapture runs the CLI in-process.
func runCapture(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestRunUsageAndErrors(t *testing.T) {
	dead := closedAddr(t)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr []string
	}{
		{name: "root help", args: nil, wantCode: exitOK, wantStdout: "Kafka-compatible message broker"},
		{name: "topic help", args: []string{"topic", "--help"}, wantCode: exitOK, wantStdout: "gregor topic create orders"},
		{name: "produce help", args: []string{"produce", "--help"}, wantCode: exitOK, wantStdout: "--key-separator"},
		{name: "consume help documents formats", args: []string{"consume", "--help"}, wantCode: exitOK, wantStdout: "%h headers as k=v"},
		{name: "unknown command", args: []string{"frobnicate"}, wantCode: exitUsage,
			wantStderr: []string{`unknown command "frobnicate"`, "Run 'gregor --help' for usage."}},
		{name: "unknown topic subcommand", args: []string{"topic", "creat", "x"}, wantCode: exitUsage,
			wantStderr: []string{`unknown command "creat"`}},
		{name: "unknown flag", args: []string{"consume", "t", "--nope"}, wantCode: exitUsage,
			wantStderr: []string{"unknown flag: --nope", "Run 'gregor consume --help' for usage."}},
		{name: "missing topic", args: []string{"produce"}, wantCode: exitUsage, wantStderr: []string{"missing TOPIC argument"}},
		{name: "two topics", args: []string{"consume", "a", "b"}, wantCode: exitUsage, wantStderr: []string{"expected one TOPIC, got 2 arguments"}},
		{name: "bad partition", args: []string{"consume", "a", "--partition", "-3"}, wantCode: exitUsage, wantStderr: []string{"--partition must be 0 or more"}},
		{name: "bad count", args: []string{"consume", "a", "--count", "-1"}, wantCode: exitUsage, wantStderr: []string{"--count must be 0 or more"}},
		{name: "bad format", args: []string{"consume", "a", "--format", "%z", "--bootstrap", dead}, wantCode: exitUsage, wantStderr: []string{"unknown verb %z"}},
		{name: "bad bootstrap", args: []string{"topic", "list", "--bootstrap", "nohost"}, wantCode: exitUsage, wantStderr: []string{`invalid --bootstrap address "nohost"`}},
		{name: "bad acks", args: []string{"produce", "t", "--acks", "2", "--bootstrap", dead}, wantCode: exitUsage, wantStderr: []string{`--acks "2"`}},
		{name: "alter without changes", args: []string{"topic", "alter", "t", "--bootstrap", dead}, wantCode: exitUsage, wantStderr: []string{"nothing to change"}},
		{name: "set and delete same config", args: []string{"topic", "alter", "t", "--config", "a=1", "--delete-config", "a", "--bootstrap", dead},
			wantCode: exitUsage, wantStderr: []string{`config "a" is both set and deleted`}},
		{name: "unreachable broker", args: []string{"topic", "list", "--bootstrap", dead}, wantCode: exitError,
			wantStderr: []string{"gregor: cannot reach broker at " + dead + ": "}},
		{name: "unreachable brokers", args: []string{"consume", "t", "--bootstrap", dead + "," + dead}, wantCode: exitError,
			wantStderr: []string{fmt.Sprintf("cannot reach any broker of %s,%s", dead, dead)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCapture(t, "", tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout does not contain %q:\n%s", tt.wantStdout, stdout)
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, stderr)
				}
			}
		})
	}
}

func TestBootstrapFromEnvironment(t *testing.T) {
	dead := closedAddr(t)
	t.Setenv(bootstrapEnv, dead)
	code, _, stderr := runCapture(t, "", "topic", "list")
	if code != exitError || !strings.Contains(stderr, "cannot reach broker at "+dead) {
		t.Errorf("exit %d, stderr %q: want the address from %s", code, stderr, bootstrapEnv)
	}
	// The flag wins over the environment.
	other := closedAddr(t)
	code, _, stderr = runCapture(t, "", "topic", "list", "--bootstrap", other)
	if code != exitError || !strings.Contains(stderr, "cannot reach broker at "+other) {
		t.Errorf("exit %d, stderr %q: want the --bootstrap address", code, stderr)
	}
}
