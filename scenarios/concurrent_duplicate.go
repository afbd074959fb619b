package scenarios

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// concurrentDuplicate: attempts with one key arrive at the tool together,
// either n of them released through a barrier (a hold on the proxy), or a
// timed-out original held until its retry is sent.
func concurrentDuplicate(t *rapid.T, cfg Config, tool harness.Tool) func(*trial) (result, error) {
	seed := drawSeed(t, "payload")
	overlap := rapid.Bool().Draw(t, "held-original")
	n := 2
	var retryDelay, deadline time.Duration
	var plan string
	if overlap {
		deadline = drawDeadline(t, tool.Timeout(), "deadline-original")
		retryDelay = drawDelay(t, 0, cfg.MaxBackoff, "delay-retry")
		gives := fmt.Sprintf("%s after sending", deadline)
		if deadline == 0 {
			gives = fmt.Sprintf("at its timeout (%s)", tool.Timeout())
		}
		plan = fmt.Sprintf("original held until its caller gives up %s, retry after %s, both released together", gives, retryDelay)
	} else {
		n = rapid.IntRange(2, 16).Draw(t, "duplicates")
		plan = fmt.Sprintf("%d identical attempts released together through a barrier", n)
	}
	settleDelay := drawDelay(t, 0, cfg.MaxBackoff, "delay-settle")
	plan += fmt.Sprintf(", then a settle retry after %s", settleDelay)

	return func(tr *trial) (result, error) {
		res := result{plan: plan}
		op, call, err := tr.prepare(seed)
		if err != nil {
			return res, err
		}
		if err := tr.s.Ready(tr.ctx); err != nil {
			return res, err
		}
		release, err := tr.s.Arm(tr.ctx, faults.Hold{})
		if err != nil {
			return res, err
		}
		released := false
		defer func() {
			if !released {
				_ = release(tr.ctx)
			}
		}()

		var (
			wg       sync.WaitGroup
			written  sync.WaitGroup
			torn     atomic.Bool
			attempts = make([]harness.Attempt, n)
		)
		launch := func(i int, label string, delay time.Duration) {
			written.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				attempts[i] = tr.send(call, faults.Hold{}, label, delay, 0, func(whole bool) {
					if !whole {
						torn.Store(true)
					}
					written.Done()
				})
			}()
		}
		if overlap {
			// The original meets its deadline while held: the caller gives up.
			sent := false
			attempts[0] = tr.send(call, faults.Hold{}, "hold (original)", 0, deadline, func(whole bool) { sent = whole })
			switch {
			case attempts[0].Outcome == harness.OK:
				res.invalid = fmt.Sprintf("attempt %d: the held original got a response before release", attempts[0].N)
			case !sent:
				res.invalid = fmt.Sprintf("attempt %d: the original was not sent whole before its caller gave up", attempts[0].N)
			}
			if err := tr.sleep(retryDelay); err != nil {
				return res, err
			}
			launch(1, "hold (retry)", retryDelay)
		} else {
			for i := range n {
				launch(i, "hold (barrier)", 0)
			}
		}
		if (!waitTimeout(&written, tr.s.Tool().Timeout()) || torn.Load()) && res.invalid == "" {
			res.invalid = "not every attempt was sent before the release"
		}
		releaseAt := time.Since(tr.origin)
		released = true
		if err := release(tr.ctx); err != nil {
			return res, fmt.Errorf("release hold: %w", err)
		}
		wg.Wait()

		codes := tr.contract()
		winner := ""
		var ack *harness.Attempt
		for _, a := range attempts {
			if a.Outcome == harness.OK && a.End < releaseAt && res.invalid == "" {
				res.invalid = fmt.Sprintf("attempt %d got a response before the release: the hold did not fire", a.N)
			}
			switch {
			case a.Outcome != harness.OK:
			case is2xx(a.Status):
				if ack == nil {
					ack = acked(a)
				}
				if winner == "" {
					winner = a.ResultID
				} else if a.ResultID != winner {
					res.failf(report.RuleResult, "attempt %d returned result_id %q, another 2xx %q: duplicates must share one result", a.N, a.ResultID, winner)
				}
			case a.Status == codes.Codes.InFlight:
			default:
				res.failf(report.RuleStatus, "profile %s: a duplicate in flight must get 2xx or %d (in flight); attempt %d got %d", codes.Profile, codes.Codes.InFlight, a.N, a.Status)
			}
		}

		settle, err := tr.settleRetry(call, settleDelay)
		if err != nil {
			return res, err
		}
		e, err := tr.effect(op.Marker, 1)
		if err != nil {
			return res, err
		}
		res.effects = []harness.Effect{e}
		if ack == nil {
			ack = acked(settle)
		}
		if res.judgeCount(e, ack, tr.seen(), "") {
			return res, nil
		}
		switch {
		case res.violation != "", res.invalid != "" && e.Count != e.Want:
		case settle.Outcome != harness.OK:
			res.invalid = fmt.Sprintf("attempt %d: the settle retry got no response: %s", settle.N, settle.Error)
		case !is2xx(settle.Status):
			res.failf(report.RuleStatus, "attempt %d: the settle retry returned %d, want 2xx with the winner's result", settle.N, settle.Status)
		case winner != "" && settle.ResultID != winner:
			res.failf(report.RuleResult, "attempt %d: the settle retry returned result_id %q, the winner %q", settle.N, settle.ResultID, winner)
		}
		return res, nil
	}
}

// waitTimeout waits for wg for at most d and reports whether it finished.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
