package group

import (
	"errors"
	"testing"
)

func TestStreamsTopologyDescriptionUpdate(t *testing.T) {
	e := sgEnv(t)
	if r := smust(t, e.shb("a", 0, nil)); !r.DescriptionRequired {
		t.Fatal("a new streams group: DescriptionRequired false")
	}
	type desc struct{ name string }
	for _, c := range []struct {
		group, member string
		epoch         int32
		want          error
	}{
		{"nogroup", "a", 0, ErrGroupIDNotFound},
		{"app", "b", 0, ErrUnknownMemberID},
		{"app", "a", 1, ErrStreamsInvalidTopologyEpoch},
	} {
		if err := e.c.UpdateStreamsTopologyDescription(c.group, c.member, c.epoch, desc{"x"}); !errors.Is(err, c.want) {
			t.Fatalf("update %s/%s at %d: %v, want %v", c.group, c.member, c.epoch, err, c.want)
		}
	}
	if d, err := e.c.DescribeStreamsGroup("app"); err != nil || d.Description != nil {
		t.Fatalf("describe before the update: %+v %v", d.Description, err)
	}
	if err := e.c.UpdateStreamsTopologyDescription("app", "a", 0, desc{"x"}); err != nil {
		t.Fatal(err)
	}
	d, err := e.c.DescribeStreamsGroup("app")
	if err != nil || d.Description != (desc{"x"}) {
		t.Fatalf("describe after the update: %+v %v", d.Description, err)
	}
	if r := smust(t, e.shb("a", 1, []StreamsTaskIDs{})); r.DescriptionRequired {
		t.Fatal("after the update: DescriptionRequired true")
	}
}
