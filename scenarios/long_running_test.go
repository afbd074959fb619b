package scenarios_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/scenarios"
)

// TestLongRunningFixtureVerdicts: each long-running fixture gets exactly
// its documented verdicts; a failure carries a shrunk counterexample that
// breaks the rule the kind's bug is about, with the status polls recorded.
func TestLongRunningFixtureVerdicts(t *testing.T) {
	setRapid(t, 20, 0)
	slots := scenarios.NewSlots(scenarios.DefaultParallel())
	// rules is the rule each kind's long-running failure must name.
	rules := map[fixtures.Kind][]report.Rule{
		fixtures.LongRunningRestarts: {report.RuleExactlyOnce, report.RuleOperationID},
		fixtures.LongRunningForgets:  {report.RuleStatusPoll},
	}
	kinds := fixtures.LongRunningKinds()
	require.Equal(t, []fixtures.Kind{fixtures.LongRunning, fixtures.LongRunningRestarts, fixtures.LongRunningForgets}, kinds)
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			want := fixtures.Expected(kind)
			cfg := fast
			cfg.Slots = slots
			tool := startFixture(t, kind)
			cfg.Scenarios = documented(tool, want)
			require.Len(t, cfg.Scenarios, len(want), "every documented scenario applies")
			rep := mustRun(t, tool, cfg)
			require.Empty(t, rep.Error)
			for _, s := range rep.Scenarios {
				require.Equal(t, want[s.ID], verdictWord(s.Verdict), "%s × %s: %s\n%v", kind, s.ID, s.Reason, s.Counterexample)
				if s.Verdict != report.Fail {
					require.Positive(t, s.ValidTrials, "a pass needs valid trials")
					continue
				}
				c := s.Counterexample
				require.NotNil(t, c, "a failure carries its evidence")
				require.NotEmpty(t, c.Attempts)
				if s.ID != string(scenarios.LongRunning) {
					continue
				}
				assert.Contains(t, rules[kind], c.Rule, "%s: %s", kind, c.Violation)
				// Shrunk: a trigger or two, the polls until it finished, a
				// retry (the shrink may run out of time on a loaded machine,
				// which the report says, but not before it got this small).
				assert.LessOrEqual(t, len(c.Attempts), 12, "a shrunk counterexample: %s", c.Shrink)
				var b strings.Builder
				require.NoError(t, (&report.Report{Tools: []report.ToolReport{rep}}).WriteText(&b))
				t.Logf("%s:\n%s", kind, b.String())
				if kind == fixtures.LongRunningForgets {
					assert.True(t, hasPoll(c.Attempts, string(harness.StateNotFound)), "the poll that found nothing is in the log:\n%s", c.Violation)
				}
			}
		})
	}
}

func hasPoll(as []report.Attempt, state string) bool {
	for _, a := range as {
		if strings.HasPrefix(a.Poll, state) {
			return true
		}
	}
	return false
}

// TestLongRunningApplies: the long-running scenario runs for a tool with a
// long_running section, and asking for it of any other is refused, saying
// what it needs.
func TestLongRunningApplies(t *testing.T) {
	id, err := scenarios.ParseID("long-running")
	require.NoError(t, err)
	assert.Equal(t, scenarios.LongRunning, id)
	assert.Contains(t, scenarios.Applicable(startFixture(t, fixtures.LongRunning)), scenarios.LongRunning)
	plain := startFixture(t, fixtures.Correct)
	assert.NotContains(t, scenarios.Applicable(plain), scenarios.LongRunning, "no long_running section")
	_, err = scenarios.Run(context.Background(), plain, scenarios.Config{Scenarios: []scenarios.ID{scenarios.LongRunning}})
	require.ErrorIs(t, err, scenarios.ErrNotApplicable)
	assert.ErrorContains(t, err, "long_running section")
}

// TestLongRunningByLocation: a status call that follows the trigger's
// Location header as it is judges like one built from the body's id.
func TestLongRunningByLocation(t *testing.T) {
	for _, tc := range []struct {
		kind fixtures.Kind
		want report.Verdict
	}{
		{fixtures.LongRunning, report.Pass},
		{fixtures.LongRunningForgets, report.Fail},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			srv, err := fixtures.Start(tc.kind, "127.0.0.1:0", fixtures.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = srv.Close() })
			c, err := srv.HTTPConfig(string(tc.kind), fastTimeout)
			require.NoError(t, err)
			c.LongRunning.OperationIDHeader, c.LongRunning.StatusURL = "Location", "{{.OperationID}}"
			tool, err := harness.NewHTTPTool(c)
			require.NoError(t, err)
			cfg := fast
			cfg.Scenarios, cfg.Checks = []scenarios.ID{scenarios.LongRunning}, 10
			rep := mustRun(t, tool, cfg)
			require.Empty(t, rep.Error)
			s := rep.Scenarios[0]
			require.Equal(t, tc.want, s.Verdict, s.Reason)
			if tc.want == report.Fail {
				assert.Equal(t, report.RuleStatusPoll, s.Counterexample.Rule)
				assert.Contains(t, s.Reason, `operation "/operations/t-`)
			}
		})
	}
}
