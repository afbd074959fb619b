package scenarios

import (
	"errors"
	"fmt"
	"math"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// DefaultMaxWait bounds the retention scenario's waits unless
// Config.MaxWait says otherwise.
const DefaultMaxWait = 30 * time.Second

// minRetentionDelay is the shortest wait the retention scenario draws.
const minRetentionDelay = 10 * time.Millisecond

// retentionSteps is the resolution of a drawn retention delay; the draws
// above retentionPivot cover the upper half of the window.
const (
	retentionSteps = 1000
	retentionPivot = 400
)

// drawRetentionDelay draws how long after the first answer the retry goes
// out, from one integer u in [0, retentionSteps] that the delay grows with,
// so that a failure shrinks toward the shortest wait that shows it: up to
// retentionPivot on a log scale from minRetentionDelay to half the window,
// above it linearly over the upper half. rapid draws small integers far
// more often than large ones, so about half the waits are under 30ms and a
// quarter fall in the upper half of the window (the bound itself now and
// then): a tool that forgets keys early is caught within a few trials,
// while the waits, which trials sit out side by side, cost about the window
// once.
func drawRetentionDelay(t *rapid.T, window time.Duration) time.Duration {
	return retentionDelay(rapid.IntRange(0, retentionSteps).Draw(t, "delay"), window)
}

// retentionDelay is the wait of the draw u in [0, retentionSteps].
func retentionDelay(u int, window time.Duration) time.Duration {
	lo := min(minRetentionDelay, window)
	half := window / 2
	if half <= lo {
		return window
	}
	var d time.Duration
	if u <= retentionPivot {
		f := float64(u) / retentionPivot
		d = time.Duration(float64(lo) * math.Pow(float64(half)/float64(lo), f))
	} else {
		d = half + time.Duration(float64(window-half)*float64(u-retentionPivot)/float64(retentionSteps-retentionPivot))
	}
	return min(d.Round(time.Millisecond), window)
}

// retention: after a first answer, a retry with the same key after a drawn
// delay up to min(retention, Config.MaxWait) must get the replay — no second
// effect, the first answer repeated as the profile says. The trial sleeps
// the delay (the point of the test) without holding a slot; the report
// gives the longest delay a passing trial checked.
func retention(t *rapid.T, cfg Config, tool harness.Tool) func(*trial) (result, error) {
	c := harness.ContractOf(tool)
	window := min(c.Retention, cfg.MaxWait)
	if window == c.Retention {
		// The retry goes out a little after its drawn delay: leave room
		// before the end of what the tool promised.
		window -= max(window/50, 5*time.Millisecond)
	}
	// The delay is the only draw: every shrink candidate costs its delay,
	// and the payload says nothing about how long a key is kept.
	delay := drawRetentionDelay(t, window)
	const seed = 1
	plan := fmt.Sprintf("a delivered call, then a retry with the same key %s after its answer (retention %s, checked up to %s)",
		delay, report.FormatDuration(c.Retention), report.FormatDuration(window))

	return func(tr *trial) (result, error) {
		res := result{plan: plan}
		op, call, first, ok, err := tr.deliverFirst(&res, seed)
		if !ok {
			return res, err
		}
		res.firstExecution(c, first)
		again, err := tr.do(call, nil, delay) // sleeps without holding a slot
		if err != nil {
			return res, err
		}
		// How long the key had to last: from the first answer to the retry.
		after := (again.Start - first.End).Round(time.Millisecond)
		if after > c.Retention {
			res.invalid = fmt.Sprintf("attempt %d went out %s after the first answer, past the declared retention %s (drawn: %s): the harness could not send it sooner",
				again.N, after, report.FormatDuration(c.Retention), delay)
			return res, nil
		}
		e, err := tr.effect(op.Marker, 1)
		if err != nil {
			return res, err
		}
		res.effects = []harness.Effect{e}
		promise := fmt.Sprintf("profile %s, retention %s", c.Profile, report.FormatDuration(c.Retention))
		switch {
		case e.Count > e.Want:
			res.replace(report.RuleRetention, "%s: a retry %s after the first answer ran again (%s for marker %s): the key was forgotten",
				promise, after, nEffects(e.Count), e.Marker)
		case res.judgeCount(e, acked(first), tr.seen(), ""):
		case again.Outcome != harness.OK:
			res.invalid = fmt.Sprintf("attempt %d: the retry got no response: %s", again.N, again.Error)
		default:
			if d, ok := c.ReplayDiff(first, again); ok {
				res.fail(report.RuleRetention, "a late retry differs in its "+d.Field,
					fmt.Sprintf("%s: a retry %s after the first answer (attempt %d) did not get the replay: %s", promise, after, again.N, d))
			}
			res.replayed(c, again, fmt.Sprintf("a retry %s after the first answer", after))
		}
		if res.invalid == "" && res.violation == "" {
			res.extra = after
		}
		return res, nil
	}
}

// retained: the retention scenario needs a write tool that declares how
// long it honours keys.
func retained(tool harness.Tool) error {
	if err := writeTool(tool); err != nil {
		return err
	}
	if harness.ContractOf(tool).Retention <= 0 {
		return errors.New("the tool declares no retention")
	}
	return nil
}
