package telemetry

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// testPoint is one data point for encodeMetrics.
type testPoint struct {
	name      string
	sum       bool
	monotonic bool
	value     float64
	intValue  bool
	attrs     [][2]string
}

// encodeMetrics builds an OTLP MetricsData message as a client would send.
func encodeMetrics(points ...testPoint) []byte {
	msg := func(num protowire.Number, body []byte, dst []byte) []byte {
		dst = protowire.AppendTag(dst, num, protowire.BytesType)
		return protowire.AppendBytes(dst, body)
	}
	var metrics []byte
	for _, p := range points {
		var dp []byte
		if p.intValue {
			dp = protowire.AppendTag(dp, 6, protowire.Fixed64Type)
			dp = protowire.AppendFixed64(dp, uint64(int64(p.value)))
		} else {
			dp = protowire.AppendTag(dp, 4, protowire.Fixed64Type)
			dp = protowire.AppendFixed64(dp, math.Float64bits(p.value))
		}
		dp = protowire.AppendTag(dp, 3, protowire.Fixed64Type)
		dp = protowire.AppendFixed64(dp, 1_700_000_000_000_000_000)
		for _, a := range p.attrs {
			var kv []byte
			kv = msg(1, []byte(a[0]), kv)
			kv = msg(2, msg(1, []byte(a[1]), nil), kv)
			dp = msg(7, kv, dp)
		}
		var data []byte
		data = msg(1, dp, data)
		num := protowire.Number(5)
		if p.sum {
			num = 7
			data = protowire.AppendTag(data, 2, protowire.VarintType)
			data = protowire.AppendVarint(data, 2) // cumulative
			if p.monotonic {
				data = protowire.AppendTag(data, 3, protowire.VarintType)
				data = protowire.AppendVarint(data, 1)
			}
		}
		var m []byte
		m = msg(1, []byte(p.name), m)
		m = msg(3, []byte("1"), m)
		m = msg(num, data, m)
		metrics = msg(2, m, metrics)
	}
	scope := msg(1, msg(1, []byte("org.apache.kafka"), nil), nil)
	scope = append(scope, metrics...)
	var resource []byte
	resource = msg(1, msg(1, msg(1, []byte("client_id"), msg(2, msg(1, []byte("app"), nil), nil)), nil), resource)
	resource = msg(2, scope, resource)
	return msg(1, resource, nil)
}
