package broker

import (
	"io"
	"log/slog"
	"testing"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
)

// A follower dials the leader's endpoint on the inter-broker listener.
func TestReplicaAddrUsesInterBrokerListener(t *testing.T) {
	withEndpoints := controller.Broker{NodeID: 2, Host: "10.0.0.2", Port: 9092, Endpoints: []controller.Endpoint{
		{Listener: "PLAINTEXT", Host: "10.0.0.2", Port: 9092},
		{Listener: "SECURE", Host: "broker2.internal", Port: 9094},
	}}
	legacy := controller.Broker{NodeID: 3, Host: "10.0.0.3", Port: 9092}
	im := &controller.Image{Brokers: map[int32]controller.Broker{2: withEndpoints, 3: legacy}}
	for _, tc := range []struct {
		name     string
		listener string
		id       int32
		want     string
	}{
		{"default is the primary listener", "", 2, "10.0.0.2:9092"},
		{"named extra listener", "SECURE", 2, "broker2.internal:9094"},
		{"leader without that listener", "INTERNAL", 2, ""},
		{"leader registered without endpoints", "SECURE", 3, "10.0.0.3:9092"},
		{"unknown leader", "", 9, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Listeners.Extra = []config.ExtraListener{
				{Name: "SECURE", Address: "127.0.0.1:9094", Protocol: config.ProtocolSASLSSL},
				{Name: "INTERNAL", Address: "127.0.0.1:9095", Protocol: config.ProtocolPlaintext},
			}
			cfg.Cluster.InterBrokerListener = tc.listener
			b := &Broker{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			if got := b.ReplicaAddr(im, tc.id); got != tc.want {
				t.Fatalf("ReplicaAddr(%d) = %q, want %q", tc.id, got, tc.want)
			}
		})
	}
}
