package baseline_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/baseline"
	"github.com/onceproof/onceproof/harness/report"
)

func TestLoadLocatesErrors(t *testing.T) {
	for _, tc := range []struct {
		text, want, reason string
	}{
		{"version: 2\nknown_failures: []\n", "b.yaml:1: version: want 1, got 2", "a version the reader does not know"},
		{"version: 1\nknown_failures:\n  - {tool: a, scenario: lost-response}\n  - {tool: a}\n", "b.yaml:4: known_failures[1]: want tool and scenario", "an entry without a scenario, at its line"},
		{"version: 1\nknown_failures:\n  - {tool: a, scenario: x}\n  - {tool: a, scenario: x}\n", "b.yaml:4: known_failures[1]: duplicate entry a / x", "a duplicate, at the second entry's line"},
		{"version: 1\nknown_failure: []\n", "b.yaml:2: field known_failure not found in type baseline.Baseline", "a misspelt field"},
		{"version: 1\nknown_failures: [\n", "b.yaml:2: did not find expected node content", "broken YAML"},
		{"", "b.yaml: empty file: want version: 1 and known_failures", "an empty file"},
	} {
		path := filepath.Join(t.TempDir(), "b.yaml")
		require.NoError(t, os.WriteFile(path, []byte(tc.text), 0o644))
		_, err := baseline.Load(path)
		require.Error(t, err, tc.reason)
		assert.ErrorIs(t, err, baseline.ErrBaseline, tc.reason)
		var be *baseline.Error
		require.True(t, errors.As(err, &be), tc.reason)
		be.File = "b.yaml"
		assert.Equal(t, tc.want, be.Error(), tc.reason)
	}
	_, err := baseline.Load(filepath.Join(t.TempDir(), "missing.yaml"))
	require.Error(t, err)
	assert.NotErrorIs(t, err, baseline.ErrBaseline, "a file that cannot be read is not a content error")
}

func TestApplyMarksKnownAndStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.yaml")
	require.NoError(t, os.WriteFile(path, []byte("version: 1\nknown_failures:\n  - {tool: a, scenario: lost-response}\n  - {tool: a, scenario: replay}\n  - {tool: b, scenario: replay}\n"), 0o644))
	b, err := baseline.Load(path)
	require.NoError(t, err)
	r := &report.Report{Tools: []report.ToolReport{{Name: "a", Scenarios: []report.ScenarioReport{
		{ID: "lost-response", Verdict: report.Fail}, {ID: "replay", Verdict: report.Pass}, {ID: "key-mismatch", Verdict: report.Fail},
	}}}}
	unmatched := b.Apply(r)
	assert.Equal(t, report.BaselineKnown, r.Tools[0].Scenarios[0].Baseline, "a listed failure is known")
	assert.Equal(t, report.BaselineStale, r.Tools[0].Scenarios[1].Baseline, "a listed pair that passes is stale")
	assert.Empty(t, r.Tools[0].Scenarios[2].Baseline, "an unlisted failure stays a failure")
	assert.Equal(t, []baseline.Failure{{Tool: "b", Scenario: "replay"}}, unmatched, "a pair that did not run is reported")
}
