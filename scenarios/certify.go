package scenarios

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// withSearchDefaults fills in the search settings: from rapid's flags where
// a Go test sets them (-rapid.checks, -rapid.seed, -rapid.shrinktime), from
// the defaults otherwise.
func (c Config) withSearchDefaults() Config {
	if c.Checks == 0 && c.Budget == 0 {
		c.Checks = DefaultChecks
		if n, err := strconv.Atoi(flagValue("rapid.checks")); err == nil && n > 0 {
			c.Checks = n
		}
	}
	if c.Seed == 0 {
		c.Seed, _ = strconv.ParseUint(flagValue("rapid.seed"), 10, 64)
	}
	if c.Seed == 0 {
		c.Seed = RandomSeed()
	}
	if c.ShrinkTime == 0 {
		c.ShrinkTime = DefaultShrinkTime
		if d, err := time.ParseDuration(flagValue("rapid.shrinktime")); err == nil && d > 0 && d != 30*time.Second {
			c.ShrinkTime = d // set by the user (30s is rapid's default)
		}
	}
	if c.Slots == nil {
		c.Slots = NewSlots(cmpOr(c.Parallel, DefaultParallel()))
	}
	return c
}

func cmpOr(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// RandomSeed returns a fresh non-zero seed.
func RandomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])>>1 | 1
}

// certification is one tool under certification: its sessions (one per
// overlapping trial, each with its own proxy) and settings.
type certification struct {
	tool     harness.Tool
	cfg      Config
	sessions *sessionPool
	// exclusive is held for reading by every trial and for writing by the
	// trials of exclusive scenarios (crash-restart, dependency-fault).
	exclusive sync.RWMutex
	attempts  *lockedWriter
	began     time.Time
	closeAll  func()
}

// begin opens the tool's first session (and the embedded Toxiproxy when cfg
// has no backend), applies the defaults that depend on the tool, and runs
// the preflight: a plain call that must succeed and, unless the tool claims
// to be read-only, move the oracle by exactly one.
func begin(ctx context.Context, tool harness.Tool, cfg Config) (*certification, error) {
	backend := cfg.Backend
	if bp, ok := tool.(harness.BackendProvider); ok && bp.Backend() != nil {
		backend = bp.Backend()
	}
	closeBackend := func() {}
	if backend == nil {
		e := faults.NewEmbedded()
		backend, closeBackend = e, func() { _ = e.Close(context.Background()) }
	}
	format := harness.KeyUUID
	if kf, ok := tool.(interface{ KeyFormat() harness.KeyFormat }); ok {
		format = kf.KeyFormat()
	}
	s, err := harness.Open(ctx, backend, tool, format)
	if err != nil {
		closeBackend()
		return nil, err
	}
	limit := 0
	if l, ok := tool.(interface{ MaxProxies() int }); ok {
		limit = l.MaxProxies()
	}
	pool := newSessionPool(s, limit)
	c := &certification{tool: tool, sessions: pool, began: time.Now(), closeAll: func() { pool.close(); closeBackend() }}
	if cfg.Attempts != nil {
		c.attempts = &lockedWriter{w: cfg.Attempts}
	}
	if err := s.Ready(ctx); err != nil {
		c.close()
		return nil, fmt.Errorf("%w: %w", harness.ErrPreflight, err)
	}
	if c.cfg, err = cfg.withDefaults(tool); err != nil {
		c.close()
		return nil, err
	}
	if _, err := s.Preflight(ctx, readOnly(tool)); err != nil {
		c.close()
		return nil, err
	}
	if c.cfg.Budget > 0 {
		c.began = time.Now()
	}
	return c, nil
}

func (c *certification) close() { c.closeAll() }

// scenario runs the search of scenario id and returns its report.
func (c *certification) scenario(ctx context.Context, id ID) report.ScenarioReport {
	sc, _ := lookup(id)
	s := &search[func(*trial) (result, error)]{
		tool: c.tool.Name(), id: id, checks: c.cfg.Checks, seed: c.cfg.Seed,
		slots: c.cfg.Slots, shrinkTime: c.cfg.ShrinkTime, progress: c.cfg.Progress,
		plan: func(t *rapid.T) func(*trial) (result, error) {
			return drawBalance(t, c.tool).wrap(sc.draw(t, c.cfg, c.tool))
		},
		run: func(ctx context.Context, exec func(*trial) (result, error)) outcome {
			return c.trial(ctx, sc, exec)
		},
	}
	if s.checks == 0 {
		s.checks = unbounded
	}
	if c.cfg.Budget > 0 {
		s.until = c.began.Add(c.cfg.Budget)
	}
	if sc.parks {
		// Its trials sleep without a slot: bound how many wait at once.
		s.width = 4 * c.cfg.Slots.N()
	}
	f := s.do(ctx)
	rep := f.verdict(id)
	if rep.Verdict == report.Pass {
		rep.LongestDelay = longestDelay(f.outcomes)
	}
	if c.cfg.Repro != nil && rep.Verdict == report.Fail {
		rep.Repro = c.cfg.Repro(id, rep.Seed)
	}
	return rep
}

// longestDelay is the longest wait (retention's) that a valid trial without
// a violation checked, 0 when none did.
func longestDelay(outcomes []outcome) time.Duration {
	var longest time.Duration
	for _, o := range outcomes {
		if d, ok := o.extra.(time.Duration); ok && o.invalid == "" && o.violation == "" && o.err == nil {
			longest = max(longest, d)
		}
	}
	return longest
}

// trial runs one plan on a free session.
func (c *certification) trial(ctx context.Context, sc scenario, exec func(*trial) (result, error)) outcome {
	lock, unlock := c.exclusive.RLock, c.exclusive.RUnlock
	if sc.exclusive {
		lock, unlock = c.exclusive.Lock, c.exclusive.Unlock
	}
	lock()
	locked := true
	defer func() {
		if locked {
			unlock()
		}
	}()
	s, err := c.sessions.get(ctx)
	if err != nil {
		return outcome{err: err}
	}
	tr := newTrial(ctx, s)
	defer func() {
		if tr.s != nil {
			c.sessions.put(tr.s)
		}
	}()
	if sc.parks {
		tr.park = c.park(ctx, tr, unlock, lock, &locked)
	}
	tr.restart = func(ctx context.Context) error {
		if err := tr.s.Restart(ctx); err != nil {
			return err
		}
		return c.sessions.repoint(ctx)
	}
	if c.attempts != nil {
		tr.log = func(a harness.Attempt) {
			c.attempts.printf("%s/%s %s\n", c.tool.Name(), sc.id, a.Line())
		}
	}
	res, err := exec(tr)
	o := outcome{invalid: res.invalid, violation: res.violation, kind: res.kind, err: err, extra: res.extra}
	if res.violation != "" {
		o.ce = harness.NewCounterexample(res.plan, res.violation, tr.attemptLog(), res.effects)
		o.ce.Rule = res.rule
	}
	return o
}

// park returns tr's park: a trial that sleeps lets go of its session, its
// slot and the tool's lock meanwhile, and takes the lock and a session
// again before its next attempt — not a slot: a parked trial's remaining
// work is one attempt, which must go out when its wait ends rather than
// queue behind other trials (the search's width bounds how many there are).
// locked tracks whether the trial holds the lock, for the deferred unlock.
func (c *certification) park(ctx context.Context, tr *trial, unlock, lock func(), locked *bool) func(time.Duration) error {
	return func(d time.Duration) error {
		if d <= 0 {
			return tr.ctx.Err()
		}
		h := heldFrom(ctx)
		c.sessions.put(tr.s)
		tr.s = nil
		unlock()
		*locked = false
		if h != nil {
			h.release()
		}
		if err := tr.sleep(d); err != nil {
			return err
		}
		lock()
		*locked = true
		s, err := c.sessions.get(ctx)
		if err != nil {
			return err
		}
		tr.s = s
		return nil
	}
}

// lockedWriter serialises the attempt log of overlapping trials.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}

// Certify runs every scenario (cfg.Scenarios) against tool as parallel
// subtests of t, grouped under the tool's name (TestX/create-ticket/
// lost-response), and returns once they are done. rapid's -rapid.checks,
// -rapid.seed and -rapid.shrinktime flags apply unless cfg sets Checks, Seed
// or ShrinkTime. A preflight failure stops the test; a scenario whose faults
// did not fire often enough fails as inconclusive, never passes. A failing
// scenario prints its shrunk counterexample and the command that replays it.
//
// t is a *testing.T (or anything with its methods, see [TB]): package
// scenarios does not import testing, so a program that certifies with
// [Run] does not link it.
func Certify[T TB[T]](t T, tool harness.Tool, cfgs ...Config) {
	t.Helper()
	var cfg Config
	switch len(cfgs) {
	case 0:
	case 1:
		cfg = cfgs[0]
	default:
		t.Fatalf("onceproof: Certify takes at most one Config, got %d", len(cfgs))
	}
	c, err := begin(t.Context(), tool, cfg)
	if err != nil {
		t.Fatalf("onceproof: %v", err)
	}
	defer c.close()
	t.Run(tool.Name(), func(t T) {
		for _, id := range c.cfg.Scenarios {
			t.Run(string(id), func(t T) {
				t.Parallel()
				c.report(t, c.scenario(t.Context(), id))
			})
		}
	})
}

// report turns a scenario's report into the subtest's result.
func (c *certification) report(t reporter, rep report.ScenarioReport) {
	switch rep.Verdict {
	case report.Fail:
		var b strings.Builder
		fmt.Fprintf(&b, "onceproof: %s failed after %s: %s\n", rep.ID, report.Plural(rep.Checks, "check"), rep.Reason)
		b.WriteString(rep.Counterexample.String())
		fmt.Fprintf(&b, "replay: go test -run '%s' -rapid.seed=%d -rapid.checks=%d", runPattern(t.Name()), rep.Seed, c.cfg.Checks)
		t.Error(b.String())
	case report.Inconclusive:
		t.Errorf("onceproof: %s is inconclusive: %s", rep.ID, rep.Reason)
	default:
		msg := fmt.Sprintf("onceproof: %s passed %s, %s; %s", rep.ID, report.Plural(rep.Checks, "check"), report.Plural(rep.ValidTrials, "valid trial"), rep.Depth())
		if h := rep.Honoured(); h != "" {
			msg += "; " + h
		}
		t.Log(msg)
	}
}

// TB is what [Certify] and [CertifyClient] need of a test; *testing.T has
// it (T is the type its subtests get: *testing.T again).
type TB[T any] interface {
	reporter
	Helper()
	Context() context.Context
	Run(name string, f func(T)) bool
	Parallel()
	Fatalf(format string, args ...any)
}

// reporter is the part of a test a verdict is written to.
type reporter interface {
	Name() string
	Error(args ...any)
	Errorf(format string, args ...any)
	Log(args ...any)
}

// runPattern is the -run pattern that selects exactly the test named name.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// Run certifies tool outside go test (the CLI): its scenarios run at once,
// their trials overlapping up to cfg's slots. A preflight failure returns
// the report with its Error set and an error wrapping harness.ErrPreflight;
// an interrupted run returns ctx's error with what was measured so far.
func Run(ctx context.Context, tool harness.Tool, cfg Config) (report.ToolReport, error) {
	start := time.Now()
	rep := report.ToolReport{Name: tool.Name()}
	c, err := begin(ctx, tool, cfg)
	if err != nil {
		rep.Error = err.Error()
		rep.Finish()
		return finished(tool, rep), err
	}
	defer c.close()
	contract := harness.ContractOf(tool)
	rep.Contract = &contract
	rep.Scenarios = make([]report.ScenarioReport, len(c.cfg.Scenarios))
	var wg sync.WaitGroup
	for i, id := range c.cfg.Scenarios {
		wg.Go(func() { rep.Scenarios[i] = c.scenario(ctx, id) })
	}
	wg.Wait()
	rep.Duration = time.Since(start)
	rep.Finish()
	return finished(tool, rep), ctx.Err()
}

// finished adds what the tool's own processes logged ([harness.Logged])
// and removes the values of the secrets its templates read
// ([harness.Secretive]) from every string of the report.
func finished(tool harness.Tool, rep report.ToolReport) report.ToolReport {
	if l, ok := tool.(harness.Logged); ok {
		rep.ServerLog = l.Log()
	}
	if s, ok := tool.(harness.Secretive); ok {
		var r report.Redactor
		for _, name := range s.Secrets() {
			if v, ok := os.LookupEnv(name); ok {
				r.Add(name, v)
			}
		}
		whole := report.Report{Tools: []report.ToolReport{rep}}
		r.Report(&whole)
		rep = whole.Tools[0]
	}
	return rep
}
