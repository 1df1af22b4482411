package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/retention"
)

func writeModule(t *testing.T, wasm []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(p, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func keyed(keys ...string) []partitioner.Record {
	recs := make([]partitioner.Record, len(keys))
	for i, k := range keys {
		recs[i].Key = []byte(k)
	}
	return recs
}

// TestLoadRejects: every broken module fails at load with its own error.
func TestLoadRejects(t *testing.T) {
	sigBad := wfunc{name: "gregor_abi_version", params: 1, results: 1, body: i32c(1)}
	for _, tc := range []struct {
		name string
		wasm []byte
		opts Options
		want error
	}{
		{"empty file", nil, Options{}, ErrNotWasm},
		{"text file", []byte("#!/bin/sh\necho hi\n"), Options{}, ErrNotWasm},
		{"truncated", partitionerModule(constPartitionFn(0))[:20], Options{}, ErrInvalid},
		{"no version marker", wmodule{pages: 1, functions: []wfunc{allocFn(0), constPartitionFn(0)}}.bytes(), Options{}, ErrNoVersion},
		{"unknown ABI version", wmodule{pages: 1, functions: []wfunc{versionFn(7), allocFn(0), constPartitionFn(0)}}.bytes(), Options{}, ErrABIVersion},
		{"no alloc", wmodule{pages: 1, functions: []wfunc{versionFn(1), constPartitionFn(0)}}.bytes(), Options{}, ErrMissingExport},
		{"no partition export", wmodule{pages: 1, functions: []wfunc{versionFn(1), allocFn(0)}}.bytes(), Options{}, ErrMissingExport},
		{"no memory", wmodule{noMemory: true, functions: []wfunc{versionFn(1), allocFn(0), partitionFn(i32c(0))}}.bytes(), Options{}, ErrMissingExport},
		{"version with a parameter", wmodule{pages: 1, functions: []wfunc{sigBad, allocFn(0), constPartitionFn(0)}}.bytes(), Options{}, ErrBadExport},
		{"partition with 2 params", wmodule{pages: 1, functions: []wfunc{versionFn(1), allocFn(0), {name: "gregor_partition", params: 2, results: 1, body: i32c(0)}}}.bytes(), Options{}, ErrBadExport},
		{"version marker traps", wmodule{pages: 1, functions: []wfunc{{name: "gregor_abi_version", results: 1, body: trapBody}, allocFn(0), constPartitionFn(0)}}.bytes(), Options{}, ErrTrap},
		{"config rejected", wmodule{pages: 1, functions: []wfunc{versionFn(1), allocFn(1024), constPartitionFn(0), {name: "gregor_configure", params: 2, results: 1, body: i32c(2)}}}.bytes(), Options{}, ErrConfig},
		{"alloc returns 0", wmodule{pages: 1, functions: []wfunc{versionFn(1), allocFn(0), constPartitionFn(0), {name: "gregor_configure", params: 2, results: 1, body: i32c(0)}}}.bytes(), Options{}, ErrBadBuffer},
		{"memory larger than the limit", wmodule{pages: 100, functions: []wfunc{versionFn(1), allocFn(1024), constPartitionFn(0)}}.bytes(), Options{MemoryLimitPages: 10}, ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadPartitioner(context.Background(), writeModule(t, tc.wasm), tc.opts)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			t.Log(err)
		})
	}
	if _, err := LoadPartitioner(context.Background(), filepath.Join(t.TempDir(), "absent.wasm"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := Load(context.Background(), "x", Kind("router"), Options{}); err == nil {
		t.Fatal("unknown kind accepted")
	}
	if _, err := Load(context.Background(), "x", KindPartitioner, Options{MemoryLimitPages: 70000}); err == nil {
		t.Fatal("memory limit over 4 GiB accepted")
	}
}

// TestCallFailures: a module that loads but misbehaves on a call gives a
// clear error and its instance is replaced (the fallback is the broker's,
// tested in loader).
func TestCallFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		part    wfunc
		opts    Options
		want    error
		discard bool
	}{
		{"trap", partitionFn(trapBody), Options{}, ErrTrap, true},
		{"infinite loop", partitionFn(loopBody), Options{CallTimeout: 50 * time.Millisecond}, ErrTimeout, true},
		{"infinite loop, default limit", partitionFn(loopBody), Options{}, ErrTimeout, true},
		{"memory blow-up", partitionFn(memoryBlowUp), Options{MemoryLimitPages: 64}, ErrMemoryLimit, true},
		{"partition out of range", constPartitionFn(9), Options{}, partitioner.ErrPartitionOutOfRange, false},
		{"negative partition", constPartitionFn(-1), Options{}, partitioner.ErrPartitionOutOfRange, false},
		{"error code", partitionFn(i32c(3)), Options{}, ErrGuest, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := writeModule(t, partitionerModule(tc.part))
			recs := keyed("21", "foobar", "abc")
			out := make([]int32, len(recs))

			p, err := LoadPartitioner(ctx, path, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(ctx)
			for round := 0; round < 2; round++ { // the second call runs on a fresh instance when discarded
				err = p.PartitionBatch(recs, 8, out)
				if !errors.Is(err, tc.want) {
					t.Fatalf("round %d: err = %v, want %v", round, err, tc.want)
				}
			}
			t.Log(err)
			if got := len(p.m.cur.Load().live); (got == 0) != tc.discard {
				t.Fatalf("%d live instances after failures; discard=%v", got, tc.discard)
			}
		})
	}
}

func TestBadArguments(t *testing.T) {
	ctx := context.Background()
	p, err := LoadPartitioner(ctx, writeModule(t, partitionerModule(constPartitionFn(0))), Options{MaxCallBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if err := p.PartitionBatch(keyed("a"), 0, make([]int32, 1)); !errors.Is(err, partitioner.ErrNoPartitions) {
		t.Fatalf("zero partitions: %v", err)
	}
	if err := p.PartitionBatch(keyed("a", "b"), 3, make([]int32, 1)); err == nil {
		t.Fatal("short output accepted")
	}
	big := []partitioner.Record{{Key: make([]byte, 100)}}
	if err := p.PartitionBatch(big, 3, make([]int32, 1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("record over MaxCallBytes: %v", err)
	}
	// A batch over MaxCallBytes is split, not refused.
	many := keyed("k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10")
	if err := p.PartitionBatch(many, 3, make([]int32, len(many))); err != nil {
		t.Fatalf("split batch: %v", err)
	}
	if err := p.PartitionBatch(nil, 3, nil); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.PartitionBatch(keyed("a"), 3, make([]int32, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

// TestGoGuestFailures runs the Go SDK's own failure paths: a panic is
// caught by the SDK (an error code, instance kept), os.Exit and running out
// of memory end the instance.
func TestGoGuestFailures(t *testing.T) {
	path := hookstest.BuildGo(t, "testdata/murmur")
	for _, tc := range []struct {
		mode string
		keys []string
		opts Options
		want error
	}{
		{"panic", []string{"ok", "boom"}, Options{}, ErrGuest},
		{"exit", []string{"a"}, Options{}, ErrExit},
		// The limits that are not under test are generous: a loaded machine
		// runs the Go runtime's start-up and its allocations slowly.
		{"oom", []string{"a"}, Options{MemoryLimitPages: 512, CallTimeout: 30 * time.Second}, ErrMemoryLimit},
		{"range", []string{"a"}, Options{}, ErrGuest}, // the SDK checks the range itself
		{"loop", []string{"a"}, Options{CallTimeout: time.Second}, ErrTimeout},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			ctx := context.Background()
			tc.opts.Config = []byte(fmt.Sprintf(`{"mode":%q}`, tc.mode))
			p, err := LoadPartitioner(ctx, path, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(ctx)
			err = p.PartitionBatch(keyed(tc.keys...), 4, make([]int32, len(tc.keys)))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			t.Log(err)
		})
	}
	_, err := LoadPartitioner(context.Background(), path, Options{Config: []byte(`{"mode":"reject"}`)})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("rejected config: %v", err)
	}
}

// TestReload swaps a module under concurrent calls: every batch is placed
// wholly by the old or wholly by the new module and none fails.
func TestReload(t *testing.T) {
	ctx := context.Background()
	path := writeModule(t, partitionerModule(constPartitionFn(1)))
	p, err := LoadPartitioner(ctx, path, Options{MaxInstances: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs := keyed("a", "b", "c")
			out := make([]int32, 3)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := p.PartitionBatch(recs, 4, out); err != nil {
					errs <- err
					return
				}
				if out[0] != out[1] || out[1] != out[2] || (out[0] != 1 && out[0] != 2) {
					errs <- fmt.Errorf("mixed placement %v", out)
					return
				}
			}
		}()
	}
	// A broken file is refused and the old module keeps serving.
	if err := os.WriteFile(path, []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Module().Reload(ctx); !errors.Is(err, ErrNotWasm) {
		t.Fatalf("reload of a broken file: %v", err)
	}
	if err := os.WriteFile(path, partitionerModule(constPartitionFn(2)), 0o644); err != nil {
		t.Fatal(err)
	}
	tick := make(chan time.Time)
	watchCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { p.Module().Watch(watchCtx, tick); close(done) }()
	tick <- time.Time{}
	tick <- time.Time{} // the second tick is accepted only after the first check finished
	cancel()
	<-done
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	out := make([]int32, 1)
	if err := p.PartitionBatch(keyed("x"), 4, out); err != nil || out[0] != 2 {
		t.Fatalf("after reload: %v %v", out, err)
	}
	if changed, err := p.Module().CheckReload(ctx); changed || err != nil {
		t.Fatalf("unchanged file reloaded: %v %v", changed, err)
	}
	// Same bytes, new mtime: checked, but not swapped.
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, future, future); err != nil {
		t.Fatal(err)
	}
	if changed, err := p.Module().Reload(ctx); changed || err != nil {
		t.Fatalf("identical bytes reloaded: %v %v", changed, err)
	}
}

func TestInspect(t *testing.T) {
	ctx := context.Background()
	info, err := Inspect(ctx, partitionerModule(constPartitionFn(0)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info.ABIVersion != 1 || len(info.Kinds) != 1 || info.Kinds[0] != KindPartitioner || info.RecordFields != 7 {
		t.Fatalf("info %+v", info)
	}
	want := map[string]bool{"gregor_abi_version() -> i32": true, "gregor_alloc(i32) -> i32": true, "gregor_partition(i32,i32,i32,i32) -> i32": true}
	for _, e := range info.Exports {
		delete(want, e)
	}
	if len(want) != 0 {
		t.Fatalf("exports %v lack %v", info.Exports, want)
	}
	info, err = Inspect(ctx, wmodule{pages: 1, functions: []wfunc{versionFn(9), allocFn(0)}}.bytes(), Options{})
	if !errors.Is(err, ErrABIVersion) || len(info.Exports) != 2 {
		t.Fatalf("unknown version: %+v %v", info, err)
	}
}

func TestRetention(t *testing.T) {
	ctx := context.Background()
	module := func(body []byte) string {
		return writeModule(t, wmodule{pages: 1, functions: []wfunc{versionFn(1), allocFn(1024),
			{name: "gregor_retention", params: 2, results: 1, body: body}}}.bytes())
	}
	p := retention.Partition{Topic: "t", Segments: []retention.Segment{{BaseOffset: 0, NextOffset: 5}, {BaseOffset: 5, NextOffset: 9}, {BaseOffset: 9, NextOffset: 12}}}
	for _, tc := range []struct {
		name string
		body []byte
		want int
		err  error
	}{
		{"two", i32c(2), 2, nil},
		{"active segment", i32c(3), 0, retention.ErrOutOfRange},
		{"error code", i32c(-3), 0, ErrGuest},
		{"trap", trapBody, 0, ErrTrap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := LoadRetentionPolicy(ctx, module(tc.body), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close(ctx)
			n, err := r.DeletableSegments(ctx, p)
			if !errors.Is(err, tc.err) || n != tc.want {
				t.Fatalf("got %d, %v; want %d, %v", n, err, tc.want, tc.err)
			}
		})
	}
}

func TestAuthorizer(t *testing.T) {
	ctx := context.Background()
	// Stores decision byte d for the first action and returns 0.
	store := func(d int32) []byte {
		b := []byte{opLocalGet, 0}
		b = append(b, i32c(d)...)
		b = append(b, opI32Store8, 0, 0)
		return append(b, i32c(0)...)
	}
	module := func(body []byte) string {
		return writeModule(t, wmodule{pages: 1, functions: []wfunc{versionFn(1), allocFn(1024),
			{name: "gregor_authorize", params: 3, results: 1, body: body}}}.bytes())
	}
	acts := []auth.Action{
		{Principal: auth.User("alice"), Operation: auth.OpWrite, Resource: auth.Resource{Type: auth.ResourceTopic, Name: "a", Pattern: auth.PatternLiteral}},
	}
	for _, tc := range []struct {
		name string
		body []byte
		want auth.Decision
		err  error
	}{
		{"allow", store(1), auth.Allow, nil},
		{"deny", store(0), auth.Deny, nil},
		{"bad decision byte", store(7), auth.Deny, ErrGuest},
		{"trap", trapBody, auth.Deny, ErrTrap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := LoadAuthorizer(ctx, module(tc.body), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(ctx)
			dec := []auth.Decision{auth.Allow}
			err = a.Authorize(ctx, acts, dec)
			if !errors.Is(err, tc.err) || dec[0] != tc.want {
				t.Fatalf("got %v, %v; want %v, %v", dec[0], err, tc.want, tc.err)
			}
		})
	}
}
