package telemetry

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// ErrInvalidMetrics marks a push whose OTLP payload does not decode.
var ErrInvalidMetrics = errors.New("telemetry: invalid OTLP metrics")

// Point is one decoded number data point of an OTLP gauge or sum.
type Point struct {
	// Name is the metric's name, e.g. org.apache.kafka.producer.record.send.rate.
	Name string
	// Attributes are the data point's attributes, sorted by key.
	Attributes []Attribute
	Value      float64
	// Counter is set for a monotonic sum; other points are gauges.
	Counter bool
}

// Attribute is one key=value attribute, the value shown as text.
type Attribute struct{ Key, Value string }

// DecodeMetrics decodes an OTLP MetricsData message (the payload of
// PushTelemetry, opentelemetry/proto/metrics/v1/metrics.proto) into its
// gauge and sum data points. Histograms and summaries, which Kafka clients
// do not push, are skipped. maxPoints bounds the work one payload may ask.
func DecodeMetrics(b []byte, maxPoints int) ([]Point, error) {
	var out []Point
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if num != 1 || typ != protowire.BytesType { // resource_metrics
			return nil
		}
		return eachField(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
			if num != 2 || typ != protowire.BytesType { // scope_metrics
				return nil
			}
			return eachField(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
				if num != 2 || typ != protowire.BytesType { // metrics
					return nil
				}
				pts, err := decodeMetric(v)
				out = append(out, pts...)
				if len(out) > maxPoints {
					return fmt.Errorf("%w: more than %d data points", ErrInvalidMetrics, maxPoints)
				}
				return err
			})
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func decodeMetric(b []byte) ([]Point, error) {
	var name string
	var pts []Point
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			name = string(v)
		case (num == 5 || num == 7) && typ == protowire.BytesType: // gauge, sum
			monotonic := false
			var raw [][]byte
			err := eachField(v, func(n protowire.Number, t protowire.Type, dv []byte) error {
				switch {
				case n == 1 && t == protowire.BytesType:
					raw = append(raw, dv)
				case num == 7 && n == 3 && t == protowire.VarintType:
					monotonic = len(dv) > 0 && dv[0] != 0
				}
				return nil
			})
			if err != nil {
				return err
			}
			for _, dp := range raw {
				p, ok, err := decodePoint(dp)
				if err != nil {
					return err
				}
				if ok {
					p.Counter = num == 7 && monotonic
					pts = append(pts, p)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if name == "" && len(pts) > 0 {
		return nil, fmt.Errorf("%w: a metric without a name", ErrInvalidMetrics)
	}
	for i := range pts {
		pts[i].Name = name
	}
	return pts, nil
}

// decodePoint decodes a NumberDataPoint; ok is false when it has no value.
func decodePoint(b []byte) (Point, bool, error) {
	var p Point
	ok := false
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch {
		case num == 4 && typ == protowire.Fixed64Type: // as_double
			p.Value, ok = math.Float64frombits(leUint64(v)), true
		case num == 6 && typ == protowire.Fixed64Type: // as_int (sfixed64)
			p.Value, ok = float64(int64(leUint64(v))), true
		case num == 7 && typ == protowire.BytesType: // attributes
			a, err := decodeKeyValue(v)
			if err != nil {
				return err
			}
			p.Attributes = append(p.Attributes, a)
		}
		return nil
	})
	sort.Slice(p.Attributes, func(i, j int) bool { return p.Attributes[i].Key < p.Attributes[j].Key })
	return p, ok, err
}

func decodeKeyValue(b []byte) (Attribute, error) {
	var a Attribute
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			a.Key = string(v)
		case num == 2 && typ == protowire.BytesType:
			return eachField(v, func(n protowire.Number, t protowire.Type, av []byte) error {
				switch {
				case n == 1 && t == protowire.BytesType:
					a.Value = string(av)
				case n == 2 && t == protowire.VarintType:
					a.Value = strconv.FormatBool(len(av) > 0 && av[0] != 0)
				case n == 3 && t == protowire.VarintType:
					x, _ := protowire.ConsumeVarint(av)
					a.Value = strconv.FormatInt(int64(x), 10)
				case n == 4 && t == protowire.Fixed64Type:
					a.Value = strconv.FormatFloat(math.Float64frombits(leUint64(av)), 'g', -1, 64)
				}
				return nil
			})
		}
		return nil
	})
	if err == nil && strings.TrimSpace(a.Key) == "" {
		err = fmt.Errorf("%w: an attribute without a key", ErrInvalidMetrics)
	}
	return a, err
}

// eachField calls fn with each field of a protobuf message: bytes fields
// get their contents, varint and fixed fields their raw encoding (a
// varint's bytes, a fixed64's 8 little-endian bytes).
func eachField(b []byte, fn func(protowire.Number, protowire.Type, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: %w", ErrInvalidMetrics, protowire.ParseError(n))
		}
		b = b[n:]
		var v []byte
		switch typ {
		case protowire.BytesType:
			val, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return fmt.Errorf("%w: %w", ErrInvalidMetrics, protowire.ParseError(m))
			}
			v, n = val, m
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return fmt.Errorf("%w: %w", ErrInvalidMetrics, protowire.ParseError(m))
			}
			v, n = b[:m], m
		}
		if err := fn(num, typ, v); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func leUint64(b []byte) uint64 {
	if len(b) < 8 {
		return 0
	}
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}
