package scenarios_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/scenarios"
)

// TestReportSchemaListsEveryScenario ties the JSON schema's scenario ids to
// the scenario table and the client checks.
func TestReportSchemaListsEveryScenario(t *testing.T) {
	var s struct {
		Defs struct {
			Scenario struct {
				Properties struct {
					ID struct {
						Enum []string `json:"enum"`
					} `json:"id"`
				} `json:"properties"`
			} `json:"scenario"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal([]byte(report.ReportSchema), &s))
	var ids []string
	for _, id := range append(scenarios.All(), scenarios.ClientChecks()...) {
		ids = append(ids, string(id))
	}
	assert.Equal(t, ids, s.Defs.Scenario.Properties.ID.Enum, "report.schema.json $defs.scenario.id lists every scenario in table order, then the client checks")
}

// forgetful counts a tool's effects for the first marker it is asked about
// (the preflight's) and none for any other: every later write the tool
// acknowledges is one without an effect.
func forgetful(real harness.Oracle) harness.Oracle {
	var mu sync.Mutex
	first := ""
	return harness.OracleFunc(func(ctx context.Context, marker string) (int, error) {
		mu.Lock()
		if first == "" {
			first = marker
		}
		counted := marker == first
		mu.Unlock()
		if !counted {
			return 0, nil
		}
		return real.Count(ctx, marker)
	})
}

// TestAcknowledgedNoEffectIsNamed: a 2xx for a write that never took effect
// is reported as such, in every scenario that sees one, under its own rule.
func TestAcknowledgedNoEffectIsNamed(t *testing.T) {
	setRapid(t, 5, 11)
	srv, err := fixtures.Start(fixtures.Correct, "127.0.0.1:0", fixtures.Options{})
	require.NoError(t, err)
	defer srv.Close()
	cfg, err := srv.HTTPConfig("forgetful", fastTimeout)
	require.NoError(t, err)
	cfg.Oracle = forgetful(cfg.Oracle)
	tool, err := harness.NewHTTPTool(cfg)
	require.NoError(t, err)
	run := fast
	run.Scenarios = []scenarios.ID{scenarios.LostResponse, scenarios.PreServerError, scenarios.ConcurrentDuplicate,
		scenarios.KeyMismatch, scenarios.DistinctKeys, scenarios.Replay}
	rep := mustRun(t, tool, run)
	for _, s := range rep.Scenarios {
		require.Equal(t, report.Fail, s.Verdict, "%s: %s", s.ID, s.Reason)
		assert.Equal(t, report.RuleAckedNoEffect, s.Counterexample.Rule, "%s: %s", s.ID, s.Reason)
		assert.True(t, strings.HasPrefix(s.Reason, "acknowledged, no effect: attempt "), "%s: %s", s.ID, s.Reason)
	}
}

// TestRetentionReportsTheLongestDelay: a retention pass says how long keys
// were shown to last, never longer than the declared retention.
func TestRetentionReportsTheLongestDelay(t *testing.T) {
	setRapid(t, 20, 0)
	tool := startFixture(t, fixtures.Expiring)
	cfg := fast
	cfg.Scenarios = []scenarios.ID{scenarios.Retention}
	rep := mustRun(t, tool, cfg)
	require.Len(t, rep.Scenarios, 1)
	s := rep.Scenarios[0]
	require.Equal(t, report.Pass, s.Verdict, s.Reason)
	assert.Positive(t, s.LongestDelay)
	assert.LessOrEqual(t, s.LongestDelay, 500*time.Millisecond, "retention: 500ms bounds the waits")
	assert.Contains(t, s.Honoured(), "keys honoured for at least ")
	require.NotNil(t, rep.Contract)
	assert.Equal(t, 500*time.Millisecond, rep.Contract.Retention)
}

// TestRetentionBoundedByMaxWait: the retention scenario waits no longer
// than Config.MaxWait, whatever the tool declares, and says so in its plan.
func TestRetentionBoundedByMaxWait(t *testing.T) {
	setRapid(t, 10, 5)
	tool := startFixture(t, fixtures.ExpiringOverclaim)
	cfg := fast
	cfg.Scenarios = []scenarios.ID{scenarios.Retention}
	cfg.MaxWait = 300 * time.Millisecond // within the 1s the tool keeps keys
	began := time.Now()
	rep := mustRun(t, tool, cfg)
	s := rep.Scenarios[0]
	require.Equal(t, report.Pass, s.Verdict, "a retention of 1m checked up to 300ms: %s", s.Reason)
	assert.LessOrEqual(t, s.LongestDelay, 300*time.Millisecond)
	assert.Less(t, time.Since(began), 10*time.Second)
}

// TestProfileDecidesTheCodes: the same Stripe-like tool passes key-mismatch
// under profile stripe and fails it under ietf, with a text that names the
// profile, the code it wants and the code it got.
func TestProfileDecidesTheCodes(t *testing.T) {
	setRapid(t, 10, 3)
	cfg := fast
	cfg.Scenarios = []scenarios.ID{scenarios.KeyMismatch}
	stripe := mustRun(t, startFixture(t, fixtures.Stripe), cfg)
	require.Equal(t, report.Pass, stripe.Scenarios[0].Verdict, stripe.Scenarios[0].Reason)
	ietf := mustRun(t, startFixture(t, fixtures.StripeAsIETF), cfg)
	s := ietf.Scenarios[0]
	require.Equal(t, report.Fail, s.Verdict)
	assert.Equal(t, report.RuleStatus, s.Counterexample.Rule)
	assert.Regexp(t, `^profile ietf: a reused key with another payload must be refused with 422 \(got 400, attempt \d\)$`, s.Reason)

	assert.NotContains(t, scenarios.Applicable(startFixture(t, fixtures.Stripe)), scenarios.MissingKey, "stripe does not require a key")
	assert.Contains(t, scenarios.Applicable(startFixture(t, fixtures.StripeAsIETF)), scenarios.MissingKey, "ietf does")
	assert.NotContains(t, scenarios.Applicable(startFixture(t, fixtures.Correct)), scenarios.Retention, "no retention declared")
}
