package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func sampleRecord() *kgo.Record {
	return &kgo.Record{
		Topic:     "orders",
		Partition: 2,
		Offset:    1234,
		Timestamp: time.UnixMilli(1714564800123).In(time.FixedZone("X", 3600)),
		Key:       []byte("alice"),
		Value:     []byte("hello world"),
		Headers: []kgo.RecordHeader{
			{Key: "trace", Value: []byte("t1")},
			{Key: "src", Value: []byte("cli")},
		},
	}
}

func TestFormatRecord(t *testing.T) {
	tests := []struct {
		name, spec, want string
		rec              *kgo.Record
	}{
		{"default", "%v", "hello world\n", nil},
		{"explicit newline kept single", `%v\n`, "hello world\n", nil},
		{"all verbs", `%t|%p|%o|%k|%K|%v|%s|%V|%S|%T|%d|%h|%H|%%`,
			"orders|2|1234|alice|5|hello world|hello world|11|11|1714564800123|2024-05-01T12:00:00.123Z|trace=t1,src=cli|2|%\n", nil},
		{"escapes", `%k\t%v\r\n`, "alice\thello world\r\n", nil},
		{"literal backslash", `a\\b %v`, "a\\b hello world\n", nil},
		{"unknown escape kept", `a\qb`, "a\\qb\n", nil},
		{"trailing backslash kept", `%v\`, "hello world\\\n", nil},
		{"null key and no headers", "[%k][%K][%h][%H]", "[][0][][0]\n", &kgo.Record{}},
		{"template", `{{.Key}}={{.Value}} p{{.Partition}} o{{.Offset}}`, "alice=hello world p2 o1234\n", nil},
		{"template header method", `{{.Header "src"}}/{{.Header "missing"}}/{{len .Headers}}`, "cli//2\n", nil},
		{"template time", `{{.Timestamp.UnixMilli}} {{.KeyNull}} {{.ValueNull}}`, "1714564800123 false false\n", nil},
		{"template nulls", `{{.KeyNull}} {{.ValueNull}}`, "true true\n", &kgo.Record{}},
		{"template escapes", `{{.Key}}\t{{.Value}}\n`, "alice\thello world\n", nil},
		{"json", "json",
			`{"topic":"orders","partition":2,"offset":1234,"timestamp":1714564800123,"key":"alice","value":"hello world","headers":[{"key":"trace","value":"t1"},{"key":"src","value":"cli"}]}` + "\n", nil},
		{"json nulls", "json",
			`{"topic":"","partition":0,"offset":0,"timestamp":-62135596800000,"key":null,"value":null,"headers":[]}` + "\n", &kgo.Record{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := newRecordFormatter(tt.spec)
			if err != nil {
				t.Fatalf("newRecordFormatter(%q): %v", tt.spec, err)
			}
			rec := tt.rec
			if rec == nil {
				rec = sampleRecord()
			}
			got, err := f.appendRecord([]byte("prefix:"), rec)
			if err != nil {
				t.Fatalf("appendRecord: %v", err)
			}
			if want := "prefix:" + tt.want; string(got) != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestFormatErrors(t *testing.T) {
	tests := []struct {
		spec, wantSub string
	}{
		{"", "empty"},
		{"%x", "unknown verb %x"},
		{"abc %", "lone %"},
		{"{{.Nope}}", "Nope"},
		{"{{.Key", "unclosed action"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, err := newRecordFormatter(tt.spec)
			if err == nil {
				t.Fatalf("newRecordFormatter(%q) succeeded", tt.spec)
			}
			var ue usageError
			if !errors.As(err, &ue) {
				t.Errorf("error %v is not a usage error", err)
			}
			if !strings.Contains(err.Error(), tt.wantSub) {
				t.Errorf("error %q does not mention %q", err, tt.wantSub)
			}
		})
	}
}
