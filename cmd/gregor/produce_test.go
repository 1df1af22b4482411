package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestReadLines(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		max     int
		want    []string
		wantErr string
	}{
		{name: "empty input", in: "", max: 10},
		{name: "lines", in: "a\nbb\n\nccc\n", max: 10, want: []string{"a", "bb", "", "ccc"}},
		{name: "no final newline", in: "a\nb", max: 10, want: []string{"a", "b"}},
		{name: "crlf", in: "a\r\nb\r\n", max: 10, want: []string{"a", "b"}},
		{name: "exactly max", in: "12345\n", max: 5, want: []string{"12345"}},
		{name: "crlf at max", in: "12345\r\n", max: 5, want: []string{"12345"}},
		{name: "one over max", in: "ok\n123456\nnext\n", max: 5, want: []string{"ok"}, wantErr: "line 2 is longer than --max-line-bytes (5)"},
		{name: "far over max", in: "ok\n" + strings.Repeat("x", 100000) + "\n", max: 5, want: []string{"ok"}, wantErr: "line 2 is longer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			var gotErr error
			for l := range readLines(strings.NewReader(tt.in), tt.max) {
				if l.err != nil {
					gotErr = l.err
					continue
				}
				got = append(got, string(l.line))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("lines %q, want %q", got, tt.want)
			}
			switch {
			case tt.wantErr == "" && gotErr != nil:
				t.Errorf("unexpected error %v", gotErr)
			case tt.wantErr != "" && (gotErr == nil || !strings.Contains(gotErr.Error(), tt.wantErr)):
				t.Errorf("error %v, want it to contain %q", gotErr, tt.wantErr)
			}
		})
	}
}

func TestReadLinesCopies(t *testing.T) {
	// Each line must own its bytes: the scanner reuses its buffer.
	var lines [][]byte
	for l := range readLines(strings.NewReader("first\nsecond\nthird\n"), 64) {
		lines = append(lines, l.line)
	}
	if got := string(bytes.Join(lines, []byte(","))); got != "first,second,third" {
		t.Errorf("got %q", got)
	}
}

func TestProduceStatsSummary(t *testing.T) {
	tests := []struct {
		name    string
		noAcks  bool
		results []*kgo.Record
		errs    []error
		want    string
	}{
		{
			name: "nothing",
			want: "produced 0 records (0 bytes) to topic \"t\"\n",
		},
		{
			name: "spans",
			results: []*kgo.Record{
				{Partition: 1, Offset: 7, Key: []byte("k"), Value: []byte("vv"), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}},
				{Partition: 0, Offset: 3, Value: []byte("a")},
				{Partition: 0, Offset: 5, Value: []byte("b")},
				{Partition: 0, Offset: 4, Value: []byte("c")},
			},
			want: "produced 4 records (8 bytes) to topic \"t\"\n" +
				"  partition 0: offsets 3 to 5 (3 records)\n" +
				"  partition 1: offset 7 (1 record)\n",
		},
		{
			name:    "no acks and a failure",
			noAcks:  true,
			results: []*kgo.Record{{Partition: 2, Value: []byte("x")}, {Partition: 2, Value: []byte("y")}},
			errs:    []error{nil, errors.New("boom")},
			want: "produced 1 record (1 byte) to topic \"t\"\n" +
				"  partition 2: 1 record (offsets unknown with --acks 0)\n" +
				"failed: 1 record\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newProduceStats(tt.noAcks)
			for i, r := range tt.results {
				var err error
				if i < len(tt.errs) {
					err = tt.errs[i]
				}
				s.record(r, err)
			}
			var buf bytes.Buffer
			s.print(&buf, "t")
			if buf.String() != tt.want {
				t.Errorf("summary:\n%s\nwant:\n%s", buf.String(), tt.want)
			}
		})
	}
}
