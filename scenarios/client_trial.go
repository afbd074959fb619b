package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/capture"
)

// clientSettle is how long a trial waits after its last operation returned,
// so that attempts made in the background still arrive within it.
const clientSettle = 10 * time.Millisecond

// clientAbandonAfter is how long an operation has to return once onceproof
// cancelled its context, before it is abandoned.
const clientAbandonAfter = 2 * time.Second

// errTooManyAttempts and errTooLong are why onceproof cancels an operation.
var (
	errTooManyAttempts = errors.New("onceproof: too many attempts")
	errTooLong         = errors.New("onceproof: operation took too long")
)

// clientOpRun is what one operation of a trial did.
type clientOpRun struct {
	plan         clientOpPlan
	began, ended time.Time
	err          error
	// cancelled is why onceproof cancelled the operation (nil if it did
	// not); abandoned is set when it did not return even then.
	cancelled error
	abandoned bool
	// attempts are the write attempts attributed to the operation, in order
	// of arrival (indexes into clientRun.log).
	attempts []int
}

// clientRun is one executed trial.
type clientRun struct {
	plan   clientPlan
	origin time.Time
	ops    []clientOpRun
	log    []capture.Record
}

// trialState attributes attempts to operations while a trial runs. Each
// operation gets its own base URL, /onceproof/<trial>/<op>: an attempt on
// such a path belongs to that operation (or, with another trial's token, to
// no operation of this trial); an attempt on any other path (a wrapper
// that keeps only the host) belongs to the operation running when it
// arrived.
type trialState struct {
	plan        clientPlan
	maxAttempts int
	token       string // this trial's path token

	mu      sync.Mutex
	active  int // index of the running operation, -1 between operations
	last    int // index of the last operation that ran, -1 before the first
	counts  []int
	cancels []context.CancelCauseFunc
}

// answer is the capture endpoint's Answerer during the trial.
func (st *trialState) answer(c *capture.Record) capture.Answer {
	st.mu.Lock()
	defer st.mu.Unlock()
	i := st.active
	if token, op, ok := pathOp(c.Path); ok {
		if token != st.token || op < 0 || op >= len(st.plan.ops) || op > st.last {
			// A straggler of an earlier trial: no operation of this one.
			return capture.Answer{Kind: capture.KindStatus, Status: 503}
		}
		c.Late = op != st.active
		i = op
	} else if i < 0 {
		if st.last < 0 {
			// A straggler of an earlier trial: no operation of this one.
			return capture.Answer{Kind: capture.KindStatus, Status: 503}
		}
		i, c.Late = st.last, true
	}
	c.Op = i + 1
	k := st.counts[i]
	st.counts[i]++
	if st.counts[i] > st.maxAttempts && st.cancels[i] != nil {
		st.cancels[i](errTooManyAttempts)
	}
	return st.plan.ops[i].answer(k)
}

// run executes plan: its operations one after the other, each through s.op.
// An error is the harness's (or ctx's), never the wrapper's.
func (s *clientSession) run(ctx context.Context, plan clientPlan) (*clientRun, error) {
	s.trials++
	st := &trialState{plan: plan, maxAttempts: s.cfg.MaxAttempts, active: -1, last: -1, token: "t" + strconv.Itoa(s.trials),
		counts: make([]int, len(plan.ops)), cancels: make([]context.CancelCauseFunc, len(plan.ops))}
	s.capture.Take() // stragglers of earlier trials
	r := &clientRun{plan: plan, origin: time.Now(), ops: make([]clientOpRun, len(plan.ops))}
	s.capture.SetAnswerer(st.answer)
	defer s.capture.SetAnswerer(nil)
	for i := range plan.ops {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r.ops[i] = s.call(ctx, st, i)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	t := time.NewTimer(clientSettle)
	select {
	case <-ctx.Done():
		t.Stop()
		return nil, ctx.Err()
	case <-t.C:
	}
	s.capture.SetAnswerer(nil)
	r.log = s.capture.Take()
	for idx, c := range r.log {
		if c.Write && c.Op > 0 {
			r.ops[c.Op-1].attempts = append(r.ops[c.Op-1].attempts, idx)
		}
	}
	return r, nil
}

// call performs operation i of the trial.
func (s *clientSession) call(ctx context.Context, st *trialState, i int) clientOpRun {
	opCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(s.cfg.MaxOpTime+time.Second, func() { cancel(errTooLong) })
	defer timer.Stop()
	run := clientOpRun{plan: st.plan.ops[i]}

	st.mu.Lock()
	st.active, st.last, st.cancels[i] = i, i, cancel
	st.mu.Unlock()
	run.began = time.Now()
	done := make(chan error, 1)
	base := fmt.Sprintf("%s/onceproof/%s/%d", s.baseURL, st.token, i+1)
	go func() { done <- callSafely(opCtx, s.op, base, run.plan.n) }()
	select {
	case run.err = <-done:
	case <-opCtx.Done():
		if ctx.Err() == nil {
			run.cancelled = context.Cause(opCtx)
		}
		select {
		case run.err = <-done:
		case <-time.After(clientAbandonAfter):
			run.abandoned = true
			run.err = fmt.Errorf("did not return %s after its context was cancelled", clientAbandonAfter)
		}
	}
	run.ended = time.Now()
	st.mu.Lock()
	st.active, st.cancels[i] = -1, nil
	st.mu.Unlock()
	return run
}

// pathOp reads the trial token and operation index from a path under an
// operation's base URL.
func pathOp(path string) (token string, op int, ok bool) {
	rest, ok := strings.CutPrefix(path, "/onceproof/")
	if !ok {
		return "", 0, false
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 {
		return "", 0, false
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		return "", 0, false
	}
	return parts[0], n - 1, true
}

// callSafely calls op, turning a panic into an error.
func callSafely(ctx context.Context, op ClientOp, baseURL string, n int) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return op(ctx, baseURL, n)
}

// writes counts the trial's write attempts attributed to an operation.
func (r *clientRun) writes() int {
	n := 0
	for _, op := range r.ops {
		n += len(op.attempts)
	}
	return n
}

// firstOpError is the first error an operation returned ("" if none).
func (r *clientRun) firstOpError() string {
	for i, op := range r.ops {
		if op.err != nil {
			return fmt.Sprintf("op-%d: %v", i+1, op.err)
		}
	}
	return ""
}

// attempt is the operation's attempt number k (from 0).
func (r *clientRun) attempt(op, k int) *capture.Record { return &r.log[r.ops[op].attempts[k]] }

// attemptLog renders the trial's requests as attempts for the report:
//
//   - Op and Marker: the operation ("op-2"; Marker names the effect count
//     below); Fault: "lose-response" (committed, response lost),
//     "reset-before-commit", "retry-after=1s" (with a 503), else none;
//   - Delay: the gap since the operation's previous attempt was answered;
//     Start, End: when the request arrived and was answered;
//   - Outcome: ok when a response went out, unknown for a lost response
//     (committed), failed for a reset (not committed); Status the status
//     sent; ResultID the id of a committed write;
//   - Before, After: the operation's effects on a server that honours keys
//     (committed attempts with distinct keys; every committed attempt
//     without a key) around the attempt;
//   - Body: the request as received — method, path, connection, key, body.
func (r *clientRun) attemptLog() []harness.Attempt {
	out := make([]harness.Attempt, len(r.log))
	prev := map[int]time.Time{}
	keys := map[int]map[string]bool{}
	effects := map[int]int{}
	for i, c := range r.log {
		a := harness.Attempt{N: c.N, Start: c.Received.Sub(r.origin), End: c.Answered.Sub(r.origin),
			ResultID: c.ResultID, Before: -1, After: -1, Body: describeRequest(c)}
		if c.Op > 0 {
			a.Op = fmt.Sprintf("op-%d", c.Op)
			a.Marker = a.Op
		}
		switch {
		case !c.Write:
			a.Fault, a.Outcome, a.Status = "", harness.OK, 200
		case c.Answer.Kind == capture.KindLose:
			a.Fault, a.Outcome, a.Error = "lose-response", harness.Unknown, "committed, then the connection was closed without a response"
		case c.Answer.Kind == capture.KindReset:
			a.Fault, a.Outcome, a.Error = "reset-before-commit", harness.Failed, "connection reset before anything was committed"
		case c.Answer.Kind == capture.KindOK:
			a.Fault, a.Outcome, a.Status = "", harness.OK, 201
		default:
			a.Fault, a.Outcome, a.Status = "", harness.OK, c.Answer.Status
			if c.Answer.RetryAfter > 0 {
				a.Fault = fmt.Sprintf("retry-after=%ds", c.Answer.RetryAfter)
			}
		}
		if c.ReadError != "" {
			a.Error = "request body cut: " + c.ReadError
		}
		if c.Late {
			a.Error = strings.TrimPrefix(a.Error+"; arrived after its operation returned", "; ")
		}
		if c.Write && c.Op > 0 {
			if t, ok := prev[c.Op]; ok {
				a.Delay = max(c.Received.Sub(t), 0)
			}
			prev[c.Op] = c.Answered
			a.Before = effects[c.Op]
			if c.Committed() {
				if keys[c.Op] == nil {
					keys[c.Op] = map[string]bool{}
				}
				if !c.HasKey || c.Key == "" || !keys[c.Op][c.Key] {
					effects[c.Op]++
					keys[c.Op][c.Key] = true
				}
			}
			a.After = effects[c.Op]
		}
		out[i] = a
	}
	return out
}

// effects are the operations' effects on a server that honours keys: one
// per distinct key among its committed attempts (one per committed attempt
// without a key); exactly-once wants 1 for every operation that committed.
func (r *clientRun) effects() []harness.Effect {
	var out []harness.Effect
	for i := range r.ops {
		keys := map[string]bool{}
		n := 0
		for k := range r.ops[i].attempts {
			c := r.attempt(i, k)
			if !c.Committed() {
				continue
			}
			if !c.HasKey || c.Key == "" || !keys[c.Key] {
				n++
				keys[c.Key] = true
			}
		}
		if n > 0 {
			out = append(out, harness.Effect{Marker: fmt.Sprintf("op-%d", i+1), Count: n, Want: 1})
		}
	}
	return out
}

// describe is the i-th request of the log in one line (for -v).
func (r *clientRun) describe(i int) string { return describeRequest(r.log[i]) }

// describeRequest is a request as received, in one line.
func describeRequest(c capture.Record) string {
	key := "no key"
	if c.HasKey {
		key = "key " + quoteShort(c.Key, 64)
	}
	return fmt.Sprintf("%s %s conn=%s %s body=%s", c.Method, c.Path, c.Conn, key, quoteShort(string(c.Body), 160))
}

// quoteShort quotes s, cut to n bytes.
func quoteShort(s string, n int) string {
	if len(s) > n {
		return strconv.Quote(s[:n]) + "…"
	}
	return strconv.Quote(s)
}
