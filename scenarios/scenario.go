package scenarios

import (
	"errors"
	"fmt"
	"io"
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
	// CrashRestart needs a tool that can crash (a container, a stdio
	// server).
	CrashRestart ID = "crash-restart"
	// DependencyFault needs a tool whose dependency links are proxied (a
	// container with the Toxiproxy container).
	DependencyFault ID = "dependency-fault"
	// Downstream needs a tool whose calls to an HTTP dependency onceproof
	// plays (a downstream section).
	Downstream ID = "downstream"
	// Annotations checks what an MCP tool claims: idempotentHint (a second
	// identical call adds no effect) and readOnlyHint (no effect at all).
	Annotations ID = "annotations"
	// Replay checks that replays repeat the first answer as the contract
	// says, refusals included where the profile stores them.
	Replay ID = "replay"
	// MissingKey checks that a request without a key is refused, where the
	// profile requires one.
	MissingKey ID = "missing-key"
	// Retention checks that a key is still honoured after drawn delays up
	// to the declared retention (at most Config.MaxWait).
	Retention ID = "retention"
	// Reconcile checks what a tool's lookup says after an ambiguous
	// attempt: "not found" never for a committed operation, "found" never
	// for one that did not commit.
	Reconcile ID = "reconcile"
	// LongRunning needs a tool whose write starts an operation that a
	// status call reports on (a long_running section).
	LongRunning ID = "long-running"
)

// drawer draws a whole plan (nothing is drawn while the plan runs) and
// returns the function that executes it.
type drawer func(t *rapid.T, cfg Config, tool harness.Tool) func(*trial) (result, error)

// scenario is one row of the scenario table.
type scenario struct {
	id   ID
	draw drawer
	// needs says why tool cannot run the scenario (nil when it can).
	needs func(tool harness.Tool) error
	// exclusive scenarios disturb the whole tool (kill it, cut its
	// database link): their trials run with no other trial of the tool.
	exclusive bool
	// parks is set for scenarios whose trials sleep (retention): they hold
	// no slot while they do, and at most four times the slots run at once.
	parks bool
}

// table lists every scenario in the order they run and report. Adding a
// scenario is one file with its drawer and one row here.
func table() []scenario {
	return []scenario{
		{id: LostResponse, draw: lostResponse, needs: writeTool},
		{id: PreServerError, draw: preServerError, needs: writeTool},
		{id: ConcurrentDuplicate, draw: concurrentDuplicate, needs: writeTool},
		{id: KeyMismatch, draw: keyMismatch, needs: writeTool},
		{id: DistinctKeys, draw: distinctKeys, needs: writeTool},
		{id: Replay, draw: replay, needs: writeTool},
		{id: MissingKey, draw: missingKey, needs: keyRequired},
		{id: Retention, draw: retention, needs: retained, parks: true},
		{id: CrashRestart, draw: crashRestart, needs: crasher, exclusive: true},
		{id: DependencyFault, draw: dependencyFault, needs: linked, exclusive: true},
		{id: Downstream, draw: downstream, needs: downstreamed},
		{id: Annotations, draw: annotations, needs: hinted},
		{id: Reconcile, draw: reconcile, needs: lookedUp},
		{id: LongRunning, draw: longRunning, needs: longRunner},
	}
}

// All returns every scenario id in the order they run.
func All() []ID {
	var ids []ID
	for _, s := range table() {
		ids = append(ids, s.id)
	}
	return ids
}

// ParseID returns the scenario named s, or an error listing the ids.
func ParseID(s string) (ID, error) {
	if _, ok := lookup(ID(s)); ok {
		return ID(s), nil
	}
	return "", fmt.Errorf("unknown scenario %q (want one of %v)", s, All())
}

func lookup(id ID) (scenario, bool) {
	for _, s := range table() {
		if s.id == id {
			return s, true
		}
	}
	return scenario{}, false
}

// ErrNotApplicable marks a scenario asked for a tool that cannot run it
// (crash-restart for a tool that is not a container, ...).
var ErrNotApplicable = errors.New("scenario not applicable")

// Applicable returns the scenarios tool can run: lost-response,
// pre-server-error, concurrent-duplicate, key-mismatch, distinct-keys and
// replay for every write tool, missing-key for an HTTP tool whose profile
// requires a key, retention for a tool that declares one, crash-restart for
// tools that can crash, dependency-fault for tools with proxied dependency
// links, downstream for tools that call a dependency onceproof plays,
// annotations for tools that claim idempotentHint or readOnlyHint,
// reconcile for tools that declare a lookup, long-running for tools with a
// long_running section — and
// only annotations for a tool that claims to be read-only (it has no effect
// to make exactly once).
func Applicable(tool harness.Tool) []ID {
	var ids []ID
	for _, s := range table() {
		if s.needs(tool) == nil {
			ids = append(ids, s.id)
		}
	}
	return ids
}

func applies(id ID, tool harness.Tool) error {
	s, ok := lookup(id)
	if !ok {
		return fmt.Errorf("%w: unknown scenario %q", ErrNotApplicable, id)
	}
	if err := s.needs(tool); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrNotApplicable, id, err)
	}
	return nil
}

// writeTool: the scenarios that make an effect exactly once need a tool
// that has one.
func writeTool(tool harness.Tool) error {
	if readOnly(tool) {
		return errors.New("the tool claims readOnlyHint, so only its annotations are checked")
	}
	return nil
}

func crasher(tool harness.Tool) error {
	if _, ok := tool.(harness.Crasher); !ok {
		return errors.New("needs a tool that runs as a container")
	}
	return writeTool(tool)
}

func linked(tool harness.Tool) error {
	if l, ok := tool.(harness.Linked); !ok || len(l.Links()) == 0 {
		return errors.New("needs a container tool with a proxied dependency (toxiproxy: container)")
	}
	return writeTool(tool)
}

func hinted(tool harness.Tool) error {
	h, ok := tool.(harness.Hinted)
	if !ok {
		return errors.New("needs an MCP tool")
	}
	if idem, ro, _ := h.Hints(); !idem && !ro {
		return errors.New("the tool claims neither idempotentHint nor readOnlyHint")
	}
	return nil
}

func longRunner(tool harness.Tool) error {
	if l, ok := tool.(harness.LongRunning); !ok || !l.LongRunning() {
		return errors.New("needs a tool whose write starts a long-running operation (a long_running section)")
	}
	return writeTool(tool)
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

// Config tunes a certification.
type Config struct {
	// Scenarios to run; nil means every scenario Applicable to the tool.
	Scenarios []ID
	// Only, when set, keeps only the scenarios it accepts (a shard's share
	// of a run), after Scenarios and applicability.
	Only func(ID) bool
	// Checks is the number of trials per scenario; 0 means rapid's
	// -rapid.checks (default 100), or no limit when Budget is set.
	Checks int
	// Seed is the seed of each scenario's first trial (trial i draws from
	// Seed+i); 0 means rapid's -rapid.seed, or a random one.
	Seed uint64
	// Budget, when set, is how long the trials of a tool may take: no
	// trial starts after it (checks in flight finish, failures are still
	// shrunk). It trades time for depth; the report says how deep each
	// scenario went.
	Budget time.Duration
	// Parallel is how many trials run at once (default DefaultParallel);
	// 1 runs them one at a time. Ignored when Slots is set.
	Parallel int
	// Slots, when set, bounds the trials of several certifications that
	// run at once (the tools of one run) together.
	Slots *Slots
	// ShrinkTime bounds the minimisation of one failure (default 20s, or
	// rapid's -rapid.shrinktime when set).
	ShrinkTime time.Duration
	// MaxBackoff is the longest retry delay drawn (default 250ms).
	MaxBackoff time.Duration
	// MaxWait bounds the delays the retention scenario waits before its
	// retry (default 30s): it checks up to min(retention, MaxWait).
	MaxWait time.Duration
	// Backend provides the fault proxies; nil means a fresh embedded
	// Toxiproxy.
	Backend faults.Backend
	// Repro renders the command that replays a failing scenario from its
	// seed (the CLI sets it; Go tests print the rapid flags that replay it).
	Repro func(id ID, seed uint64) string
	// Progress, when set, is called after every trial (from several
	// goroutines at once).
	Progress func(Progress)
	// Attempts, when set, receives one line per attempt (a -v log).
	Attempts io.Writer
}

// Progress is where a running scenario stands.
type Progress struct {
	Tool     string
	Scenario ID
	// Checks and Valid count finished trials (up to the first failure);
	// Shrinking is set once a failure was found, while it is minimised.
	Checks, Valid int
	Shrinking     bool
}

// DefaultShrinkTime bounds the minimisation of one failure.
const DefaultShrinkTime = 20 * time.Second

// DefaultChecks is the number of trials per scenario.
const DefaultChecks = 100

func (c Config) withDefaults(tool harness.Tool) (Config, error) {
	if c.Scenarios == nil {
		c.Scenarios = Applicable(tool)
	}
	for _, id := range c.Scenarios {
		if err := applies(id, tool); err != nil {
			return c, err
		}
	}
	if c.Only != nil {
		var kept []ID
		for _, id := range c.Scenarios {
			if c.Only(id) {
				kept = append(kept, id)
			}
		}
		c.Scenarios = kept
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.MaxWait == 0 {
		c.MaxWait = DefaultMaxWait
	}
	return c.withSearchDefaults(), nil
}
