package scenarios

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
)

// tornMarker stands for a torn request in a drawn plan; its cut is fixed once
// the request's size is known.
const tornMarker = "torn-request"

// preServerError: 1–3 attempts that never or only partly reach the tool,
// then a delivered one.
func preServerError(t *rapid.T, cfg Config, tool harness.Tool) func(*trial) (result, error) {
	seed := drawSeed(t, "payload")
	n := rapid.IntRange(1, 3).Draw(t, "failures")
	var kinds []string
	for _, m := range faults.FailModes() {
		kinds = append(kinds, string(m))
	}
	kinds = append(kinds, tornMarker)
	steps := make([]step, 0, n+1)
	for i := range n {
		kind := rapid.SampledFrom(kinds).Draw(t, fmt.Sprintf("fault%d", i))
		st := step{}
		if i > 0 {
			st.delay = drawDelay(t, i-1, cfg.MaxBackoff, fmt.Sprintf("delay%d", i))
		}
		if kind == tornMarker {
			st.tornFrac = rapid.IntRange(1, 999).Draw(t, fmt.Sprintf("cut%d", i))
		} else {
			st.fault = faults.FailBeforeServer{Mode: faults.FailMode(kind)}
		}
		steps = append(steps, st)
	}
	steps = append(steps, step{delay: drawDelay(t, n-1, cfg.MaxBackoff, "delay-delivered"), renew: drawRenew(t, tool, "restart-delivered")})

	return func(tr *trial) (result, error) {
		op, call, err := tr.prepare(seed)
		if err != nil {
			return result{}, err
		}
		for i := range steps[:n] {
			if steps[i].fault == nil {
				steps[i].fault = faults.TornRequest{Bytes: tornCut(call, steps[i].tornFrac)}
			}
		}
		res := result{plan: formatSteps(steps)}
		_, err = tr.retries(&res, op, call, steps, func(_ int, a harness.Attempt) (string, error) {
			if a.After != 0 {
				return fmt.Sprintf("attempt %d: the oracle counted %s although the request never arrived whole", a.N, nEffects(a.After)), nil
			}
			return "", nil
		})
		return res, err
	}
}

// tornCut places a cut frac thousandths into the call's body, so the headers
// arrive and the body does not arrive whole (nor the framing after it). A
// call without a body of at least two bytes is cut inside its headers.
func tornCut(call *harness.Call, frac int) int64 {
	end := len(call.Wire)
	if call.BodyEnd > 0 {
		end = call.BodyEnd
	}
	body := end - call.BodyStart
	if body < 2 {
		return int64(max(1, call.BodyStart*frac/1000))
	}
	cut := call.BodyStart + max(1, min(body-1, body*frac/1000))
	return int64(cut)
}
