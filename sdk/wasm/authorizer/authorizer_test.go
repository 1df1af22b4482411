package authorizer

import (
	"testing"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/wasm/abi"
)

func TestHandle(t *testing.T) {
	acts := []auth.Action{
		{Principal: auth.User("alice"), Operation: auth.OpWrite, Resource: auth.Resource{Type: auth.ResourceTopic, Name: "a"}},
		{Principal: auth.User("bob"), Operation: auth.OpWrite, Resource: auth.Resource{Type: auth.ResourceTopic, Name: "a"}},
	}
	slots := abi.SlotsSize(len(acts), 1)
	enc := func() []byte {
		buf := make([]byte, slots+abi.ActionsSize(acts))
		abi.PutActions(buf[slots:], acts)
		return buf
	}
	onlyAlice := func(a auth.Action) auth.Decision {
		if a.Principal.Name == "alice" {
			return auth.Allow
		}
		return auth.Deny
	}
	for _, tc := range []struct {
		name  string
		fn    func(auth.Action) auth.Decision
		buf   []byte
		count int32
		code  int32
	}{
		{"decides", onlyAlice, enc(), 2, abi.OK},
		{"no handler", nil, enc(), 2, abi.CodeNoHandler},
		{"panic", func(auth.Action) auth.Decision { panic("x") }, enc(), 2, abi.CodeFailed},
		{"truncated", onlyAlice, enc()[:10], 2, abi.CodeBadInput},
		{"wrong count", onlyAlice, enc(), 1, abi.CodeBadInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			Register(tc.fn)
			if code := Handle(tc.buf, tc.count); code != tc.code {
				t.Fatalf("code %d want %d", code, tc.code)
			}
			if tc.code == abi.OK && (tc.buf[0] != 1 || tc.buf[1] != 0) {
				t.Fatalf("decisions %v", tc.buf[:2])
			}
		})
	}
}
