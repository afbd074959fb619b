package scenarios

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// keyMismatch: after a success, the same key with a different payload (other
// draws and a second marker) must be refused with the profile's code (422
// for ietf, 400 for stripe) and add no effect.
func keyMismatch(t *rapid.T, cfg Config, _ harness.Tool) func(*trial) (result, error) {
	seed := drawSeed(t, "payload")
	seed2 := drawSeed(t, "payload-reused")
	if seed2 == seed {
		seed2++
	}
	delay := drawDelay(t, 0, cfg.MaxBackoff, "delay-reuse")
	plan := fmt.Sprintf("a delivered call, then the same key with another payload after %s", delay)

	return func(tr *trial) (result, error) {
		res := result{plan: plan}
		op, _, first, ok, err := tr.deliverFirst(&res, seed)
		if !ok {
			return res, err
		}
		op2 := op.WithPayload(seed2, tr.s.NewMarker())
		call2, err := tr.s.Tool().Prepare(op2)
		if err != nil {
			return res, err
		}
		reused, err := tr.do(call2, nil, delay)
		if err != nil {
			return res, err
		}
		e1, err := tr.effect(op.Marker, 1)
		if err != nil {
			return res, err
		}
		e2, err := tr.effect(op2.Marker, 0)
		if err != nil {
			return res, err
		}
		res.effects = []harness.Effect{e1, e2}
		c := tr.contract()
		switch {
		case e2.Count != 0:
			res.failf(report.RuleExactlyOnce, "the reused key with a different payload made %s for its marker %s, want 0", nEffects(e2.Count), op2.Marker)
		case res.judgeCount(e1, acked(first), tr.seen(), ""):
		case reused.Outcome != harness.OK:
			res.invalid = fmt.Sprintf("attempt %d: no response to the reused key: %s", reused.N, reused.Error)
		case reused.Status != c.Codes.Mismatch:
			res.failf(report.RuleStatus, "profile %s: a reused key with another payload must be refused with %d (got %d, attempt %d)", c.Profile, c.Codes.Mismatch, reused.Status, reused.N)
		}
		return res, nil
	}
}
