package scenarios_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/scenarios"
)

// TestCounterexampleIndependentOfParallel: the same seed gives the same
// failing trial, the same shrunk plan and the same attempt log whether the
// trials run one at a time or side by side, and the reported seed replays
// the failure as the first trial of a new run.
func TestCounterexampleIndependentOfParallel(t *testing.T) {
	for _, tc := range []struct {
		kind   fixtures.Kind
		id     scenarios.ID
		race   bool
		reason string
	}{
		{fixtures.Naive, scenarios.LostResponse, false, "a deterministic failure"},
		{fixtures.Naive, scenarios.KeyMismatch, false, "a deterministic failure of another scenario"},
		{fixtures.CheckThenAct, scenarios.ConcurrentDuplicate, true, "a race: which trial loses it first depends on timing, its shrunk form does not"},
	} {
		t.Run(string(tc.kind)+"/"+string(tc.id), func(t *testing.T) {
			var reps []report.ScenarioReport
			for _, parallel := range []int{1, scenarios.DefaultParallel()} {
				cfg := scenarios.Config{Scenarios: []scenarios.ID{tc.id}, Checks: 30, Seed: 4242, Parallel: parallel}
				rep := mustRun(t, startFixture(t, tc.kind), cfg)
				require.Equal(t, report.Fail, rep.Scenarios[0].Verdict, "parallel %d: %s", parallel, tc.reason)
				reps = append(reps, rep.Scenarios[0])
			}
			a, b := reps[0], reps[1]
			if !tc.race {
				require.Equal(t, a.Checks, b.Checks, "the same trial failed first: %s", tc.reason)
				require.Equal(t, a.Seed, b.Seed, tc.reason)
			}
			require.Equal(t, a.Counterexample.Plan, b.Counterexample.Plan, tc.reason)
			require.Equal(t, shape(a.Counterexample), shape(b.Counterexample), tc.reason)

			// The reported seed replays the failure as trial 0 (a race
			// may need a few trials to be lost again).
			cfg := scenarios.Config{Scenarios: []scenarios.ID{tc.id}, Checks: 30, Seed: a.Seed}
			again := mustRun(t, startFixture(t, tc.kind), cfg).Scenarios[0]
			require.Equal(t, report.Fail, again.Verdict, tc.reason)
			if !tc.race {
				require.Equal(t, 1, again.Checks, "the replayed seed fails at once: %s", tc.reason)
			}
			require.Equal(t, a.Counterexample.Plan, again.Counterexample.Plan, tc.reason)
		})
	}
}

// TestBudgetTradesTimeForDepth: a budget alone runs as many trials as fit
// and says how deep they went; with checks too, checks caps them.
func TestBudgetTradesTimeForDepth(t *testing.T) {
	tool := startFixture(t, fixtures.Correct)
	rep := mustRun(t, tool, scenarios.Config{Scenarios: []scenarios.ID{scenarios.PreServerError}, Budget: 300 * time.Millisecond, MaxBackoff: time.Millisecond})
	s := rep.Scenarios[0]
	require.Equal(t, report.Pass, s.Verdict, s.Reason)
	require.Positive(t, s.Checks)
	require.InDelta(t, report.RuledOut(s.ValidTrials), s.RuledOut, 1e-12, "the depth is stated")

	rep = mustRun(t, tool, scenarios.Config{Scenarios: []scenarios.ID{scenarios.PreServerError}, Budget: time.Hour, Checks: 7})
	require.Equal(t, 7, rep.Scenarios[0].Checks, "checks caps a budget")
}

// TestRuledOutIsTheRuleOfThree: (1-p)^n = 0.05, about 3/n.
func TestRuledOutIsTheRuleOfThree(t *testing.T) {
	for _, tc := range []struct {
		valid  int
		want   float64
		reason string
	}{
		{0, 0, "no trial shows nothing"},
		{1, 0.95, "one trial rules out only a near-certain failure"},
		{100, 0.0295, "100 trials: about 3%"},
		{1000, 0.002991, "1000 trials: about 0.3%"},
	} {
		require.InDelta(t, tc.want, report.RuledOut(tc.valid), 1e-4, tc.reason)
	}
}

// slowTool is an HTTP write tool that works 150ms before committing and,
// like many Go services, stops (commits nothing) when its client goes away
// first. dedupe makes it honour keys.
type slowTool struct {
	dedupe bool

	mu      sync.Mutex
	effects map[string]int
	keys    map[string]string
	n       int
}

func (s *slowTool) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		s.mu.Lock()
		n := s.effects[r.URL.Query().Get("marker")]
		s.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]int{"count": n})
		return
	}
	body, _ := io.ReadAll(r.Body)
	key := r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	if id, ok := s.keys[key]; ok && s.dedupe {
		s.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]string{"id": id})
		return
	}
	s.mu.Unlock()
	select {
	case <-r.Context().Done():
		return // the client went away: nothing is committed
	case <-time.After(150 * time.Millisecond):
	}
	s.mu.Lock()
	s.n++
	id := "s-" + strings.Repeat("x", s.n%3) + string(rune('a'+s.n%26))
	if s.dedupe {
		if old, ok := s.keys[key]; ok {
			id = old
		} else {
			s.keys[key] = id
			s.effects[marker(body)]++
		}
	} else {
		s.effects[marker(body)]++
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]string{"id": id})
}

func marker(body []byte) string {
	var v struct{ Subject string }
	_ = json.Unmarshal(body, &v)
	return strings.TrimPrefix(v.Subject, "refund ")
}

func startSlow(t *testing.T, dedupe bool) *harness.HTTPTool {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: &slowTool{dedupe: dedupe, effects: map[string]int{}, keys: map[string]string{}}}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	base := "http://" + ln.Addr().String()
	oracle, err := harness.NewHTTPOracle(base+"/count?marker={{.Marker}}", "/count")
	require.NoError(t, err)
	tool, err := harness.NewHTTPTool(harness.HTTPConfig{Name: "slow", URL: base + "/tickets", Body: fixtures.Body,
		Headers: map[string]string{"Content-Type": "application/json"}, Timeout: 2 * time.Second, ResultID: "/id", Oracle: oracle})
	require.NoError(t, err)
	return tool
}

// TestCallerStaysWhileTheToolWorks: a tool that stops when its client goes
// away is met by a caller that stays until the commit, so short drawn
// deadlines neither void the trials of a correct one nor hide the
// duplicate of a naive one.
func TestCallerStaysWhileTheToolWorks(t *testing.T) {
	cfg := scenarios.Config{Scenarios: []scenarios.ID{scenarios.LostResponse}, Checks: 20}
	rep := mustRun(t, startSlow(t, true), cfg)
	s := rep.Scenarios[0]
	require.Equal(t, report.Pass, s.Verdict, s.Reason)
	require.Greater(t, 2*s.ValidTrials, s.Checks, s.Reason)

	rep = mustRun(t, startSlow(t, false), cfg)
	require.Equal(t, report.Fail, rep.Scenarios[0].Verdict, rep.Scenarios[0].Reason)
}

// TestInterruptWhileShrinkingKeepsTheFailure: a run interrupted while it
// shrinks reports the smallest failing case found so far, marked as such.
func TestInterruptWhileShrinkingKeepsTheFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	cfg := scenarios.Config{Scenarios: []scenarios.ID{scenarios.ConcurrentDuplicate}, Checks: 50, Seed: 99,
		Progress: func(p scenarios.Progress) {
			if p.Shrinking {
				once.Do(cancel)
			}
		}}
	rep, err := scenarios.Run(ctx, startFixture(t, fixtures.CheckThenAct), cfg)
	require.ErrorIs(t, err, context.Canceled)
	s := rep.Scenarios[0]
	require.Equal(t, report.Fail, s.Verdict, s.Reason)
	require.NotNil(t, s.Counterexample)
	require.NotEmpty(t, s.Counterexample.Attempts)
	require.Contains(t, s.Counterexample.Shrink, "interrupted")
}

// TestChaosWorkload: many agents with faults raining on them find no
// violation on the correct fixture and the check-then-act race on the
// broken one, with the attempts that show it.
func TestChaosWorkload(t *testing.T) {
	cfg := scenarios.ChaosConfig{Agents: 16, Ops: 400, FaultRate: 0.2, DuplicateRate: 0.2, Seed: 5, MaxBackoff: 20 * time.Millisecond}
	rep, err := scenarios.Chaos(context.Background(), startFixture(t, fixtures.Correct), cfg)
	require.NoError(t, err)
	require.Equal(t, 400, rep.Ops)
	require.Empty(t, rep.Violations, "%+v", rep.Violations)
	require.Positive(t, rep.Faults)
	require.Positive(t, rep.RetryRate)
	require.Positive(t, rep.DedupeHitRate, "retries and duplicates of a correct tool are answered from its record")
	require.Positive(t, rep.Latency.P50)

	rep, err = scenarios.Chaos(context.Background(), startFixture(t, fixtures.CheckThenAct), cfg)
	require.NoError(t, err)
	require.NotEmpty(t, rep.Violations)
	v := rep.Violations[0]
	require.Greater(t, v.Effects, 1, v.Violation)
	require.GreaterOrEqual(t, len(v.Attempts), 2, "the timeline shows the duplicate attempts")

	_, err = scenarios.Chaos(context.Background(), startFixture(t, fixtures.Correct), scenarios.ChaosConfig{Agents: 5000})
	require.ErrorIs(t, err, scenarios.ErrChaosConfig)
}
