package scenarios

import (
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// replay: a first answer, then 1–3 retries with the same key after drawn
// delays, each of which must repeat it as the contract's profile says (the
// status, the body apart from the volatile fields, the listed headers; the
// replayed header on every replay and on no first execution), with no
// further effect. When the tool declares a request it refuses (error_body),
// the first answer is that refusal in about half the plans: a profile that
// stores refusals must replay it — the same refusal again, and the same key
// with the corrected payload must not run (the stored refusal, or the
// profile's code for another payload) — instead of executing again.
func replay(t *rapid.T, cfg Config, tool harness.Tool) func(*trial) (result, error) {
	seed := drawSeed(t, "payload")
	refused := false
	if r, ok := tool.(harness.Refuser); ok && r.Refuses() {
		refused = rapid.Bool().Draw(t, "refused-first")
	}
	n := rapid.IntRange(1, 3).Draw(t, "replays")
	delays := make([]time.Duration, n)
	parts := make([]string, n)
	for i := range n {
		delays[i] = drawDelay(t, i, cfg.MaxBackoff, fmt.Sprintf("delay%d", i))
		parts[i] = delays[i].String()
	}
	var corrected time.Duration
	plan := fmt.Sprintf("a delivered call, then %s with the same key after %s", report.Plural(n, "replay"), strings.Join(parts, ", "))
	if refused {
		corrected = drawDelay(t, n, cfg.MaxBackoff, "delay-corrected")
		plan = fmt.Sprintf("a request the tool refuses (error_body), then the same request %s after %s, then the corrected payload with the same key after %s",
			report.Plural(n, "more time"), strings.Join(parts, ", "), corrected)
	}

	return func(tr *trial) (result, error) {
		res := result{plan: plan}
		if refused {
			return res, tr.replayRefusal(&res, seed, delays, corrected)
		}
		op, call, first, ok, err := tr.deliverFirst(&res, seed)
		if !ok {
			return res, err
		}
		c := tr.contract()
		res.firstExecution(c, first)
		for _, d := range delays {
			again, err := tr.do(call, nil, d)
			if err != nil {
				return res, err
			}
			if again.Outcome != harness.OK {
				res.invalid = fmt.Sprintf("attempt %d: a replay got no response: %s", again.N, again.Error)
				break
			}
			res.replayed(c, again, "a retry of a completed operation")
			res.repeats(c, first, again)
		}
		e, err := tr.effect(op.Marker, 1)
		if err != nil {
			return res, err
		}
		res.effects = []harness.Effect{e}
		res.judgeCount(e, acked(first), tr.seen(), "")
		return res, nil
	}
}

// replayRefusal runs the refusal branch of replay: the refused request, its
// retries, then the corrected payload under the same key.
func (tr *trial) replayRefusal(res *result, seed uint64, delays []time.Duration, corrected time.Duration) error {
	op := tr.s.NewOp(seed)
	call, err := tr.s.Tool().(harness.Refuser).PrepareRefused(op)
	if err != nil {
		return err
	}
	first, err := tr.do(call, nil, 0)
	if err != nil {
		return err
	}
	if first.Outcome != harness.OK {
		res.invalid = fmt.Sprintf("attempt %d: the refused request got no response: %s", first.N, first.Error)
		return nil
	}
	if first.Status < 400 {
		return fmt.Errorf("tool %s: the error_body request was answered %d, not refused: error_body must be a request the tool refuses (a payload it rejects)",
			tr.s.Tool().Name(), first.Status)
	}
	c := tr.contract()
	stored := c.Replays(first.Status)
	if first.After != 0 {
		res.failf(report.RuleExactlyOnce, "attempt %d: a refused request (%d) made %s for marker %s, want 0", first.N, first.Status, nEffects(first.After), op.Marker)
	}
	res.firstExecution(c, first)
	for _, d := range delays {
		again, err := tr.do(call, nil, d)
		if err != nil {
			return err
		}
		if again.Outcome != harness.OK {
			res.invalid = fmt.Sprintf("attempt %d: a retry of the refused request got no response: %s", again.N, again.Error)
			return nil
		}
		if stored {
			res.replayed(c, again, fmt.Sprintf("a retry of a request refused with %d, which profile %s stores", first.Status, c.Profile))
			res.repeats(c, first, again)
		}
	}
	op2 := op.WithPayload(seed, tr.s.NewMarker())
	call2, err := tr.s.Tool().Prepare(op2)
	if err != nil {
		return err
	}
	fixed, err := tr.do(call2, nil, corrected)
	if err != nil {
		return err
	}
	e1, err := tr.effect(op.Marker, 0)
	if err != nil {
		return err
	}
	want2 := 0
	if !stored && fixed.Outcome == harness.OK && is2xx(fixed.Status) {
		want2 = 1 // the refusal was not stored: the corrected request runs
	}
	e2, err := tr.effect(op2.Marker, want2)
	if err != nil {
		return err
	}
	res.effects = []harness.Effect{e1, e2}
	switch {
	case e1.Count != 0:
		res.replace(report.RuleExactlyOnce, "the refused request made %s for marker %s, want 0", nEffects(e1.Count), e1.Marker)
	case stored && e2.Count > 0:
		res.replace(report.RuleErrorReplay, "profile %s: the key's first answer was %d, which the profile says is stored and replayed, but the same key with the corrected payload ran again (attempt %d answered %d, %s for marker %s): the tool re-executes after a first error",
			c.Profile, first.Status, fixed.N, fixed.Status, nEffects(e2.Count), e2.Marker)
	case res.judgeCount(e2, acked(fixed), tr.seen(), " to the corrected payload"):
	case fixed.Outcome != harness.OK:
		if res.invalid == "" {
			res.invalid = fmt.Sprintf("attempt %d: the corrected payload got no response: %s", fixed.N, fixed.Error)
		}
	case stored && fixed.Status != first.Status && fixed.Status != c.Codes.Mismatch:
		res.failf(report.RuleErrorReplay, "profile %s: the key's first answer was %d, which the profile says is replayed: the same key with the corrected payload must get it again (or %d for another payload), got %d (attempt %d)",
			c.Profile, first.Status, c.Codes.Mismatch, fixed.Status, fixed.N)
	}
	return nil
}

// repeats records a violation when replay does not repeat first, the answer
// it replays, as the contract says.
func (r *result) repeats(c harness.Contract, first, replay harness.Attempt) {
	d, ok := c.ReplayDiff(first, replay)
	if !ok {
		return
	}
	how := "byte for byte"
	if c.Codes.Replay == harness.ReplayLatest {
		how = "as its latest state"
	}
	r.fail(report.RuleReplayFidelity, "a replay differs in its "+d.Field,
		fmt.Sprintf("profile %s: attempt %d replays attempt %d but does not repeat its answer %s: %s", c.Profile, replay.N, first.N, how, d))
}

// replayed records a violation when a, a replay (why says of what), lacks
// the contract's replayed header.
func (r *result) replayed(c harness.Contract, a harness.Attempt, why string) {
	if c.ReplayedHeader != "" && a.Outcome == harness.OK && !c.Replayed(a) {
		r.failf(report.RuleReplayedHeader, "attempt %d is a replay (%s) but lacks the replayed header %s", a.N, why, c.ReplayedHeader)
	}
}

// firstExecution records a violation when a, a first execution, carries the
// contract's replayed header.
func (r *result) firstExecution(c harness.Contract, a harness.Attempt) {
	if c.Replayed(a) {
		r.failf(report.RuleReplayedHeader, "attempt %d is a first execution but carries the replayed header %s: %s", a.N, c.ReplayedHeader, a.Headers[c.ReplayedHeader])
	}
}
