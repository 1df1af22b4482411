package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// recordingProducer keeps the records of the last request and places each
// in partition 0.
type recordingProducer struct{ got []ProduceRecord }

func (p *recordingProducer) ProduceRecords(_ context.Context, _ string, recs []ProduceRecord) ([]ProduceResult, error) {
	p.got = recs
	return make([]ProduceResult, len(recs)), nil
}

func TestProduceHeaders(t *testing.T) {
	tests := []struct {
		name    string
		records string
		status  int
		want    []ProduceHeader // of the first record, when accepted
		message string
	}{
		{"none", `[{"value":"eA=="}]`, 200, nil, ""},
		{"two", `[{"value":"eA==","headers":[{"name":"region","value":"ZXU="},{"name":"trace","value":null}]}]`, 200,
			[]ProduceHeader{{Key: "region", Value: []byte("eu")}, {Key: "trace"}}, ""},
		{"empty name", `[{"value":"eA==","headers":[{"name":"","value":"eA=="}]}]`, 200, []ProduceHeader{{Key: "", Value: []byte("x")}}, ""},
		{"no name", `[{"value":"eA==","headers":[{"value":"eA=="}]}]`, 422, nil, "records[0].headers[0] has no name"},
		{"not base64", `[{"value":"eA==","headers":[{"name":"a","value":"!!"}]}]`, 422, nil, "records[0].headers[0].value: not base64"},
		{"unknown field", `[{"value":"eA==","headers":[{"name":"a","key":"b"}]}]`, 422, nil, "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &recordingProducer{}
			req := httptest.NewRequest(http.MethodPost, "/topics/t", strings.NewReader(`{"records":`+tt.records+`}`))
			req.Header.Set("Content-Type", ContentTypeBinary)
			req.SetPathValue("topic", "t")
			w := httptest.NewRecorder()
			produceHandler(p, 1<<20)(w, req)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if tt.status != 200 {
				var e restError
				if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.ErrorCode != codeInvalidPayload || !strings.Contains(e.Message, tt.message) {
					t.Fatalf("answer %s, want %d with %q", w.Body, codeInvalidPayload, tt.message)
				}
				return
			}
			if len(p.got) != 1 || !reflect.DeepEqual(p.got[0].Headers, tt.want) {
				t.Fatalf("headers %+v, want %+v", p.got, tt.want)
			}
		})
	}
}
