package loader

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/server"
	"github.com/gregorbroker/gregor/hooks"
	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text.wasm")
	if err := os.WriteFile(text, []byte("not a module"), 0o644); err != nil {
		t.Fatal(err)
	}
	region := hookstest.BuildGo(t, "../examples/wasm-region")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name    string
		ext     map[string]config.Extension
		wantErr error
		errText string
	}{
		{name: "none", ext: nil},
		{name: "WASM partitioner", ext: map[string]config.Extension{"region": {Kind: config.KindPartitioner, WASM: region}}},
		{name: "WASM partitioner with config", ext: map[string]config.Extension{
			"region": {Kind: config.KindPartitioner, WASM: region, Config: map[string]any{"regions": []any{"eu", "us"}}}}},
		{name: "configuration refused", ext: map[string]config.Extension{
			"region": {Kind: config.KindPartitioner, WASM: region, Config: map[string]any{"regions": []any{}}}},
			wantErr: hooks.ErrConfig, errText: "loader: extensions.region: "},
		{name: "not WebAssembly", ext: map[string]config.Extension{"bad": {Kind: config.KindPartitioner, WASM: text}},
			wantErr: hooks.ErrNotWasm, errText: "loader: extensions.bad: "},
		{name: "missing file", ext: map[string]config.Extension{"gone": {Kind: config.KindPartitioner, WASM: filepath.Join(dir, "gone.wasm")}},
			wantErr: os.ErrNotExist, errText: "loader: extensions.gone: "},
		{name: "a later failure closes what was opened", ext: map[string]config.Extension{
			"a-region": {Kind: config.KindPartitioner, WASM: region}, "b-bad": {Kind: config.KindPartitioner, WASM: text}},
			wantErr: hooks.ErrNotWasm, errText: "loader: extensions.b-bad: "},
		{name: "authenticator as WASM", ext: map[string]config.Extension{"sasl": {Kind: config.KindAuthenticator, WASM: region}},
			errText: "loader: extensions.sasl: a authenticator cannot be a WASM module"},
		{name: "plugin that does not start", ext: map[string]config.Extension{"proc": {Kind: config.KindPartitioner, Exec: filepath.Join(dir, "nothing")}},
			errText: "loader: extensions.proc: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Extensions = tt.ext
			var opts server.Options
			closeAll, err := Open(context.Background(), cfg, &opts, logger)
			if tt.errText != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.errText) || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
					t.Fatalf("err %v, want %q (%v)", err, tt.errText, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer closeAll()
			if len(opts.Partitioners) != len(tt.ext) {
				t.Fatalf("partitioners %v for %v", opts.Partitioners, tt.ext)
			}
			for name := range tt.ext {
				// The opened module places: eu records in the first share.
				recs := []partitioner.Record{{Key: []byte("k"), Headers: []partitioner.Header{{Key: "region", Value: []byte("eu")}}}}
				out := make([]int32, 1)
				if err := opts.Partitioners[name].PartitionBatch(recs, 12, out); err != nil || out[0] >= 6 {
					t.Fatalf("%s placed an eu record in %d (%v)", name, out[0], err)
				}
			}
		})
	}
}
