package scenarios

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// annotations checks what an MCP tool claims about itself. Clients decide
// whether a retry is safe from these hints, and nothing else verifies them:
// a tool that claims idempotentHint must add no effect when called again
// with the same arguments; one that claims readOnlyHint must add no effect
// at all.
func annotations(t *rapid.T, cfg Config, tool harness.Tool) func(*trial) (result, error) {
	idempotent, readOnly, _ := tool.(harness.Hinted).Hints()
	seed := drawSeed(t, "payload")
	delay := drawDelay(t, 0, cfg.MaxBackoff, "delay-again")
	plan := "one call"
	if idempotent {
		plan = fmt.Sprintf("one call, then the same call again after %s", delay)
	}
	claims := "readOnlyHint: true"
	if idempotent {
		claims = "idempotentHint: true"
		if readOnly {
			claims = "readOnlyHint: true and idempotentHint: true"
		}
	}
	plan += " (the tool claims " + claims + ")"

	return func(tr *trial) (result, error) {
		res := result{plan: plan}
		op, call, err := tr.prepare(seed)
		if err != nil {
			return res, err
		}
		first, err := tr.do(call, nil, 0)
		if err != nil {
			return res, err
		}
		if first.Outcome != harness.OK || !is2xx(first.Status) {
			res.invalid = fmt.Sprintf("attempt %d: the call did not succeed (%s %d): the claim cannot be tested", first.N, first.Outcome, first.Status)
			return res, nil
		}
		if readOnly {
			e, err := tr.effect(op.Marker, 0)
			if err != nil {
				return res, err
			}
			res.effects = []harness.Effect{e}
			if e.Count != 0 {
				res.failf(report.RuleAnnotation, "the tool claims readOnlyHint: true, but one call made %s", nEffects(e.Count))
				return res, nil
			}
		}
		if !idempotent {
			return res, nil
		}
		again, err := tr.do(call, nil, delay)
		if err != nil {
			return res, err
		}
		if again.Outcome != harness.OK {
			res.invalid = fmt.Sprintf("attempt %d: the second call got no response", again.N)
			return res, nil
		}
		want := first.After
		e, err := tr.effect(op.Marker, want)
		if err != nil {
			return res, err
		}
		res.effects = []harness.Effect{e}
		if e.Count != want {
			res.failf(report.RuleAnnotation, "the tool claims idempotentHint: true, but calling it again with the same arguments took the effects from %d to %d", want, e.Count)
		}
		return res, nil
	}
}
