package scenarios

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/capture"
	"github.com/onceproof/onceproof/harness/report"
)

// Client certification: onceproof plays the server and certifies the
// agent-side retry wrapper (the code that sends a write and retries it),
// because half of every duplicate is made on the agent side: a wrapper that
// mints a new key per attempt, sends none, or retries a 422 turns a correct
// server's exactly-once into twice.
//
// A capture endpoint ([capture.Server]) behind the fault proxy records every
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
	//     median(late) ≥ median(early) + 1ms, median(late) ≥ 1.25 ×
	//     median(early) and median(late) − floor ≥ 1.5 × (median(early) −
	//     floor).
	//   - Jitter, pooled likewise: a retry number with at least 4 gaps,
	//     whose median m is at least 2ms, is spread when fewer than half
	//     of its gaps lie within max(1ms, m/8) of m (plain backoff clusters
	//     its waits around one value, and timing noise moves a few of
	//     them, not most); the delays are jittered when at least half of
	//     the retry numbers judged are spread. Delays that agree across
	//     operations (plain exponential backoff) fail: clients that failed
	//     together would retry together.
	//
	// client-backoff and client-bounded, which judge time, run after the
	// other checks, and at most four of their trials overlap.
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

// judgesTime reports whether check id judges the timing of retries.
func judgesTime(id ID) bool { return id == ClientBackoff || id == ClientBounded }

// timingWidth is how many trials of a check that judges time overlap: a
// burst of trials starting at once disturbs each other's clocks.
const timingWidth = 4

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
	// Trials is the number of trials per check; 0 means rapid's
	// -rapid.checks (default 100), or no limit when Budget is set. Seed,
	// Budget, Parallel, Slots and ShrinkTime are as in [Config].
	Trials     int
	Seed       uint64
	Budget     time.Duration
	Parallel   int
	Slots      *Slots
	ShrinkTime time.Duration
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

	// resolved by withDefaults
	checks     int
	seed       uint64
	slots      *Slots
	shrinkTime time.Duration
}

func (c ClientConfig) withDefaults() (ClientConfig, error) {
	search := Config{Checks: c.Trials, Seed: c.Seed, Budget: c.Budget, Parallel: c.Parallel, Slots: c.Slots, ShrinkTime: c.ShrinkTime}.withSearchDefaults()
	c.checks, c.seed, c.slots, c.shrinkTime = search.Checks, search.Seed, search.Slots, search.ShrinkTime
	if c.checks == 0 {
		c.checks = unbounded
	}
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

// clientSession is one capture endpoint behind its own proxy. A session
// runs one trial at a time (its capture attributes every attempt to the
// running trial); overlapping trials each take their own.
type clientSession struct {
	op      ClientOp
	cfg     ClientConfig
	capture *capture.Server
	proxy   faults.Proxy
	baseURL string
	trials  int // names the trials' paths
}

// clientCertification is a wrapper under certification: its sessions and
// settings.
type clientCertification struct {
	op      ClientOp
	cfg     ClientConfig
	backend faults.Backend
	nonce   string
	free    chan *clientSession

	mu       sync.Mutex
	all      []*clientSession
	made     int // names the sessions' proxies
	closeAll func()
}

// beginClient prepares a client certification (and the embedded Toxiproxy
// when cfg has no backend); sessions start as trials need them.
func beginClient(op ClientOp, cfg ClientConfig) (*clientCertification, error) {
	if op == nil {
		return nil, errors.New("client certification: nil ClientOp")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &clientCertification{op: op, cfg: cfg, backend: cfg.Backend, free: make(chan *clientSession, 1024), closeAll: func() {}}
	if c.backend == nil {
		e := faults.NewEmbedded()
		c.backend, c.closeAll = e, func() { _ = e.Close(context.Background()) }
	}
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	c.nonce = hex.EncodeToString(nonce[:])
	return c, nil
}

// get returns a free session, starting one (capture endpoint and proxy)
// when none is free.
func (c *clientCertification) get(ctx context.Context) (*clientSession, error) {
	select {
	case s := <-c.free:
		return s, nil
	default:
	}
	capture, err := capture.New()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.made++
	name := fmt.Sprintf("onceproof-client-%s-%d", c.nonce, c.made)
	c.mu.Unlock()
	p, err := c.backend.NewProxy(ctx, name, capture.Addr())
	if err != nil {
		_ = capture.Close()
		return nil, fmt.Errorf("client certification: proxy: %w", err)
	}
	s := &clientSession{op: c.op, cfg: c.cfg, capture: capture, proxy: p, baseURL: "http://" + p.Addr()}
	c.mu.Lock()
	c.all = append(c.all, s)
	c.mu.Unlock()
	return s, nil
}

func (c *clientCertification) put(s *clientSession) { c.free <- s }

func (c *clientCertification) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.all {
		_ = s.proxy.Close(context.Background())
		_ = s.capture.Close()
	}
	c.all = nil
	c.closeAll()
}

// CertifyClient certifies the wrapper that op drives, one parallel subtest
// per check (cfg.Checks), grouped under the wrapper's name. rapid's
// -rapid.checks, -rapid.seed and -rapid.shrinktime flags apply unless cfg
// sets them. A check that could not be shown (the wrapper made no attempt,
// or the situation it needs never arose) fails the subtest as
// inconclusive, never passes.
func CertifyClient[T TB[T]](t T, op ClientOp, cfgs ...ClientConfig) {
	t.Helper()
	var cfg ClientConfig
	switch len(cfgs) {
	case 0:
	case 1:
		cfg = cfgs[0]
	default:
		t.Fatalf("onceproof: CertifyClient takes at most one ClientConfig, got %d", len(cfgs))
	}
	c, err := beginClient(op, cfg)
	if err != nil {
		t.Fatalf("onceproof: %v", err)
	}
	defer c.close()
	t.Run(c.cfg.Name, func(t T) {
		for _, id := range c.cfg.Checks {
			t.Run(string(id), func(t T) {
				if !judgesTime(id) {
					t.Parallel() // the checks that judge time run alone, first
				}
				rep := c.check(t.Context(), id)
				switch rep.Verdict {
				case report.Inconclusive:
					t.Errorf("onceproof: %s is inconclusive: %s", id, rep.Reason)
				case report.Fail:
					t.Errorf("onceproof: %s failed after %s: %s\n%s\nreplay: go test -run '%s' -rapid.seed=%d -rapid.checks=%d",
						id, report.Plural(rep.Checks, "check"), rep.Reason, rep.Counterexample, runPattern(t.Name()), rep.Seed, c.cfg.checks)
				}
			})
		}
	})
}

// RunClient certifies the wrapper that op drives outside go test (the CLI's
// certify-client): its checks run at once, their trials overlapping up to
// cfg's slots. The report has one scenario per check; an error means the
// harness itself could not run (or ctx ended).
func RunClient(ctx context.Context, op ClientOp, cfg ClientConfig) (report.ToolReport, error) {
	start := time.Now()
	c, err := beginClient(op, cfg)
	if err != nil {
		rep := report.ToolReport{Name: cfg.Name, Error: err.Error()}
		return rep, err
	}
	defer c.close()
	rep := report.ToolReport{Name: c.cfg.Name, Scenarios: make([]report.ScenarioReport, len(c.cfg.Checks))}
	// The checks that judge time run after the others, on a quieter
	// machine.
	for _, timing := range []bool{false, true} {
		var wg sync.WaitGroup
		for i, id := range c.cfg.Checks {
			if judgesTime(id) == timing {
				wg.Go(func() { rep.Scenarios[i] = c.check(ctx, id) })
			}
		}
		wg.Wait()
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	rep.Duration = time.Since(start)
	rep.Finish()
	return rep, nil
}

// clientEvidence is what a client trial adds to its check's pooled
// verdict.
type clientEvidence struct {
	attempts int    // write attempts received
	opErr    string // the first error an operation returned
	gaps     []clientGap
	trial    *harness.Counterexample // the trial, for client-backoff's evidence
}

// trial runs one client plan on a free session and judges it.
func (c *clientCertification) trial(ctx context.Context, id ID, plan clientPlan) outcome {
	s, err := c.get(ctx)
	if err != nil {
		return outcome{err: err}
	}
	defer c.put(s)
	run, err := s.run(ctx, plan)
	if err != nil {
		return outcome{err: err}
	}
	log := run.attemptLog()
	if c.cfg.Attempts != nil {
		for i, a := range log {
			c.printf("%s/%s %s %s\n", c.cfg.Name, id, a.Line(), run.describe(i))
		}
	}
	j := judgeClient(id, run, c.cfg)
	o := outcome{invalid: j.invalid, violation: j.violation, kind: j.kind}
	ev := clientEvidence{attempts: run.writes(), opErr: run.firstOpError(), gaps: j.gaps}
	if j.violation != "" || (id == ClientBackoff && len(j.gaps) > 0) {
		ce := &harness.Counterexample{Plan: run.plan.String(), Violation: j.violation, Attempts: log, Effects: run.effects()}
		if j.violation != "" {
			o.ce = ce
		} else {
			ev.trial = ce
		}
	}
	o.extra = ev
	return o
}

func (c *clientCertification) printf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.cfg.Attempts, format, args...)
}

// check runs client check id: for client-backoff first its fixed
// Retry-After probe, then the drawn trials, and judges them together.
func (c *clientCertification) check(ctx context.Context, id ID) report.ScenarioReport {
	began := time.Now()
	if id == ClientBackoff {
		if o := c.trial(ctx, id, retryAfterProbe()); o.err != nil || o.violation != "" {
			f := found{checks: 1, seed: c.cfg.seed, err: o.err, failure: o.ce, duration: time.Since(began)}
			if o.err == nil {
				f.shrink = shrinkUnconfirmed
				f.failure.Shrink = "a fixed trial, not drawn: nothing to shrink"
			}
			return c.verdict(id, f)
		}
	}
	s := &search[clientPlan]{
		tool: c.cfg.Name, id: id, checks: c.cfg.checks, seed: c.cfg.seed, slots: c.cfg.slots,
		shrinkTime: c.cfg.shrinkTime, progress: c.cfg.Progress,
		plan: func(t *rapid.T) clientPlan { return drawClientPlan(t, id, c.cfg) },
		run:  func(ctx context.Context, p clientPlan) outcome { return c.trial(ctx, id, p) },
	}
	if judgesTime(id) {
		s.width = timingWidth // few of their trials overlap
	}
	f := s.do(ctx)
	f.duration = time.Since(began)
	rep := c.verdict(id, f)
	if c.cfg.Repro != nil && rep.Verdict == report.Fail {
		rep.Repro = c.cfg.Repro(id, rep.Seed)
	}
	return rep
}

// verdict turns what check id's search found into its report. A check
// passes only if no trial failed, the wrapper made attempts, at least half
// of the trials (and at least one) had the situation the check needs, and,
// for client-backoff, the pooled growth and jitter rules hold.
func (c *clientCertification) verdict(id ID, f found) report.ScenarioReport {
	var (
		attempts     int
		opErr        string
		gaps         []clientGap
		evidence     *harness.Counterexample
		evidenceGaps int
	)
	for _, o := range f.outcomes {
		ev, _ := o.extra.(clientEvidence)
		attempts += ev.attempts
		if opErr == "" {
			opErr = ev.opErr
		}
		if o.invalid == "" && o.err == nil {
			gaps = append(gaps, ev.gaps...)
			if ev.trial != nil && len(ev.gaps) > evidenceGaps {
				evidence, evidenceGaps = ev.trial, len(ev.gaps)
			}
		}
	}
	rep := f.verdict(id)
	if rep.Verdict == report.Fail || f.err != nil || f.interrupted {
		return rep
	}
	switch {
	case attempts == 0:
		rep.Verdict, rep.RuledOut = report.Inconclusive, 0
		rep.Reason = fmt.Sprintf("the wrapper made no attempt in %s, so nothing was shown (does it send to the URL it is given?)", report.Plural(f.checks, "trial"))
		if opErr != "" {
			rep.Reason += "; the first operation returned: " + opErr
		}
	case rep.Verdict != report.Pass:
	case id == ClientBackoff:
		violation, unknown := pooledBackoff(gaps, f.valid)
		switch {
		case violation != "":
			rep.Verdict, rep.Reason, rep.RuledOut = report.Fail, violation, 0
			ce := harness.Counterexample{Plan: "pooled over the valid trials"}
			if evidence != nil {
				ce = *evidence
				ce.Plan = "pooled over the valid trials; the one with the most retries: " + ce.Plan
			}
			ce.Violation = violation
			rep.Counterexample = &ce
		case unknown != "":
			rep.Verdict, rep.Reason, rep.RuledOut = report.Inconclusive, unknown, 0
		}
	}
	rep.Passed = rep.Verdict == report.Pass
	return rep
}
