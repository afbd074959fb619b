package scenarios_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/scenarios"
)

// TestLookupFixtureVerdicts asserts that the lookup kinds get exactly
// their documented verdicts, reconcile included, twice over.
func TestLookupFixtureVerdicts(t *testing.T) {
	setRapid(t, 20, 0)
	slots := scenarios.NewSlots(scenarios.DefaultParallel())
	for _, kind := range fixtures.LookupKinds() {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			want := fixtures.Expected(kind)
			cfg := fast
			cfg.Slots = slots
			for range 2 {
				tool := startFixture(t, kind)
				cfg.Scenarios = documented(tool, want)
				require.Len(t, cfg.Scenarios, len(want), "every documented scenario applies")
				rep := mustRun(t, tool, cfg)
				require.Empty(t, rep.Error)
				for _, s := range rep.Scenarios {
					require.Equal(t, want[s.ID], verdictWord(s.Verdict), "%s × %s: %s\n%v", kind, s.ID, s.Reason, s.Counterexample)
					if s.Verdict == report.Fail {
						require.NotNil(t, s.Counterexample, "a failure carries its evidence")
						require.Equal(t, report.RuleLookupTruth, s.Counterexample.Rule, s.Reason)
						require.Contains(t, s.Reason, "the lookup said not found for a committed operation")
						requireLookupRecorded(t, s.Counterexample.Attempts, harness.LookupNotFound)
					} else {
						require.Positive(t, s.ValidTrials, "a pass needs trials whose fault fired")
					}
				}
			}
		})
	}
}

// requireLookupRecorded checks that attempts hold a lookup that answered
// want, after the oracle had counted the commit.
func requireLookupRecorded(t *testing.T, attempts []harness.Attempt, want harness.LookupAnswer) {
	t.Helper()
	for _, a := range attempts {
		if a.Lookup == want && a.Before >= 1 {
			return
		}
	}
	require.Failf(t, "no lookup recorded", "want a lookup that answered %s after a commit: %v", want, attempts)
}

// lookupTool is the correct fixture with lookup as its lookup.
func lookupTool(t *testing.T, lookup harness.LookupConfig) *harness.HTTPTool {
	t.Helper()
	srv, err := fixtures.Start(fixtures.Correct, "127.0.0.1:0", fixtures.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	c, err := srv.HTTPConfig("correct-with-lookup", fastTimeout)
	require.NoError(t, err)
	lookup.URL = srv.URL() + lookup.URL
	c.Lookup = &lookup
	tool, err := harness.NewHTTPTool(c)
	require.NoError(t, err)
	return tool
}

// TestReconcileJudgesWhatTheLookupSaid: a lookup that answers only
// statuses it does not declare shows nothing (inconclusive, never a pass);
// one that says found for everything is caught on a request that never
// reached the tool.
func TestReconcileJudgesWhatTheLookupSaid(t *testing.T) {
	setRapid(t, 10, 3)
	cfg := fast
	cfg.Scenarios = []scenarios.ID{scenarios.Reconcile}
	for _, tc := range []struct {
		name    string
		lookup  harness.LookupConfig
		verdict report.Verdict
		reason  string
	}{
		{"always-unknown", harness.LookupConfig{URL: "/tickets/by-key/{{.Key}}", Found: []int{299}, NotFound: []int{410}},
			report.Inconclusive, "every lookup answered unknown"},
		{"always-found", harness.LookupConfig{URL: "/count?marker={{.Marker}}"},
			report.Fail, "the lookup said found for an operation the oracle never counted"},
		{"by-key", harness.LookupConfig{URL: "/tickets/by-key/{{.Key}}", ResultID: "/id"},
			report.Pass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := mustRun(t, lookupTool(t, tc.lookup), cfg)
			require.Len(t, rep.Scenarios, 1)
			s := rep.Scenarios[0]
			require.Equal(t, tc.verdict, s.Verdict, "%s\n%v", s.Reason, s.Counterexample)
			require.Contains(t, s.Reason, tc.reason)
		})
	}
}

// TestReconcileNeedsALookup: a tool without a lookup does not run
// reconcile.
func TestReconcileNeedsALookup(t *testing.T) {
	tool := startFixture(t, fixtures.Correct)
	require.NotContains(t, scenarios.Applicable(tool), scenarios.Reconcile)
	require.Contains(t, scenarios.Applicable(startFixture(t, fixtures.Lookup)), scenarios.Reconcile)
}
