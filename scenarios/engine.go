package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// The search engine shared by every scenario and client check.
//
// A search runs the trials of one scenario: trial i draws its plan from seed
// seed+i (rapid's generators, so the plan is a pure function of the seed and
// the settings) and runs it. Trials of one search, of the scenarios of a
// tool and of several tools overlap, up to the run's [Slots]; they never
// share markers, keys or operations, and each runs on its own fault proxy.
//
// The first failing trial — by index, not by time — is the one reported, so
// the counterexample does not depend on how many trials overlapped: once
// trial i fails, no trial after i starts, those after i already running are
// abandoned, and those before i finish (a failure among them takes i's
// place). The failure is then shrunk alone, by rapid, starting from its
// seed; that seed is what the replay command carries (trial 0 of a run with
// --seed S draws exactly the plan of S).

// Slots bounds how many trials run at once in a whole run: every trial of
// every scenario of every tool holds one while it runs. Share one value
// between the tools of a run.
type Slots struct {
	c chan struct{}
}

// NewSlots returns room for n trials at once (at least 1).
func NewSlots(n int) *Slots {
	return &Slots{c: make(chan struct{}, max(n, 1))}
}

// N is how many trials may run at once.
func (s *Slots) N() int { return cap(s.c) }

func (s *Slots) acquire(ctx context.Context) error {
	select {
	case s.c <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Slots) release() { <-s.c }

// held is one trial's hold on a slot. A trial that sleeps as part of its
// plan (retention's wait) lets go of the slot meanwhile, so that the trials
// of every other scenario go on. It is used by the trial's goroutine only.
type held struct {
	slots *Slots
	in    bool
}

func (h *held) release() {
	if h.in {
		h.in = false
		h.slots.release()
	}
}

// heldKey carries a trial's *held in its context, from the search to the
// certification that runs the trial.
type heldKey struct{}

func withHeld(ctx context.Context, h *held) context.Context {
	return context.WithValue(ctx, heldKey{}, h)
}

// heldFrom returns the slot hold of the trial running under ctx (nil
// outside a search).
func heldFrom(ctx context.Context) *held {
	h, _ := ctx.Value(heldKey{}).(*held)
	return h
}

// DefaultParallel is how many trials run at once by default: trials spend
// nearly all their time waiting on the network, so several per CPU.
func DefaultParallel() int { return min(8*runtime.GOMAXPROCS(0), 64) }

// outcome is what one executed trial found.
type outcome struct {
	// invalid says why the trial does not count (its fault did not fire);
	// "" for a valid trial.
	invalid string
	// violation says how the property was broken ("" when it held); kind
	// names the rule it broke, the same text for every trial that breaks it
	// the same way (rapid shrinks only towards the same kind of failure).
	violation, kind string
	// ce is the evidence of a violation.
	ce *harness.Counterexample
	// err is a failure of the harness, tool or oracle: nothing was judged.
	err error
	// extra is what a check pools over its valid trials (client-backoff's
	// gaps), folded in index order after the search.
	extra any
}

// shrinkState says how far a reported failure was minimised.
type shrinkState int

const (
	shrinkDone        shrinkState = iota // rapid minimised it
	shrinkUnconfirmed                    // replaying its seed did not fail again: reported as found
	shrinkStopped                        // the shrink time ran out: the smallest found so far
	shrinkInterrupted                    // the run was interrupted while shrinking
	shrinkSkipped                        // the run was interrupted before shrinking
)

// note says what the shrink state means for a reader ("" when fully shrunk).
func (s shrinkState) note() string {
	switch s {
	case shrinkUnconfirmed:
		return "not shrunk: replaying its seed did not fail again (a timing-dependent failure)"
	case shrinkStopped:
		return "not fully shrunk: the shrink time ran out; this is the smallest case found"
	case shrinkInterrupted:
		return "not fully shrunk: interrupted while shrinking; this is the smallest case found"
	case shrinkSkipped:
		return "not shrunk: interrupted before shrinking"
	}
	return ""
}

// found is what a search measured.
type found struct {
	// checks is how many trials ran (up to and including the first
	// failure); valid how many of them had their fault fire; invalid the
	// first reason one did not.
	checks, valid int
	invalid       string
	// failure is the reported counterexample (nil when none); seed is the
	// seed of the failing trial (the run's first seed otherwise).
	failure *harness.Counterexample
	seed    uint64
	shrink  shrinkState
	// err is the first harness error (by trial index) when no trial failed
	// before it.
	err error
	// outcomes are the trials that count, in index order.
	outcomes []outcome
	duration time.Duration
	// interrupted is set when ctx ended before the search did.
	interrupted bool
}

// search is one scenario's search. P is the scenario's drawn plan.
type search[P any] struct {
	tool string
	id   ID
	// checks is the most trials to run (math.MaxInt with a budget alone);
	// seed the first trial's seed; until, when set, the time after which no
	// trial starts.
	checks int
	seed   uint64
	until  time.Time
	slots  *Slots
	// width, when set, bounds how many of this search's trials overlap (a
	// check that measures timing runs its trials one at a time, so that
	// they do not disturb each other's clocks).
	width int
	// shrinkTime bounds the minimisation of a failure.
	shrinkTime time.Duration
	progress   func(Progress)
	// plan draws a plan (deterministic, no I/O); run executes one, holding
	// a slot.
	plan func(t *rapid.T) P
	run  func(ctx context.Context, p P) outcome
}

// trialSeed is the seed of trial i of a search that starts at seed.
func trialSeed(seed uint64, i int) uint64 { return seed + uint64(i) }

// do runs the search: the trials, then the shrinking of the first failure.
func (s *search[P]) do(ctx context.Context) found {
	began := time.Now()
	f, failed, at := s.trials(ctx)
	f.seed = s.seed
	if failed != nil {
		f.seed = trialSeed(s.seed, at)
	}
	switch {
	case failed == nil:
	case failed.violation == "":
		f.err = failed.err
	case ctx.Err() != nil:
		f.failure, f.shrink = failed.ce, shrinkSkipped
	default:
		s.report(f, true)
		f.failure, f.shrink = s.minimise(ctx, f.seed, *failed)
	}
	f.interrupted = ctx.Err() != nil
	f.duration = time.Since(began)
	return f
}

// trials runs trials 0, 1, … until checks ran, the budget is spent, a trial
// fails, or ctx ends, overlapping as many as the slots allow. It returns
// what the trials that count found and the first failure (by index; a
// harness error counts), if any: when ctx ended before the trials before
// it did, the failure still stands.
func (s *search[P]) trials(ctx context.Context) (found, *outcome, int) {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		stop    = s.checks // no trial at or after stop starts
		done    = map[int]outcome{}
		cancels = map[int]context.CancelFunc{}
		lane    chan struct{} // bounds the search's own overlap (width)
	)
	if s.width > 0 {
		lane = make(chan struct{}, s.width)
	}
	for i := 0; ; i++ {
		mu.Lock()
		over := i >= stop
		mu.Unlock()
		if over || ctx.Err() != nil || (!s.until.IsZero() && time.Now().After(s.until)) {
			break
		}
		if lane != nil {
			select {
			case lane <- struct{}{}:
			case <-ctx.Done():
			}
		}
		if s.slots.acquire(ctx) != nil {
			break
		}
		mu.Lock()
		if i >= stop {
			mu.Unlock()
			s.slots.release()
			break
		}
		tctx, cancel := context.WithCancel(ctx)
		cancels[i] = cancel
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if lane != nil {
					<-lane
				}
			}()
			h := &held{slots: s.slots, in: true}
			defer h.release()
			o := s.run(withHeld(tctx, h), drawPlan(s.plan, trialSeed(s.seed, i)))
			mu.Lock()
			defer mu.Unlock()
			delete(cancels, i)
			cancel()
			if i > stop || ctx.Err() != nil {
				return // abandoned: a trial before it failed, or the run ended
			}
			done[i] = o
			if o.violation != "" || o.err != nil {
				stop = i
				for j, c := range cancels {
					if j > i {
						c()
					}
				}
			}
			if s.progress != nil {
				checks, valid, failed := tally(done, stop)
				s.progress(Progress{Tool: s.tool, Scenario: s.id, Checks: checks, Valid: valid, Shrinking: failed})
			}
		}()
	}
	wg.Wait()
	var f found
	var failed *outcome
	if o, ok := done[stop]; ok && (o.violation != "" || o.err != nil) {
		failed = &o
	}
	for i := 0; ; i++ {
		o, ok := done[i]
		if !ok || i > stop {
			break
		}
		f.outcomes = append(f.outcomes, o)
		f.checks++
		if o.err != nil && o.violation == "" {
			continue
		}
		if o.invalid == "" {
			f.valid++
		} else if f.invalid == "" {
			f.invalid = o.invalid
		}
	}
	if failed != nil && f.checks <= stop {
		// Interrupted before the trials before the failure finished: it
		// counts, after those that did.
		f.checks++
		if failed.invalid == "" {
			f.valid++
		}
	}
	return f, failed, stop
}

// tally counts the finished trials that count so far, for progress.
func tally(done map[int]outcome, stop int) (checks, valid int, failed bool) {
	for i, o := range done {
		if i > stop {
			continue
		}
		checks++
		if o.invalid == "" && o.err == nil {
			valid++
		}
		failed = failed || o.violation != ""
	}
	return checks, valid, failed
}

func (s *search[P]) report(f found, shrinking bool) {
	if s.progress != nil {
		s.progress(Progress{Tool: s.tool, Scenario: s.id, Checks: f.checks, Valid: f.valid, Shrinking: shrinking})
	}
}

// minimise shrinks the failure found at seed with rapid, replaying plans
// drawn from the same generator. It returns the smallest failing case seen
// and how far the shrinking got.
func (s *search[P]) minimise(ctx context.Context, seed uint64, first outcome) (*harness.Counterexample, shrinkState) {
	var (
		mu       sync.Mutex
		smallest = first.ce
		fails    int
	)
	deadline := time.Now().Add(s.shrinkTime)
	stopped := false
	state := shrinkWithRapid(seed, fmt.Sprintf("onceproof/%s/%s", s.tool, s.id), s.plan, func(t *rapid.T, p P, abort func()) {
		if ctx.Err() != nil {
			abort()
		}
		if time.Now().After(deadline) {
			mu.Lock()
			stopped = true
			mu.Unlock()
			abort()
		}
		// A timing-dependent failure (a race) may not show on one try:
		// a candidate passes only after shrinkTries clean runs.
		var o outcome
		for range shrinkTries {
			if err := s.slots.acquire(ctx); err != nil {
				abort()
			}
			h := &held{slots: s.slots, in: true}
			o = s.run(withHeld(ctx, h), p)
			h.release()
			if o.violation != "" || o.err != nil || ctx.Err() != nil {
				break
			}
		}
		if ctx.Err() != nil {
			abort()
		}
		if o.err != nil {
			t.Skip("harness error while shrinking: ", o.err)
		}
		if o.violation == "" {
			return
		}
		if o.kind == first.kind {
			mu.Lock()
			smallest, fails = o.ce, fails+1
			mu.Unlock()
		}
		t.Fatal(o.kind)
	})
	mu.Lock()
	defer mu.Unlock()
	switch {
	case ctx.Err() != nil:
		return smallest, shrinkInterrupted
	case stopped:
		return smallest, shrinkStopped
	case state == rapidPassed || fails == 0:
		return first.ce, shrinkUnconfirmed
	}
	return smallest, shrinkDone
}

// shrinkTries is how often a shrink candidate runs before it counts as
// passing.
const shrinkTries = 3

// verdict turns what a search found into a scenario report. A scenario
// passes only if no trial failed and at least half of its trials (and at
// least one) had their fault fire.
func (f found) verdict(id ID) report.ScenarioReport {
	rep := report.ScenarioReport{ID: string(id), Checks: f.checks, ValidTrials: f.valid, Seed: f.seed, Duration: f.duration}
	switch {
	case f.failure != nil:
		rep.Verdict = report.Fail
		rep.Reason = f.failure.Violation
		rep.Counterexample = f.failure
		rep.Counterexample.Shrink = f.shrink.note()
	case f.err != nil:
		rep.Verdict = report.Inconclusive
		rep.Reason = fmt.Sprintf("harness error: %v", f.err)
	case f.interrupted:
		rep.Verdict = report.Inconclusive
		rep.Reason = fmt.Sprintf("interrupted after %s", report.Plural(f.checks, "trial"))
	case f.valid == 0 || f.valid*2 < f.checks:
		rep.Verdict = report.Inconclusive
		if f.checks == 0 {
			rep.Reason = "no trial ran (the budget was spent before the first)"
		} else {
			rep.Reason = fmt.Sprintf("only %d of %s had their fault fire (first: %s); exactly-once was not shown", f.valid, report.Plural(f.checks, "trial"), f.invalid)
		}
	default:
		rep.Verdict = report.Pass
		rep.RuledOut = report.RuledOut(f.valid)
		if f.valid < f.checks {
			rep.Reason = fmt.Sprintf("%s did not count (first: %s)", report.Plural(f.checks-f.valid, "trial"), f.invalid)
		}
	}
	rep.Passed = rep.Verdict == report.Pass
	return rep
}

// errSearch marks a search that could not start.
var errSearch = errors.New("search")

// searchSettings resolves the checks, budget and seed of a run.
type searchSettings struct {
	checks     int
	seed       uint64
	until      time.Time
	shrinkTime time.Duration
	slots      *Slots
}

// unbounded is the check count of a search bounded by its budget alone.
const unbounded = math.MaxInt
