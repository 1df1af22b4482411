package broker

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/controller"
)

// A mirror topic takes appends from its own link only; a link writes only
// to its own mirror topics.
func TestCheckMirrorLink(t *testing.T) {
	im := &controller.Image{Configs: map[controller.ConfigResource]map[string]string{
		{Type: controller.ResourceTopic, Name: "east.orders"}: {MirrorLinkConfig: "east"},
	}}
	str := func(s string) *string { return &s }
	tests := []struct {
		name  string
		txnID *string
		topic string
		want  int16
		msg   string
	}{
		{"ordinary produce to a plain topic", nil, "plain", 0, ""},
		{"ordinary produce to a mirror", nil, "east.orders", kerr.PolicyViolation.Code, "read-only mirror of east"},
		{"a non-link transactional id", str("app-1"), "east.orders", kerr.PolicyViolation.Code, "read-only mirror"},
		{"its link", str("__gregor_link:east"), "east.orders", 0, ""},
		{"another link", str("__gregor_link:west"), "east.orders", kerr.PolicyViolation.Code, "not of link west"},
		{"a link to a plain topic", str("__gregor_link:east"), "plain", kerr.PolicyViolation.Code, "is not a mirror"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			link, isLink := ProduceLink(tt.txnID)
			code, err := CheckMirrorLink(im, tt.topic, link, isLink)
			if code != tt.want {
				t.Fatalf("code %d, want %d (%v)", code, tt.want, err)
			}
			if tt.msg != "" && (err == nil || !strings.Contains(err.Error(), tt.msg)) {
				t.Fatalf("error %v, want it to hold %q", err, tt.msg)
			}
		})
	}
}
