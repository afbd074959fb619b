package scenarios

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// How a long-running plan starts its operation.
const (
	lroDelivered  = "delivered"
	lroLost       = "lost"
	lroConcurrent = "concurrent"
)

// maxLostWait is the longest a caller waits for a black-holed trigger
// answer after the commit.
const maxLostWait = 100 * time.Millisecond

// maxPollGap is the longest wait a plan draws between two status polls.
const maxPollGap = 10 * time.Millisecond

// The polls that wait for an operation to finish back off from
// firstPollGap to lastPollGap.
const (
	firstPollGap = 2 * time.Millisecond
	lastPollGap  = 50 * time.Millisecond
)

// lroPlan is a drawn long-running plan.
type lroPlan struct {
	seed  uint64
	start string
	// lost is the trigger's lost first attempt (start lost); retry its
	// delivered retry's delay.
	lost  step
	retry time.Duration
	// n triggers released together (start concurrent), then a settle
	// retry after settle.
	n      int
	settle time.Duration
	// running and after are the gaps before the polls while the operation
	// runs and after it finished.
	running, after []time.Duration
	// again, when set, is the delay of a retry of the trigger after the
	// operation finished.
	again *time.Duration
}

func (p lroPlan) String() string {
	var parts []string
	switch p.start {
	case lroLost:
		parts = append(parts, fmt.Sprintf("the trigger: %s", formatSteps([]step{p.lost, {delay: p.retry}})))
	case lroConcurrent:
		parts = append(parts, fmt.Sprintf("%d identical triggers released together through a barrier, then a settle retry after %s", p.n, p.settle))
	default:
		parts = append(parts, "the trigger delivered")
	}
	parts = append(parts, polls(p.running, "while it runs"), "status polls until it finished", polls(p.after, "after it finished"))
	if p.again != nil {
		parts = append(parts, fmt.Sprintf("a retry of the trigger after %s, and a poll of the operation it names", *p.again))
	}
	return strings.Join(parts, "; ")
}

// polls spells the status polls whose waits are ds, when: "2 status
// polls while it runs (after 0s, 3ms)", "no status poll while it runs".
func polls(ds []time.Duration, when string) string {
	if len(ds) == 0 {
		return "no status poll " + when
	}
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.String()
	}
	return fmt.Sprintf("%s %s (after %s)", report.Plural(len(ds), "status poll"), when, strings.Join(s, ", "))
}

// drawGaps draws 0 to max waits before status polls.
func drawGaps(t *rapid.T, max int, label string) []time.Duration {
	n := rapid.IntRange(0, max).Draw(t, label)
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = time.Duration(rapid.IntRange(0, int(maxPollGap/time.Millisecond)).Draw(t, fmt.Sprintf("%s%d", label, i))) * time.Millisecond
	}
	return ds
}

// longRunning: a tool whose write (the trigger) starts an operation that a
// status call reports on. The trigger is delivered, or its response is
// lost and it is retried, or several identical triggers arrive together;
// status polls follow while the operation runs, until it finished and after,
// then maybe a retry of the trigger. Exactly one operation may start (the
// oracle counts them); every trigger answer names the same operation; a
// status poll never says an acknowledged operation does not exist, never
// goes from finished back to running or changes its finished state; and a
// retry after it finished returns the finished operation, not a new one.
func longRunning(t *rapid.T, cfg Config, tool harness.Tool) func(*trial) (result, error) {
	p := lroPlan{seed: drawSeed(t, "payload")}
	// The retry after the operation finished is left out in some plans;
	// a shrink keeps it (false), before it simplifies the start, so that
	// the smallest plan of a tool that restarts on retry is the plainest:
	// delivered, finished, retried.
	noAgain := rapid.Bool().Draw(t, "no-retry-after-finished")
	again := drawDelay(t, 0, cfg.MaxBackoff, "delay-retry-after-finished")
	if !noAgain {
		p.again = &again
	}
	// The start is drawn next, and every start's parameters whatever the
	// start, so that a shrink simplifies the start first (sparing the
	// slow candidates: a black hole waited out) and keeps the rest.
	p.start = rapid.SampledFrom([]string{lroDelivered, lroLost, lroConcurrent}).Draw(t, "start")
	mode := rapid.SampledFrom(faults.LoseModes()).Draw(t, "lose")
	// A caller whose response was black-holed gives up soon after the
	// commit: how long it waits is lost-response's business, and a long
	// wait would make every shrink of this plan slow.
	wait := min(tool.Timeout(), maxLostWait)
	deadline := drawDeadline(t, wait, "deadline")
	if deadline == 0 {
		deadline = wait
	}
	retry := drawDelay(t, 0, cfg.MaxBackoff, "delay-retry")
	n := rapid.IntRange(2, 4).Draw(t, "triggers")
	settle := drawDelay(t, 0, cfg.MaxBackoff, "delay-settle")
	switch p.start {
	case lroLost:
		p.lost = step{fault: faults.LoseResponse{Mode: mode}}
		if mode == faults.LoseBlackhole {
			p.lost.deadline = deadline
		}
		p.retry = retry
	case lroConcurrent:
		p.n, p.settle = n, settle
	}
	p.running = drawGaps(t, 3, "poll-running")
	p.after = drawGaps(t, 2, "poll-after")

	plan := p.String()

	return func(tr *trial) (result, error) {
		res := result{plan: plan}
		lr, _ := tr.s.Tool().(harness.LongRunning)
		op, call, err := tr.prepare(p.seed)
		if err != nil {
			return res, err
		}
		triggers, err := lroTrigger(tr, &res, p, op, call)
		if err != nil {
			return res, err
		}
		w := &lroWatch{tr: tr, res: &res, lr: lr, op: op}
		for _, a := range triggers {
			w.answer(a)
		}
		started := 0
		if res.violation == "" && res.invalid == "" {
			if started, err = tr.count(op.Marker); err != nil {
				return res, err
			}
		}
		switch {
		case res.violation != "", res.invalid != "", started > 1:
			// Judged already, not counting (its fault did not fire), or
			// a second operation started already: only the count is
			// judged.
		case w.ack == nil:
			res.invalid = "no trigger was acknowledged with 2xx: there is no operation to follow"
		default:
			if err := w.follow(p); err != nil {
				return res, err
			}
		}
		return res, lroCount(tr, &res, op, w)
	}
}

// lroTrigger starts the operation as p says and returns the attempts that
// triggered it.
func lroTrigger(tr *trial, res *result, p lroPlan, op harness.Operation, call *harness.Call) ([]harness.Attempt, error) {
	switch p.start {
	case lroLost:
		first, err := tr.retries(res, op, call, []step{p.lost, {delay: p.retry}}, func(_ int, a harness.Attempt) (string, error) {
			if a.After >= 1 {
				return "", nil
			}
			// The caller gave up before the tool committed: wait for the
			// commit before the retry goes out.
			n, err := tr.waitCount(op.Marker, 1, tr.s.Tool().Timeout()-(a.End-a.Start))
			if err != nil || n < 1 {
				return fmt.Sprintf("attempt %d: the oracle saw no commit before the retry (count %d)", a.N, n), err
			}
			tr.amend(a.N, func(x *harness.Attempt) { x.After = n })
			return "", nil
		})
		return []harness.Attempt{first}, err
	case lroConcurrent:
		return lroTogether(tr, res, p, call)
	}
	a, err := tr.do(call, nil, 0)
	return []harness.Attempt{a}, err
}

// lroTogether sends p.n identical triggers held on the proxy and released
// together, then a settle retry.
func lroTogether(tr *trial, res *result, p lroPlan, call *harness.Call) ([]harness.Attempt, error) {
	if err := tr.s.Ready(tr.ctx); err != nil {
		return nil, err
	}
	release, err := tr.s.Arm(tr.ctx, faults.Hold{})
	if err != nil {
		return nil, err
	}
	var wg, written sync.WaitGroup
	var mu sync.Mutex
	torn := false
	attempts := make([]harness.Attempt, p.n)
	for i := range p.n {
		wg.Add(1)
		written.Add(1)
		go func() {
			defer wg.Done()
			attempts[i] = tr.send(call, faults.Hold{}, "hold (barrier)", 0, 0, func(whole bool) {
				if !whole {
					mu.Lock()
					torn = true
					mu.Unlock()
				}
				written.Done()
			})
		}()
	}
	sent := waitTimeout(&written, tr.s.Tool().Timeout())
	releaseAt := time.Since(tr.origin)
	err = release(tr.ctx)
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("release hold: %w", err)
	}
	mu.Lock()
	if !sent || torn {
		res.invalid = "not every trigger was sent before the release"
	}
	mu.Unlock()
	for _, a := range attempts {
		if a.Outcome == harness.OK && a.End < releaseAt && res.invalid == "" {
			res.invalid = fmt.Sprintf("attempt %d got a response before the release: the hold did not fire", a.N)
		}
	}
	settle, err := tr.settleRetry(call, p.settle)
	return append(attempts, settle), err
}

// lroCount judges the number of operations started: exactly one. A count
// above says which answer named another operation, when one did.
func lroCount(tr *trial, res *result, op harness.Operation, w *lroWatch) error {
	e, err := tr.effect(op.Marker, 1)
	if err != nil {
		return err
	}
	res.effects = []harness.Effect{e}
	res.judgeCount(e, w.ack, tr.seen(), w.other)
	return nil
}

// lroWatch follows one operation through its trigger answers and status
// polls, judging each as it comes.
type lroWatch struct {
	tr  *trial
	res *result
	lr  harness.LongRunning
	op  harness.Operation
	// ack is the first trigger answered with 2xx, id the operation it
	// named.
	ack *harness.Attempt
	id  string
	// finished is the first poll that saw the operation finished (nil
	// before), and its reading.
	finished *harness.Attempt
	final    harness.OperationStatus
	// other says which answer named another operation (" (attempt 6
	// answered with operation ...)"), "" while none did.
	other string
}

// renamed records that attempt n answered with operation id, not w.id.
func (w *lroWatch) renamed(n int, id string) {
	if w.other == "" {
		w.other = fmt.Sprintf(" (attempt %d answered with operation %q, attempt %d with %q)", n, id, w.ack.N, w.id)
	}
}

// answer judges a trigger's attempt: a 2xx answer must name an operation,
// the same as every other.
func (w *lroWatch) answer(a harness.Attempt) {
	if a.Outcome != harness.OK || !is2xx(a.Status) {
		return
	}
	id := w.lr.OperationID(a)
	switch {
	case id == "":
		w.res.failf(report.RuleOperationID, "attempt %d: the trigger's 2xx answer names no operation (operation_id finds nothing): %s", a.N, report.Dash(a.Body))
	case w.ack == nil:
		w.ack, w.id = acked(a), id
	case id != w.id:
		w.renamed(a.N, id)
		w.res.failf(report.RuleOperationID, "attempt %d: the trigger answered with operation %q, attempt %d with %q: one key must name one operation", a.N, id, w.ack.N, w.id)
	}
}

// errLROCheck ends a trial's polls once a violation was found.
var errLROCheck = errors.New("violation found")

// poll polls id after delay and judges what it read.
func (w *lroWatch) poll(id string, delay time.Duration) (harness.OperationStatus, error) {
	if err := w.tr.sleep(delay); err != nil {
		return harness.OperationStatus{}, err
	}
	a, st, err := w.tr.s.Poll(w.tr.ctx, w.op, id, w.tr.origin)
	if err != nil {
		return st, err
	}
	a.Delay = delay
	a = w.tr.record(a)
	switch {
	case st.State == harness.StateNotFound:
		w.res.failf(report.RuleStatusPoll, "attempt %d: the status call answered %d for operation %q, which attempt %d acknowledged: the tool forgot it", a.N, a.Status, id, w.ack.N)
	case w.finished != nil && st.State == harness.StateRunning:
		w.res.failf(report.RuleStatusPoll, "attempt %d: the status call says operation %q is %s again after attempt %d saw it finished (%s)", a.N, id, st.Value, w.finished.N, w.final.Value)
	case w.finished != nil && st.State.Finished() && st.Value != w.final.Value:
		w.res.failf(report.RuleStatusPoll, "attempt %d: the status call says operation %q is %s, attempt %d said %s: a finished operation must stay as it finished", a.N, id, st.Value, w.finished.N, w.final.Value)
	case w.finished == nil && st.State.Finished():
		w.finished, w.final = &a, st
	}
	if w.res.violation != "" {
		return st, errLROCheck
	}
	return st, nil
}

// follow polls the operation as p says, and retries the trigger after it
// finished when p says so.
func (w *lroWatch) follow(p lroPlan) error {
	err := w.polls(p)
	if errors.Is(err, errLROCheck) {
		return nil
	}
	return err
}

func (w *lroWatch) polls(p lroPlan) error {
	for _, d := range p.running {
		if _, err := w.poll(w.id, d); err != nil {
			return err
		}
	}
	// Poll until it finished, backing off, up to the time it may take.
	limit := time.Now().Add(w.lr.FinishWithin())
	gap := time.Duration(0)
	for w.finished == nil {
		if time.Now().After(limit) {
			w.res.invalid = fmt.Sprintf("operation %q did not finish within %s", w.id, w.lr.FinishWithin())
			return nil
		}
		if _, err := w.poll(w.id, gap); err != nil {
			return err
		}
		gap = min(max(firstPollGap, 2*gap), lastPollGap)
	}
	for _, d := range p.after {
		if _, err := w.poll(w.id, d); err != nil {
			return err
		}
	}
	if p.again == nil {
		return nil
	}
	call, err := w.tr.s.Tool().Prepare(w.op)
	if err != nil {
		return err
	}
	retry, err := w.tr.do(call, nil, *p.again)
	if err != nil {
		return err
	}
	c := w.tr.contract()
	switch {
	case retry.Outcome != harness.OK:
		w.res.invalid = fmt.Sprintf("attempt %d: the retry after the operation finished got no response: %s", retry.N, retry.Error)
		return nil
	case !is2xx(retry.Status):
		w.res.failf(report.RuleStatus, "profile %s: attempt %d: a retry of the trigger after operation %q finished returned %d, want 2xx naming the finished operation", c.Profile, retry.N, w.id, retry.Status)
		return nil
	}
	id := w.lr.OperationID(retry)
	if id != w.id {
		w.renamed(retry.N, id)
		w.res.failf(report.RuleOperationID, "attempt %d: a retry of the trigger after operation %q finished (attempt %d) answered with operation %q: it must return the finished operation, not start a new one", retry.N, w.id, w.finished.N, id)
		return nil
	}
	_, err = w.poll(id, 0)
	return err
}
