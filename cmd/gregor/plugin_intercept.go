package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/hooks"
	"github.com/gregorbroker/gregor/plugins"
	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
)

// interceptFlags are `extension test`'s flags for an interceptor.
type interceptFlags struct {
	side      string // "produce" or "fetch"; "" tests a partitioner
	principal string
	topic     string
	partition int32
	onError   string
}

func (f *interceptFlags) check() (auth.Principal, error) {
	if f.side != "produce" && f.side != "fetch" {
		return auth.Principal{}, usagef("--intercept must be produce or fetch, got %q", f.side)
	}
	if f.onError != config.OnErrorReject && f.onError != config.OnErrorAccept {
		return auth.Principal{}, usagef("--on-error must be reject or accept, got %q", f.onError)
	}
	if f.topic == "" || f.partition < 0 {
		return auth.Principal{}, usagef("--topic must not be empty, --partition not negative")
	}
	p, err := auth.ParsePrincipal(f.principal)
	if err != nil {
		return auth.Principal{}, usagef("--principal: %v", err)
	}
	return p, nil
}

// openInterceptor opens the interceptor the flags name in the host the
// broker would run it in, wrapped as the broker wraps it (time limit,
// on_error policy, checks of the answer), and returns it with its closer.
func (f *extFlags) openInterceptor(ctx context.Context, stderr io.Writer, onError string) (*extension.Interceptor, func(), error) {
	cfg, timeout, err := f.settings()
	if err != nil {
		return nil, nil, err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var (
		impl    interceptor.Interceptor
		closeIc func()
	)
	if f.exec != "" {
		ic, err := plugins.OpenInterceptor(plugins.Config{
			Name: "cli", Kind: config.KindInterceptor, Path: f.exec, Args: f.args, ConfigJSON: cfg, CallTimeout: timeout, Logger: logger,
		})
		if err != nil {
			return nil, nil, err
		}
		impl, closeIc = ic, func() { ic.Close() }
	} else {
		o, err := f.options()
		if err != nil {
			return nil, nil, err
		}
		ic, err := hooks.LoadInterceptor(ctx, f.wasm, o)
		if err != nil {
			return nil, nil, err
		}
		impl, closeIc = ic, func() { ic.Close(context.WithoutCancel(ctx)) }
	}
	decl := config.Extension{Kind: config.KindInterceptor, WASM: f.wasm, Exec: f.exec, TimeoutMs: f.timeout.Milliseconds(), OnError: onError}
	set, err := extension.New(&config.Config{Extensions: map[string]config.Extension{"cli": decl}},
		extension.Opened{Interceptors: map[string]interceptor.Interceptor{"cli": impl}}, logger)
	if err != nil {
		closeIc()
		return nil, nil, err
	}
	ic, err := set.TopicInterceptor(map[string]string{extension.ConfigInterceptProduce: "cli"})
	if err != nil || ic == nil {
		closeIc()
		return nil, nil, fmt.Errorf("extension test: the interceptor was not set up: %v", err)
	}
	return ic, closeIc, nil
}

// inputRecord is one line of `extension test --intercept` input. A key or
// value is null when absent or null, the bytes of a JSON string, the text
// of any other JSON value, or given in base64 by key_b64 and value_b64.
type inputRecord struct {
	Key       json.RawMessage `json:"key"`
	KeyB64    *string         `json:"key_b64"`
	Value     json.RawMessage `json:"value"`
	ValueB64  *string         `json:"value_b64"`
	Headers   json.RawMessage `json:"headers"` // an object of string or null values, in order
	Timestamp *int64          `json:"timestamp"`
}

func inputBytes(raw json.RawMessage, b64 *string, name string) ([]byte, error) {
	if b64 != nil {
		if len(raw) > 0 {
			return nil, fmt.Errorf("%s and %s_b64 exclude each other", name, name)
		}
		b, err := base64.StdEncoding.DecodeString(*b64)
		if err != nil {
			return nil, fmt.Errorf("%s_b64: %w", name, err)
		}
		return b, nil
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return []byte(s), nil
	}
	return append([]byte{}, raw...), nil
}

// inputHeaders decodes a headers object keeping its order and repeats.
func inputHeaders(raw json.RawMessage) ([]interceptor.Header, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("headers: want an object of string or null values")
	}
	var hs []interceptor.Header
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("headers: %w", err)
		}
		var v *string
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("headers: %s: want a string or null", tok)
		}
		h := interceptor.Header{Key: tok.(string)}
		if v != nil {
			h.Value = []byte(*v)
		}
		hs = append(hs, h)
	}
	return hs, nil
}

func parseInputRecord(line []byte, now int64) (interceptor.Record, error) {
	var in inputRecord
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return interceptor.Record{}, err
	}
	var r interceptor.Record
	var err error
	if r.Key, err = inputBytes(in.Key, in.KeyB64, "key"); err != nil {
		return r, err
	}
	if r.Value, err = inputBytes(in.Value, in.ValueB64, "value"); err != nil {
		return r, err
	}
	if r.Headers, err = inputHeaders(in.Headers); err != nil {
		return r, err
	}
	r.Timestamp = now
	if in.Timestamp != nil {
		r.Timestamp = *in.Timestamp
	}
	return r, nil
}

// outputBytes sets name (or name_b64) of a line to b: null, a JSON object
// or array as is (compacted), other valid UTF-8 as a string, else base64.
func outputBytes(line map[string]any, name string, b []byte) {
	switch {
	case b == nil:
		line[name] = nil
	case len(b) > 0 && (b[0] == '{' || b[0] == '[') && json.Valid(b):
		var c bytes.Buffer
		_ = json.Compact(&c, b)
		line[name] = json.RawMessage(c.Bytes())
	case utf8.Valid(b):
		line[name] = string(b)
	default:
		line[name+"_b64"] = base64.StdEncoding.EncodeToString(b)
	}
}

// headersJSON is headers as an ordered JSON object.
type headersJSON []interceptor.Header

func (hs headersJSON) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, h := range hs {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(h.Key)
		b = append(append(b, k...), ':')
		v := []byte("null")
		if h.Value != nil {
			v, _ = json.Marshal(string(h.Value))
		}
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

func outputRecord(line map[string]any, r interceptor.Record) {
	outputBytes(line, "key", r.Key)
	outputBytes(line, "value", r.Value)
	if len(r.Headers) > 0 {
		line["headers"] = headersJSON(r.Headers)
	}
}

// interceptRecords reads records as JSON lines, passes them through ic in
// batches of batch records and writes one JSON line per record: for a
// produce interceptor the batch's decision, for a fetch interceptor what
// the consumer gets at each offset. A batch whose call failed under
// on_error = reject is reported on its lines and counted in the error.
func interceptRecords(ctx context.Context, ic *extension.Interceptor, f interceptFlags, principal auth.Principal, in io.Reader, out io.Writer, batch int) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxKeyLine)
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	now := time.Now().UnixMilli()
	var (
		recs            []interceptor.Record
		batches, failed int
		next            int64 // the offset (or input index) of recs[0]
		lineNo          int
	)
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		var err error
		if f.side == "produce" {
			err = decideProduce(ctx, ic, f, principal, recs, next, batches, enc)
		} else {
			err = decideFetch(ctx, ic, f, principal, recs, next, enc)
		}
		if errors.Is(err, errBatchFailed) {
			failed, err = failed+1, nil
		}
		next += int64(len(recs))
		batches++
		recs = recs[:0]
		return err
	}
	for sc.Scan() {
		lineNo++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		r, err := parseInputRecord(line, now)
		if err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
		recs = append(recs, r)
		if len(recs) == batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading records: %w (lines are limited to %d bytes)", err, maxKeyLine)
	}
	if err := flush(); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("the interceptor failed on %d of %d batches (on_error = reject)", failed, batches)
	}
	return nil
}

// errBatchFailed: the interceptor failed one batch; its lines say why.
var errBatchFailed = errors.New("batch failed")

// decideProduce writes the decision for one produced batch, a line per
// record numbered from first.
func decideProduce(ctx context.Context, ic *extension.Interceptor, f interceptFlags, principal auth.Principal, recs []interceptor.Record, first int64, batch int, enc *json.Encoder) error {
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
	}
	d, err := ic.Intercept(ctx, &interceptor.Batch{Topic: f.topic, Partition: f.partition, Principal: principal, Records: recs})
	listed := map[int32]string{}
	for _, e := range d.Errors {
		listed[e.Index] = e.Message
	}
	for i := range recs {
		line := map[string]any{"record": first + int64(i), "batch": batch}
		switch {
		case err != nil:
			line["decision"], line["error"] = "failed", err.Error()
		case d.Action == interceptor.Reject:
			line["decision"], line["message"] = "reject", d.Message
			if m, ok := listed[int32(i)]; ok {
				line["error"] = m
			}
		case d.Action == interceptor.Rewrite:
			line["decision"] = "rewrite"
			outputRecord(line, d.Records[i])
		default:
			line["decision"] = "accept"
		}
		if werr := enc.Encode(line); werr != nil {
			return werr
		}
	}
	if err != nil {
		return errBatchFailed
	}
	return nil
}

// decideFetch stores recs as one batch at offset base, passes it through
// ic as a consumer's fetch does, and writes what the consumer gets: a line
// per offset, with the record (masked or not), dropped, or the error that
// withheld the batch.
func decideFetch(ctx context.Context, ic *extension.Interceptor, f interceptFlags, principal auth.Principal, recs []interceptor.Record, base int64, enc *json.Encoder) error {
	stored := make([]record.Record, len(recs))
	for i, r := range recs {
		stored[i] = record.Record{Key: r.Key, Value: r.Value, TimestampDelta: r.Timestamp - recs[0].Timestamp}
		for _, h := range r.Headers {
			stored[i].Headers = append(stored[i].Headers, record.RecordHeader{Key: h.Key, Value: h.Value})
		}
	}
	set, err := record.Encode(record.BatchSpec{BaseOffset: base, FirstTimestamp: recs[0].Timestamp, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, stored)
	if err != nil {
		return err
	}
	got, ferr := extension.InterceptFetched(ctx, ic, set, f.topic, f.partition, principal, maxFetchDecompressed)
	seen := map[int64]interceptor.Record{}
	if ferr == nil {
		var p extension.Produced
		p.MaxDecompressed = maxFetchDecompressed
		if err := p.Decode(got); err != nil {
			return fmt.Errorf("extension test: the intercepted batch does not decode: %w", err)
		}
		for _, b := range p.Batches {
			for _, r := range p.Records[b.First : b.First+b.N] {
				seen[b.Header.BaseOffset+int64(r.OffsetDelta)] = r
			}
		}
	}
	for i := range recs {
		off := base + int64(i)
		line := map[string]any{"offset": off}
		if ferr != nil {
			line["error"] = ferr.Error()
		} else if r, ok := seen[off]; ok {
			outputRecord(line, r)
		} else {
			line["dropped"] = true
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	if ferr != nil {
		return errBatchFailed
	}
	return nil
}

// maxFetchDecompressed bounds a batch's records in `extension test`.
const maxFetchDecompressed = 64 << 20
