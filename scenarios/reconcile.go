package scenarios

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// reconcile: 1–3 ambiguous attempts, each either committed with its
// response lost or failed before the tool, and after each, before any
// retry, a lookup of the operation by its identity (the tool's lookup
// section), as a caller that reconciles does; then the delivered retry.
// A lookup must say "found" only for an operation the oracle counts once
// its answer arrived, and "not found" only for one the oracle had not
// counted before it was sent; "unknown" is always allowed, but a trial
// whose every lookup was unknown shows nothing and does not count. The
// retry must end with exactly one effect, and name the result a found
// lookup named.
func reconcile(t *rapid.T, cfg Config, tool harness.Tool) func(*trial) (result, error) {
	seed := drawSeed(t, "payload")
	n := rapid.IntRange(1, 3).Draw(t, "ambiguous")
	steps := make([]step, 0, n+1)
	asks := make([]time.Duration, n)
	for i := range n {
		st := step{}
		if rapid.Bool().Draw(t, fmt.Sprintf("committed%d", i)) {
			mode := rapid.SampledFrom(faults.LoseModes()).Draw(t, fmt.Sprintf("lose%d", i))
			st.fault = faults.LoseResponse{Mode: mode}
			if mode == faults.LoseBlackhole {
				st.deadline = drawDeadline(t, tool.Timeout(), fmt.Sprintf("deadline%d", i))
			}
		} else {
			mode := rapid.SampledFrom(faults.FailModes()).Draw(t, fmt.Sprintf("fail%d", i))
			st.fault = faults.FailBeforeServer{Mode: mode}
		}
		if i > 0 {
			st.delay = drawDelay(t, i-1, cfg.MaxBackoff, fmt.Sprintf("delay%d", i))
		}
		asks[i] = drawDelay(t, 0, cfg.MaxBackoff, fmt.Sprintf("lookup-delay%d", i))
		steps = append(steps, st)
	}
	steps = append(steps, step{delay: drawDelay(t, n-1, cfg.MaxBackoff, "delay-delivered")})
	plan := reconcilePlan(steps, asks)

	return func(tr *trial) (result, error) {
		res := result{plan: plan}
		op, call, err := tr.prepare(seed)
		if err != nil {
			return res, err
		}
		var found *harness.Attempt // the first lookup that said found
		answered := 0              // lookups that said found or not found
		for i, st := range steps[:n] {
			a, err := tr.doLost(call, st.fault, st.delay, st.deadline)
			if err != nil {
				return res, err
			}
			if err := tr.ambiguous(&res, op, a, st.fault); err != nil {
				return res, err
			}
			l, err := tr.lookup(op, asks[i])
			if err != nil {
				return res, err
			}
			switch l.Lookup {
			case harness.LookupFound:
				answered++
				if found == nil {
					found = &l
				}
				if l.After == 0 {
					res.failf(report.RuleLookupTruth, "the lookup said found for an operation the oracle never counted: a reconcile would stop and lose it (attempt %d, %s for marker %s after its answer)", l.N, report.Plural(l.After, "effect"), op.Marker)
				}
			case harness.LookupNotFound:
				answered++
				if l.Before >= 1 {
					res.failf(report.RuleLookupTruth, "the lookup said not found for a committed operation: a reconcile would retry and duplicate (attempt %d, the oracle had counted %s for marker %s before it was sent)", l.N, report.Plural(l.Before, "effect"), op.Marker)
				}
			}
		}
		final, err := tr.do(call, nil, steps[n].delay)
		if err != nil {
			return res, err
		}
		if err := tr.judge(&res, op, final, ""); err != nil {
			return res, err
		}
		switch {
		case res.violation != "":
		case found != nil && found.ResultID != "" && final.ResultID != "" && found.ResultID != final.ResultID:
			res.failf(report.RuleResult, "the lookup found result %s, but the retry's answer names %s (attempts %d and %d)", found.ResultID, final.ResultID, found.N, final.N)
		case answered == 0 && res.invalid == "":
			res.invalid = fmt.Sprintf("every lookup answered unknown (%s): whether it tells the truth was not measured", report.Plural(n, "lookup"))
		}
		return res, nil
	}
}

// ambiguous checks that a, an attempt with fault armed, left the caller
// not knowing: no response arrived, and the oracle shows what the fault
// implies — a commit for a lost response (waited for, up to the tool's
// timeout from the attempt's start, when the caller gave up first), no
// effect from a request that never reached the tool. Otherwise the trial
// does not count.
func (tr *trial) ambiguous(res *result, op harness.Operation, a harness.Attempt, fault faults.Fault) error {
	if res.invalid != "" {
		return nil
	}
	if a.Outcome == harness.OK {
		res.invalid = fmt.Sprintf("attempt %d: a response arrived despite %s", a.N, fault.Name())
		return nil
	}
	if _, lost := fault.(faults.LoseResponse); !lost {
		if a.After != a.Before {
			res.invalid = fmt.Sprintf("attempt %d: the oracle counted %d effects, %d before, although the request never reached the tool", a.N, a.After, a.Before)
		}
		return nil
	}
	if a.After >= 1 {
		return nil
	}
	n, err := tr.waitCount(op.Marker, 1, tr.s.Tool().Timeout()-(a.End-a.Start))
	if err != nil || n < 1 {
		res.invalid = fmt.Sprintf("attempt %d: the oracle saw no commit before the lookup (count %d)", a.N, n)
		return err
	}
	tr.amend(a.N, func(x *harness.Attempt) { x.After = n })
	return nil
}

// lookup waits delay, then asks the tool's lookup about op and records it.
func (tr *trial) lookup(op harness.Operation, delay time.Duration) (harness.Attempt, error) {
	if err := tr.wait(delay); err != nil {
		return harness.Attempt{}, err
	}
	a, err := tr.s.Lookup(tr.ctx, op, tr.origin)
	a.Delay = delay
	if err == nil {
		err = tr.ctx.Err()
	}
	if err != nil {
		return a, err
	}
	return tr.record(a), nil
}

// reconcilePlan describes a reconcile plan: each ambiguous attempt, the
// lookup after it, then the delivered retry.
func reconcilePlan(steps []step, asks []time.Duration) string {
	n := len(asks)
	parts := make([]string, 0, 2*n+1)
	for i, st := range steps[:n] {
		name := st.fault.Name()
		if st.deadline > 0 && i == 0 {
			name += fmt.Sprintf(" (the caller gives up %s after the commit)", st.deadline)
		} else if st.deadline > 0 {
			name += fmt.Sprintf(" (the caller gives up %s after sending)", st.deadline)
		} else if f, ok := st.fault.(faults.LoseResponse); ok && f.Mode == faults.LoseBlackhole {
			name += " (the caller waits out its timeout)"
		}
		if i > 0 {
			name += fmt.Sprintf(" after %s", st.delay)
		}
		parts = append(parts, name, fmt.Sprintf("a lookup after %s", asks[i]))
	}
	parts = append(parts, fmt.Sprintf("delivered after %s", steps[n].delay))
	return strings.Join(parts, ", then ")
}

// lookedUp: reconcile needs a write tool that declares a lookup.
func lookedUp(tool harness.Tool) error {
	if harness.LookupOf(tool) == nil {
		return errors.New("needs a tool with a lookup section (how a caller looks an operation up by its key)")
	}
	return writeTool(tool)
}
