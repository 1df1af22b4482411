package protocol

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestConnLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	type step struct {
		ip      string
		release bool
		advance time.Duration
		want    Refusal
	}
	for _, tc := range []struct {
		name  string
		l     *ConnLimiter
		steps []step
	}{
		{"total", &ConnLimiter{Max: 2, Now: clock}, []step{
			{ip: "a"}, {ip: "b"}, {ip: "c", want: RefusedTotal}, {ip: "a", release: true}, {ip: "c"},
		}},
		{"per ip", &ConnLimiter{MaxPerIP: 1, Now: clock}, []step{
			{ip: "a"}, {ip: "a", want: RefusedPerIP}, {ip: "b"}, {ip: "a", release: true}, {ip: "a"},
		}},
		{"creation rate", &ConnLimiter{Rate: 2, Now: clock}, []step{
			{ip: "a"}, {ip: "b"}, {ip: "c", want: RefusedRate},
			{advance: 500 * time.Millisecond, ip: "c"}, {ip: "d", want: RefusedRate},
		}},
		{"ip quota", &ConnLimiter{Now: clock, IPRate: func(ip string) (float64, bool) { return 1, ip == "a" }}, []step{
			{ip: "a"}, {ip: "a", want: RefusedIPRate}, {ip: "b"}, {ip: "b"}, {advance: time.Second, ip: "a"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, s := range tc.steps {
				now = now.Add(s.advance)
				if s.release {
					tc.l.Release(s.ip)
					continue
				}
				if got := tc.l.Admit(s.ip); got != s.want {
					t.Fatalf("step %d (%s): %q, want %q", i, s.ip, got, s.want)
				}
			}
		})
	}
	var nilLimiter *ConnLimiter
	if nilLimiter.Admit("x") != "" {
		t.Fatal("a nil limiter refused")
	}
	nilLimiter.Release("x")
}

// TestThrottleMutes checks that a throttled response carries its throttle
// time and that the next request is not read until the time has passed.
func TestThrottleMutes(t *testing.T) {
	reg := secRegistry()
	reg.Add(API{Key: 0, Min: 3, Max: 11, Handle: func(req *Request) Reply {
		return Reply{Resp: req.Msg.(*kmsg.ProduceRequest).ResponseKind(), Throttle: 250 * time.Millisecond}
	}})
	release := make(chan time.Time)
	var asked []time.Duration
	ts := startServer(t, &Server{Registry: reg, After: func(d time.Duration) <-chan time.Time {
		asked = append(asked, d)
		return release
	}})
	c := dial(t, ts.addr, nil)
	preq := kmsg.NewPtrProduceRequest()
	preq.Version, preq.Acks, preq.TimeoutMillis = 9, 1, 1000
	resp, err := c.roundTrip(preq)
	if err != nil {
		t.Fatal(err)
	}
	if ms := resp.(*kmsg.ProduceResponse).ThrottleMillis; ms != 250 {
		t.Fatalf("throttle_time_ms %d, want 250", ms)
	}
	// The next request is sent but not answered while the connection is muted.
	mreq := metadataReq()
	c.send(mreq)
	got := make(chan error, 1)
	go func() { got <- c.recv(mreq.ResponseKind()) }()
	select {
	case err := <-got:
		t.Fatalf("answered while muted: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != 250*time.Millisecond {
		t.Fatalf("muted for %v, want one 250ms wait", asked)
	}
}
