package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseKeyValues(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		unique  bool
		want    []keyValue
		wantErr string
	}{
		{name: "none", want: []keyValue{}},
		{name: "simple", in: []string{"a=1", "b=2"}, want: []keyValue{{"a", "1"}, {"b", "2"}}},
		{name: "value with equals", in: []string{"url=http://x?a=b"}, want: []keyValue{{"url", "http://x?a=b"}}},
		{name: "empty value", in: []string{"k="}, want: []keyValue{{"k", ""}}},
		{name: "repeated header keys", in: []string{"k=1", "k=2"}, want: []keyValue{{"k", "1"}, {"k", "2"}}},
		{name: "repeated config keys", in: []string{"k=1", "k=2"}, unique: true, wantErr: `"k" given twice`},
		{name: "no equals", in: []string{"retention.ms"}, wantErr: "want key=value"},
		{name: "empty key", in: []string{"=v"}, wantErr: "empty key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseKeyValues("config", tt.in, tt.unique)
			if tt.wantErr != "" {
				var ue usageError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &ue) {
					t.Fatalf("err = %v, want a usage error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseBootstrap(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "127.0.0.1:9092", want: []string{"127.0.0.1:9092"}},
		{in: " a:1 , b:2 ,", want: []string{"a:1", "b:2"}},
		{in: "[::1]:9092", want: []string{"[::1]:9092"}},
		{in: "", wantErr: "empty"},
		{in: " , ", wantErr: "empty"},
		{in: "localhost", wantErr: "want host:port"},
		{in: ":9092", wantErr: "missing host"},
		{in: "h:0", wantErr: "not a number from 1 to 65535"},
		{in: "h:x", wantErr: "not a number from 1 to 65535"},
		{in: "h:70000", wantErr: "not a number from 1 to 65535"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseBootstrap(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProducerOptions(t *testing.T) {
	tests := []struct {
		name    string
		o       produceOpts
		wantErr string
	}{
		{name: "defaults", o: produceOpts{compression: "none", acks: "all", partition: -1, timeout: 1, maxLineBytes: 1}},
		{name: "acks -1 zstd", o: produceOpts{compression: "zstd", acks: "-1", timeout: 1, maxLineBytes: 1}},
		{name: "acks 0 gzip", o: produceOpts{compression: "GZIP", acks: "0", timeout: 1, maxLineBytes: 1}},
		{name: "acks 1 lz4 partition", o: produceOpts{compression: "lz4", acks: "1", partition: 3, timeout: 1, maxLineBytes: 1}},
		{name: "snappy", o: produceOpts{compression: "snappy", acks: "all", timeout: 1, maxLineBytes: 1}},
		{name: "bad codec", o: produceOpts{compression: "brotli", acks: "all", timeout: 1, maxLineBytes: 1}, wantErr: `--compression "brotli"`},
		{name: "bad acks", o: produceOpts{compression: "none", acks: "2", timeout: 1, maxLineBytes: 1}, wantErr: `--acks "2"`},
		{name: "bad timeout", o: produceOpts{compression: "none", acks: "all", maxLineBytes: 1}, wantErr: "--timeout must be positive"},
		{name: "bad max line", o: produceOpts{compression: "none", acks: "all", timeout: 1}, wantErr: "--max-line-bytes must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := tt.o.producerOptions()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(opts) == 0 {
				t.Fatal("no client options")
			}
		})
	}
}
