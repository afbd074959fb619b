package sarif_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/lint"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/report/reporttest"
	"github.com/onceproof/onceproof/harness/report/sarif"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "go test -update writes it")
	assert.Equal(t, string(want), string(got), name)
}

// check holds a log to what SARIF 2.1.0 and code scanning require of the
// parts onceproof writes: the version and schema, a driver with a name,
// results whose ruleIndex names their ruleId, a level of the enum, a
// message, a location with a relative URI or a file: URI, a line of 1 or
// more, a fingerprint.
func check(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Equal(t, "2.1.0", doc["version"])
	require.Equal(t, sarif.Schema, doc["$schema"])
	var log sarif.Log
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&log))
	require.Len(t, log.Runs, 1)
	run := log.Runs[0]
	require.Equal(t, "onceproof", run.Tool.Driver.Name)
	ids := map[string]bool{}
	for _, r := range run.Tool.Driver.Rules {
		require.NotEmpty(t, r.ID)
		require.False(t, ids[r.ID], "rule %s listed once", r.ID)
		ids[r.ID] = true
		require.NotEmpty(t, r.ShortDescription.Text)
		require.Contains(t, []string{"error", "warning", "note"}, r.DefaultConfiguration.Level)
	}
	for _, res := range run.Results {
		require.Less(t, res.RuleIndex, len(run.Tool.Driver.Rules))
		require.Equal(t, run.Tool.Driver.Rules[res.RuleIndex].ID, res.RuleID)
		require.Contains(t, []string{"error", "warning", "note"}, res.Level)
		require.NotEmpty(t, res.Message.Text)
		require.Len(t, res.Locations, 1)
		loc := res.Locations[0].PhysicalLocation
		require.NotEmpty(t, loc.ArtifactLocation.URI)
		if loc.ArtifactLocation.URIBaseID == "" {
			require.Regexp(t, `^file://`, loc.ArtifactLocation.URI)
		} else {
			require.NotRegexp(t, `^/|^[a-z]+:`, loc.ArtifactLocation.URI, "relative to the checkout")
		}
		if loc.Region != nil {
			require.GreaterOrEqual(t, loc.Region.StartLine, 1)
		}
		require.NotEmpty(t, res.PartialFingerprints)
	}
	return doc
}

func TestCertifyReport(t *testing.T) {
	r := reporttest.Sample()
	r.Run = &report.RunInfo{Spec: "examples/tools.yaml", Seed: 42}
	r.Tools[0].Line = 7
	r.Tools = append(r.Tools, report.ToolReport{Name: "gone", Error: "preflight failed: dial tcp 127.0.0.1:1: connection refused", Line: 20})
	var b bytes.Buffer
	require.NoError(t, sarif.Write(&b, r))
	check(t, b.Bytes())
	golden(t, "certify.sarif.golden", b.Bytes())

	log := sarif.FromReport(r)
	res := log.Runs[0].Results
	require.Len(t, res, 3, "the failure, the inconclusive scenario, the tool that was not certified; not the pass")
	assert.Equal(t, "lost-response", res[0].RuleID)
	assert.Equal(t, "error", res[0].Level)
	assert.Contains(t, res[0].Message.Text, "replay: onceproof certify --spec tools.yaml --tool naive --scenario lost-response --seed 42")
	assert.Equal(t, "examples/tools.yaml", res[0].Locations[0].PhysicalLocation.ArtifactLocation.URI)
	assert.Equal(t, 7, res[0].Locations[0].PhysicalLocation.Region.StartLine)
	assert.Equal(t, "warning", res[1].Level, "inconclusive")
	assert.Equal(t, report.RuleIDNotCertified, res[2].RuleID)

	// A known failure is a suppressed result, so code scanning does not
	// raise it.
	r.Tools[0].Scenarios[0].Baseline = report.BaselineKnown
	res = sarif.FromReport(r).Runs[0].Results
	require.Len(t, res[0].Suppressions, 1)
	assert.Equal(t, "external", res[0].Suppressions[0].Kind)
}

func TestLintReport(t *testing.T) {
	r := reporttest.Lint(t, lint.Error)
	var b bytes.Buffer
	require.NoError(t, sarif.Write(&b, r))
	check(t, b.Bytes())
	golden(t, "lint.sarif.golden", b.Bytes())
	log := sarif.FromReport(r)
	assert.Equal(t, "onceproof/lint/", log.Runs[0].AutomationDetails.ID, "its own code scanning category")
	var fromSpec int
	for _, res := range log.Runs[0].Results {
		loc := res.Locations[0].PhysicalLocation
		if loc.ArtifactLocation.URI == "tools.yaml" && loc.Region != nil {
			fromSpec++
		}
	}
	assert.Positive(t, fromSpec, "a spec's findings point at their line")
	for _, rule := range log.Runs[0].Tool.Driver.Rules {
		require.NotNil(t, rule.FullDescription, "a lint rule says why: %s", rule.ID)
	}
}

func TestHostileNamesStayData(t *testing.T) {
	r := &report.Report{Version: report.ReportVersion, Onceproof: "v1.2.3", Run: &report.RunInfo{Spec: "/abs/dir with space/t.yaml"},
		Tools: []report.ToolReport{{Name: "x\"}]}<script>", Line: 3, Scenarios: []report.ScenarioReport{{ID: "replay", Verdict: report.Fail, Reason: "a\nb"}}}}}
	var b bytes.Buffer
	require.NoError(t, sarif.Write(&b, r))
	check(t, b.Bytes())
	log := sarif.FromReport(r)
	assert.Equal(t, "1.2.3", log.Runs[0].Tool.Driver.SemanticVer)
	assert.Equal(t, "file:///abs/dir%20with%20space/t.yaml", log.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI)
}
