package scenarios

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
)

// Client certification: onceproof plays the server and certifies the
// agent-side retry wrapper (the code that sends a write and retries it),
// because half of every duplicate is made on the agent side: a wrapper that
// mints a new key per attempt, sends none, or retries a 422 turns a correct
// server's exactly-once into twice.
//
// A capture endpoint ([harness.Capture]) behind the fault proxy records every
// attempt it receives — time, method, path, Idempotency-Key, body,
// connection — and answers each one as the trial's plan says. rapid draws
// the whole plan first: for every operation of the trial, the answers to its
// attempts in order (ok: 201 {"id"}; lose: committed, then the connection is
// closed without a response; reset: the connection is reset before anything
// is committed; 503 with or without Retry-After: 1; 429; 409; a final 400,
// 401, 403, 404 or 422) and what every further attempt gets (ok after
// success, the same 4xx after a 4xx, or the same failure forever). The
// operations run one after the other, so every attempt belongs to the
// operation running when it arrived (one that arrives between operations,
// to the one that last returned, as a late attempt).
//
// The checks, by stable id (see the constants for their exact rules):
// client-key-present, client-key-stable, client-no-retry-4xx,
// client-backoff, client-bounded, client-key-no-pii.

// The client check ids.
const (
	// ClientKeyPresent: every write attempt carries a non-empty
	// Idempotency-Key header. A trial counts when the wrapper made at least
	// one write attempt.
	ClientKeyPresent ID = "client-key-present"
	// ClientKeyStable: every attempt of one operation carries the key of its
	// first attempt (an absent header counts as the key ""), and no two
	// operations of a trial carry the same key — including two operations
	// with the same payload (the plan may perform payload n twice, as two
	// operations), so a key derived from the payload or from n fails. A
	// trial counts when at least one operation was retried.
	ClientKeyStable ID = "client-key-stable"
	// ClientNoRetry4xx: once an attempt of an operation is answered 400,
	// 401, 403, 404 or 422, that operation makes no further attempt, and
	// it reports an error, not success. A trial counts when a 4xx was
	// served.
	ClientNoRetry4xx ID = "client-no-retry-4xx"
	// ClientBackoff: retries of transient failures (lose, reset, 503, 429,
	// 409) wait growing, jittered delays and honour Retry-After. The gap of
	// a retry is the time from the moment the previous attempt of the same
	// operation was answered to the moment the retry arrived.
	//
	//   - Retry-After, in every trial: a retry after an answer with
	//     "Retry-After: s" comes no sooner than s seconds minus
	//     [RetryAfterTolerance].
	//   - Growth, pooled over the valid trials (full jitter makes any one
	//     trial's gaps too noisy to judge): let early be the gaps of first
	//     retries and late those of third and later retries (second and
	//     later when fewer than 4 third ones), and floor the shortest gap
	//     seen (the connection overhead). The delays grow when
	//     median(late) ≥ median(early) + 1ms and median(late) − floor ≥
	//     1.5 × (median(early) − floor).
	//   - Jitter, pooled likewise: for each retry number with at least 4
	//     gaps, whose median is at least 2ms, the interquartile range; the
	//     delays are jittered when at least one of these is at least
	//     max(1ms, median/4). Delays that agree to the millisecond across
	//     operations (plain exponential backoff) fail: clients that failed
	//     together would retry together.
	//
	// Gaps after an answer with Retry-After are judged only by the first
	// rule. Besides the drawn trials (a Retry-After in a few percent of
	// them: each costs a second), one fixed trial — one operation
	// answered "503, Retry-After: 1", then ok — runs first, so Retry-After
	// is always checked. A trial counts when an operation was retried after
	// a transient failure; growth and jitter need at least 4 early and 4
	// late gaps, else the verdict is unknown.
	ClientBackoff ID = "client-backoff"
	// ClientBounded: while the server keeps failing one operation (lose,
	// 503, reset, 429 or 409, forever), every operation makes at most
	// ClientConfig.MaxAttempts attempts and returns within
	// ClientConfig.MaxOpTime; an operation that got no 2xx reports an
	// error, not success; and no attempt of an operation arrives after it
	// returned (no retries in the background). The operation's context has
	// no deadline: onceproof cancels it only once a bound is broken (and
	// abandons an operation that still does not return 2s later). A trial
	// counts when the failing operation made an attempt.
	ClientBounded ID = "client-bounded"
	// ClientKeyNoPII: no key carries personal data: no e-mail address, and
	// none of the string values of the attempt's JSON (or form) body that
	// have at least 4 characters, compared case-insensitively, raw and
	// URL-decoded. A value made only of hex digits and dashes needs 12
	// characters to count, since a shorter one turns up in random hex keys
	// by chance. A trial counts when an attempt carried a key and its body a
	// value to compare.
	ClientKeyNoPII ID = "client-key-no-pii"
)

// RetryAfterTolerance is how much sooner than Retry-After a retry may come
// (timers and clocks are not exact).
const RetryAfterTolerance = 50 * time.Millisecond

// Client certification defaults.
const (
	DefaultClientOps         = 3
	DefaultClientMaxAttempts = 10
	DefaultClientMaxOpTime   = 30 * time.Second
)

// ClientChecks returns every client check id in the order they run.
func ClientChecks() []ID {
	return []ID{ClientKeyPresent, ClientKeyStable, ClientNoRetry4xx, ClientBackoff, ClientBounded, ClientKeyNoPII}
}

// ParseClientID returns the client check named s, or an error listing them.
func ParseClientID(s string) (ID, error) {
	for _, id := range ClientChecks() {
		if string(id) == s {
			return id, nil
		}
	}
	return "", fmt.Errorf("unknown client check %q (want one of %v)", s, ClientChecks())
}

// ClientOp performs ONE logical operation through the wrapper under test —
// a write such as POST baseURL+"/tickets" — and returns the wrapper's final
// verdict: nil when it reports success, its error otherwise. The operation
// decides its payload from n; the capture endpoint accepts any path.
//
// n selects the payload, not the operation's identity: a trial may perform
// the same n twice, as two distinct operations (an agent that really wants
// two identical tickets), so the wrapper must mint its key per call, never
// from n or from the payload.
type ClientOp func(ctx context.Context, baseURL string, n int) error

// ClientConfig tunes a client certification.
type ClientConfig struct {
	// Name names the wrapper in reports (default "client").
	Name string
	// Checks to run; nil means ClientChecks().
	Checks []ID
	// Ops is the number of operations per trial (default 3).
	Ops int
	// MaxAttempts bounds the attempts of one operation (client-bounded,
	// default 10).
	MaxAttempts int
	// MaxOpTime bounds the time one operation takes (client-bounded,
	// default 30s).
	MaxOpTime time.Duration
	// Backend provides the fault proxy in front of the capture endpoint;
	// nil means a fresh embedded Toxiproxy.
	Backend faults.Backend
	// Repro renders the command that replays a failing check from its seed.
	Repro func(id ID, seed uint64) string
	// Progress, when set, is called after every trial.
	Progress func(Progress)
	// Attempts, when set, receives one line per attempt received.
	Attempts io.Writer
}

func (c ClientConfig) withDefaults() (ClientConfig, error) {
	if c.Name == "" {
		c.Name = "client"
	}
	if c.Checks == nil {
		c.Checks = ClientChecks()
	}
	for _, id := range c.Checks {
		if _, err := ParseClientID(string(id)); err != nil {
			return c, err
		}
	}
	if c.Ops == 0 {
		c.Ops = DefaultClientOps
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultClientMaxAttempts
	}
	if c.MaxOpTime == 0 {
		c.MaxOpTime = DefaultClientMaxOpTime
	}
	switch {
	case c.Ops < 1:
		return c, fmt.Errorf("client certification: Ops %d: want at least 1", c.Ops)
	case c.MaxAttempts < 1:
		return c, fmt.Errorf("client certification: MaxAttempts %d: want at least 1", c.MaxAttempts)
	case c.MaxOpTime < 0:
		return c, fmt.Errorf("client certification: MaxOpTime %s: want a positive duration", c.MaxOpTime)
	}
	return c, nil
}

// clientSession is the capture endpoint behind its proxy, for a whole run.
// Trials hold mu: the operations of one trial, and trials, run one at a
// time.
type clientSession struct {
	op      ClientOp
	cfg     ClientConfig
	capture *harness.Capture
	proxy   faults.Proxy
	baseURL string

	mu sync.Mutex
}

// openClient starts the capture endpoint and its proxy (and the embedded
// Toxiproxy when cfg has no backend).
func openClient(ctx context.Context, op ClientOp, cfg ClientConfig) (*clientSession, func(), error) {
	if op == nil {
		return nil, nil, errors.New("client certification: nil ClientOp")
	}
	backend := cfg.Backend
	closeBackend := func() {}
	if backend == nil {
		e := faults.NewEmbedded()
		backend, closeBackend = e, func() { _ = e.Close(context.Background()) }
	}
	capture, err := harness.NewCapture()
	if err != nil {
		closeBackend()
		return nil, nil, err
	}
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	p, err := backend.NewProxy(ctx, "onceproof-client-"+hex.EncodeToString(nonce[:]), capture.Addr())
	if err != nil {
		_ = capture.Close()
		closeBackend()
		return nil, nil, fmt.Errorf("client certification: proxy: %w", err)
	}
	s := &clientSession{op: op, cfg: cfg, capture: capture, proxy: p, baseURL: "http://" + p.Addr()}
	return s, func() {
		_ = p.Close(context.Background())
		_ = capture.Close()
		closeBackend()
	}, nil
}

// CertifyClient certifies the wrapper that op drives, one subtest per check
// (cfg.Checks), each a rapid property: rapid's -rapid.checks and
// -rapid.seed flags apply. A check that could not be shown (the wrapper made
// no attempt, or the situation it needs never arose) fails the subtest as
// inconclusive, never passes.
func CertifyClient(t *testing.T, op ClientOp, cfgs ...ClientConfig) {
	t.Helper()
	var cfg ClientConfig
	if len(cfgs) > 0 {
		cfg = cfgs[0]
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatalf("onceproof: %v", err)
	}
	ctx := t.Context()
	s, closeAll, err := openClient(ctx, op, cfg)
	if err != nil {
		t.Fatalf("onceproof: %v", err)
	}
	t.Cleanup(closeAll)
	for _, id := range cfg.Checks {
		t.Run(string(id), func(t *testing.T) {
			rec := &clientRecorder{began: time.Now()}
			if !s.probe(ctx, id, rec) {
				rapid.Check(t, s.property(ctx, id, rec))
			}
			rep := rec.verdict(id)
			switch {
			case rep.Verdict == harness.Inconclusive:
				t.Errorf("onceproof: %s is inconclusive: %s", id, rep.Reason)
			case rep.Verdict == harness.Fail && !t.Failed():
				// A failure rapid did not see: the Retry-After probe, or
				// the pooled backoff rules.
				t.Errorf("onceproof: %s failed: %s\n%s", id, rep.Reason, rep.Counterexample)
			}
		})
	}
}

// RunClient certifies the wrapper that op drives outside go test (the CLI's
// certify-client). Like [Run], it uses rapid's settings as set on the flag
// package's command line. The report has one scenario per check; an error
// means the harness itself could not run (or ctx ended).
func RunClient(ctx context.Context, op ClientOp, cfg ClientConfig) (harness.ToolReport, error) {
	start := time.Now()
	cfg, err := cfg.withDefaults()
	rep := harness.ToolReport{Name: cfg.Name}
	if err != nil {
		rep.Error = err.Error()
		return rep, err
	}
	s, closeAll, err := openClient(ctx, op, cfg)
	if err != nil {
		rep.Error = err.Error()
		return rep, err
	}
	defer closeAll()
	seed := rapidSeed()
	for _, id := range cfg.Checks {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		rec := &clientRecorder{began: time.Now()}
		tb := &runTB{name: cfg.Name + "/" + string(id)}
		tb.run(func() {
			if !s.probe(ctx, id, rec) {
				rapid.Check(tb, s.property(ctx, id, rec))
			}
		})
		rec.duration = time.Since(rec.began)
		sr := rec.verdict(id)
		sr.Seed = seed
		if failing, ok := tb.failingSeed(); ok {
			sr.Seed = failing
		}
		if sr.Verdict == harness.Pass && tb.Failed() && rec.err() == nil {
			sr.Verdict, sr.Passed, sr.Reason = harness.Inconclusive, false, "rapid: "+tb.firstError()
		}
		if cfg.Repro != nil && sr.Verdict == harness.Fail {
			sr.Repro = cfg.Repro(id, sr.Seed)
		}
		rep.Scenarios = append(rep.Scenarios, sr)
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	rep.Duration = time.Since(start)
	rep.Finish()
	return rep, nil
}

// property is the rapid property of client check id.
func (s *clientSession) property(ctx context.Context, id ID, rec *clientRecorder) func(*rapid.T) {
	return func(t *rapid.T) {
		plan := drawClientPlan(t, id, s.cfg)
		if err := rec.err(); err != nil {
			t.Fatalf("harness error: %v", err)
		}
		run, err := s.run(ctx, plan)
		if err != nil {
			rec.setErr(err)
			t.Fatalf("harness error: %v", err)
		}
		j := judgeClient(id, run, s.cfg)
		ce := s.record(id, rec, run, j)
		if ce != nil {
			// rapid shrinks only towards the same kind of failure.
			t.Log("onceproof counterexample:\n" + ce.String())
			t.Fatal("onceproof violation: " + j.kind)
		}
	}
}

// probe runs client-backoff's fixed Retry-After trial (other checks have
// none) and reports whether it settled the verdict (a failure or a harness
// error), so that no drawn trial needs to run.
func (s *clientSession) probe(ctx context.Context, id ID, rec *clientRecorder) bool {
	if id != ClientBackoff {
		return false
	}
	run, err := s.run(ctx, retryAfterProbe())
	if err != nil {
		rec.setErr(err)
		return true
	}
	j := judgeClient(id, run, s.cfg)
	return s.record(id, rec, run, j) != nil
}

// record adds a judged trial to rec, logs its attempts and reports
// progress; it returns the counterexample of a violation.
func (s *clientSession) record(id ID, rec *clientRecorder, run *clientRun, j clientJudgement) *harness.Counterexample {
	log := run.attemptLog()
	if s.cfg.Attempts != nil {
		for i, a := range log {
			fmt.Fprintf(s.cfg.Attempts, "%s/%s %s %s\n", s.cfg.Name, id, a.Line(), run.describe(i))
		}
	}
	rec.mu.Lock()
	var ce *harness.Counterexample
	if !rec.failed {
		rec.checks++
		rec.attempts += run.writes()
		if rec.opErr == "" {
			rec.opErr = run.firstOpError()
		}
		if j.invalid == "" {
			rec.valid++
			rec.gaps = append(rec.gaps, j.gaps...)
			if j.violation == "" && len(j.gaps) > rec.evidenceGaps {
				rec.evidence = &harness.Counterexample{Plan: run.plan.String(), Attempts: log, Effects: run.effects()}
				rec.evidenceGaps = len(j.gaps)
			}
		} else if rec.invalid == "" {
			rec.invalid = j.invalid
		}
	}
	if j.violation != "" {
		ce = &harness.Counterexample{Plan: run.plan.String(), Violation: j.violation, Attempts: log, Effects: run.effects()}
		rec.failed, rec.failure = true, ce
	}
	p := Progress{Tool: s.cfg.Name, Scenario: id, Checks: rec.checks, Valid: rec.valid, Shrinking: rec.failed, Elapsed: time.Since(rec.began)}
	rec.mu.Unlock()
	if s.cfg.Progress != nil {
		s.cfg.Progress(p)
	}
	return ce
}

// clientRecorder collects what the trials of one client check measured.
// Counts stop at the first failure, so shrinking runs do not inflate them.
type clientRecorder struct {
	mu       sync.Mutex
	checks   int
	valid    int
	invalid  string // the first reason a trial did not count
	attempts int    // write attempts received over all trials
	opErr    string // the first error an operation returned
	failed   bool
	failure  *harness.Counterexample // the last (smallest) failing trial
	harness  error
	began    time.Time
	duration time.Duration
	// gaps are client-backoff's samples from the valid trials; evidence is
	// the valid trial with the most of them, shown when the pooled rules
	// fail.
	gaps         []clientGap
	evidence     *harness.Counterexample
	evidenceGaps int
}

func (r *clientRecorder) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.harness
}

func (r *clientRecorder) setErr(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.harness == nil {
		r.harness = err
	}
}

// verdict turns what r measured into check id's report. A check passes only
// if no trial failed, the wrapper made attempts, at least half of the trials
// (and at least one) had the situation the check needs, and, for
// client-backoff, the pooled growth and jitter rules hold.
func (r *clientRecorder) verdict(id ID) harness.ScenarioReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := harness.ScenarioReport{ID: string(id), Checks: r.checks, ValidTrials: r.valid, Duration: r.duration}
	switch {
	case r.harness != nil:
		rep.Verdict = harness.Inconclusive
		rep.Reason = fmt.Sprintf("harness error: %v", r.harness)
	case r.failed:
		rep.Verdict = harness.Fail
		rep.Reason = r.failure.Violation
		rep.Counterexample = r.failure
	case r.attempts == 0:
		rep.Verdict = harness.Inconclusive
		rep.Reason = fmt.Sprintf("the wrapper made no attempt in %d trials, so nothing was shown (does it send to the URL it is given?)", r.checks)
		if r.opErr != "" {
			rep.Reason += "; the first operation returned: " + r.opErr
		}
	case r.valid == 0 || r.valid*2 < r.checks:
		rep.Verdict = harness.Inconclusive
		rep.Reason = fmt.Sprintf("only %d of %d trials had the situation %s needs (first: %s); nothing was shown", r.valid, r.checks, id, r.invalid)
	default:
		rep.Verdict = harness.Pass
		if id == ClientBackoff {
			violation, unknown := pooledBackoff(r.gaps, r.valid)
			switch {
			case violation != "":
				rep.Verdict, rep.Reason = harness.Fail, violation
				ce := harness.Counterexample{Plan: "pooled over the valid trials"}
				if r.evidence != nil {
					ce = *r.evidence
					ce.Plan = "pooled over the valid trials; the one with the most retries: " + ce.Plan
				}
				ce.Violation = violation
				rep.Counterexample = &ce
			case unknown != "":
				rep.Verdict, rep.Reason = harness.Inconclusive, unknown
			}
		}
	}
	rep.Passed = rep.Verdict == harness.Pass
	return rep
}
