// Command wasm-authorizer is a Gregor authorizer module in Go: super users
// may do anything; everyone may describe topics, groups and the cluster;
// any other action needs a rule that names the principal (or "*"), the
// operation and a resource-name prefix. Everything else is denied.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o authorizer.wasm .
package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/wasm/authorizer"
	"github.com/gregorbroker/gregor/sdk/wasm/guest"
)

type rule struct {
	Principal string `json:"principal"` // "User:alice" or "*"
	Operation string `json:"operation"` // Kafka's name: "WRITE", "READ", ...
	Resource  string `json:"resource"`  // "TOPIC", "GROUP", ...
	Prefix    string `json:"prefix"`    // resource names starting with it ("" for all)

	op  auth.Operation
	res auth.ResourceType
}

type config struct {
	SuperUsers []string `json:"super_users"`
	Allow      []rule   `json:"allow"`
}

var cfg config

func configure(raw []byte) error {
	var c config
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("authorizer: config: %w", err)
	}
	for i := range c.Allow {
		r := &c.Allow[i]
		if r.Principal != "*" {
			if _, err := auth.ParsePrincipal(r.Principal); err != nil {
				return fmt.Errorf("authorizer: rule %d: %w", i, err)
			}
		}
		var err error
		if r.op, err = auth.ParseOperation(r.Operation); err != nil {
			return fmt.Errorf("authorizer: rule %d: %w", i, err)
		}
		if r.res, err = auth.ParseResourceType(r.Resource); err != nil {
			return fmt.Errorf("authorizer: rule %d: %w", i, err)
		}
	}
	cfg = c
	return nil
}

func decide(a auth.Action) auth.Decision {
	who := a.Principal.String()
	for _, s := range cfg.SuperUsers {
		if s == who {
			return auth.Allow
		}
	}
	if a.Operation == auth.OpDescribe {
		return auth.Allow
	}
	for _, r := range cfg.Allow {
		if (r.Principal == "*" || r.Principal == who) &&
			(r.op == a.Operation || r.op == auth.OpAll) &&
			r.res == a.Resource.Type &&
			strings.HasPrefix(a.Resource.Name, r.Prefix) {
			return auth.Allow
		}
	}
	return auth.Deny
}

func init() {
	guest.OnConfigure(configure)
	authorizer.Register(decide)
}

func main() {}
