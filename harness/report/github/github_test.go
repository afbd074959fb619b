package github_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/lint"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/report/github"
	"github.com/onceproof/onceproof/harness/report/reporttest"
)

// unescape is the runner's unescaping of a message.
func unescape(s string) string {
	return strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%").Replace(s)
}

func TestAnnotations(t *testing.T) {
	r := reporttest.Sample()
	r.Run = &report.RunInfo{Spec: "examples/tools.yaml"}
	r.Tools[0].Line = 7
	var b bytes.Buffer
	require.NoError(t, github.Write(&b, r))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 2, "%s", b.String())
	assert.True(t, strings.HasPrefix(lines[0], "::error file=examples/tools.yaml,line=7,title=onceproof%3A naive × lost-response FAILED::"), lines[0])
	_, msg, _ := strings.Cut(lines[0][2:], "::")
	assert.Equal(t, "2 effects for marker m1, want exactly 1\nplan: lose-response/limit-data, then delivered after 0s\nreplay: onceproof certify --spec tools.yaml --tool naive --scenario lost-response --seed 42", unescape(msg))
	assert.True(t, strings.HasPrefix(lines[1], "::warning file=examples/tools.yaml,line=7,title=onceproof%3A naive × concurrent-duplicate inconclusive::"), lines[1])

	r.Tools[0].Scenarios[0].Baseline = report.BaselineKnown
	b.Reset()
	require.NoError(t, github.Write(&b, r))
	assert.True(t, strings.HasPrefix(b.String(), "::notice "), "a known failure is a notice: %s", b.String())
}

func TestLintAnnotationsPointAtTheirLine(t *testing.T) {
	r := reporttest.Lint(t, lint.Error)
	var b bytes.Buffer
	require.NoError(t, github.Write(&b, r))
	assert.Regexp(t, `(?m)^::warning file=tools\.yaml,line=[0-9]+,title=onceproof%3A get-writer%3A http-safe-method `, b.String())
	assert.Contains(t, b.String(), "%0Awhy: ", "the explanation follows the message")
}

// TestNoCommandInjection: whatever a tool's name or message holds, each
// problem is one line and one command.
func TestNoCommandInjection(t *testing.T) {
	evil := "x\n::add-mask::secret\r\n::stop-commands::tok,file=/etc/passwd:9 100%"
	r := &report.Report{Version: report.ReportVersion, Run: &report.RunInfo{Spec: "a,b:c.yaml"},
		Tools: []report.ToolReport{{Name: evil, Line: 2, Scenarios: []report.ScenarioReport{{ID: "replay", Verdict: report.Fail, Reason: evil}}}}}
	var b bytes.Buffer
	require.NoError(t, github.Write(&b, r))
	out := strings.TrimSuffix(b.String(), "\n")
	require.NotContains(t, out, "\n")
	require.NotContains(t, out, "\r")
	require.True(t, strings.HasPrefix(out, "::error file=a%2Cb%3Ac.yaml,line=2,title="), out)
	props, msg, ok := strings.Cut(out[len("::error "):], "::")
	require.True(t, ok)
	assert.Equal(t, 3, len(strings.Split(props, ",")), "file, line and title: the name's comma is escaped")
	assert.Equal(t, evil, unescape(msg))
	assert.Equal(t, "a%25b", github.Escape("a%b"))
}
