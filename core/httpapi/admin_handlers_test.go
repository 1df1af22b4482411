package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// fakeAdmin answers from fixed values and records the principal and query
// it was asked with.
type fakeAdmin struct {
	err       error
	groups    []GroupSummary
	principal string
	query     RecordsQuery
}

func (f *fakeAdmin) seen(ctx context.Context) {
	f.principal, _ = RequestPrincipal(ctx)
}

func (f *fakeAdmin) Cluster(ctx context.Context) (Cluster, error) {
	f.seen(ctx)
	return Cluster{ClusterID: "c1", Brokers: []Broker{{NodeID: 1}}}, f.err
}
func (f *fakeAdmin) Topics(ctx context.Context) ([]TopicSummary, error) {
	f.seen(ctx)
	return nil, f.err
}
func (f *fakeAdmin) Topic(ctx context.Context, name string) (TopicDetail, error) {
	f.seen(ctx)
	return TopicDetail{TopicSummary: TopicSummary{Name: name}}, f.err
}
func (f *fakeAdmin) Records(ctx context.Context, q RecordsQuery) (RecordPage, error) {
	f.seen(ctx)
	f.query = q
	return RecordPage{}, f.err
}
func (f *fakeAdmin) Groups(ctx context.Context) ([]GroupSummary, error) {
	f.seen(ctx)
	return f.groups, f.err
}
func (f *fakeAdmin) Group(ctx context.Context, id string) (GroupDetail, error) {
	f.seen(ctx)
	return GroupDetail{GroupSummary: GroupSummary{Group: id}}, f.err
}
func (f *fakeAdmin) Extensions(ctx context.Context) ([]Extension, error) {
	f.seen(ctx)
	return nil, f.err
}

// fakeAuth accepts alice/secret and the token "good".
type fakeAuth struct{}

func (fakeAuth) AuthenticateHTTP(_ context.Context, c Credentials) (string, error) {
	switch {
	case c.Scheme == "basic" && c.Username == "alice" && c.Password == "secret":
		return "User:alice", nil
	case c.Scheme == "bearer" && c.Token == "good":
		return "User:svc", nil
	}
	return "", ErrUnauthenticated
}

func handler(a Admin, required bool) http.Handler {
	return NewHandler(Options{Gatherer: prometheus.NewRegistry(), Health: func() error { return nil },
		Admin: a, Auth: fakeAuth{}, RequireAuth: required, LagHistory: NewLagHistory(3)})
}

func basic(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }

func TestAuthentication(t *testing.T) {
	for _, tc := range []struct {
		name, auth string
		console    bool
		required   bool
		status     int
		principal  string
		challenge  bool
	}{
		{name: "anonymous allowed", status: 200, principal: "User:ANONYMOUS"},
		{name: "anonymous refused", required: true, status: 401, challenge: true},
		{name: "console gets no browser prompt", required: true, console: true, status: 401},
		{name: "basic", auth: basic("alice", "secret"), required: true, status: 200, principal: "User:alice"},
		{name: "wrong password", auth: basic("alice", "nope"), status: 401, challenge: true},
		{name: "bearer", auth: "Bearer good", required: true, status: 200, principal: "User:svc"},
		{name: "bad bearer", auth: "Bearer bad", status: 401, challenge: true},
		{name: "empty bearer", auth: "Bearer ", status: 401, challenge: true},
		{name: "not base64", auth: "Basic !!!", status: 401, challenge: true},
		{name: "no colon", auth: "Basic " + base64.StdEncoding.EncodeToString([]byte("alice")), status: 401, challenge: true},
		{name: "unknown scheme", auth: "Digest x=y", status: 401, challenge: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &fakeAdmin{}
			req := httptest.NewRequest("GET", "/api/v1/cluster", nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			if tc.console {
				req.Header.Set(consoleHeader, "1")
			}
			rec := httptest.NewRecorder()
			handler(a, tc.required).ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if a.principal != tc.principal {
				t.Errorf("principal %q, want %q", a.principal, tc.principal)
			}
			if got := rec.Header().Get("WWW-Authenticate") != ""; got != tc.challenge {
				t.Errorf("challenge sent: %v, want %v", got, tc.challenge)
			}
		})
	}
}

func TestAdminErrorsMapToStatuses(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
	}{
		{nil, 200},
		{fmt.Errorf("x: %w", ErrNotAuthorized), 403},
		{fmt.Errorf("x: %w", ErrNotFound), 404},
		{fmt.Errorf("x: %w", ErrTopicNotFound), 404},
		{fmt.Errorf("x: %w", ErrPartitionNotFound), 404},
		{fmt.Errorf("x: %w", ErrBadRequest), 400},
		{fmt.Errorf("x: %w", ErrUnavailable), 503},
		{errors.New("disk on fire"), 500},
	} {
		for _, path := range []string{"/api/v1/cluster", "/api/v1/brokers", "/api/v1/topics", "/api/v1/topics/t",
			"/api/v1/topics/t/partitions/0/records", "/api/v1/groups", "/api/v1/groups/g", "/api/v1/extensions", "/api/v1/mirrors"} {
			rec := httptest.NewRecorder()
			handler(&fakeAdmin{err: tc.err}, false).ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			if rec.Code != tc.status {
				t.Errorf("%s with %v: status %d, want %d", path, tc.err, rec.Code, tc.status)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s: content type %q", path, ct)
			}
		}
	}
}

func TestRecordsQuery(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  RecordsQuery
		bad   bool
	}{
		{"", RecordsQuery{Offset: -1, Timestamp: -1, Limit: DefaultRecordsLimit, MaxBytes: DefaultRecordsMaxByte}, false},
		{"offset=42&limit=7", RecordsQuery{Offset: 42, Timestamp: -1, Limit: 7, MaxBytes: DefaultRecordsMaxByte}, false},
		{"timestamp=1700000000000", RecordsQuery{Offset: -1, Timestamp: 1700000000000, Limit: 50, MaxBytes: DefaultRecordsMaxByte}, false},
		{"timestamp=2024-05-01T12:00:00Z&max_bytes=100", RecordsQuery{Offset: -1, Timestamp: 1714564800000, Limit: 50, MaxBytes: 100}, false},
		{"offset=-2", RecordsQuery{}, true},
		{"offset=x", RecordsQuery{}, true},
		{"limit=0", RecordsQuery{}, true},
		{fmt.Sprintf("limit=%d", MaxRecordsLimit+1), RecordsQuery{}, true},
		{fmt.Sprintf("max_bytes=%d", MaxRecordsMaxBytes+1), RecordsQuery{}, true},
		{"timestamp=-5", RecordsQuery{}, true},
		{"timestamp=yesterday", RecordsQuery{}, true},
		{"timestamp=1960-01-01T00:00:00Z", RecordsQuery{}, true},
	} {
		a := &fakeAdmin{}
		rec := httptest.NewRecorder()
		handler(a, false).ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/topics/orders/partitions/3/records?"+tc.query, nil))
		if tc.bad {
			if rec.Code != 400 {
				t.Errorf("%q: status %d, want 400", tc.query, rec.Code)
			}
			continue
		}
		tc.want.Topic, tc.want.Partition = "orders", 3
		if rec.Code != 200 || a.query != tc.want {
			t.Errorf("%q: status %d, query %+v, want %+v", tc.query, rec.Code, a.query, tc.want)
		}
	}
	rec := httptest.NewRecorder()
	handler(&fakeAdmin{}, false).ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/topics/orders/partitions/-1/records", nil))
	if rec.Code != 400 {
		t.Errorf("negative partition: %d", rec.Code)
	}
}

func TestLagHistory(t *testing.T) {
	h := NewLagHistory(3)
	t0 := time.UnixMilli(1000)
	for i := 0; i < 5; i++ {
		h.Record(t0.Add(time.Duration(i)*time.Second), []GroupSummary{{Group: "a", Lag: int64(i)}, {Group: "b", Lag: 7}})
	}
	got := h.Samples("a")
	if len(got) != 3 || got[0] != (LagSample{Time: 3000, Lag: 2}) || got[2] != (LagSample{Time: 5000, Lag: 4}) {
		t.Fatalf("samples %+v", got)
	}
	h.Record(t0.Add(10*time.Second), []GroupSummary{{Group: "a", Lag: 9}})
	if len(h.Samples("b")) != 0 {
		t.Fatal("a deleted group's samples were kept")
	}
	got[0].Lag = 100 // a copy
	if h.Samples("a")[0].Lag == 100 {
		t.Fatal("Samples shares its slice")
	}
}

func TestSampleLag(t *testing.T) {
	a := &fakeAdmin{groups: []GroupSummary{{Group: "g", Lag: 5}}}
	h := NewLagHistory(10)
	tick := make(chan time.Time)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { SampleLag(ctx, a, h, tick); close(done) }()
	tick <- time.UnixMilli(1)
	tick <- time.UnixMilli(2) // the first tick was handled once this send is received
	cancel()
	<-done
	s := h.Samples("g")
	if len(s) < 1 || s[0] != (LagSample{Time: 1, Lag: 5}) {
		t.Fatalf("samples %+v", s)
	}
	// The group detail carries the history.
	rec := httptest.NewRecorder()
	NewHandler(Options{Gatherer: prometheus.NewRegistry(), Health: func() error { return nil }, Admin: a, LagHistory: h}).
		ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/groups/g", nil))
	if !strings.Contains(rec.Body.String(), `"lag_history":[{"time":1,"lag":5}`) {
		t.Fatalf("group body %s", rec.Body)
	}
}

func TestConsoleRoutes(t *testing.T) {
	h := handler(&fakeAdmin{}, true)
	for _, tc := range []struct {
		path, want string
		status     int
	}{
		{"/", "/console/", 302},
		{"/console/", "<!doctype html>", 200},
		{"/console/groups/x", "<!doctype html>", 200},
		{"/console/../etc/passwd", "", 0},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if tc.status == 0 {
			if rec.Code == 200 && !strings.Contains(strings.ToLower(rec.Body.String()), "<!doctype html>") {
				t.Errorf("%s served something other than the console", tc.path)
			}
			continue
		}
		if rec.Code != tc.status {
			t.Errorf("%s: %d, want %d", tc.path, rec.Code, tc.status)
		}
		if tc.status == 302 && rec.Header().Get("Location") != tc.want {
			t.Errorf("%s: redirect to %q", tc.path, rec.Header().Get("Location"))
		}
		if tc.status == 200 && !strings.Contains(strings.ToLower(rec.Body.String()), tc.want) {
			t.Errorf("%s: body lacks %q", tc.path, tc.want)
		}
		if tc.status == 200 && !strings.Contains(rec.Header().Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("%s: no content security policy", tc.path)
		}
	}
	// Every built asset the index names is served, immutable.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/console/", nil))
	body := rec.Body.String()
	n := 0
	for _, part := range strings.Split(body, `"/console/assets/`)[1:] {
		name := part[:strings.IndexByte(part, '"')]
		r := httptest.NewRecorder()
		h.ServeHTTP(r, httptest.NewRequest("GET", "/console/assets/"+name, nil))
		if r.Code != 200 || !strings.Contains(r.Header().Get("Cache-Control"), "immutable") {
			t.Errorf("asset %s: %d %q", name, r.Code, r.Header().Get("Cache-Control"))
		}
		n++
	}
	if n < 2 {
		t.Errorf("index names %d assets, want the script and the style sheet", n)
	}
}

func TestOpenAPIDocumentsEveryEndpoint(t *testing.T) {
	spec := string(OpenAPI)
	for _, p := range []string{"/cluster", "/brokers", "/topics", "/topics/{topic}", "/topics/{topic}/partitions/{partition}/records",
		"/groups", "/groups/{group}", "/extensions", "/mirrors", "/whoami", "/openapi.yaml"} {
		if !strings.Contains(spec, "\n  "+p+":\n") {
			t.Errorf("openapi.yaml does not document %s", p)
		}
		path := "/api/v1" + strings.NewReplacer("{topic}", "t", "{partition}", "0", "{group}", "g").Replace(p)
		rec := httptest.NewRecorder()
		handler(&fakeAdmin{}, false).ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 {
			t.Errorf("GET %s: %d", path, rec.Code)
		}
	}
}
