package harness

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/onceproof/onceproof/harness/lint"
)

// lintTestSpec has an HTTP tool with two problems the spec declares (line 5:
// method GET, line 6: a tracing header as key header) and a clean one.
const lintTestSpec = `version: 1
tools:
  - name: get-writer
    http:
      method: GET
      key_header: X-Request-Id
      url: http://127.0.0.1:8080/tickets
      headers: {X-Marker: "{{.Marker}}"}
    oracle:
      http: {url: "http://127.0.0.1:8080/count?marker={{.Marker}}", count: /count}
  - name: create-ticket
    http:
      url: http://127.0.0.1:8080/tickets
      body: '{"subject":"{{.Marker}}"}'
    oracle:
      http: {url: "http://127.0.0.1:8080/count?marker={{.Marker}}", count: /count}
`

// lintSampleReport is a lint report built by the lint itself: an MCP tool
// whose description mints keys per call and whose key is optional, the
// spec's HTTP tools, and a tool that could not be linted.
func lintSampleReport(t *testing.T, failOn lint.Severity) *Report {
	t.Helper()
	var payment mcp.Tool
	require.NoError(t, json.Unmarshal([]byte(`{"name":"create_payment","description":"Charges a card. Use a new idempotency_key for every call.",
		"annotations":{"idempotentHint":true},
		"inputSchema":{"type":"object","properties":{"amount":{"type":"integer"},
		"idempotency_key":{"type":"string","minLength":1,"description":"the payment's key"}},"required":["amount"]}}`), &payment))
	s, err := ParseSpec("tools.yaml", []byte(lintTestSpec))
	require.NoError(t, err)
	results := []lint.Result{lint.MCP(&payment, lint.MCPOptions{}), s.Tools[0].LintHTTP(), s.Tools[1].LintHTTP(), {Skipped: "mcp http://127.0.0.1:1/mcp: connection refused", Findings: []lint.Finding{}}}
	names := []string{"create_payment", "get-writer", "create-ticket", "offline"}
	r := &Report{Version: ReportVersion, Kind: KindLint, Onceproof: "test", Started: time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)}
	for i, res := range results {
		res.FailOn = failOn
		r.Tools = append(r.Tools, ToolReport{Name: names[i], Lint: &res})
	}
	return r
}

func TestSpecLintLocatesFindings(t *testing.T) {
	r := lintSampleReport(t, lint.Error)
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
	r := lintSampleReport(t, lint.Error)
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
		require.NoError(t, lintSampleReport(t, tc.failOn).WriteJUnit(&b))
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

func TestLintHTML(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, lintSampleReport(t, lint.Error).WriteHTML(&b))
	doc, err := html.Parse(&b)
	require.NoError(t, err)
	assert.Empty(t, rhtByClass(doc, "table", "matrix"), "a lint report has no verdict matrix")
	rows := rhtByClass(doc, "tr", "sev-error")
	rows = append(rows, rhtByClass(doc, "tr", "sev-warning")...)
	var got []string
	for _, r := range rows {
		got = append(got, rhtAttr(r, "data-tool")+"/"+rhtAttr(r, "data-rule"))
	}
	slices.Sort(got)
	assert.Equal(t, []string{"create_payment/key-minted-per-call", "create_payment/key-optional", "get-writer/http-key-in-request-id-header", "get-writer/http-safe-method"}, got)
	assert.Len(t, rhtByClass(doc, "tr", "fails"), 2, "the errors reach --fail-on error")
	text := rhtText(doc)
	assert.Contains(t, text, "No findings: create-ticket.")
	assert.Contains(t, text, "offline was not linted")
	assert.Contains(t, text, "Why these rules")
}

// TestCertifyReportCarriesLint checks that a certification's renderings
// show the lint without changing a verdict.
func TestCertifyReportCarriesLint(t *testing.T) {
	r := sampleReport()
	lr := lintSampleReport(t, lint.Never)
	r.Tools[0].Lint = lr.Tools[0].Lint
	r.Tools[0].Finish()
	var text, md, page bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	assert.Contains(t, text.String(), "  lint error key-minted-per-call description: tells the model")
	require.NoError(t, r.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "### Lint: 2 errors in 1 of 1 tool")
	assert.Contains(t, md.String(), "| naive |", "the verdict table is still there")
	require.NoError(t, r.WriteHTML(&page))
	assert.Contains(t, page.String(), `id="lint"`)
	assert.Contains(t, page.String(), `id="matrix"`)
	assert.NotContains(t, page.String(), `class="sev-error fails"`, "advice only: nothing fails")

	// Without lint results the renderings are what they were.
	var plain bytes.Buffer
	require.NoError(t, sampleReport().WriteMarkdown(&plain))
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
	require.NoError(t, json.Unmarshal([]byte(ReportSchema), &s))
	var ids []string
	for _, r := range lint.Rules() {
		ids = append(ids, r.ID)
	}
	assert.Equal(t, ids, s.Defs.Rule.Enum, "report.schema.json $defs.rule lists every rule id in table order")

	c := jsonschema.NewCompiler()
	schema, err := jsonschema.UnmarshalJSON(strings.NewReader(ReportSchema))
	require.NoError(t, err)
	require.NoError(t, c.AddResource("report.schema.json", schema))
	sch, err := c.Compile("report.schema.json")
	require.NoError(t, err)
	validate := func(r *Report) error {
		var b bytes.Buffer
		require.NoError(t, r.WriteJSON(&b))
		doc, err := jsonschema.UnmarshalJSON(&b)
		require.NoError(t, err)
		return sch.Validate(doc)
	}
	r := lintSampleReport(t, lint.Error)
	require.NoError(t, validate(r))
	r.Tools[0].Lint.Findings[0].Rule = "no-such-rule"
	require.Error(t, validate(r), "an unknown rule id fails the schema")
	r = lintSampleReport(t, lint.Error)
	r.Tools[0].Lint.FailOn = "sometimes"
	require.Error(t, validate(r), "an unknown threshold fails the schema")
}
