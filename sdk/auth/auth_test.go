package auth

import (
	"context"
	"errors"
	"testing"
)

func TestNamesRoundTrip(t *testing.T) {
	for o := OpUnknown; o <= OpDescribeTokens; o++ {
		got, err := ParseOperation(o.String())
		if err != nil || got != o {
			t.Errorf("operation %d: %q -> %d, %v", o, o.String(), got, err)
		}
	}
	for r := ResourceUnknown; r <= ResourceUser; r++ {
		got, err := ParseResourceType(r.String())
		if err != nil || got != r {
			t.Errorf("resource %d: %q -> %d, %v", r, r.String(), got, err)
		}
	}
	if _, err := ParseOperation("FLY"); err == nil {
		t.Error("unknown operation parsed")
	}
	if s := Operation(99).String(); s != "Operation(99)" {
		t.Errorf("unknown operation prints %q", s)
	}
	// Kafka's codes, as on the wire.
	if OpWrite != 4 || OpIdempotentWrite != 12 || ResourceTopic != 2 || ResourceTransactionalID != 5 || PatternPrefixed != 4 {
		t.Error("enum codes differ from Kafka's")
	}
}

func TestParsePrincipal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Principal
		ok   bool
	}{
		{"User:alice", User("alice"), true},
		{"User:CN=a:b", Principal{"User", "CN=a:b"}, true},
		{"alice", Principal{}, false},
		{":alice", Principal{}, false},
		{"User:", Principal{}, false},
	} {
		got, err := ParsePrincipal(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParsePrincipal(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestFuncAuthorizer(t *testing.T) {
	boom := errors.New("boom")
	a := Func(func(_ context.Context, a Action) (Decision, error) {
		switch {
		case a.Resource.Name == "fail":
			return Deny, boom
		case a.Principal == User("alice") && a.Operation == OpWrite:
			return Allow, nil
		}
		return Deny, nil
	})
	acts := []Action{
		{Principal: User("alice"), Operation: OpWrite, Resource: Resource{ResourceTopic, "t", PatternLiteral}},
		{Principal: User("bob"), Operation: OpWrite, Resource: Resource{ResourceTopic, "t", PatternLiteral}},
	}
	dec := make([]Decision, 2)
	if err := a.Authorize(context.Background(), acts, dec); err != nil {
		t.Fatal(err)
	}
	if dec[0] != Allow || dec[1] != Deny {
		t.Fatalf("decisions %v", dec)
	}
	if err := a.Authorize(context.Background(), acts, dec[:1]); err == nil {
		t.Fatal("short decisions accepted")
	}
	acts[1].Resource.Name = "fail"
	if err := a.Authorize(context.Background(), acts, dec); !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
	if err := (AllowAll{}).Authorize(context.Background(), acts, dec); err != nil || dec[1] != Allow {
		t.Fatalf("AllowAll: %v %v", dec, err)
	}
}
