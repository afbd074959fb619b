package scenarios

import (
	"fmt"
	"net/http"
	"strings"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/harness/capture"
)

// clientOpPlan is what the server answers one operation's attempts.
type clientOpPlan struct {
	// n is the payload number the operation is called with; repeats, when
	// not 0, is the earlier operation whose payload this one performs again.
	n, repeats int
	// script answers the first attempts in order; then answers every
	// attempt after them.
	script []capture.Answer
	then   capture.Answer
}

// answer is the answer to the operation's attempt number k (from 0).
func (p clientOpPlan) answer(k int) capture.Answer {
	if k < len(p.script) {
		return p.script[k]
	}
	return p.then
}

// forever reports whether the server never lets the operation succeed.
func (p clientOpPlan) forever() bool { return p.then.Kind != capture.KindOK }

func (p clientOpPlan) String() string {
	parts := make([]string, 0, len(p.script)+1)
	for _, a := range p.script {
		parts = append(parts, a.String())
	}
	switch {
	case !p.forever():
		parts = append(parts, p.then.String())
	case isFinal4xx(p.then):
		parts = append(parts, p.then.String()+" (final, and again to every retry)")
	default:
		parts = append(parts, p.then.String()+" forever")
	}
	return strings.Join(parts, ", then ")
}

// clientPlan is a whole trial: its operations, performed in order.
type clientPlan struct {
	ops []clientOpPlan
}

func (p clientPlan) String() string {
	parts := make([]string, len(p.ops))
	for i, op := range p.ops {
		label := fmt.Sprintf("op-%d", i+1)
		if op.repeats != 0 {
			label += fmt.Sprintf(" (op-%d's payload again, as a new operation)", op.repeats)
		}
		parts[i] = label + ": " + op.String()
	}
	return strings.Join(parts, "; ")
}

var (
	answerOK = capture.Answer{Kind: capture.KindOK}
	// transientAnswers are the failures a wrapper should retry, simplest
	// (for shrinking) first.
	// The lost response comes first: a shrunk counterexample then shows the
	// commit a retry would duplicate.
	transientAnswers = []capture.Answer{
		{Kind: capture.KindLose},
		{Kind: capture.KindStatus, Status: http.StatusServiceUnavailable},
		{Kind: capture.KindReset},
		{Kind: capture.KindStatus, Status: http.StatusTooManyRequests},
		{Kind: capture.KindStatus, Status: http.StatusConflict},
	}
	// finalAnswers are the 4xx a wrapper must not retry.
	finalAnswers = []capture.Answer{
		{Kind: capture.KindStatus, Status: http.StatusUnprocessableEntity},
		{Kind: capture.KindStatus, Status: http.StatusBadRequest},
		{Kind: capture.KindStatus, Status: http.StatusUnauthorized},
		{Kind: capture.KindStatus, Status: http.StatusForbidden},
		{Kind: capture.KindStatus, Status: http.StatusNotFound},
	}
	// retryAfter503 asks for a one-second wait: the shortest Retry-After
	// (whole seconds) there is.
	retryAfter503 = capture.Answer{Kind: capture.KindStatus, Status: http.StatusServiceUnavailable, RetryAfter: 1}
)

// isTransient reports whether a wrapper should retry after answer a.
func isTransient(a capture.Answer) bool {
	switch a.Kind {
	case capture.KindLose, capture.KindReset:
		return true
	case capture.KindStatus:
		return a.Status == http.StatusServiceUnavailable || a.Status == http.StatusTooManyRequests || a.Status == http.StatusConflict
	}
	return false
}

// isFinal4xx reports whether a is a 4xx that must not be retried.
func isFinal4xx(a capture.Answer) bool {
	if a.Kind != capture.KindStatus {
		return false
	}
	switch a.Status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// drawTransients draws k transient answers for operation op.
func drawTransients(t *rapid.T, op, k int) []capture.Answer {
	s := make([]capture.Answer, k)
	for j := range s {
		s[j] = rapid.SampledFrom(transientAnswers).Draw(t, fmt.Sprintf("op%d-answer%d", op, j+1))
	}
	return s
}

// drawClientPlan draws a whole trial for check id: cfg.Ops operations with
// payloads 1..Ops, each succeeding after a few transient failures, except
// what the check needs:
//
//   - key-present, key-no-pii: 0–2 (key-no-pii 0–1) transient failures per
//     operation.
//   - key-stable: 1–3 for the first operation, 0–3 for the others; and,
//     with two operations or more, maybe the last one performs the first
//     one's payload again (as a new operation).
//   - no-retry-4xx: one operation gets 0–2 transient failures, then a final
//     4xx, again to every retry; the others 0–1 transient failures.
//   - backoff: 3–5 transient failures per operation (so there are third
//     retries to compare with first ones); in a few percent of the trials
//     one of them is a 503 with Retry-After: 1.
//   - bounded: one operation gets the same failure forever (lose, 503,
//     reset, 429 or 409); the others 0–1 transient failures.
func drawClientPlan(t *rapid.T, id ID, cfg ClientConfig) clientPlan {
	ops := make([]clientOpPlan, cfg.Ops)
	for i := range ops {
		ops[i] = clientOpPlan{n: i + 1, then: answerOK}
	}
	simple := func(lo, hi int) {
		for i := range ops {
			ops[i].script = drawTransients(t, i+1, rapid.IntRange(lo, hi).Draw(t, fmt.Sprintf("op%d-failures", i+1)))
		}
	}
	switch id {
	case ClientKeyPresent:
		simple(0, 2)
	case ClientKeyNoPII:
		simple(0, 1)
	case ClientKeyStable:
		for i := range ops {
			lo := 0
			if i == 0 {
				lo = 1
			}
			ops[i].script = drawTransients(t, i+1, rapid.IntRange(lo, 3).Draw(t, fmt.Sprintf("op%d-failures", i+1)))
		}
		if len(ops) >= 2 && rapid.Bool().Draw(t, "repeat-payload") {
			last := &ops[len(ops)-1]
			last.n, last.repeats = ops[0].n, 1
		}
	case ClientNoRetry4xx:
		bad := rapid.IntRange(1, len(ops)).Draw(t, "4xx-op") - 1
		simple(0, 1)
		ops[bad].script = drawTransients(t, bad+1, rapid.IntRange(0, 2).Draw(t, "4xx-failures-before"))
		ops[bad].then = rapid.SampledFrom(finalAnswers).Draw(t, "4xx")
	case ClientBackoff:
		simple(3, 5)
		if rapid.IntRange(0, 19).Draw(t, "retry-after") == 19 {
			i := rapid.IntRange(1, len(ops)).Draw(t, "retry-after-op") - 1
			j := rapid.IntRange(1, len(ops[i].script)).Draw(t, "retry-after-attempt") - 1
			ops[i].script[j] = retryAfter503
		}
	case ClientBounded:
		bad := rapid.IntRange(1, len(ops)).Draw(t, "failing-op") - 1
		simple(0, 1)
		ops[bad].script = nil
		ops[bad].then = rapid.SampledFrom(transientAnswers).Draw(t, "failing-answer")
	default:
		panic(fmt.Sprintf("scenarios: unknown client check %q", id))
	}
	return clientPlan{ops: ops}
}

// retryAfterProbe is client-backoff's fixed trial: one operation answered
// 503 with Retry-After: 1, then ok.
func retryAfterProbe() clientPlan {
	return clientPlan{ops: []clientOpPlan{{n: 1, script: []capture.Answer{retryAfter503}, then: answerOK}}}
}
