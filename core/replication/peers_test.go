package replication

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

type countingPeer struct{ closed *int }

func (countingPeer) Request(context.Context, kmsg.Request) (kmsg.Response, error) { return nil, nil }

// Peers keeps one client per broker and channel (markers apart from
// verifications), redials a broker whose address changed, and refuses
// clients once closed.
func TestPeersCache(t *testing.T) {
	dials, closed := 0, 0
	ps := NewPeers(func(addr string) (Client, func(), error) {
		dials++
		return countingPeer{&closed}, func() { closed++ }, nil
	}, 0)
	steps := []struct {
		id               int32
		addr             string
		channel          Channel
		dials, closedNow int
	}{
		{1, "a:1", ChannelVerify, 1, 0},
		{1, "a:1", ChannelVerify, 1, 0},
		{1, "a:1", ChannelMarkers, 2, 0},
		{1, "a:1", ChannelMarkers, 2, 0},
		{2, "b:1", ChannelVerify, 3, 0},
		{1, "a:2", ChannelVerify, 4, 1},
	}
	for i, s := range steps {
		if _, err := ps.client(s.id, s.addr, s.channel); err != nil {
			t.Fatal(err)
		}
		if dials != s.dials || closed != s.closedNow {
			t.Fatalf("step %d: %d dials, %d closed; want %d, %d", i, dials, closed, s.dials, s.closedNow)
		}
	}
	ps.Close()
	if closed != 4 {
		t.Fatalf("%d clients closed, want 4", closed)
	}
	if _, err := ps.client(1, "a:2", ChannelMarkers); !errors.Is(err, ErrPeersClosed) {
		t.Fatalf("client after Close: %v", err)
	}
}
