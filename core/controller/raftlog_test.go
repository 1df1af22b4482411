package controller

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestRaftLogger(t *testing.T) {
	var buf bytes.Buffer
	l := newRaftLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if l.IsDebug() || !l.IsInfo() || l.GetLevel() != hclog.Info {
		t.Fatalf("levels: debug %v info %v level %v", l.IsDebug(), l.IsInfo(), l.GetLevel())
	}
	l.Debug("hidden")
	l.Info("servers", "list", hclog.Fmt("%d-%s", 1, "a"))
	l.Named("snap").Named("store").Warn("careful", "k", 2)
	l.With("peer", "p1").Error("failed")
	l.StandardLogger(nil).Print("from std")
	out := buf.String()
	for _, want := range []string{"list=1-a", "logger=snap.store", "level=WARN", "peer=p1", "level=ERROR", "from std"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hidden") {
		t.Error("debug line emitted at info level")
	}
	if got := l.With("a", 1).ImpliedArgs(); len(got) != 2 {
		t.Errorf("implied args %v", got)
	}
}
