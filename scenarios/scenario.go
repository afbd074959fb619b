package scenarios

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
)

// ID names a scenario; ids are stable and appear in reports.
type ID string

// The scenario ids.
const (
	LostResponse        ID = "lost-response"
	PreServerError      ID = "pre-server-error"
	ConcurrentDuplicate ID = "concurrent-duplicate"
	KeyMismatch         ID = "key-mismatch"
	DistinctKeys        ID = "distinct-keys"
	// CrashRestart needs a tool that can crash (a container).
	CrashRestart ID = "crash-restart"
	// DependencyFault needs a tool whose dependency links are proxied (a
	// container with the Toxiproxy container).
	DependencyFault ID = "dependency-fault"
	// Annotations checks what an MCP tool claims: idempotentHint (a second
	// identical call adds no effect) and readOnlyHint (no effect at all).
	Annotations ID = "annotations"
)

// All returns every scenario id in the order they run.
func All() []ID {
	return []ID{LostResponse, PreServerError, ConcurrentDuplicate, KeyMismatch, DistinctKeys, CrashRestart, DependencyFault, Annotations}
}

// ParseID returns the scenario named s, or an error listing the ids.
func ParseID(s string) (ID, error) {
	for _, id := range All() {
		if string(id) == s {
			return id, nil
		}
	}
	return "", fmt.Errorf("unknown scenario %q (want one of %v)", s, All())
}

// ErrNotApplicable marks a scenario asked for a tool that cannot run it
// (crash-restart for a tool that is not a container, ...).
var ErrNotApplicable = errors.New("scenario not applicable")

// Applicable returns the scenarios tool can run: the five HTTP scenarios for
// every tool, crash-restart for tools that can crash, dependency-fault for
// tools with proxied dependency links, annotations for tools that claim
// idempotentHint or readOnlyHint — and only annotations for a tool that
// claims to be read-only (it has no effect to make exactly once).
func Applicable(tool harness.Tool) []ID {
	if readOnly(tool) {
		return []ID{Annotations}
	}
	var ids []ID
	for _, id := range All() {
		if applies(id, tool) == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

func applies(id ID, tool harness.Tool) error {
	switch id {
	case CrashRestart:
		if _, ok := tool.(harness.Crasher); !ok {
			return fmt.Errorf("%w: %s needs a tool that runs as a container", ErrNotApplicable, id)
		}
	case DependencyFault:
		if l, ok := tool.(harness.Linked); !ok || len(l.Links()) == 0 {
			return fmt.Errorf("%w: %s needs a container tool with a proxied dependency (toxiproxy: container)", ErrNotApplicable, id)
		}
	case Annotations:
		h, ok := tool.(harness.Hinted)
		if !ok {
			return fmt.Errorf("%w: %s needs an MCP tool", ErrNotApplicable, id)
		}
		if idem, ro, _ := h.Hints(); !idem && !ro {
			return fmt.Errorf("%w: %s: the tool claims neither idempotentHint nor readOnlyHint", ErrNotApplicable, id)
		}
	default:
		if readOnly(tool) {
			return fmt.Errorf("%w: %s: the tool claims readOnlyHint, so only its annotations are checked", ErrNotApplicable, id)
		}
	}
	return nil
}

// readOnly reports whether tool claims to have no effects.
func readOnly(tool harness.Tool) bool {
	h, ok := tool.(harness.Hinted)
	if !ok {
		return false
	}
	_, ro, _ := h.Hints()
	return ro
}

// drawer draws a whole plan (rapid's Draw is not goroutine-safe, so nothing is
// drawn while the plan runs) and returns the function that executes it.
type drawer func(t *rapid.T, cfg Config, tool harness.Tool) func(*trial) (result, error)

func drawerFor(id ID) drawer {
	switch id {
	case LostResponse:
		return lostResponse
	case PreServerError:
		return preServerError
	case ConcurrentDuplicate:
		return concurrentDuplicate
	case KeyMismatch:
		return keyMismatch
	case DistinctKeys:
		return distinctKeys
	case CrashRestart:
		return crashRestart
	case DependencyFault:
		return dependencyFault
	case Annotations:
		return annotations
	}
	panic(fmt.Sprintf("scenarios: unknown scenario %q", id))
}

// Config tunes a certification.
type Config struct {
	// Scenarios to run; nil means every scenario Applicable to the tool.
	Scenarios []ID
	// MaxBackoff is the longest retry delay drawn (default 250ms).
	MaxBackoff time.Duration
	// Backend provides the fault proxy; nil means a fresh embedded
	// Toxiproxy.
	Backend faults.Backend
	// Repro renders the command that replays a failing scenario from its
	// seed (the CLI sets it; Go tests print rapid's own -rapid.seed).
	Repro func(id ID, seed uint64) string
	// Progress, when set, is called after every trial.
	Progress func(Progress)
	// Attempts, when set, receives one line per attempt (a -v log).
	Attempts io.Writer
}

// Progress is where a running scenario stands.
type Progress struct {
	Tool     string
	Scenario ID
	// Checks and Valid count trials (up to the first failure); Shrinking
	// is set while a failure is being minimised.
	Checks, Valid int
	Shrinking     bool
	Elapsed       time.Duration
}

func (c Config) withDefaults(tool harness.Tool) (Config, error) {
	if c.Scenarios == nil {
		c.Scenarios = Applicable(tool)
	}
	for _, id := range c.Scenarios {
		if err := applies(id, tool); err != nil {
			return c, err
		}
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	return c, nil
}

// recorder collects what the trials of one scenario measured. Counts stop at
// the first failure, so shrinking runs do not inflate them.
type recorder struct {
	mu       sync.Mutex
	checks   int
	valid    int
	invalid  string // the first reason a trial did not count
	failed   bool
	failure  *harness.Counterexample // the last (smallest) failing trial
	harness  error                   // an error of the harness, tool or oracle
	began    time.Time
	duration time.Duration
}

func (r *recorder) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.harness
}

// property is the rapid property of scenario id on session s.
func property(ctx context.Context, s *harness.Session, id ID, cfg Config, rec *recorder) func(*rapid.T) {
	draw := drawerFor(id)
	return func(t *rapid.T) {
		exec := draw(t, cfg, s.Tool())
		if err := rec.err(); err != nil {
			t.Fatalf("harness error: %v", err)
		}
		s.Lock()
		tr := newTrial(ctx, s)
		if cfg.Attempts != nil {
			tr.log = func(a harness.Attempt) {
				fmt.Fprintf(cfg.Attempts, "%s/%s %s\n", s.Tool().Name(), id, a.Line())
			}
		}
		res, err := exec(tr)
		s.Unlock()

		rec.mu.Lock()
		if err != nil {
			rec.harness = err
			rec.mu.Unlock()
			t.Fatalf("harness error: %v", err)
		}
		if !rec.failed {
			rec.checks++
			if res.invalid == "" {
				rec.valid++
			} else if rec.invalid == "" {
				rec.invalid = res.invalid
			}
		}
		var ce *harness.Counterexample
		if res.violation != "" {
			ce = &harness.Counterexample{Plan: res.plan, Violation: res.violation, Attempts: tr.attemptLog(), Effects: res.effects}
			rec.failed, rec.failure = true, ce
		}
		p := Progress{Tool: s.Tool().Name(), Scenario: id, Checks: rec.checks, Valid: rec.valid, Shrinking: rec.failed, Elapsed: time.Since(rec.began)}
		rec.mu.Unlock()
		if cfg.Progress != nil {
			cfg.Progress(p)
		}
		if ce != nil {
			// rapid shrinks only towards the same failure: give it the kind of
			// violation (no counts, markers or ids) and log the evidence.
			t.Log("onceproof counterexample:\n" + ce.String())
			t.Fatal("onceproof violation: " + violationKind(ce.Violation))
		}
	}
}

var (
	markerText = regexp.MustCompile(`onceproof-[0-9a-f]+-m[0-9]+`)
	quotedText = regexp.MustCompile(`"[^"]*"`)
	numberText = regexp.MustCompile(`[0-9]+`)
)

// violationKind strips what varies between trials (markers, ids, counts)
// from a violation, leaving its kind.
func violationKind(v string) string {
	v = markerText.ReplaceAllString(v, "<marker>")
	v = quotedText.ReplaceAllString(v, "<id>")
	return numberText.ReplaceAllString(v, "N")
}

// verdict turns what rec measured into a scenario report. A scenario passes
// only if no trial failed and at least half of the trials (and at least one)
// had their fault fire.
func (r *recorder) verdict(id ID) harness.ScenarioReport {
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
	case r.valid == 0 || r.valid*2 < r.checks:
		rep.Verdict = harness.Inconclusive
		rep.Reason = fmt.Sprintf("only %d of %d trials had their fault fire (first: %s); exactly-once was not shown", r.valid, r.checks, r.invalid)
	default:
		rep.Verdict = harness.Pass
	}
	rep.Passed = rep.Verdict == harness.Pass
	return rep
}
