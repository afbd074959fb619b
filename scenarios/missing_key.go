package scenarios

import (
	"errors"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// missingKey: where the profile requires a key (ietf; custom with a
// missing_key code), a request without one must be refused with the
// profile's code and make no effect — a caller that forgot the key would
// otherwise get a write no retry can deduplicate.
func missingKey(t *rapid.T, cfg Config, _ harness.Tool) func(*trial) (result, error) {
	seed := drawSeed(t, "payload")
	again := drawDelay(t, 0, cfg.MaxBackoff, "delay-again")
	plan := fmt.Sprintf("a request without its idempotency key, then the same request again after %s", again)

	return func(tr *trial) (result, error) {
		res := result{plan: plan}
		op := tr.s.NewOp(seed)
		call, err := tr.s.Tool().(harness.Keyless).PrepareKeyless(op)
		if err != nil {
			return res, err
		}
		c := tr.contract()
		var answers []harness.Attempt
		for _, d := range []time.Duration{0, again} {
			a, err := tr.do(call, nil, d)
			if err != nil {
				return res, err
			}
			answers = append(answers, a)
		}
		e, err := tr.effect(op.Marker, 0)
		if err != nil {
			return res, err
		}
		res.effects = []harness.Effect{e}
		if e.Count > 0 {
			res.failf(report.RuleKeyRequired, "profile %s: a request without a key must be refused with %d and make no effect; it made %s for marker %s (attempt %d answered %d)",
				c.Profile, c.Codes.MissingKey, nEffects(e.Count), e.Marker, answers[0].N, answers[0].Status)
			return res, nil
		}
		for _, a := range answers {
			switch {
			case a.Outcome != harness.OK:
				res.invalid = fmt.Sprintf("attempt %d: no response to the request without a key: %s", a.N, a.Error)
			case a.Status != c.Codes.MissingKey:
				res.failf(report.RuleKeyRequired, "profile %s: a request without a key must be refused with %d (got %d, attempt %d)", c.Profile, c.Codes.MissingKey, a.Status, a.N)
			}
		}
		return res, nil
	}
}

// keyRequired: the missing-key scenario needs a tool that can leave its key
// out (an HTTP tool) under a profile that requires one.
func keyRequired(tool harness.Tool) error {
	if err := writeTool(tool); err != nil {
		return err
	}
	if _, ok := tool.(harness.Keyless); !ok {
		return errors.New("needs an HTTP tool (an MCP tool's key is a schema matter: see lint's key-optional rule)")
	}
	if c := harness.ContractOf(tool); !c.KeyRequired() {
		return fmt.Errorf("profile %s does not require a key", c.Profile)
	}
	return nil
}
