package scenarios

import (
	"fmt"

	"github.com/onceproof/onceproof/harness"
	"pgregory.net/rapid"
)

// keyMismatch: after a success, the same key with a different payload (other
// draws and a second marker) must be refused with a 4xx and add no effect.
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
		op, call, err := tr.prepare(seed)
		if err != nil {
			return res, err
		}
		first, err := tr.do(call, nil, 0)
		if err != nil {
			return res, err
		}
		if first.Outcome != harness.OK || !is2xx(first.Status) || first.After != 1 {
			res.invalid = fmt.Sprintf("attempt %d: the first call did not succeed once (status %d, %d effects)", first.N, first.Status, first.After)
			return res, nil
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
		switch {
		case e2.Count != 0:
			res.failf("the reused key with a different payload made %d effects for its marker %s, want 0", e2.Count, op2.Marker)
		case res.judgeCount(e1, true, tr.seen(), ""):
		case reused.Outcome != harness.OK:
			res.invalid = fmt.Sprintf("attempt %d: no response to the reused key: %s", reused.N, reused.Error)
		case reused.Status/100 != 4:
			res.failf("attempt %d: a reused key with a different payload returned %d, want a 4xx refusal (422)", reused.N, reused.Status)
		}
		return res, nil
	}
}
