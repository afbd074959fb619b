package scenarios

import (
	"context"
	"flag"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
)

// open starts the backend (if cfg has none) and the tool's session.
func open(ctx context.Context, tool harness.Tool, cfg Config) (*harness.Session, func(), error) {
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
		return nil, nil, err
	}
	return s, func() { _ = s.Close(context.Background()); closeBackend() }, nil
}

// prepare readies the session (an MCP session: the tool's hints are known
// after it), applies the defaults that depend on the tool, and runs the
// preflight: a plain call that must succeed and, unless the tool claims to
// be read-only, move the oracle by exactly one.
func prepare(ctx context.Context, s *harness.Session, cfg Config) (Config, error) {
	if err := s.Ready(ctx); err != nil {
		return cfg, fmt.Errorf("%w: %w", harness.ErrPreflight, err)
	}
	cfg, err := cfg.withDefaults(s.Tool())
	if err != nil {
		return cfg, err
	}
	_, err = s.Preflight(ctx, readOnly(s.Tool()))
	return cfg, err
}

// Certify runs every scenario (cfg.Scenarios) against tool as subtests of t,
// one rapid property each: rapid's -rapid.checks and -rapid.seed flags apply.
// A preflight failure stops the test; a scenario whose faults did not fire
// often enough fails as inconclusive, never passes.
func Certify(t *testing.T, tool harness.Tool, cfgs ...Config) {
	t.Helper()
	var cfg Config
	if len(cfgs) > 0 {
		cfg = cfgs[0]
	}
	ctx := t.Context()
	s, closeAll, err := open(ctx, tool, cfg)
	if err != nil {
		t.Fatalf("onceproof: %v", err)
	}
	t.Cleanup(closeAll)
	if cfg, err = prepare(ctx, s, cfg); err != nil {
		t.Fatalf("onceproof: %v", err)
	}
	for _, id := range cfg.Scenarios {
		t.Run(string(id), func(t *testing.T) {
			rec := &recorder{began: time.Now()}
			rapid.Check(t, property(ctx, s, id, cfg, rec))
			if rep := rec.verdict(id); rep.Verdict == harness.Inconclusive {
				t.Errorf("onceproof: %s is inconclusive: %s", id, rep.Reason)
			}
		})
	}
}

// Run certifies tool outside go test (the CLI). It uses rapid's settings
// (-rapid.checks, -rapid.seed, -rapid.shrinktime) as set on the flag package's
// command line, which the caller sets before calling Run. A preflight failure
// returns the report with its Error set and an error wrapping
// harness.ErrPreflight.
func Run(ctx context.Context, tool harness.Tool, cfg Config) (harness.ToolReport, error) {
	start := time.Now()
	rep := harness.ToolReport{Name: tool.Name()}
	s, closeAll, err := open(ctx, tool, cfg)
	if err != nil {
		rep.Error = err.Error()
		return rep, err
	}
	defer closeAll()
	if cfg, err = prepare(ctx, s, cfg); err != nil {
		rep.Error = err.Error()
		rep.Finish()
		return rep, err
	}
	seed := rapidSeed()
	for _, id := range cfg.Scenarios {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		rec := &recorder{began: time.Now()}
		tb := &runTB{name: tool.Name() + "/" + string(id)}
		began := time.Now()
		tb.run(func() { rapid.Check(tb, property(ctx, s, id, cfg, rec)) })
		rec.duration = time.Since(began)
		sr := rec.verdict(id)
		sr.Seed = seed
		if failing, ok := tb.failingSeed(); ok {
			sr.Seed = failing
		}
		if sr.Verdict == harness.Pass && tb.Failed() && rec.harness == nil {
			// rapid failed for a reason no trial recorded (e.g. too many
			// invalid draws): never report that as a pass.
			sr.Verdict, sr.Passed, sr.Reason = harness.Inconclusive, false, "rapid: "+tb.firstError()
		}
		if cfg.Repro != nil && sr.Verdict == harness.Fail {
			sr.Repro = cfg.Repro(id, sr.Seed)
		}
		rep.Scenarios = append(rep.Scenarios, sr)
	}
	rep.Duration = time.Since(start)
	rep.Finish()
	return rep, nil
}

// rapidSeed is the seed rapid was told to use (0 when it picks its own).
func rapidSeed() uint64 {
	f := flag.Lookup("rapid.seed")
	if f == nil {
		return 0
	}
	n, _ := strconv.ParseUint(f.Value.String(), 10, 64)
	return n
}

// runTB is the rapid.TB of a certification outside go test: it keeps what
// rapid reports and ends the check goroutine on FailNow, as testing does.
type runTB struct {
	name string

	mu   sync.Mutex
	errs []string
	logs []string
	fail bool
}

func (tb *runTB) run(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

func (tb *runTB) Helper()      {}
func (tb *runTB) Name() string { return tb.name }
func (tb *runTB) Logf(format string, args ...any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.logs = append(tb.logs, fmt.Sprintf(format, args...))
}
func (tb *runTB) Log(args ...any)                  { tb.Logf("%s", fmt.Sprint(args...)) }
func (tb *runTB) Skipf(format string, args ...any) { tb.Logf(format, args...); tb.SkipNow() }
func (tb *runTB) Skip(args ...any)                 { tb.Log(args...); tb.SkipNow() }
func (tb *runTB) SkipNow()                         { runtime.Goexit() }
func (tb *runTB) Errorf(format string, args ...any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.errs = append(tb.errs, fmt.Sprintf(format, args...))
	tb.fail = true
}
func (tb *runTB) Error(args ...any)                 { tb.Errorf("%s", fmt.Sprint(args...)) }
func (tb *runTB) Fatalf(format string, args ...any) { tb.Errorf(format, args...); tb.FailNow() }
func (tb *runTB) Fatal(args ...any)                 { tb.Error(args...); tb.FailNow() }
func (tb *runTB) FailNow()                          { tb.Fail(); runtime.Goexit() }
func (tb *runTB) Fail() {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.fail = true
}
func (tb *runTB) Failed() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.fail
}

func (tb *runTB) firstError() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.errs) == 0 {
		return ""
	}
	return strings.SplitN(tb.errs[0], "\n", 2)[0]
}

var seedInReport = regexp.MustCompile(`-rapid\.seed=(\d+)`)

// failingSeed is the seed rapid reported for the failing check.
func (tb *runTB) failingSeed() (uint64, bool) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, e := range tb.errs {
		if m := seedInReport.FindStringSubmatch(e); m != nil {
			n, err := strconv.ParseUint(m[1], 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
