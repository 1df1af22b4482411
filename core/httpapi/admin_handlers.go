package httpapi

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// OpenAPI is the admin API's OpenAPI 3 description, served at
// /api/v1/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte

// Bounds of a records read.
const (
	DefaultRecordsLimit   = 50
	MaxRecordsLimit       = 1000
	DefaultRecordsMaxByte = 1 << 20
	MaxRecordsMaxBytes    = 16 << 20
)

// apiError is the body of every admin API error.
type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(body)
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiError{Error: msg})
}

// writeAdminError maps an Admin error to its status.
func writeAdminError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrNotAuthorized):
		status = http.StatusForbidden
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrTopicNotFound), errors.Is(err, ErrPartitionNotFound):
		status = http.StatusNotFound
	case errors.Is(err, ErrBadRequest):
		status = http.StatusBadRequest
	case errors.Is(err, ErrUnavailable):
		status = http.StatusServiceUnavailable
	}
	writeJSONError(w, status, err.Error())
}

// adminRoutes registers the admin API on mux.
func adminRoutes(mux *http.ServeMux, o Options) {
	a := o.Admin
	wrap := func(h http.HandlerFunc) http.Handler { return authenticate(o.Auth, o.RequireAuth, h) }
	mux.Handle("GET /api/v1/openapi.yaml", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(OpenAPI)
	}))
	mux.Handle("GET /api/v1/whoami", wrap(func(w http.ResponseWriter, r *http.Request) {
		p, _ := RequestPrincipal(r.Context())
		writeJSON(w, http.StatusOK, map[string]string{"principal": p})
	}))
	mux.Handle("GET /api/v1/cluster", wrap(func(w http.ResponseWriter, r *http.Request) {
		c, err := a.Cluster(r.Context())
		answer(w, c, err)
	}))
	mux.Handle("GET /api/v1/brokers", wrap(func(w http.ResponseWriter, r *http.Request) {
		c, err := a.Cluster(r.Context())
		answer(w, c.Brokers, err)
	}))
	mux.Handle("GET /api/v1/topics", wrap(func(w http.ResponseWriter, r *http.Request) {
		ts, err := a.Topics(r.Context())
		if ts == nil {
			ts = []TopicSummary{}
		}
		answer(w, ts, err)
	}))
	mux.Handle("GET /api/v1/topics/{topic}", wrap(func(w http.ResponseWriter, r *http.Request) {
		t, err := a.Topic(r.Context(), r.PathValue("topic"))
		answer(w, t, err)
	}))
	mux.Handle("GET /api/v1/topics/{topic}/partitions/{partition}/records", wrap(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseRecordsQuery(r)
		if err != nil {
			writeAdminError(w, err)
			return
		}
		page, err := a.Records(r.Context(), q)
		if page.Records == nil {
			page.Records = []Record{}
		}
		answer(w, page, err)
	}))
	mux.Handle("GET /api/v1/groups", wrap(func(w http.ResponseWriter, r *http.Request) {
		gs, err := a.Groups(r.Context())
		if gs == nil {
			gs = []GroupSummary{}
		}
		answer(w, gs, err)
	}))
	mux.Handle("GET /api/v1/groups/{group}", wrap(func(w http.ResponseWriter, r *http.Request) {
		g, err := a.Group(r.Context(), r.PathValue("group"))
		if err == nil {
			g.LagHistory = []LagSample{}
			if o.LagHistory != nil {
				g.LagHistory = o.LagHistory.Samples(g.Group)
			}
		}
		answer(w, g, err)
	}))
	mux.Handle("GET /api/v1/extensions", wrap(func(w http.ResponseWriter, r *http.Request) {
		es, err := a.Extensions(r.Context())
		if es == nil {
			es = []Extension{}
		}
		answer(w, es, err)
	}))
	mux.Handle("GET /api/v1/mirrors", wrap(func(w http.ResponseWriter, r *http.Request) {
		// Mirror links are cluster state: the same permission as the
		// cluster view.
		if _, err := a.Cluster(r.Context()); err != nil {
			writeAdminError(w, err)
			return
		}
		links := []MirrorLink{}
		if o.Mirrors != nil {
			l, err := o.Mirrors.MirrorLinks(r.Context())
			if err != nil {
				writeAdminError(w, err)
				return
			}
			links = append(links, l...)
		}
		writeJSON(w, http.StatusOK, map[string]any{"enabled": o.Mirrors != nil, "links": links})
	}))
}

func answer(w http.ResponseWriter, body any, err error) {
	if err != nil {
		writeAdminError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// parseRecordsQuery reads the path and query of a records request:
// offset (a number, or -1 for the last `limit` records), timestamp (Unix
// milliseconds or RFC 3339; wins over offset), limit and max_bytes.
func parseRecordsQuery(r *http.Request) (RecordsQuery, error) {
	q := RecordsQuery{Topic: r.PathValue("topic"), Offset: -1, Timestamp: -1,
		Limit: DefaultRecordsLimit, MaxBytes: DefaultRecordsMaxByte}
	part, err := strconv.ParseInt(r.PathValue("partition"), 10, 32)
	if err != nil || part < 0 {
		return q, fmt.Errorf("%w: partition %q is not a partition number", ErrBadRequest, r.PathValue("partition"))
	}
	q.Partition = int32(part)
	v := r.URL.Query()
	if s := v.Get("offset"); s != "" {
		o, err := strconv.ParseInt(s, 10, 64)
		if err != nil || o < -1 {
			return q, fmt.Errorf("%w: offset %q: want an offset, or -1 for the latest records", ErrBadRequest, s)
		}
		q.Offset = o
	}
	if s := v.Get("timestamp"); s != "" {
		ts, err := parseTimestamp(s)
		if err != nil {
			return q, err
		}
		q.Timestamp = ts
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxRecordsLimit {
			return q, fmt.Errorf("%w: limit %q: want 1 to %d", ErrBadRequest, s, MaxRecordsLimit)
		}
		q.Limit = n
	}
	if s := v.Get("max_bytes"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxRecordsMaxBytes {
			return q, fmt.Errorf("%w: max_bytes %q: want 1 to %d", ErrBadRequest, s, MaxRecordsMaxBytes)
		}
		q.MaxBytes = n
	}
	return q, nil
}

func parseTimestamp(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 {
			return 0, fmt.Errorf("%w: timestamp %d is negative", ErrBadRequest, ms)
		}
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%w: timestamp %q: want Unix milliseconds or RFC 3339 (2024-05-01T12:00:00Z)", ErrBadRequest, s)
	}
	if t.UnixMilli() < 0 {
		return 0, fmt.Errorf("%w: timestamp %q is before 1970", ErrBadRequest, s)
	}
	return t.UnixMilli(), nil
}
