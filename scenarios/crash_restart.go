package scenarios

import (
	"context"
	"errors"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// errCrashed is why the original attempt of a crash is abandoned.
var errCrashed = errors.New("the tool was killed: no answer can come")

// crashRestart: the tool commits, its response is swallowed, and its
// container is killed (SIGKILL) before the response is delivered; the
// container is restarted and the retry arrives. Whatever the tool kept only
// in memory is gone, so a tool whose dedupe records lived there duplicates.
func crashRestart(t *rapid.T, cfg Config, tool harness.Tool) func(*trial) (result, error) {
	seed := drawSeed(t, "payload")
	retryDelay := drawDelay(t, 0, cfg.MaxBackoff, "delay-retry")
	victim := drawVictim(t, tool)
	target := harness.CrashTarget(tool)
	container := "its " + target
	if victim > 0 {
		container = fmt.Sprintf("its replica %d", victim)
	}
	plan := fmt.Sprintf("the tool commits, its response is swallowed, %s is killed and restarted, then a retry after %s", container, retryDelay)

	return func(tr *trial) (result, error) {
		res := result{plan: plan}
		op, call, err := tr.prepare(seed)
		if err != nil {
			return res, err
		}
		crasher := tr.s.Tool().(harness.Crasher)
		swallow := faults.LoseResponse{Mode: faults.LoseBlackhole}
		disarm, err := tr.s.Arm(tr.ctx, swallow)
		if err != nil {
			return res, err
		}
		// The original waits for an answer that cannot come once the tool
		// is dead: it is abandoned right after the crash.
		octx, abandon := context.WithCancelCause(tr.ctx)
		defer abandon(nil)
		done := make(chan harness.Attempt, 1)
		go func() {
			a := tr.s.SendWatched(octx, call, tr.origin, harness.GiveUp{}, nil)
			harness.RecordFault(&a, swallow)
			a.Fault, a.Phase = swallow.Name()+" + crash", report.PhaseCrash
			done <- tr.record(a)
		}()

		// Kill the tool only once its effect is visible: the commit happened.
		n, err := tr.waitCount(op.Marker, 1, tr.s.Tool().Timeout())
		committed := err == nil && n >= 1
		crashAt := time.Since(tr.origin)
		if committed {
			err = crash(tr.ctx, crasher, victim)
		}
		abandon(errCrashed)
		original := <-done
		if derr := disarm(tr.ctx); err == nil {
			err = derr
		}
		if err == nil {
			err = tr.ctx.Err()
		}
		if err != nil {
			return res, err
		}
		if !committed {
			res.invalid = fmt.Sprintf("attempt %d: the oracle saw no commit within the caller's timeout, so the crash was not tried", original.N)
			return res, nil
		}
		if original.Outcome == harness.OK && original.End < crashAt {
			res.invalid = fmt.Sprintf("attempt %d: a response arrived before the crash", original.N)
		}

		restart := harness.Attempt{Op: op.ID, Marker: op.Marker, Fault: target + " killed (SIGKILL) and restarted", Phase: report.PhaseCrash, Start: time.Since(tr.origin), Before: 1, Replica: victim}
		if err := tr.restart(tr.ctx); err != nil {
			return res, err
		}
		restart.End = time.Since(tr.origin)
		survived, err := tr.count(op.Marker)
		if err != nil {
			return res, err
		}
		restart.After = survived
		tr.record(restart)
		if survived != 1 && res.invalid == "" {
			res.invalid = fmt.Sprintf("the committed effect did not survive the restart (oracle count %d): the tool is not durable, exactly-once cannot be shown", survived)
		}

		final, err := tr.deliver(call, retryDelay)
		if err != nil {
			return res, err
		}
		return res, tr.judge(&res, op, final, " after a crash and restart")
	}
}

// crash kills the tool: replica victim of a tool that runs as several.
func crash(ctx context.Context, c harness.Crasher, victim int) error {
	if rc, ok := c.(harness.ReplicaCrasher); ok && victim > 0 {
		return rc.CrashReplica(ctx, victim)
	}
	return c.Crash(ctx)
}
