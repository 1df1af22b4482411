package controller

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"testing"
)

func TestSecurityRecords(t *testing.T) {
	c := newCluster(t, 1)
	ctx := context.Background()
	a1 := ACLBinding{ResourceType: 2, ResourceName: "t", PatternType: 3, Principal: "User:a", Host: "*", Operation: 3, Permission: 3}
	a2 := ACLBinding{ResourceType: 3, ResourceName: "g", PatternType: 4, Principal: "User:b", Host: "*", Operation: 3, Permission: 2}
	bad := ACLBinding{ResourceType: 2, ResourceName: "", PatternType: 3, Principal: "User:a", Host: "*", Operation: 3, Permission: 3}
	errs := c.CreateACLs(ctx, []ACLBinding{a1, a2, a1, bad})
	for i, err := range errs[:3] {
		if err != nil {
			t.Fatalf("acl %d: %v", i, err)
		}
	}
	if !errors.Is(errs[3], ErrInvalidRequest) {
		t.Fatalf("bad acl: %v", errs[3])
	}
	if got := c.Image().ACLs; len(got) != 2 {
		t.Fatalf("acls %v", got)
	}
	deleted, err := c.DeleteACLs(ctx, []func(ACLBinding) bool{
		func(a ACLBinding) bool { return a.ResourceType == 3 },
		func(a ACLBinding) bool { return a.Principal == "User:nobody" },
	})
	if err != nil || len(deleted[0]) != 1 || deleted[0][0] != a2 || len(deleted[1]) != 0 {
		t.Fatalf("deleted %v, %v", deleted, err)
	}
	if got := c.Image().ACLs; len(got) != 1 || got[0] != a1 {
		t.Fatalf("acls after delete %v", got)
	}

	cred := ScramCredential{User: "alice", Mechanism: 1, Salt: []byte("s"), StoredKey: []byte("k"), ServerKey: []byte("v"), Iterations: 4096}
	delErrs, upErrs := c.AlterScramCredentials(ctx, []ScramKey{{"bob", 1}}, []ScramCredential{cred, {User: "x"}})
	if !errors.Is(delErrs[0], ErrNoCredential) || upErrs[0] != nil || !errors.Is(upErrs[1], ErrInvalidRequest) {
		t.Fatalf("alter scram: %v %v", delErrs, upErrs)
	}
	if got, ok := c.Image().ScramCredentialFor("alice", 1); !ok || !reflect.DeepEqual(got, cred) {
		t.Fatalf("credential %+v %v", got, ok)
	}

	q := ClientQuota{Entity: QuotaEntity{{Type: "user", Name: "alice"}, {Type: "client-id", Default: true}}, Values: map[string]float64{"producer_byte_rate": 1024}}
	if errs := c.SetClientQuotas(ctx, []ClientQuota{q}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if got := c.Image().Quotas["client-id=<default>,user=alice"]; got.Values["producer_byte_rate"] != 1024 {
		t.Fatalf("quotas %v", c.Image().Quotas)
	}

	var buf bytes.Buffer
	if err := writeSnapshot(&buf, c.Image()); err != nil {
		t.Fatal(err)
	}
	back, err := readSnapshot(&buf, c.Image().ClusterID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.ACLs, c.Image().ACLs) || !reflect.DeepEqual(back.Scram, c.Image().Scram) || !reflect.DeepEqual(back.Quotas, c.Image().Quotas) {
		t.Fatalf("snapshot lost security state")
	}

	delErrs, _ = c.AlterScramCredentials(ctx, []ScramKey{{"alice", 1}}, nil)
	if delErrs[0] != nil {
		t.Fatal(delErrs[0])
	}
	if _, ok := c.Image().Scram["alice"]; ok {
		t.Fatal("credential still there")
	}
	if errs := c.SetClientQuotas(ctx, []ClientQuota{{Entity: q.Entity}}); errs[0] != nil || len(c.Image().Quotas) != 0 {
		t.Fatalf("quota removal: %v %v", errs, c.Image().Quotas)
	}
}
