// Command interceptor-mask is a Gregor fetch interceptor module in Go: for
// consumers whose principal is not in the configured allow-list, the
// configured fields of every JSON value are replaced by a mask before the
// records leave the broker; allow-listed principals get the records as
// stored. A value that is not a JSON object cannot be masked, so it is
// dropped for those consumers (its offset stays a gap, as compaction leaves
// one) unless drop_unmaskable = false lets it through unmasked. Null values
// (tombstones) pass.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o mask.wasm .
package main

import (
	"github.com/gregorbroker/gregor/sdk/wasm/guest"
	"github.com/gregorbroker/gregor/sdk/wasm/interceptor"
)

var rules *Rules

func configure(raw []byte) error {
	r, err := ParseConfig(raw)
	if err != nil {
		return err
	}
	rules = r
	return nil
}

// intercept masks the batch for a principal outside the allow-list.
func intercept(b *interceptor.Batch) interceptor.Decision {
	if rules.Allowed(b.Principal.Type, b.Principal.Name) {
		return interceptor.Decision{}
	}
	out := make([]interceptor.Record, len(b.Records))
	var drop []interceptor.RecordError
	changed := false
	for i, r := range b.Records {
		out[i] = interceptor.Record{Key: r.Key, Value: r.Value, Headers: r.Headers}
		if r.Value == nil {
			continue
		}
		v, ok, err := rules.Mask(r.Value)
		switch {
		case err != nil && rules.DropUnmaskable:
			drop = append(drop, interceptor.RecordError{Index: int32(i), Message: err.Error()})
		case ok:
			out[i].Value, changed = v, true
		}
	}
	if len(drop) > 0 {
		// A fetch interceptor's listed rejection drops those records and
		// returns the rest as stored, so it fits only a batch with nothing
		// to mask.
		if !changed {
			return interceptor.Decision{Action: interceptor.Reject, Message: "value cannot be masked", Errors: drop}
		}
		return maskAndDrop(out, drop)
	}
	if !changed {
		return interceptor.Decision{}
	}
	return interceptor.Decision{Action: interceptor.Rewrite, Records: out}
}

// maskAndDrop answers a batch that has records to mask and records to
// drop: a decision either rewrites or drops, so the records that cannot be
// masked keep their place with a null value and a gregor-masked header
// saying why.
func maskAndDrop(out []interceptor.Record, drop []interceptor.RecordError) interceptor.Decision {
	for _, e := range drop {
		r := &out[e.Index]
		r.Value = nil
		r.Headers = append(append([]interceptor.Header(nil), r.Headers...), interceptor.Header{Key: "gregor-masked", Value: []byte("value withheld")})
	}
	return interceptor.Decision{Action: interceptor.Rewrite, Records: out}
}

func init() {
	guest.OnConfigure(configure)
	interceptor.Register(intercept)
}

func main() {}
