package scenarios

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
)

// trial executes one drawn plan against a session and keeps its attempt log.
type trial struct {
	ctx    context.Context
	s      *harness.Session
	origin time.Time

	mu       sync.Mutex
	attempts []harness.Attempt
}

func newTrial(ctx context.Context, s *harness.Session) *trial {
	return &trial{ctx: ctx, s: s, origin: time.Now()}
}

// result is what a trial found.
type result struct {
	plan string
	// invalid says why the trial does not count (its fault did not fire);
	// "" for a valid trial.
	invalid string
	// violation says how exactly-once (or a hygiene rule) was broken; "" when
	// it held.
	violation string
	effects   []harness.Effect
}

func (tr *trial) record(a harness.Attempt) harness.Attempt {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	a.N = len(tr.attempts) + 1
	tr.attempts = append(tr.attempts, a)
	return a
}

func (tr *trial) log() []harness.Attempt {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]harness.Attempt(nil), tr.attempts...)
}

func (tr *trial) sleep(d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-tr.ctx.Done():
		return tr.ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// do waits delay, then makes one attempt of call with fault armed (nil for
// none), counting the marker's effects around it.
func (tr *trial) do(call *harness.Call, fault faults.Fault, delay time.Duration) (harness.Attempt, error) {
	if err := tr.sleep(delay); err != nil {
		return harness.Attempt{}, err
	}
	a, err := tr.s.Do(tr.ctx, call, fault, tr.origin)
	a.Delay = delay
	if err != nil {
		return a, err
	}
	return tr.record(a), nil
}

// send makes one attempt without arming anything (the caller holds the
// proxy's faults) and without counting effects; written is called once the
// request is on the wire.
func (tr *trial) send(call *harness.Call, fault string, delay time.Duration, written func()) harness.Attempt {
	a := tr.s.SendWatched(tr.ctx, call, tr.origin, written)
	a.Delay, a.Fault = delay, fault
	return tr.record(a)
}

// count asks the oracle.
func (tr *trial) count(marker string) (int, error) { return tr.s.Count(tr.ctx, marker) }

// effect counts marker and compares it with want.
func (tr *trial) effect(marker string, want int) (harness.Effect, error) {
	n, err := tr.count(marker)
	return harness.Effect{Marker: marker, Count: n, Want: want}, err
}

// settleRetry repeats call while the tool answers 409 (a duplicate still in
// flight), as an agent would, up to twice the tool's timeout.
func (tr *trial) settleRetry(call *harness.Call, backoff time.Duration) (harness.Attempt, error) {
	limit := time.Now().Add(2*tr.s.Tool().Timeout() + time.Second)
	wait := max(backoff, 5*time.Millisecond)
	var delay time.Duration
	for {
		a, err := tr.do(call, nil, delay)
		if err != nil || a.Status != 409 || time.Now().After(limit) {
			return a, err
		}
		delay, wait = wait, min(wait*2, 250*time.Millisecond)
	}
}

func is2xx(status int) bool { return status/100 == 2 }

func exactly(e harness.Effect) string {
	if e.Count == e.Want {
		return ""
	}
	return fmt.Sprintf("%d effects for marker %s, want exactly %d", e.Count, e.Marker, e.Want)
}
