package report_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/report/reporttest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestReportGolden pins the text and JSON renderings (go test -update
// rewrites the golden files).
func TestReportGolden(t *testing.T) {
	r := reporttest.Sample()
	r.Tools[0].Finish()
	require.False(t, r.Tools[0].AgentReady)
	for _, tc := range []struct {
		file   string
		render func(*bytes.Buffer) error
	}{
		{"report.txt.golden", func(b *bytes.Buffer) error { return r.WriteText(b) }},
		{"report.json.golden", func(b *bytes.Buffer) error { return r.WriteJSON(b) }},
	} {
		var b bytes.Buffer
		require.NoError(t, tc.render(&b))
		path := filepath.Join("testdata", tc.file)
		if *update {
			require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test -update to create %s", path)
		require.Equal(t, string(want), b.String())
	}
}

func TestAgentReadyNeedsEveryScenarioToPass(t *testing.T) {
	for _, tc := range []struct {
		tool   report.ToolReport
		want   bool
		reason string
	}{
		{report.ToolReport{Scenarios: []report.ScenarioReport{{Verdict: report.Pass}, {Verdict: report.Pass}}}, true, "all passed"},
		{report.ToolReport{Scenarios: []report.ScenarioReport{{Verdict: report.Pass}, {Verdict: report.Inconclusive}}}, false, "inconclusive is not a pass"},
		{report.ToolReport{Scenarios: []report.ScenarioReport{{Verdict: report.Fail}}}, false, "failed"},
		{report.ToolReport{}, false, "nothing ran"},
		{report.ToolReport{Error: "preflight", Scenarios: []report.ScenarioReport{{Verdict: report.Pass}}}, false, "preflight failed"},
	} {
		tc.tool.Finish()
		require.Equal(t, tc.want, tc.tool.AgentReady, tc.reason)
	}
}
