package scenarios

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
)

// lostResponse: the tool commits, the response is lost 1–3 times, then a
// retry is delivered; then one more replay with the same key, which must
// repeat the retry's answer (and both carry the replayed header, if the
// contract names one).
func lostResponse(t *rapid.T, cfg Config, tool harness.Tool) func(*trial) (result, error) {
	seed := drawSeed(t, "payload")
	n := rapid.IntRange(1, 3).Draw(t, "lost")
	steps := make([]step, 0, n+1)
	for i := range n {
		mode := rapid.SampledFrom(faults.LoseModes()).Draw(t, fmt.Sprintf("lose%d", i))
		st := step{fault: faults.LoseResponse{Mode: mode}}
		if mode == faults.LoseBlackhole {
			st.deadline = drawDeadline(t, tool.Timeout(), fmt.Sprintf("deadline%d", i))
		}
		if i > 0 {
			st.delay = drawDelay(t, i-1, cfg.MaxBackoff, fmt.Sprintf("delay%d", i))
			st.renew = drawRenew(t, tool, fmt.Sprintf("restart%d", i))
		}
		steps = append(steps, st)
	}
	steps = append(steps, step{delay: drawDelay(t, n-1, cfg.MaxBackoff, "delay-delivered"), renew: drawRenew(t, tool, "restart-delivered")})
	replayDelay := drawDelay(t, 0, cfg.MaxBackoff, "delay-replay")
	plan := fmt.Sprintf("%s, then a replay after %s", formatSteps(steps), replayDelay)

	return func(tr *trial) (result, error) {
		res := result{plan: plan}
		op, call, err := tr.prepare(seed)
		if err != nil {
			return res, err
		}
		final, err := tr.retries(&res, op, call, steps, func(i int, a harness.Attempt) (string, error) {
			if i > 0 || a.After >= 1 {
				return "", nil
			}
			// The caller gave up before the tool committed: wait for the
			// commit (the oracle shows it), up to the tool's timeout from
			// the attempt's start, before the retry goes out.
			n, err := tr.waitCount(op.Marker, 1, tr.s.Tool().Timeout()-(a.End-a.Start))
			if err != nil || n < 1 {
				return fmt.Sprintf("attempt %d: the oracle saw no commit before the retry (count %d)", a.N, n), err
			}
			tr.amend(a.N, func(x *harness.Attempt) { x.After = n })
			return "", nil
		})
		if err != nil || res.violation != "" || final.Outcome != harness.OK {
			return res, err
		}
		replay, err := tr.do(call, nil, replayDelay)
		if err != nil {
			return res, err
		}
		e, err := tr.effect(op.Marker, 1)
		if err != nil {
			return res, err
		}
		res.effects[0] = e
		switch {
		case res.judgeCount(e, acked(final), tr.seen(), " after the replay"):
		case res.invalid != "":
			// The trial does not count (its fault did not fire as planned):
			// only its counts are judged.
		case replay.Outcome != harness.OK:
			res.invalid = fmt.Sprintf("attempt %d: the replay got no response: %s", replay.N, replay.Error)
		default:
			// Both answers are replays: the original committed before the
			// retry went out.
			c := tr.contract()
			res.replayed(c, final, "the retry of an operation that committed")
			res.repeats(c, final, replay)
			res.replayed(c, replay, "one more retry")
		}
		return res, nil
	}
}
