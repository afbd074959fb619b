package scenarios_test

import (
	"context"
	"flag"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/scenarios"
)

// fast keeps trials short: short retry delays.
var fast = scenarios.Config{MaxBackoff: 10 * time.Millisecond}

// fastTimeout is the tools' declared timeout: what a user declares (plans
// draw shorter waits), so a loaded test machine does not make it run out.
const fastTimeout = 2 * time.Second

func startFixture(t testing.TB, kind fixtures.Kind) *harness.HTTPTool {
	t.Helper()
	srv, err := fixtures.Start(kind, "127.0.0.1:0", fixtures.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	tool, err := srv.HTTPTool(string(kind), fastTimeout)
	require.NoError(t, err)
	return tool
}

// setRapid sets rapid's command-line settings for Run and restores them.
func setRapid(t *testing.T, checks int, seed uint64) {
	t.Helper()
	for name, value := range map[string]string{
		"rapid.checks": strconv.Itoa(checks), "rapid.seed": strconv.FormatUint(seed, 10),
		"rapid.nofailfile": "true", "rapid.shrinktime": "5s",
	} {
		old := flag.Lookup(name).Value.String()
		require.NoError(t, flag.Set(name, value))
		t.Cleanup(func() { _ = flag.Set(name, old) })
	}
}

func TestCertifyCorrectFixture(t *testing.T) {
	scenarios.Certify(t, startFixture(t, fixtures.Correct), fast)
}

// verdictsOf is each scenario's verdict word; a failure must carry its
// counterexample.
func verdictsOf(t *testing.T, rep report.ToolReport) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, s := range rep.Scenarios {
		got[s.ID] = verdictWord(s.Verdict)
		if s.Verdict == report.Fail {
			require.NotNil(t, s.Counterexample, s.ID)
		}
	}
	return got
}

func verdictWord(v report.Verdict) string {
	switch v {
	case report.Pass:
		return "pass"
	case report.Fail:
		return "fail"
	}
	return "inconclusive"
}

// TestFixtureVerdicts asserts that every fixture gets exactly its documented
// verdicts, several times over (ONCEPROOF_SOAK=N for a longer soak).
func TestFixtureVerdicts(t *testing.T) {
	reps := 2
	if s := os.Getenv("ONCEPROOF_SOAK"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "ONCEPROOF_SOAK")
		reps = n
	}
	setRapid(t, 20, 0)
	// The kinds run side by side, their trials sharing one set of slots.
	slots := scenarios.NewSlots(scenarios.DefaultParallel())
	for _, kind := range fixtures.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			want := fixtures.Expected(kind)
			cfg := fast
			cfg.Slots = slots
			// Retention checks up to 4s: a key kept 1s fails at about one
			// trial in four, so 40 trials miss it about once in 200,000
			// runs.
			cfg.MaxWait = 4 * time.Second
			if fixtures.Slow(kind) {
				cfg.Checks = 40
			}
			for range reps {
				tool := startFixture(t, kind)
				cfg.Scenarios = documented(tool, want)
				require.Len(t, cfg.Scenarios, len(want), "every documented scenario applies")
				rep := mustRun(t, tool, cfg)
				require.Empty(t, rep.Error)
				require.Len(t, rep.Scenarios, len(want))
				for _, s := range rep.Scenarios {
					require.Equal(t, want[s.ID], verdictWord(s.Verdict), "%s × %s: %s\n%v", kind, s.ID, s.Reason, s.Counterexample)
					if s.Verdict == report.Fail {
						require.NotNil(t, s.Counterexample, "a failure carries its evidence")
						require.NotEmpty(t, s.Counterexample.Attempts)
					} else {
						require.Positive(t, s.ValidTrials, "a pass needs trials whose fault fired")
					}
				}
			}
		})
	}
}

// documented is the scenarios of tool that its kind documents a verdict
// for, in the order they run.
func documented(tool harness.Tool, want map[string]string) []scenarios.ID {
	var ids []scenarios.ID
	for _, id := range scenarios.Applicable(tool) {
		if _, ok := want[string(id)]; ok {
			ids = append(ids, id)
		}
	}
	return ids
}

func mustRun(t *testing.T, tool harness.Tool, cfg scenarios.Config) report.ToolReport {
	t.Helper()
	rep, err := scenarios.Run(context.Background(), tool, cfg)
	require.NoError(t, err)
	return rep
}

// TestSameSeedSameCounterexample replays a failing scenario with the seed it
// reported and gets the same shrunk plan and attempt log.
func TestSameSeedSameCounterexample(t *testing.T) {
	cfg := fast
	cfg.Scenarios = []scenarios.ID{scenarios.LostResponse, scenarios.KeyMismatch}
	setRapid(t, 20, 4242)
	first := mustRun(t, startFixture(t, fixtures.Naive), cfg)
	second := mustRun(t, startFixture(t, fixtures.Naive), cfg)
	for i := range first.Scenarios {
		a, b := first.Scenarios[i], second.Scenarios[i]
		require.Equal(t, report.Fail, a.Verdict)
		require.Equal(t, a.Seed, b.Seed)
		require.Equal(t, a.Counterexample.Plan, b.Counterexample.Plan)
		require.Equal(t, shape(a.Counterexample), shape(b.Counterexample))
	}
}

// shape is a counterexample without what differs between runs (operation
// ids, markers, timings).
func shape(c *harness.Counterexample) []string {
	var s []string
	for _, a := range c.Attempts {
		s = append(s, a.Fault+" "+string(a.Outcome)+" "+strconv.Itoa(a.Status)+" "+strconv.Itoa(a.Before)+"→"+strconv.Itoa(a.After))
	}
	return s
}

// bypass is a tool that sends around the fault proxy: no fault can fire.
type bypass struct{ *harness.HTTPTool }

func (b bypass) Send(ctx context.Context, conn net.Conn, call *harness.Call, deadline time.Time) harness.Reply {
	direct, err := net.Dial("tcp", b.Upstream())
	if err != nil {
		return harness.Reply{Outcome: harness.Unknown, Err: err}
	}
	defer direct.Close()
	return b.HTTPTool.Send(ctx, direct, call, deadline)
}

// TestNoPassWhenFaultsNeverFire: a correct tool whose traffic escapes the
// proxy must not be certified: the fault scenarios are inconclusive.
func TestNoPassWhenFaultsNeverFire(t *testing.T) {
	setRapid(t, 10, 7)
	cfg := fast
	cfg.Scenarios = []scenarios.ID{scenarios.LostResponse, scenarios.PreServerError, scenarios.ConcurrentDuplicate}
	rep := mustRun(t, bypass{startFixture(t, fixtures.Correct)}, cfg)
	require.False(t, rep.AgentReady)
	for _, s := range rep.Scenarios {
		require.Equal(t, report.Inconclusive, s.Verdict, "%s: %s", s.ID, s.Reason)
		// Only refused connections (which the harness dials itself) can fire.
		require.Less(t, 2*s.ValidTrials, s.Checks, s.ID)
		require.Contains(t, s.Reason, "fault fire")
	}
}

// TestPreflightRefusesBlindOracle: an oracle that never sees the effect stops
// the certification before any scenario can pass.
func TestPreflightRefusesBlindOracle(t *testing.T) {
	for _, tc := range []struct {
		name   string
		oracle harness.Oracle
		reason string
	}{
		{"blind", harness.OracleFunc(func(context.Context, string) (int, error) { return 0, nil }), "counts nothing"},
		{"double", nil, "counts every effect twice"},
		{"stale", harness.OracleFunc(func(context.Context, string) (int, error) { return 1, nil }), "counts an effect before any call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := fixtures.Start(fixtures.Correct, "127.0.0.1:0", fixtures.Options{})
			require.NoError(t, err)
			defer srv.Close()
			cfg, err := srv.HTTPConfig("correct", fastTimeout)
			require.NoError(t, err)
			if tc.oracle == nil {
				real := cfg.Oracle
				tc.oracle = harness.OracleFunc(func(ctx context.Context, m string) (int, error) {
					n, err := real.Count(ctx, m)
					return 2 * n, err
				})
			}
			cfg.Oracle = tc.oracle
			tool, err := harness.NewHTTPTool(cfg)
			require.NoError(t, err)
			rep, err := scenarios.Run(context.Background(), tool, fast)
			require.ErrorIs(t, err, harness.ErrPreflight, tc.reason)
			require.False(t, rep.AgentReady, tc.reason)
			require.Empty(t, rep.Scenarios, tc.reason)
		})
	}
}

// TestPreflightUnreachable: nothing listening is an unreachable tool.
func TestPreflightUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	oracle, err := harness.NewHTTPOracle("http://"+addr+"/count?marker={{.Marker}}", "/count")
	require.NoError(t, err)
	tool, err := harness.NewHTTPTool(harness.HTTPConfig{Name: "gone", URL: "http://" + addr + "/tickets",
		Body: fixtures.Body, Oracle: oracle, Timeout: fastTimeout})
	require.NoError(t, err)
	_, err = scenarios.Run(context.Background(), tool, fast)
	require.ErrorIs(t, err, harness.ErrPreflight)
	require.ErrorIs(t, err, harness.ErrUnreachable)
}
