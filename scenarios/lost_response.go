package scenarios

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
)

// lostResponse: the tool commits, the response is lost 1–3 times, then a
// retry is delivered; then one more replay with the same key.
func lostResponse(t *rapid.T, cfg Config) func(*trial) (result, error) {
	seed := drawSeed(t, "payload")
	n := rapid.IntRange(1, 3).Draw(t, "lost")
	steps := make([]step, 0, n+1)
	for i := range n {
		mode := rapid.SampledFrom(faults.LoseModes()).Draw(t, fmt.Sprintf("lose%d", i))
		st := step{fault: faults.LoseResponse{Mode: mode}}
		if i > 0 {
			st.delay = drawDelay(t, i-1, cfg.MaxBackoff, fmt.Sprintf("delay%d", i))
		}
		steps = append(steps, st)
	}
	steps = append(steps, step{delay: drawDelay(t, n-1, cfg.MaxBackoff, "delay-delivered")})
	replayDelay := drawDelay(t, 0, cfg.MaxBackoff, "delay-replay")
	plan := fmt.Sprintf("%s, then a replay after %s", formatSteps(steps), replayDelay)

	return func(tr *trial) (result, error) {
		res := result{plan: plan}
		op := tr.s.NewOp(seed)
		call, err := tr.s.Tool().Prepare(op)
		if err != nil {
			return res, err
		}
		for i, st := range steps[:n] {
			a, err := tr.do(call, st.fault, st.delay)
			if err != nil {
				return res, err
			}
			if a.Outcome == harness.OK && res.invalid == "" {
				res.invalid = fmt.Sprintf("attempt %d: a response arrived despite %s", a.N, st.fault.Name())
			}
			if i == 0 && a.After < 1 && res.invalid == "" {
				res.invalid = fmt.Sprintf("attempt %d: the oracle saw no commit before the retry (count %d)", a.N, a.After)
			}
		}
		final, err := tr.do(call, nil, steps[n].delay)
		if err != nil {
			return res, err
		}
		e, err := tr.effect(op.Marker, 1)
		if err != nil {
			return res, err
		}
		res.effects = append(res.effects, e)
		switch {
		case e.Count != 1:
			res.violation = exactly(e)
			return res, nil
		case final.Outcome != harness.OK:
			res.invalid = fmt.Sprintf("attempt %d: the delivered retry got no response: %s", final.N, final.Error)
			return res, nil
		case !is2xx(final.Status):
			res.violation = fmt.Sprintf("attempt %d: the retry after a lost response returned %d, want the stored 2xx result", final.N, final.Status)
			return res, nil
		}
		replay, err := tr.do(call, nil, replayDelay)
		if err != nil {
			return res, err
		}
		if e, err = tr.effect(op.Marker, 1); err != nil {
			return res, err
		}
		res.effects[0] = e
		switch {
		case e.Count != 1:
			res.violation = fmt.Sprintf("the replay (attempt %d) added an effect: %s", replay.N, exactly(e))
		case replay.Status != final.Status:
			res.violation = fmt.Sprintf("the replay (attempt %d) returned %d, the retry %d: want the same status", replay.N, replay.Status, final.Status)
		case replay.ResultID != final.ResultID:
			res.violation = fmt.Sprintf("the replay (attempt %d) returned result_id %q, the retry %q: want the same result", replay.N, replay.ResultID, final.ResultID)
		}
		return res, nil
	}
}
