package report_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/lint"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/report/reporttest"
)

func TestSpecLintLocatesFindings(t *testing.T) {
	r := reporttest.Lint(t, lint.Error)
	var got []string
	for _, f := range r.Tools[1].Lint.Findings {
		got = append(got, f.Rule+" "+f.Field+" "+f.Where)
	}
	assert.Equal(t, []string{"http-safe-method http.method tools.yaml:5", "http-key-in-request-id-header http.key_header tools.yaml:6"}, got)
	assert.Empty(t, r.Tools[2].Lint.Findings, "the README's shape is clean")
	assert.Equal(t, []string{"key-minted-per-call", "key-optional"}, rulesOf(r.Tools[0].Lint.Findings))
}

func rulesOf(fs []lint.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule)
	}
	return out
}

// TestLintReportGolden pins the text, Markdown, JUnit and JSON renderings of
// a lint report (go test -update rewrites them).
func TestLintReportGolden(t *testing.T) {
	r := reporttest.Lint(t, lint.Error)
	for _, tc := range []struct {
		file   string
		render func(*bytes.Buffer) error
	}{
		{"lint.txt.golden", func(b *bytes.Buffer) error { return r.WriteText(b) }},
		{"lint.md.golden", func(b *bytes.Buffer) error { return r.WriteMarkdown(b) }},
		{"lint.junit.golden", func(b *bytes.Buffer) error { return r.WriteJUnit(b) }},
		{"lint.json.golden", func(b *bytes.Buffer) error { return r.WriteJSON(b) }},
	} {
		var b bytes.Buffer
		require.NoError(t, tc.render(&b))
		path := filepath.Join("testdata", "lint", tc.file)
		if *update {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test ./harness -run TestLintReportGolden -update to create %s", path)
		assert.Equal(t, string(want), b.String(), tc.file)
	}
}

func TestLintJUnitFollowsFailOn(t *testing.T) {
	type junit struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
				Out     string    `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	for _, tc := range []struct {
		failOn   lint.Severity
		failures int
		reason   string
	}{
		{lint.Error, 2, "the errors fail: key-minted-per-call and key-optional"},
		{lint.Warning, 4, "every rule with a finding fails"},
		{lint.Never, 0, "advice only (before certify)"},
	} {
		var b bytes.Buffer
		require.NoError(t, reporttest.Lint(t, tc.failOn).WriteJUnit(&b))
		var root junit
		require.NoError(t, xml.Unmarshal(b.Bytes(), &root))
		assert.Equal(t, tc.failures, root.Failures, tc.reason)
		require.Len(t, root.Suites, 4)
		assert.Len(t, root.Suites[0].Cases, len(lint.Rules())-3, "one case per MCP rule checked")
		assert.Len(t, root.Suites[2].Cases, 2, "one case per HTTP rule checked")
		require.Len(t, root.Suites[3].Cases, 1)
		assert.NotNil(t, root.Suites[3].Cases[0].Skipped, "a tool that was not linted is skipped, not passed")
		if tc.failOn == lint.Never {
			i := slices.IndexFunc(root.Suites[0].Cases, func(c struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
				Out     string    `xml:"system-out"`
			}) bool {
				return c.Name == "lint: key-minted-per-call"
			})
			require.GreaterOrEqual(t, i, 0)
			assert.Contains(t, root.Suites[0].Cases[i].Out, "key-minted-per-call", "findings below the threshold are still shown")
		}
	}
}

// TestCertifyReportCarriesLint checks that a certification's renderings
// show the lint without changing a verdict.
func TestCertifyReportCarriesLint(t *testing.T) {
	r := reporttest.Sample()
	lr := reporttest.Lint(t, lint.Never)
	r.Tools[0].Lint = lr.Tools[0].Lint
	r.Tools[0].Finish()
	var text, md bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	assert.Contains(t, text.String(), "  lint error key-minted-per-call description: tells the model")
	require.NoError(t, r.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "### Lint: 2 errors in 1 of 1 tool")
	assert.Contains(t, md.String(), "| naive |", "the verdict table is still there")

	// Without lint results the renderings are what they were.
	var plain bytes.Buffer
	require.NoError(t, reporttest.Sample().WriteMarkdown(&plain))
	assert.NotContains(t, plain.String(), "Lint")
}

// TestReportSchemaCoversLint ties the schema's rule list to the rule table
// and validates a lint report against it.
func TestReportSchemaCoversLint(t *testing.T) {
	var s struct {
		Defs struct {
			Rule struct {
				Enum []string `json:"enum"`
			} `json:"rule"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal([]byte(report.ReportSchema), &s))
	var ids []string
	for _, r := range lint.Rules() {
		ids = append(ids, r.ID)
	}
	assert.Equal(t, ids, s.Defs.Rule.Enum, "report.schema.json $defs.rule lists every rule id in table order")

	c := jsonschema.NewCompiler()
	schema, err := jsonschema.UnmarshalJSON(strings.NewReader(report.ReportSchema))
	require.NoError(t, err)
	require.NoError(t, c.AddResource("report.schema.json", schema))
	sch, err := c.Compile("report.schema.json")
	require.NoError(t, err)
	validate := func(r *report.Report) error {
		var b bytes.Buffer
		require.NoError(t, r.WriteJSON(&b))
		doc, err := jsonschema.UnmarshalJSON(&b)
		require.NoError(t, err)
		return sch.Validate(doc)
	}
	r := reporttest.Lint(t, lint.Error)
	require.NoError(t, validate(r))
	r.Tools[0].Lint.Findings[0].Rule = "no-such-rule"
	require.Error(t, validate(r), "an unknown rule id fails the schema")
	r = reporttest.Lint(t, lint.Error)
	r.Tools[0].Lint.FailOn = "sometimes"
	require.Error(t, validate(r), "an unknown threshold fails the schema")
}
