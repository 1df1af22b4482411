package tests

import (
	"context"
	"encoding/base64"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gregorbroker/gregor/core/record"
)

// otlpGauges encodes an OTLP MetricsData message of gauges, one data point
// each, with a node_id attribute.
func otlpGauges(values map[string]float64, node string) []byte {
	msg := func(dst []byte, num protowire.Number, body []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), body)
	}
	var scope []byte
	for name, v := range values {
		dp := protowire.AppendFixed64(protowire.AppendTag(nil, 4, protowire.Fixed64Type), math.Float64bits(v))
		dp = msg(dp, 7, msg(msg(nil, 1, []byte("node_id")), 2, msg(nil, 1, []byte(node))))
		m := msg(msg(nil, 1, []byte(name)), 5, msg(nil, 1, dp))
		scope = msg(scope, 2, m)
	}
	return msg(nil, 1, msg(nil, 2, scope))
}

// TestClientTelemetryOnMetrics: a client-metrics subscription makes a
// matching client push (GetTelemetrySubscriptions), the pushed OTLP gauges
// appear on /metrics labelled with the client instance id and principal,
// series past [telemetry] max_series are dropped and counted, and a push
// naming another subscription answers UNKNOWN_SUBSCRIPTION_ID.
func TestClientTelemetryOnMetrics(t *testing.T) {
	b := startExtBroker(t, "[telemetry]\nmax_series = 3\n")
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Kafka), kgo.ClientID("telemetry-app"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	get := func() *kmsg.GetTelemetrySubscriptionsResponse {
		t.Helper()
		resp, err := kmsg.NewPtrGetTelemetrySubscriptionsRequest().RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 || resp.ClientInstanceID == ([16]byte{}) || resp.TelemetryMaxBytes != 1<<20 {
			t.Fatalf("GetTelemetrySubscriptions: %+v", resp)
		}
		return resp
	}
	if s := get(); len(s.RequestedMetrics) != 0 || s.PushIntervalMillis != 300000 {
		t.Fatalf("without a subscription: metrics %v every %d ms, want none every 300000", s.RequestedMetrics, s.PushIntervalMillis)
	}

	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeClientMetrics, "apps"
	for k, v := range map[string]string{"metrics": "org.apache.kafka.producer.", "interval.ms": "100", "match": "client_id=telemetry-.*"} {
		rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		rc.Name, rc.Value = k, kmsg.StringPtr(v)
		rr.Configs = append(rr.Configs, rc)
	}
	alter.Resources = append(alter.Resources, rr)
	if resp, err := alter.RequestWith(ctx, cl); err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("create the subscription: %v %+v", err, resp)
	}
	sub := get()
	if strings.Join(sub.RequestedMetrics, ",") != "org.apache.kafka.producer." || sub.PushIntervalMillis != 100 {
		t.Fatalf("subscribed: metrics %v every %d ms", sub.RequestedMetrics, sub.PushIntervalMillis)
	}

	payload := otlpGauges(map[string]float64{
		"org.apache.kafka.producer.node.request.latency.avg": 4.5,
		"org.apache.kafka.producer.io.ratio":                 0.25,
		"org.apache.kafka.producer.record.queue.time.max":    7,
		"org.apache.kafka.producer.buffer.available.bytes":   1024,
	}, "1")
	compressed, err := record.Compress(nil, record.CodecZstd, payload)
	if err != nil {
		t.Fatal(err)
	}
	push := func(subID int32, body []byte, codec record.Codec) int16 {
		t.Helper()
		req := kmsg.NewPtrPushTelemetryRequest()
		req.ClientInstanceID, req.SubscriptionID, req.CompressionType, req.Metrics = sub.ClientInstanceID, subID, int8(codec), body
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.ErrorCode
	}
	if code := push(sub.SubscriptionID+1, payload, record.CodecNone); code != kerr.UnknownSubscriptionID.Code {
		t.Fatalf("push with another subscription id: error %d, want UNKNOWN_SUBSCRIPTION_ID", code)
	}
	if code := push(sub.SubscriptionID, compressed, record.CodecZstd); code != 0 {
		t.Fatalf("push: error %d", code)
	}

	resp, err := http.Get("http://" + b.HTTP + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	instance := base64URL(sub.ClientInstanceID)
	kept := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "kafka_client_org_apache_kafka_producer_") {
			kept++
			if !strings.Contains(line, `client_instance_id="`+instance+`"`) || !strings.Contains(line, `principal="User:ANONYMOUS"`) ||
				!strings.Contains(line, `node_id="1"`) {
				t.Errorf("series without the client's labels: %s", line)
			}
		}
	}
	if kept != 3 || !strings.Contains(text, "gregor_client_telemetry_dropped_series_total 1") {
		t.Fatalf("%d series on /metrics (want 3: max_series) and the dropped counter at 1:\n%s", kept, grepLines(text, "telemetry", "kafka_client"))
	}
}

func base64URL(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

func grepLines(text string, subs ...string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for _, s := range subs {
			if strings.Contains(line, s) {
				out = append(out, line)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
