package mirror

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestMirroredACL(t *testing.T) {
	p := testPolicy(RenamePrefix, nil, nil)
	mirrored := []string{"orders", "orders.eu", "pay"}
	lit, pre := kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed
	b := func(res string, pat kmsg.ACLResourcePatternType, op kmsg.ACLOperation) aclBinding {
		return aclBinding{resource: res, pattern: pat, principal: "User:alice", host: "*", operation: op,
			permission: kmsg.ACLPermissionTypeAllow}
	}
	deny := func(a aclBinding) aclBinding { a.permission = kmsg.ACLPermissionTypeDeny; return a }
	self := func(a aclBinding) aclBinding { a.principal = "User:mirror"; return a }
	tests := []struct {
		name string
		in   aclBinding
		want aclBinding
		ok   bool
	}{
		{"read literal", b("orders", lit, kmsg.ACLOperationRead), b("east.orders", lit, kmsg.ACLOperationRead), true},
		{"all becomes read", b("pay", lit, kmsg.ACLOperationAll), b("east.pay", lit, kmsg.ACLOperationRead), true},
		{"write is never copied", b("orders", lit, kmsg.ACLOperationWrite), aclBinding{}, false},
		{"unmirrored topic", b("secrets", lit, kmsg.ACLOperationRead), aclBinding{}, false},
		{"prefixed", b("orders.", pre, kmsg.ACLOperationDescribe), b("east.orders.", pre, kmsg.ACLOperationDescribe), true},
		{"prefix matching nothing", b("zz", pre, kmsg.ACLOperationRead), aclBinding{}, false},
		{"wildcard", b("*", lit, kmsg.ACLOperationRead), b("*", lit, kmsg.ACLOperationRead), true},
		{"deny read", deny(b("orders", lit, kmsg.ACLOperationRead)), deny(b("east.orders", lit, kmsg.ACLOperationRead)), true},
		{"deny all becomes deny read", deny(b("orders", lit, kmsg.ACLOperationAll)), deny(b("east.orders", lit, kmsg.ACLOperationRead)), true},
		{"deny write is not copied", deny(b("orders", lit, kmsg.ACLOperationWrite)), aclBinding{}, false},
		{"deny describe prefixed", deny(b("orders.", pre, kmsg.ACLOperationDescribe)), deny(b("east.orders.", pre, kmsg.ACLOperationDescribe)), true},
		{"nothing denies the mirror", self(deny(b("orders", lit, kmsg.ACLOperationRead))), aclBinding{}, false},
		{"the mirror's allows are copied", self(b("orders", lit, kmsg.ACLOperationRead)), self(b("east.orders", lit, kmsg.ACLOperationRead)), true},
	}
	for _, tt := range tests {
		got, ok := p.mirroredACL(tt.in, mirrored, "User:mirror")
		if ok != tt.ok || got != tt.want {
			t.Errorf("%s: got %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestConfigSynced(t *testing.T) {
	tests := []struct {
		mode, name string
		want       bool
	}{
		{ModeCopy, "retention.ms", true},
		{ModeCopy, "cleanup.policy", true},
		{ModeCopy, "message.timestamp.type", true},
		{ModeLink, "message.timestamp.type", false},
		{ModeCopy, "min.insync.replicas", false},
		{ModeCopy, "gregor.partitioner", false},
		{ModeCopy, "leader.replication.throttled.replicas", false},
	}
	for _, tt := range tests {
		if got := configSynced(tt.mode, tt.name); got != tt.want {
			t.Errorf("configSynced(%s, %s) = %v, want %v", tt.mode, tt.name, got, tt.want)
		}
	}
}
