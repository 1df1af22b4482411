package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
)

// The embedded formats of the Confluent REST Proxy v2 produce endpoint.
const (
	ContentTypeJSON   = "application/vnd.kafka.json.v2+json"
	ContentTypeBinary = "application/vnd.kafka.binary.v2+json"
	// ContentTypeV2 is the content type of the answers.
	ContentTypeV2 = "application/vnd.kafka.v2+json"
)

// ProduceRecord is one record to produce. Partition is -1 to let the
// topic's partitioner choose.
type ProduceRecord struct {
	Key, Value []byte // nil for null
	Headers    []ProduceHeader
	Partition  int32
}

// ProduceHeader is one record header.
type ProduceHeader struct {
	Key   string
	Value []byte // nil for null
}

// ProduceResult is where a record went, or why it did not. ErrorCode is
// Kafka's error code (0 on success); Retriable says whether trying again
// may succeed.
type ProduceResult struct {
	Partition int32
	Offset    int64
	ErrorCode int16
	Retriable bool
	Err       error
}

// Errors a Producer returns for the whole request.
var (
	ErrTopicNotFound     = errors.New("topic not found")
	ErrPartitionNotFound = errors.New("partition not found")
	ErrNotAuthorized     = errors.New("not authorized")
)

type clientHostKey struct{}

// ClientHost is the IP address of the HTTP client that made the request
// ctx belongs to, or "".
func ClientHost(ctx context.Context) string {
	h, _ := ctx.Value(clientHostKey{}).(string)
	return h
}

// Producer appends records to a topic: the broker's narrow view for
// produce-over-HTTP.
type Producer interface {
	ProduceRecords(ctx context.Context, topic string, records []ProduceRecord) ([]ProduceResult, error)
}

// REST Proxy error codes.
const (
	codeNotAuthorized     = 40301
	codeTopicNotFound     = 40401
	codePartitionNotFound = 40402
	codeUnsupportedType   = 41501
	codeInvalidPayload    = 42201
	codeKafkaError        = 50002
	codeRequestTooLarge   = 41301
)

type restError struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

func writeV2(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", ContentTypeV2)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

func fail(w http.ResponseWriter, status, code int, format string, args ...any) {
	writeV2(w, status, restError{ErrorCode: code, Message: fmt.Sprintf(format, args...)})
}

// produceRequest is the body of POST /topics/{topic}; key and value stay
// raw until the embedded format says how to read them.
type produceRequest struct {
	Records []struct {
		Key       json.RawMessage `json:"key"`
		Value     json.RawMessage `json:"value"`
		Partition *int32          `json:"partition"`
		// Headers are not part of the REST Proxy v2 format; they are
		// accepted as REST Proxy v3 writes them (name, base64 value) so
		// that header-aware partitioners see what Kafka clients send.
		Headers []struct {
			Name  *string `json:"name"`
			Value *string `json:"value"`
		} `json:"headers"`
	} `json:"records"`
	// Schemas belong to the Avro, JSON Schema and Protobuf formats, which
	// this endpoint does not offer.
	KeySchema     json.RawMessage `json:"key_schema"`
	KeySchemaID   json.RawMessage `json:"key_schema_id"`
	ValueSchema   json.RawMessage `json:"value_schema"`
	ValueSchemaID json.RawMessage `json:"value_schema_id"`
}

type produceOffset struct {
	Partition *int32  `json:"partition"`
	Offset    *int64  `json:"offset"`
	ErrorCode *int    `json:"error_code"`
	Error     *string `json:"error"`
}

type produceResponse struct {
	KeySchemaID   *int            `json:"key_schema_id"`
	ValueSchemaID *int            `json:"value_schema_id"`
	Offsets       []produceOffset `json:"offsets"`
}

// produceHandler serves POST /topics/{topic} as the Confluent REST Proxy v2
// does, for the json and binary embedded formats.
func produceHandler(p Producer, maxBody int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		topic := r.PathValue("topic")
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || (mt != ContentTypeJSON && mt != ContentTypeBinary) {
			fail(w, http.StatusUnsupportedMediaType, codeUnsupportedType,
				"HTTP 415 Unsupported Media Type: use %s or %s", ContentTypeJSON, ContentTypeBinary)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				fail(w, http.StatusRequestEntityTooLarge, codeRequestTooLarge, "request body is over %d bytes", maxBody)
				return
			}
			fail(w, http.StatusBadRequest, http.StatusBadRequest, "reading the request: %v", err)
			return
		}
		var req produceRequest
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			fail(w, http.StatusUnprocessableEntity, codeInvalidPayload, "invalid request body: %v", err)
			return
		}
		if req.KeySchema != nil || req.KeySchemaID != nil || req.ValueSchema != nil || req.ValueSchemaID != nil {
			fail(w, http.StatusUnprocessableEntity, codeInvalidPayload, "schemas are not used by the json and binary formats")
			return
		}
		if len(req.Records) == 0 {
			fail(w, http.StatusUnprocessableEntity, codeInvalidPayload, "records must hold at least one record")
			return
		}
		records := make([]ProduceRecord, len(req.Records))
		for i, rec := range req.Records {
			key, err := embedded(mt, rec.Key)
			if err != nil {
				fail(w, http.StatusUnprocessableEntity, codeInvalidPayload, "records[%d].key: %v", i, err)
				return
			}
			value, err := embedded(mt, rec.Value)
			if err != nil {
				fail(w, http.StatusUnprocessableEntity, codeInvalidPayload, "records[%d].value: %v", i, err)
				return
			}
			records[i] = ProduceRecord{Key: key, Value: value, Partition: -1}
			if len(rec.Headers) > 0 {
				records[i].Headers = make([]ProduceHeader, len(rec.Headers))
			}
			for j, h := range rec.Headers {
				if h.Name == nil {
					fail(w, http.StatusUnprocessableEntity, codeInvalidPayload, "records[%d].headers[%d] has no name", i, j)
					return
				}
				records[i].Headers[j].Key = *h.Name
				if h.Value == nil {
					continue
				}
				v, err := base64.StdEncoding.DecodeString(*h.Value)
				if err != nil {
					fail(w, http.StatusUnprocessableEntity, codeInvalidPayload, "records[%d].headers[%d].value: not base64: %v", i, j, err)
					return
				}
				records[i].Headers[j].Value = v
			}
			if rec.Partition != nil {
				if *rec.Partition < 0 {
					fail(w, http.StatusUnprocessableEntity, codeInvalidPayload, "records[%d].partition %d is negative", i, *rec.Partition)
					return
				}
				records[i].Partition = *rec.Partition
			}
		}
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		ctx := context.WithValue(r.Context(), clientHostKey{}, host)
		results, err := p.ProduceRecords(ctx, topic, records)
		switch {
		case errors.Is(err, ErrNotAuthorized):
			fail(w, http.StatusForbidden, codeNotAuthorized, "%v", err)
			return
		case errors.Is(err, ErrTopicNotFound):
			fail(w, http.StatusNotFound, codeTopicNotFound, "Topic %s not found.", topic)
			return
		case errors.Is(err, ErrPartitionNotFound):
			fail(w, http.StatusNotFound, codePartitionNotFound, "%v", err)
			return
		case err != nil:
			fail(w, http.StatusInternalServerError, codeKafkaError, "%v", err)
			return
		}
		resp := produceResponse{Offsets: make([]produceOffset, len(results))}
		for i, res := range results {
			if res.ErrorCode == 0 && res.Err == nil {
				part, off := res.Partition, res.Offset
				resp.Offsets[i] = produceOffset{Partition: &part, Offset: &off}
				continue
			}
			// REST Proxy v2: 1 is a non-retriable Kafka error, 2 a
			// retriable one.
			code := 1
			if res.Retriable {
				code = 2
			}
			msg := fmt.Sprintf("Kafka error %d", res.ErrorCode)
			if res.Err != nil {
				msg = res.Err.Error()
			}
			resp.Offsets[i] = produceOffset{ErrorCode: &code, Error: &msg}
		}
		writeV2(w, http.StatusOK, resp)
	}
}

// embedded turns a record's key or value into bytes: JSON as written for
// the json format, base64 for the binary format; null stays nil.
func embedded(contentType string, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if contentType == ContentTypeJSON {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("binary format wants a base64 string: %w", err)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	return b, nil
}
