package scenarios

import (
	"bytes"
	"fmt"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// distinctKeys: two operations whose requests are byte-identical except for
// the key (same marker) must make two effects.
func distinctKeys(t *rapid.T, cfg Config, _ harness.Tool) func(*trial) (result, error) {
	seed := drawSeed(t, "payload")
	delay := drawDelay(t, 0, cfg.MaxBackoff, "delay-second")
	plan := fmt.Sprintf("two operations with identical requests but distinct keys, the second after %s", delay)

	return func(tr *trial) (result, error) {
		res := result{plan: plan}
		op1 := tr.s.NewOp(seed)
		op2 := tr.s.NewOp(seed)
		op2.Marker = op1.Marker
		c1, err := tr.s.Tool().Prepare(op1)
		if err != nil {
			return res, err
		}
		c2, err := tr.s.Tool().Prepare(op2)
		if err != nil {
			return res, err
		}
		if !bytes.Equal(bytes.ReplaceAll(c1.Wire, []byte(op1.Key), nil), bytes.ReplaceAll(c2.Wire, []byte(op2.Key), nil)) {
			return res, fmt.Errorf("tool %s: requests for one payload differ beyond the key (does the template use .Op?)", tr.s.Tool().Name())
		}
		a1, err := tr.do(c1, nil, 0)
		if err != nil {
			return res, err
		}
		a2, err := tr.do(c2, nil, delay)
		if err != nil {
			return res, err
		}
		e, err := tr.effect(op1.Marker, 2)
		if err != nil {
			return res, err
		}
		res.effects = []harness.Effect{e}
		switch {
		case e.Count > 2:
			res.failf(report.RuleExactlyOnce, "two operations with distinct keys made %s, want 2", nEffects(e.Count))
		case a1.Outcome != harness.OK || a2.Outcome != harness.OK:
			res.invalid = "a call got no response"
		case !is2xx(a1.Status) || !is2xx(a2.Status):
			res.failf(report.RuleStatus, "statuses %d and %d, want 2xx for both", a1.Status, a2.Status)
		case e.Count == 0:
			res.ackedNoEffect(a2, e, "")
		case e.Count != 2:
			res.failf(report.RuleExactlyOnce, "two operations with distinct keys, both acknowledged, made %s, want 2: the tool merges on the payload, not the key", nEffects(e.Count))
		case a1.ResultID != "" && a1.ResultID == a2.ResultID:
			res.failf(report.RuleResult, "both operations returned result_id %q: distinct operations must get distinct results", a1.ResultID)
		}
		return res, nil
	}
}
