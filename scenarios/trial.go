package scenarios

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// trial executes one drawn plan against a session and keeps its attempt log.
type trial struct {
	ctx    context.Context
	s      *harness.Session
	origin time.Time

	mu       sync.Mutex
	attempts []harness.Attempt
	// log, when set, sees every attempt as it is recorded.
	log func(harness.Attempt)
	// park, when set (for the scenarios whose trials wait long), sleeps d
	// without holding the trial's session, slot and lock (see wait); s is
	// nil while it sleeps.
	park func(d time.Duration) error
	// restart restarts a crashed tool and re-points every proxy in front
	// of it (set for tools that can crash).
	restart func(context.Context) error
	// outbound, when set, returns the tool's own outbound attempts
	// recorded since it was last called (see downstream.go); they join the
	// log after the attempt during which they happened.
	outbound func() []harness.Attempt
}

// wait sleeps d as part of the plan (retention's wait), letting go of what
// the trial holds meanwhile when it can.
func (tr *trial) wait(d time.Duration) error {
	if tr.park != nil {
		return tr.park(d)
	}
	return tr.sleep(d)
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
	// violation says how exactly-once (or a rule of the contract) was
	// broken; "" when it held. kind is the rule in the words of the
	// violation, the same for every trial that breaks it the same way;
	// rule names it for the reports.
	violation, kind string
	rule            report.Rule
	effects         []harness.Effect
	// extra is what the scenario pools over its valid trials (retention's
	// delay).
	extra any
}

// fail records a violation unless one was recorded already.
func (r *result) fail(rule report.Rule, kind, violation string) {
	if r.violation == "" {
		r.violation, r.kind, r.rule = violation, kind, rule
	}
}

// failf records a violation unless one was recorded already; its kind is
// the format, which names the rule without the trial's numbers and ids.
func (r *result) failf(rule report.Rule, format string, args ...any) {
	r.fail(rule, format, fmt.Sprintf(format, args...))
}

// replace records a violation in place of any recorded before: the count is
// the verdict that matters most.
func (r *result) replace(rule report.Rule, format string, args ...any) {
	r.violation, r.kind = "", ""
	r.failf(rule, format, args...)
}

// judgeCount judges the final count e of a trial's operation: more effects
// than wanted is a violation; fewer is one only when the tool acknowledged
// the write (ack: the attempt that answered 2xx, nil for none) — then it is
// "acknowledged, no effect" — or the oracle had already seen more (seen):
// with every outcome unknown, a missing effect may be a write that never
// happened, which is allowed. after says what came before the retry (" after
// a crash and restart"). It reports whether e broke the rule.
func (r *result) judgeCount(e harness.Effect, ack *harness.Attempt, seen int, after string) bool {
	switch {
	case e.Count > e.Want:
		r.replace(report.RuleExactlyOnce, "%s for marker %s, want exactly %d%s", nEffects(e.Count), e.Marker, e.Want, after)
	case e.Count == e.Want:
		return false
	case seen > e.Count:
		r.replace(report.RuleExactlyOnce, "%s for marker %s after the oracle had counted %d%s: a committed write disappeared", nEffects(e.Count), e.Marker, seen, after)
	case ack == nil:
		if r.invalid == "" {
			r.invalid = fmt.Sprintf("%s for marker %s and no attempt was acknowledged: whether the write happened is unknown", nEffects(e.Count), e.Marker)
		}
		return false
	default:
		r.ackedNoEffect(*ack, e, after)
	}
	return true
}

// ackedNoEffect records that a answered 2xx for a write the oracle does not
// count: "acknowledged, no effect", in every scenario the same words.
func (r *result) ackedNoEffect(a harness.Attempt, e harness.Effect, after string) {
	r.replace(report.RuleAckedNoEffect, "acknowledged, no effect: attempt %d answered %d%s, but the oracle counts %s for marker %s (want %d)",
		a.N, a.Status, after, nEffects(e.Count), e.Marker, e.Want)
}

// firstCall judges a, the delivered first call of op whose later steps
// need it to have succeeded once: a 2xx without an effect is
// "acknowledged, no effect"; anything else but one effect makes the trial
// invalid. It reports whether the trial goes on.
func (r *result) firstCall(a harness.Attempt, marker string) bool {
	switch {
	case a.Outcome == harness.OK && is2xx(a.Status) && a.After == 0:
		r.ackedNoEffect(a, harness.Effect{Marker: marker, Count: 0, Want: 1}, "")
	case a.Outcome != harness.OK || !is2xx(a.Status) || a.After != 1:
		r.invalid = fmt.Sprintf("attempt %d: the first call did not succeed once (%s %d, %s)", a.N, a.Outcome, a.Status, nEffects(a.After))
	default:
		return true
	}
	return false
}

// deliverFirst prepares seed's operation and delivers it without a fault:
// the first call of a plan that goes on from a completed operation. ok is
// false when the trial ends there: err is set, or res says why (the call
// did not take effect exactly once; see firstCall).
func (tr *trial) deliverFirst(res *result, seed uint64) (op harness.Operation, call *harness.Call, first harness.Attempt, ok bool, err error) {
	op, call, err = tr.prepare(seed)
	if err != nil {
		return op, call, first, false, err
	}
	first, err = tr.do(call, nil, 0)
	if err != nil {
		return op, call, first, false, err
	}
	return op, call, first, res.firstCall(first, op.Marker), nil
}

// acked returns a when it is a 2xx answer, nil otherwise.
func acked(a harness.Attempt) *harness.Attempt {
	if a.Outcome == harness.OK && is2xx(a.Status) {
		return &a
	}
	return nil
}

// seen is the highest count the oracle reported during the trial.
func (tr *trial) seen() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	n := 0
	for _, a := range tr.attempts {
		n = max(n, a.After)
	}
	return n
}

func (tr *trial) record(a harness.Attempt) harness.Attempt {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	a.N = len(tr.attempts) + 1
	tr.attempts = append(tr.attempts, a)
	if tr.log != nil {
		tr.log(a)
	}
	tr.drainOutboundLocked()
	return a
}

func (tr *trial) attemptLog() []harness.Attempt {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]harness.Attempt(nil), tr.attempts...)
}

func (tr *trial) sleep(d time.Duration) error {
	if d <= 0 {
		return tr.ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-tr.ctx.Done():
		return tr.ctx.Err()
	case <-t.C:
		return nil
	}
}

// do waits delay, then makes one attempt of call with fault armed (nil for
// none), counting the marker's effects around it. The caller waits the
// tool's timeout for an answer.
func (tr *trial) do(call *harness.Call, fault faults.Fault, delay time.Duration) (harness.Attempt, error) {
	return tr.doUntil(call, fault, delay, harness.GiveUp{})
}

// doLost is do for an attempt whose response will never come (a black
// hole). The caller of an operation the tool has not committed yet gives
// up afterCommit after the oracle shows the commit (it stays while the
// tool works), or at the tool's timeout; once the operation committed (a
// retry, which a correct tool answers from its record), it gives up
// afterCommit after sending. afterCommit is 0 to wait the timeout.
func (tr *trial) doLost(call *harness.Call, fault faults.Fault, delay, afterCommit time.Duration) (harness.Attempt, error) {
	if afterCommit <= 0 {
		return tr.do(call, fault, delay)
	}
	if err := tr.sleep(delay); err != nil {
		return harness.Attempt{}, err
	}
	before, err := tr.count(call.Op.Marker)
	if err != nil {
		return harness.Attempt{}, err
	}
	if before > 0 {
		return tr.doUntil(call, fault, 0, harness.GiveUp{After: afterCommit})
	}
	ctx, stop := context.WithCancel(tr.ctx)
	defer stop()
	giveUp := make(chan struct{})
	go func() {
		w := &trial{ctx: ctx, s: tr.s}
		if n, err := w.waitCount(call.Op.Marker, before+1, tr.s.Tool().Timeout()); err != nil || n <= before {
			return // the caller waits out its timeout
		}
		if w.sleep(afterCommit) == nil {
			close(giveUp)
		}
	}()
	return tr.doUntil(call, fault, 0, harness.GiveUp{When: giveUp, Why: fmt.Sprintf("%s after the commit", afterCommit)})
}

// doUntil is do with the caller giving up as giveUp says.
func (tr *trial) doUntil(call *harness.Call, fault faults.Fault, delay time.Duration, giveUp harness.GiveUp) (harness.Attempt, error) {
	if err := tr.wait(delay); err != nil {
		return harness.Attempt{}, err
	}
	a, err := tr.s.Do(tr.ctx, call, fault, tr.origin, giveUp)
	a.Delay = delay
	if err == nil {
		err = tr.ctx.Err() // an attempt abandoned with the run judges nothing
	}
	if err != nil {
		return a, err
	}
	return tr.record(a), nil
}

// send makes one attempt without arming anything (the caller holds the
// proxy's faults) and without counting effects; written is called once the
// request is on the wire. The caller gives up wait after sending (0: at the
// tool's timeout).
// fault is the fault the caller armed (recorded, not armed here), label
// what the attempt's Fault says.
func (tr *trial) send(call *harness.Call, fault faults.Fault, label string, delay, wait time.Duration, written func(whole bool)) harness.Attempt {
	a := tr.s.SendWatched(tr.ctx, call, tr.origin, harness.GiveUp{After: wait}, written)
	harness.RecordFault(&a, fault)
	a.Delay, a.Fault = delay, label
	return tr.record(a)
}

// count asks the oracle.
func (tr *trial) count(marker string) (int, error) { return tr.s.Count(tr.ctx, marker) }

// effect counts marker and compares it with want.
func (tr *trial) effect(marker string, want int) (harness.Effect, error) {
	n, err := tr.count(marker)
	return harness.Effect{Marker: marker, Count: n, Want: want, CountURL: tr.s.CountURL(marker)}, err
}

// settleRetry repeats call while the tool answers its profile's in-flight
// status (409: a duplicate still in flight), as an agent would, up to twice
// the tool's timeout.
func (tr *trial) settleRetry(call *harness.Call, backoff time.Duration) (harness.Attempt, error) {
	inFlight := tr.contract().Codes.InFlight
	return tr.retryWhile(call, backoff, func(a harness.Attempt) bool { return a.Status == inFlight })
}

// deliver repeats call while the attempt failed in a way an agent retries
// (no response, in flight, 5xx), up to twice the tool's timeout plus a
// second.
func (tr *trial) deliver(call *harness.Call, backoff time.Duration) (harness.Attempt, error) {
	inFlight := tr.contract().Codes.InFlight
	return tr.retryWhile(call, backoff, func(a harness.Attempt) bool {
		return a.Outcome != harness.OK || a.Status == inFlight || a.Status/100 == 5
	})
}

// contract is the tool's idempotency contract.
func (tr *trial) contract() harness.Contract { return harness.ContractOf(tr.s.Tool()) }

func (tr *trial) retryWhile(call *harness.Call, backoff time.Duration, again func(harness.Attempt) bool) (harness.Attempt, error) {
	limit := time.Now().Add(2*tr.s.Tool().Timeout() + time.Second)
	wait := max(backoff, 5*time.Millisecond)
	delay := backoff
	for {
		a, err := tr.do(call, nil, delay)
		if err != nil || !again(a) || time.Now().After(limit) {
			return a, err
		}
		delay, wait = wait, min(wait*2, 250*time.Millisecond)
	}
}

func is2xx(status int) bool { return status/100 == 2 }

// prepare mints a fresh operation and renders its call.
func (tr *trial) prepare(seed uint64) (harness.Operation, *harness.Call, error) {
	op := tr.s.NewOp(seed)
	call, err := tr.s.Tool().Prepare(op)
	return op, call, err
}

// retries makes the faulted attempts of steps (all but the last), then the
// delivered last one, and judges the result: exactly one effect and a 2xx
// answer to the delivered retry. A faulted attempt that got a response, or
// for which fired returns a reason, makes the trial invalid.
func (tr *trial) retries(res *result, op harness.Operation, call *harness.Call, steps []step,
	fired func(i int, a harness.Attempt) (string, error)) (harness.Attempt, error) {
	n := len(steps) - 1
	for i, st := range steps[:n] {
		if err := tr.renew(st); err != nil {
			return harness.Attempt{}, err
		}
		a, err := tr.doLost(call, st.fault, st.delay, st.deadline)
		if err != nil {
			return a, err
		}
		if res.invalid != "" {
			continue
		}
		if a.Outcome == harness.OK {
			res.invalid = fmt.Sprintf("attempt %d: a response arrived despite %s", a.N, st.fault.Name())
		} else if res.invalid, err = fired(i, a); err != nil {
			return a, err
		}
	}
	if err := tr.renew(steps[n]); err != nil {
		return harness.Attempt{}, err
	}
	final, err := tr.do(call, nil, steps[n].delay)
	if err != nil {
		return final, err
	}
	return final, tr.judge(res, op, final, "")
}

// renew restarts the tool's server processes before st's attempt when st
// says so (a client's restart after a broken pipe).
func (tr *trial) renew(st step) error {
	if !st.renew {
		return nil
	}
	return tr.s.Renew(tr.ctx)
}

// judge ends a trial whose last attempt was delivered: op must have exactly
// one effect and the delivered attempt a 2xx answer. after says what came
// before the retry, for the messages (" after a crash and restart"). A
// violation already found stands.
func (tr *trial) judge(res *result, op harness.Operation, final harness.Attempt, after string) error {
	e, err := tr.effect(op.Marker, 1)
	if err != nil {
		return err
	}
	res.effects = []harness.Effect{e}
	switch {
	case res.judgeCount(e, acked(final), tr.seen(), after):
	case res.violation != "", res.invalid != "":
	case final.Outcome != harness.OK:
		res.invalid = fmt.Sprintf("attempt %d: the delivered retry%s got no response: %s", final.N, after, final.Error)
	case !is2xx(final.Status):
		res.failf(report.RuleStatus, "attempt %d: the delivered retry%s returned %d, want 2xx (the stored result if the tool had committed)", final.N, after, final.Status)
	}
	return nil
}

// waitCount polls the oracle until marker's count reaches want or d passes,
// and returns the last count.
func (tr *trial) waitCount(marker string, want int, d time.Duration) (int, error) {
	deadline := time.Now().Add(d)
	for {
		n, err := tr.count(marker)
		if err != nil || n >= want || time.Now().After(deadline) {
			return n, err
		}
		if err := tr.sleep(2 * time.Millisecond); err != nil {
			return n, err
		}
	}
}

// amend changes the recorded attempt number n.
func (tr *trial) amend(n int, f func(*harness.Attempt)) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	f(&tr.attempts[n-1])
}

// nEffects is n with its noun: "1 effect", "2 effects".
func nEffects(n int) string {
	if n == 1 {
		return "1 effect"
	}
	return fmt.Sprintf("%d effects", n)
}
