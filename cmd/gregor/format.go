package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// formatHelp documents --format; consume's help text includes it.
const formatHelp = `Output format (--format):

  A %-format (the default is '%v') uses these verbs:
    %t topic              %p partition            %o offset
    %k key                %K key length           %v or %s value
    %V or %S value length %T timestamp, Unix ms   %d timestamp, RFC 3339 UTC
    %h headers as k=v,k=v %H number of headers    %% a literal %
  and the escapes \n \t \r \\.

  A Go template is used when the format contains "{{". Fields: .Topic
  .Partition .Offset .Timestamp (a time.Time) .Key .Value (strings) .KeyNull
  .ValueNull (bools) .Headers (a list of .Key/.Value); {{.Header "name"}} gives
  the first header of that name. The same escapes apply.

  "json" prints one JSON object per line: topic, partition, offset, timestamp
  (Unix ms), key, value (null when absent), headers. Bytes that are not valid
  UTF-8 are replaced by U+FFFD in JSON output.

  Every format ends each record with a newline unless it already ends with one.`

// recordFormatter renders one record onto dst.
type recordFormatter interface {
	appendRecord(dst []byte, r *kgo.Record) ([]byte, error)
}

// newRecordFormatter parses a --format value.
func newRecordFormatter(spec string) (recordFormatter, error) {
	switch {
	case spec == "json":
		return jsonFormatter{}, nil
	case strings.Contains(spec, "{{"):
		return newTemplateFormatter(spec)
	default:
		return newPercentFormatter(spec)
	}
}

// unescape resolves \n, \t, \r and \\; any other backslash stays as is.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		default:
			b.WriteByte(c)
			continue
		}
		i++
	}
	return b.String()
}

// withNewline makes sure a format ends each record with a newline.
func withNewline(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// percentFormatter is a compiled %-format: literal text and verbs.
type percentFormatter struct {
	parts []percentPart
}

type percentPart struct {
	literal string
	verb    byte // 0 for a literal
}

func newPercentFormatter(spec string) (*percentFormatter, error) {
	if spec == "" {
		return nil, usagef("--format is empty")
	}
	s := unescape(spec)
	f := &percentFormatter{}
	lit := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		if i+1 == len(s) {
			return nil, usagef("--format %q: a lone %% at the end (write %%%% for a literal %%)", spec)
		}
		v := s[i+1]
		switch v {
		case 't', 'p', 'o', 'k', 'K', 'v', 's', 'V', 'S', 'T', 'd', 'h', 'H':
		case '%':
		default:
			return nil, usagef("--format %q: unknown verb %%%c (see gregor consume --help)", spec, v)
		}
		if i > lit {
			f.parts = append(f.parts, percentPart{literal: s[lit:i]})
		}
		if v == '%' {
			f.parts = append(f.parts, percentPart{literal: "%"})
		} else {
			f.parts = append(f.parts, percentPart{verb: v})
		}
		i++
		lit = i + 1
	}
	if lit < len(s) {
		f.parts = append(f.parts, percentPart{literal: s[lit:]})
	}
	if !strings.HasSuffix(s, "\n") {
		f.parts = append(f.parts, percentPart{literal: "\n"})
	}
	return f, nil
}

// timeLayout is RFC 3339 with milliseconds, Kafka's timestamp precision.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func (f *percentFormatter) appendRecord(dst []byte, r *kgo.Record) ([]byte, error) {
	for _, p := range f.parts {
		switch p.verb {
		case 0:
			dst = append(dst, p.literal...)
		case 't':
			dst = append(dst, r.Topic...)
		case 'p':
			dst = strconv.AppendInt(dst, int64(r.Partition), 10)
		case 'o':
			dst = strconv.AppendInt(dst, r.Offset, 10)
		case 'k':
			dst = append(dst, r.Key...)
		case 'K':
			dst = strconv.AppendInt(dst, int64(len(r.Key)), 10)
		case 'v', 's':
			dst = append(dst, r.Value...)
		case 'V', 'S':
			dst = strconv.AppendInt(dst, int64(len(r.Value)), 10)
		case 'T':
			dst = strconv.AppendInt(dst, r.Timestamp.UnixMilli(), 10)
		case 'd':
			dst = r.Timestamp.UTC().AppendFormat(dst, timeLayout)
		case 'h':
			for i, h := range r.Headers {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, h.Key...)
				dst = append(dst, '=')
				dst = append(dst, h.Value...)
			}
		case 'H':
			dst = strconv.AppendInt(dst, int64(len(r.Headers)), 10)
		}
	}
	return dst, nil
}

// templateRecord is what a Go template sees.
type templateRecord struct {
	Topic     string
	Partition int32
	Offset    int64
	Timestamp time.Time
	Key       string
	Value     string
	KeyNull   bool
	ValueNull bool
	Headers   []templateHeader
}

type templateHeader struct {
	Key   string
	Value string
}

// Header returns the value of the first header named key, or "".
func (r templateRecord) Header(key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return h.Value
		}
	}
	return ""
}

type templateFormatter struct {
	tmpl *template.Template
	buf  bytes.Buffer
}

func newTemplateFormatter(spec string) (*templateFormatter, error) {
	tmpl, err := template.New("format").Option("missingkey=error").Parse(withNewline(unescape(spec)))
	if err != nil {
		return nil, usagef("--format: %v", err)
	}
	f := &templateFormatter{tmpl: tmpl}
	// Run it once on an empty record so a misspelt field fails now, not at
	// the first record.
	if _, err := f.appendRecord(nil, &kgo.Record{}); err != nil {
		return nil, usagef("--format: %v", err)
	}
	return f, nil
}

func (f *templateFormatter) appendRecord(dst []byte, r *kgo.Record) ([]byte, error) {
	tr := templateRecord{
		Topic:     r.Topic,
		Partition: r.Partition,
		Offset:    r.Offset,
		Timestamp: r.Timestamp,
		Key:       string(r.Key),
		Value:     string(r.Value),
		KeyNull:   r.Key == nil,
		ValueNull: r.Value == nil,
	}
	for _, h := range r.Headers {
		tr.Headers = append(tr.Headers, templateHeader{h.Key, string(h.Value)})
	}
	f.buf.Reset()
	if err := f.tmpl.Execute(&f.buf, tr); err != nil {
		return dst, fmt.Errorf("format record at partition %d offset %d: %w", r.Partition, r.Offset, err)
	}
	return append(dst, f.buf.Bytes()...), nil
}

type jsonFormatter struct{}

type jsonRecord struct {
	Topic     string       `json:"topic"`
	Partition int32        `json:"partition"`
	Offset    int64        `json:"offset"`
	Timestamp int64        `json:"timestamp"`
	Key       *string      `json:"key"`
	Value     *string      `json:"value"`
	Headers   []jsonHeader `json:"headers"`
}

type jsonHeader struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

func optString(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

func (jsonFormatter) appendRecord(dst []byte, r *kgo.Record) ([]byte, error) {
	jr := jsonRecord{
		Topic:     r.Topic,
		Partition: r.Partition,
		Offset:    r.Offset,
		Timestamp: r.Timestamp.UnixMilli(),
		Key:       optString(r.Key),
		Value:     optString(r.Value),
		Headers:   make([]jsonHeader, 0, len(r.Headers)),
	}
	for _, h := range r.Headers {
		jr.Headers = append(jr.Headers, jsonHeader{h.Key, optString(h.Value)})
	}
	b, err := json.Marshal(jr)
	if err != nil {
		return dst, fmt.Errorf("format record at partition %d offset %d: %w", r.Partition, r.Offset, err)
	}
	dst = append(dst, b...)
	return append(dst, '\n'), nil
}
