package hooks

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
)

func interceptFn(body []byte) wfunc {
	return wfunc{name: "gregor_intercept", params: 3, results: 1, body: body}
}

// answerBody writes decision bytes at address 100, puts (100, len) in the
// output slots and returns OK; ptrOverride, when non-zero, is written as
// the answer's address instead.
func answerBody(decision []byte, ptrOverride int32) []byte {
	var b []byte
	for i, c := range decision {
		b = append(b, i32c(int32(100+i))...)
		b = append(b, i32c(int32(c))...)
		b = append(b, opI32Store8, 0, 0)
	}
	addr := int32(100)
	if ptrOverride != 0 {
		addr = ptrOverride
	}
	b = append(b, opLocalGet, 0)
	b = append(b, i32c(addr)...)
	b = append(b, opI32Store, 2, 0, opLocalGet, 0)
	b = append(b, i32c(int32(len(decision)))...)
	b = append(b, opI32Store, 2, 4)
	return append(b, i32c(0)...)
}

func TestInterceptorHostileModules(t *testing.T) {
	ctx := context.Background()
	batch := &interceptor.Batch{Topic: "t", Principal: auth.User("a"), Records: []interceptor.Record{{Value: []byte("v")}}}
	for _, tc := range []struct {
		name   string
		fn     wfunc
		opts   Options
		target error // nil: accepted
	}{
		{"accept", interceptFn(answerBody([]byte{0}, 0)), Options{}, nil},
		{"trap", interceptFn(trapBody), Options{}, ErrTrap},
		{"infinite loop", interceptFn(loopBody), Options{CallTimeout: 50 * time.Millisecond}, ErrTimeout},
		{"memory blow-up", interceptFn(memoryBlowUp), Options{MemoryLimitPages: 4}, ErrMemoryLimit},
		{"garbage answer", interceptFn(answerBody([]byte{9, 9, 9}, 0)), Options{}, ErrBadDecision},
		{"count-changing rewrite", interceptFn(answerBody([]byte{2}, 0)), Options{}, ErrBadDecision},
		{"answer outside memory", interceptFn(answerBody([]byte{0}, 0x7fff0000)), Options{}, ErrBadDecision},
		{"error code", interceptFn(i32c(3)), Options{}, ErrGuest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeModule(t, wmodule{pages: 2, functions: []wfunc{versionFn(2), allocFn(1024), tc.fn}}.bytes())
			ic, err := LoadInterceptor(ctx, path, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer ic.Close(ctx)
			// Twice: a failed instance is replaced and the module keeps serving.
			for range 2 {
				d, err := ic.InterceptProduce(ctx, batch)
				if tc.target == nil {
					if err != nil || d.Action != interceptor.Accept {
						t.Fatalf("%+v, %v", d, err)
					}
					continue
				}
				if !errors.Is(err, tc.target) {
					t.Fatalf("err = %v, want %v", err, tc.target)
				}
			}
		})
	}
}

func TestInterceptorNeedsABI2(t *testing.T) {
	path := writeModule(t, wmodule{pages: 2, functions: []wfunc{versionFn(1), allocFn(1024), interceptFn(i32c(0))}}.bytes())
	if _, err := LoadInterceptor(context.Background(), path, Options{}); !errors.Is(err, ErrABIVersion) {
		t.Fatalf("ABI 1 interceptor: %v", err)
	}
	// An ABI 1 partitioner still loads.
	p := writeModule(t, partitionerModule(constPartitionFn(0)))
	pt, err := LoadPartitioner(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pt.Close(context.Background())
	if v := pt.Module().Info().ABIVersion; v != 1 {
		t.Fatalf("ABI version %d", v)
	}
}
