package coordinator

import (
	"errors"
	"testing"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/share"
)

func TestCoordinatorKey(t *testing.T) {
	k := share.PartitionKey{Group: "g1", TopicPartition: share.TopicPartition{
		TopicID: [16]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, Partition: 7}}
	// Kafka's Uuid.toString of these bytes.
	const want = "g1:AAECAwQFBgcICQoLDA0ODw:7"
	if got := CoordinatorKey(k); got != want {
		t.Fatalf("CoordinatorKey = %q, want %q", got, want)
	}
	if got := StateTopicPartition(k, 50); got != group.PartitionFor(want, 50) {
		t.Fatalf("StateTopicPartition = %d, want the hash of %q (%d)", got, want, group.PartitionFor(want, 50))
	}
	for _, in := range []string{want, " g1 :AAECAwQFBgcICQoLDA0ODw:7", "g1:AAECAwQFBgcICQoLDA0ODw==:7", want + ":"} {
		got, err := ParseCoordinatorKey(in)
		if err != nil || got != k {
			t.Fatalf("ParseCoordinatorKey(%q) = %+v, %v; want %+v", in, got, err, k)
		}
	}
	for _, in := range []string{"", "g1", "g1:AAECAwQFBgcICQoLDA0ODw", " :AAECAwQFBgcICQoLDA0ODw:7",
		"g1:nope:7", "g1:AAECAwQFBgcICQoLDA0O:7", "g1:AAECAwQFBgcICQoLDA0ODw:x", "g1:AAECAwQFBgcICQoLDA0ODw:7:8",
		"g1:AAECAwQFBgcICQoLDA0ODw:4294967296"} {
		if _, err := ParseCoordinatorKey(in); !errors.Is(err, ErrInvalidCoordinatorKey) {
			t.Fatalf("ParseCoordinatorKey(%q): %v, want ErrInvalidCoordinatorKey", in, err)
		}
	}
}
