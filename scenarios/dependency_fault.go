package scenarios

import (
	"fmt"
	"sort"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
)

// dependencyFault: while an attempt is in flight, the tool's link to one of
// its dependencies (its database) is reset or cut, in either direction,
// somewhere in the middle of what the tool sends or hears. The tool must not
// answer 2xx for a write that did not commit, and retries must end with
// exactly one effect.
func dependencyFault(t *rapid.T, cfg Config, tool harness.Tool) func(*trial) (result, error) {
	var names []string
	if l, ok := tool.(harness.Linked); ok {
		for name := range l.Links() {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	seed := drawSeed(t, "payload")
	link := rapid.SampledFrom(names).Draw(t, "link")
	stream := rapid.SampledFrom([]faults.Direction{faults.Upstream, faults.Downstream}).Draw(t, "stream")
	var fault faults.Fault
	if rapid.Bool().Draw(t, "reset") {
		fault = faults.ResetConnection{Stream: stream, After: rapid.IntRange(0, 20).Draw(t, "after-ms")}
	} else {
		fault = faults.CutConnection{Stream: stream, Bytes: int64(rapid.IntRange(0, 1024).Draw(t, "bytes"))}
	}
	retryDelay := drawDelay(t, 0, cfg.MaxBackoff, "delay-retry")
	plan := fmt.Sprintf("%s on the tool's link to %s during the attempt, then retries after %s", fault.Name(), link, retryDelay)

	return func(tr *trial) (result, error) {
		res := result{plan: plan}
		op, call, err := tr.prepare(seed)
		if err != nil {
			return res, err
		}
		p := tr.s.Tool().(harness.Linked).Links()[link]
		disarm, err := fault.Arm(tr.ctx, p)
		if err != nil {
			return res, fmt.Errorf("arm %s on %s: %w", fault.Name(), link, err)
		}
		a := tr.send(call, fault, fault.Name()+" on "+link, 0, 0, nil)
		if err := disarm(tr.ctx); err != nil {
			return res, fmt.Errorf("disarm %s on %s: %w", fault.Name(), link, err)
		}
		after, err := tr.count(op.Marker)
		if err != nil {
			return res, err
		}
		tr.amend(a.N, func(x *harness.Attempt) { x.Before, x.After = 0, after })
		switch {
		case a.Outcome == harness.OK && is2xx(a.Status) && after == 0:
			a.After = after
			res.ackedNoEffect(a, harness.Effect{Marker: op.Marker, Count: after, Want: 1}, " during a fault on the link to "+link)
		case a.Outcome == harness.OK && is2xx(a.Status):
			res.invalid = fmt.Sprintf("attempt %d: the tool answered %d with its write committed: the fault did not disturb it", a.N, a.Status)
		}
		final, err := tr.deliver(call, retryDelay)
		if err != nil {
			return res, err
		}
		return res, tr.judge(&res, op, final, " after a fault on the link to "+link)
	}
}
