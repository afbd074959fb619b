package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// Chaos: many simulated agents perform many operations against one tool
// while faults rain on their attempts, then one check of the whole history
// (the way Jepsen checks a workload, rather than one trial at a time).
//
// Every agent runs its operations one after another through its own fault
// proxy, retrying each as a good wrapper does: one stable key per
// operation, backoff with full jitter, retries of transient failures only
// (no answer, 409, 429, 5xx), a bounded number of attempts. Before each
// attempt a fault is drawn with probability FaultRate: a lost response
// (cut, reset, or black-holed until the agent gives up), a request that
// never arrives (refused, reset, cut) or arrives torn. With probability
// DuplicateRate an operation is also performed, at the same time and with
// the same key, by a second agent (a runtime or model that re-issues the
// call). When the workload ends, every operation is judged by the oracle:
// one the tool confirmed (2xx) must have exactly one effect, one it refused
// (a final 4xx) none, one whose outcome stayed unknown at most one.

// ChaosConfig tunes a chaos workload.
type ChaosConfig struct {
	// Agents is how many simulated agents run at once (default 32).
	Agents int
	// Ops is how many operations they perform in all (default 1000).
	Ops int
	// Duration bounds the workload: no operation starts after it (0: no
	// bound but Ops).
	Duration time.Duration
	// FaultRate is the probability that an attempt meets a fault (default
	// 0.2; 0 is allowed with NoFaults).
	FaultRate float64
	// NoFaults runs the workload with FaultRate 0.
	NoFaults bool
	// DuplicateRate is the probability that an operation is performed by a
	// second agent at the same time (default 0.1).
	DuplicateRate float64
	// MaxAttempts bounds one agent's attempts of an operation (default 6).
	MaxAttempts int
	// MaxBackoff is the longest retry delay (default DefaultMaxBackoff).
	MaxBackoff time.Duration
	// Seed drives every draw (0: random).
	Seed uint64
	// Backend provides the fault proxies (nil: a fresh embedded
	// Toxiproxy).
	Backend faults.Backend
	// Progress, when set, is called about every 100ms.
	Progress func(ChaosProgress)
}

// ChaosProgress is where a running workload stands.
type ChaosProgress struct {
	Done, Ops, Attempts, Faults int
	Elapsed                     time.Duration
}

// Chaos workload defaults.
const (
	DefaultChaosAgents        = 32
	DefaultChaosOps           = 1000
	DefaultChaosFaultRate     = 0.2
	DefaultChaosDuplicateRate = 0.1
	DefaultChaosMaxAttempts   = 6
)

// ErrChaosConfig marks a chaos configuration that cannot run.
var ErrChaosConfig = errors.New("chaos configuration")

// CheckChaosConfig reports what is wrong with cfg (after its defaults), an
// error wrapping ErrChaosConfig, or nil.
func CheckChaosConfig(cfg ChaosConfig) error {
	_, err := cfg.withDefaults()
	return err
}

func (c ChaosConfig) withDefaults() (ChaosConfig, error) {
	if c.Agents == 0 {
		c.Agents = DefaultChaosAgents
	}
	if c.Ops == 0 {
		c.Ops = DefaultChaosOps
	}
	if c.FaultRate == 0 && !c.NoFaults {
		c.FaultRate = DefaultChaosFaultRate
	}
	if c.DuplicateRate == 0 {
		c.DuplicateRate = DefaultChaosDuplicateRate
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultChaosMaxAttempts
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.Seed == 0 {
		c.Seed = RandomSeed()
	}
	switch {
	case c.Agents < 1 || c.Agents > 1024:
		return c, fmt.Errorf("%w: agents %d: want 1 to 1024", ErrChaosConfig, c.Agents)
	case c.Ops < 1 || c.Ops > 10_000_000:
		return c, fmt.Errorf("%w: ops %d: want 1 to 10,000,000", ErrChaosConfig, c.Ops)
	case c.FaultRate < 0 || c.FaultRate > 1:
		return c, fmt.Errorf("%w: fault rate %g: want 0 to 1", ErrChaosConfig, c.FaultRate)
	case c.DuplicateRate < 0 || c.DuplicateRate > 1:
		return c, fmt.Errorf("%w: duplicate rate %g: want 0 to 1", ErrChaosConfig, c.DuplicateRate)
	case c.MaxAttempts < 1:
		return c, fmt.Errorf("%w: max attempts %d: want at least 1", ErrChaosConfig, c.MaxAttempts)
	case c.Duration < 0:
		return c, fmt.Errorf("%w: duration %s: want a positive duration", ErrChaosConfig, c.Duration)
	}
	return c, nil
}

// chaosOp is one operation of the workload and what became of it.
type chaosOp struct {
	n    int
	op   harness.Operation
	call *harness.Call

	mu        sync.Mutex
	attempts  []harness.Attempt
	outcomes  []report.ChaosOutcome // one per agent that performed it
	latencies []time.Duration
}

func (o *chaosOp) record(a harness.Attempt) {
	o.mu.Lock()
	defer o.mu.Unlock()
	a.N = len(o.attempts) + 1
	o.attempts = append(o.attempts, a)
}

// chaosRun is a running workload.
type chaosRun struct {
	cfg    ChaosConfig
	pool   *sessionPool
	origin time.Time
	until  time.Time

	next     atomic.Int64
	done     atomic.Int64
	attempts atomic.Int64
	faulted  atomic.Int64
	retries  atomic.Int64
	// retried counts attempts after the first of an operation (its own
	// retries and its duplicates) answered 2xx; hits those of them the
	// tool answered from its record (no new effect).
	answered, hits atomic.Int64

	mu  sync.Mutex
	ops []*chaosOp
}

// Chaos runs a chaos workload against tool and checks its history. An
// error means the harness could not run it (a failed preflight wraps
// harness.ErrPreflight); violations are in the report.
func Chaos(ctx context.Context, tool harness.Tool, cfg ChaosConfig) (report.ChaosReport, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return report.ChaosReport{}, err
	}
	rep := report.ChaosReport{Tool: tool.Name(), Agents: cfg.Agents, FaultRate: cfg.FaultRate, DuplicateRate: cfg.DuplicateRate, Seed: cfg.Seed}
	c, err := begin(ctx, tool, Config{Backend: cfg.Backend, Scenarios: []ID{}, Checks: 1, Seed: cfg.Seed, Parallel: cfg.Agents})
	if err != nil {
		return rep, err
	}
	defer c.close()
	r := &chaosRun{cfg: cfg, pool: c.sessions, origin: time.Now()}
	if cfg.Duration > 0 {
		r.until = r.origin.Add(cfg.Duration)
	}
	stopProgress := r.progress(ctx)
	var wg sync.WaitGroup
	for a := range cfg.Agents {
		wg.Go(func() { r.agent(ctx, a) })
	}
	wg.Wait()
	stopProgress()
	rep.Duration = time.Since(r.origin)
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	return r.check(ctx, rep, c.sessions.root)
}

// progress reports about every 100ms until the returned stop is called.
func (r *chaosRun) progress(ctx context.Context) (stop func()) {
	if r.cfg.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				r.cfg.Progress(ChaosProgress{Done: int(r.done.Load()), Ops: r.cfg.Ops, Attempts: int(r.attempts.Load()),
					Faults: int(r.faulted.Load()), Elapsed: time.Since(r.origin)})
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// agent performs operations until the workload is over.
func (r *chaosRun) agent(ctx context.Context, a int) {
	rng := rand.New(rand.NewPCG(r.cfg.Seed, uint64(a)+1))
	s, err := r.pool.get(ctx)
	if err != nil {
		return
	}
	defer r.pool.put(s)
	for ctx.Err() == nil {
		n := int(r.next.Add(1))
		if n > r.cfg.Ops || (!r.until.IsZero() && time.Now().After(r.until)) {
			return
		}
		op := s.NewOp(rng.Uint64())
		call, err := s.Tool().Prepare(op)
		if err != nil {
			return
		}
		o := &chaosOp{n: n, op: op, call: call}
		r.mu.Lock()
		r.ops = append(r.ops, o)
		r.mu.Unlock()
		var wg sync.WaitGroup
		if rng.Float64() < r.cfg.DuplicateRate {
			// A second agent performs the same operation at once.
			seed := rng.Uint64()
			wg.Go(func() {
				d := r.pool.tryGet(ctx) // never wait: every agent may be holding one
				if d == nil {
					return
				}
				defer r.pool.put(d)
				r.perform(ctx, d, o, rand.New(rand.NewPCG(seed, uint64(n))), "duplicate")
			})
		}
		r.perform(ctx, s, o, rng, "agent")
		wg.Wait()
		r.done.Add(1)
	}
}

// perform is one agent's retry loop for operation o.
func (r *chaosRun) perform(ctx context.Context, s *harness.Session, o *chaosOp, rng *rand.Rand, note string) {
	began := time.Now()
	outcome := report.ChaosUnknown
	seen := 0 // the oracle's count after this agent's last attempt
	for attempt := 1; attempt <= r.cfg.MaxAttempts && ctx.Err() == nil; attempt++ {
		if attempt > 1 {
			if !sleepCtx(ctx, fullJitter(rng, attempt-1, r.cfg.MaxBackoff)) {
				return
			}
			r.retries.Add(1)
		}
		fault, giveUp := r.drawFault(rng, o.call)
		before := seen
		a, err := s.Do(ctx, o.call, fault, r.origin, giveUp)
		if err != nil {
			return
		}
		a.Note = note
		r.attempts.Add(1)
		if fault != nil {
			r.faulted.Add(1)
		}
		o.record(a)
		seen = a.After
		if a.Outcome == harness.OK && a.Status/100 == 2 {
			if attempt > 1 || note == "duplicate" {
				r.answered.Add(1)
				if before >= 1 && a.After == a.Before {
					r.hits.Add(1)
				}
			}
			outcome = report.ChaosConfirmed
			break
		}
		if a.Outcome == harness.OK && a.Status/100 == 4 && a.Status != 409 && a.Status != 429 {
			outcome = report.ChaosRefused
			break
		}
	}
	o.mu.Lock()
	o.outcomes = append(o.outcomes, outcome)
	o.latencies = append(o.latencies, time.Since(began))
	o.mu.Unlock()
}

// drawFault draws the fault of one attempt (nil for none) and when its
// caller gives up.
func (r *chaosRun) drawFault(rng *rand.Rand, call *harness.Call) (faults.Fault, harness.GiveUp) {
	if rng.Float64() >= r.cfg.FaultRate {
		return nil, harness.GiveUp{}
	}
	switch rng.IntN(7) {
	case 0:
		return faults.LoseResponse{Mode: faults.LoseCut}, harness.GiveUp{}
	case 1:
		return faults.LoseResponse{Mode: faults.LoseReset}, harness.GiveUp{}
	case 2:
		// The agent gives up on an answer that never comes.
		return faults.LoseResponse{Mode: faults.LoseBlackhole}, harness.GiveUp{After: time.Duration(5+rng.IntN(45)) * time.Millisecond}
	case 3:
		return faults.FailBeforeServer{Mode: faults.FailRefuse}, harness.GiveUp{}
	case 4:
		return faults.FailBeforeServer{Mode: faults.FailReset}, harness.GiveUp{}
	case 5:
		return faults.FailBeforeServer{Mode: faults.FailCut}, harness.GiveUp{}
	}
	return faults.TornRequest{Bytes: tornCut(call, 1+rng.IntN(999))}, harness.GiveUp{}
}

// fullJitter is a good wrapper's wait before retry number retry: uniform up
// to an exponential ceiling capped at max.
func fullJitter(rng *rand.Rand, retry int, max time.Duration) time.Duration {
	ceiling := max >> 3 << min(retry-1, 3)
	if ceiling <= 0 || ceiling > max {
		ceiling = max
	}
	if ceiling <= 0 {
		return 0
	}
	return time.Duration(rng.Int64N(int64(ceiling) + 1))
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// check judges every operation of the history with the oracle and fills in
// the report's figures.
func (r *chaosRun) check(ctx context.Context, rep report.ChaosReport, s *harness.Session) (report.ChaosReport, error) {
	r.mu.Lock()
	ops := slices.Clone(r.ops)
	r.mu.Unlock()
	sort.Slice(ops, func(i, j int) bool { return ops[i].n < ops[j].n })
	var latencies, attemptLat []time.Duration
	for _, o := range ops {
		n, err := s.Count(ctx, o.op.Marker)
		if err != nil {
			return rep, err
		}
		outcome := finalOutcome(o.outcomes)
		rep.Ops++
		switch outcome {
		case report.ChaosConfirmed:
			rep.Confirmed++
		case report.ChaosRefused:
			rep.Refused++
		default:
			rep.Unknown++
		}
		latencies = append(latencies, o.latencies...)
		for _, a := range o.attempts {
			attemptLat = append(attemptLat, a.End-a.Start)
		}
		if v := chaosViolation(outcome, o.outcomes, n); v != "" {
			rep.Violations = append(rep.Violations, report.ChaosViolation{Op: o.op.ID, Marker: o.op.Marker,
				Outcome: outcome, Effects: n, Violation: v, Attempts: o.attempts})
		}
	}
	rep.Attempts = int(r.attempts.Load())
	rep.Faults = int(r.faulted.Load())
	if d := rep.Duration.Seconds(); d > 0 {
		rep.OpsPerSecond = float64(rep.Ops) / d
	}
	if rep.Ops > 0 {
		rep.RetryRate = float64(r.retries.Load()) / float64(rep.Attempts)
	}
	if a := r.answered.Load(); a > 0 {
		rep.DedupeHitRate = float64(r.hits.Load()) / float64(a)
	}
	rep.Latency = percentiles(latencies)
	rep.AttemptLatency = percentiles(attemptLat)
	return rep, nil
}

// finalOutcome is an operation's outcome over the agents that performed
// it: confirmed if any was answered 2xx, refused if one was refused and
// none confirmed, unknown otherwise.
func finalOutcome(outs []report.ChaosOutcome) report.ChaosOutcome {
	switch {
	case slices.Contains(outs, report.ChaosConfirmed):
		return report.ChaosConfirmed
	case slices.Contains(outs, report.ChaosRefused):
		return report.ChaosRefused
	}
	return report.ChaosUnknown
}

// chaosViolation judges one operation: confirmed → exactly one effect,
// refused → none, unknown → at most one.
func chaosViolation(outcome report.ChaosOutcome, outs []report.ChaosOutcome, effects int) string {
	switch {
	case outcome == report.ChaosConfirmed && effects == 0:
		return "confirmed (2xx) but no effect: an acknowledged write was lost"
	case outcome == report.ChaosConfirmed && effects > 1:
		return fmt.Sprintf("confirmed with %s, want exactly 1", nEffects(effects))
	case outcome == report.ChaosRefused && effects > 0:
		if slices.Contains(outs, report.ChaosUnknown) {
			return ""
		}
		return fmt.Sprintf("refused (4xx) but %s, want none", nEffects(effects))
	case outcome == report.ChaosUnknown && effects > 1:
		return fmt.Sprintf("outcome unknown with %s, want at most 1", nEffects(effects))
	}
	return ""
}

// percentiles of ds: p50, p90, p99 and the maximum.
func percentiles(ds []time.Duration) report.Percentiles {
	if len(ds) == 0 {
		return report.Percentiles{}
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return report.Percentiles{P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: ds[len(ds)-1]}
}
