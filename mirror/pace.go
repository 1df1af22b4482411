package mirror

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// targetWriter is one of copy mode's target producers with its send
// policy: records go out as soon as the producer has no write outstanding
// (no fixed wait when the pipe is idle), and otherwise gather until the
// outstanding records are answered, at most linger_ms (Nagle's rule; what
// Kafka's producer does with max.in.flight.requests.per.connection = 1).
// A linger alone made every record wait it (bench-mirror: 5 of a copy's
// 7-10 ms p50 at 2,000 records/s), though one source poll hands over all
// that is there to send; without any, a poll's records went out in many
// small requests, each with its fsync on the target.
type targetWriter struct {
	cl   *kgo.Client
	pace writerPace
	// kick wakes the goroutine that tells cl to send what it holds: not
	// from a produce callback, which runs inside the client.
	kick chan struct{}
	done chan struct{}
}

func newTargetWriter(cl *kgo.Client) *targetWriter {
	w := &targetWriter{cl: cl, kick: make(chan struct{}, 1), done: make(chan struct{})}
	go w.sendLoop()
	return w
}

// sendLoop ends the linger of every batch cl holds when kicked. Flush with
// a context already done only does that: it starts the sends and returns.
func (w *targetWriter) sendLoop() {
	now, cancel := context.WithCancel(context.Background())
	cancel()
	for {
		select {
		case <-w.done:
			return
		case <-w.kick:
			_ = w.cl.Flush(now)
		}
	}
}

// produce hands a record to the producer; fn runs with its answer.
func (w *targetWriter) produce(ctx context.Context, r *kgo.Record, fn func(*kgo.Record, error)) {
	w.pace.handed()
	w.cl.Produce(ctx, r, func(r *kgo.Record, err error) {
		fn(r, err)
		if w.pace.answered() {
			w.send()
		}
	})
}

// polled is called once the records of a source poll are handed over.
func (w *targetWriter) polled() {
	if w.pace.due() {
		w.send()
	}
}

func (w *targetWriter) send() {
	select {
	case w.kick <- struct{}{}:
	default: // a kick is pending: it sends these too
	}
}

func (w *targetWriter) close() {
	close(w.done)
	w.cl.Close()
}

// writerPace counts one producer's records to decide when to send: the
// records handed over since the last send go out once every record sent
// before has been answered.
type writerPace struct {
	mu       sync.Mutex
	handedN  int64 // records handed to the producer
	answerN  int64 // records answered (acknowledged or failed)
	sentUpTo int64 // handedN when the producer was last told to send
}

func (p *writerPace) handed() {
	p.mu.Lock()
	p.handedN++
	p.mu.Unlock()
}

// answered counts one answered record and reports whether to send now.
func (p *writerPace) answered() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answerN++
	return p.dueLocked()
}

// due reports whether to send now: records are waiting and nothing sent
// is outstanding. It counts them as sent.
func (p *writerPace) due() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dueLocked()
}

func (p *writerPace) dueLocked() bool {
	if p.answerN < p.sentUpTo || p.handedN <= p.answerN {
		return false
	}
	p.sentUpTo = p.handedN
	return true
}
