package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness/lint"
	"github.com/onceproof/onceproof/harness/report"
)

// startLintServer starts the MCP fixture server with its planted tools.
func startLintServer(t *testing.T) *fixtures.MCPServer {
	t.Helper()
	srv, err := fixtures.StartMCP("127.0.0.1:0", fixtures.MCPOptions{Lint: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// readReport reads a JSON report and returns each tool's rule ids, sorted.
func readReport(t *testing.T, path string) (*report.Report, map[string][]string) {
	t.Helper()
	r, err := report.ReadReport(path)
	require.NoError(t, err)
	rules := map[string][]string{}
	for _, tr := range r.Tools {
		require.NotNil(t, tr.Lint, tr.Name)
		got := []string{}
		for _, f := range tr.Lint.Findings {
			got = append(got, f.Rule)
		}
		slices.Sort(got)
		rules[tr.Name] = got
	}
	return r, rules
}

// TestLintFlagsEveryPlantedProblem is the acceptance test: lint --mcp
// against the fixture server flags each planted problem, exactly the
// documented rules per tool, and nothing on the correct tools.
func TestLintFlagsEveryPlantedProblem(t *testing.T) {
	srv := startLintServer(t)
	dir := t.TempDir()
	args := []string{"lint", "--mcp", srv.Endpoint()}
	files := map[string]string{}
	for _, f := range formatNames() {
		files[f] = filepath.Join(dir, "lint."+f)
		args = append(args, "--format", f, "--out", files[f])
	}
	code, out, errOut := runCLI(t, args...)
	require.Equal(t, exitFailed, code, "planted errors fail the default --fail-on error\n%s\n%s", out, errOut)

	r, rules := readReport(t, files["json"])
	require.Equal(t, report.KindLint, r.Kind)
	names := append(fixtures.MCPTools(), fixtures.MCPLintTools()...)
	require.Len(t, rules, len(names))
	for _, name := range names {
		want := fixtures.MCPLintExpected(name)
		slices.Sort(want)
		assert.Equal(t, want, rules[name], name)
	}

	t.Run("json validates against the published schema", func(t *testing.T) {
		validateReport(t, files["json"])
	})
	t.Run("every format names every planted rule", func(t *testing.T) {
		for _, f := range []string{"text", "markdown", "html", "junit"} {
			data, err := os.ReadFile(files[f])
			require.NoError(t, err)
			for _, name := range fixtures.MCPLintTools() {
				for _, rule := range fixtures.MCPLintExpected(name) {
					assert.Contains(t, string(data), rule, "%s names %s", f, rule)
				}
			}
		}
	})
	t.Run("junit fails one case per failing rule and tool", func(t *testing.T) {
		data, err := os.ReadFile(files["junit"])
		require.NoError(t, err)
		var root struct {
			Failures int `xml:"failures,attr"`
		}
		require.NoError(t, xml.Unmarshal(data, &root))
		assert.Equal(t, len(r.LintFailing()), root.Failures, "every planted tool has one finding per rule")
	})
	t.Run("report converts the saved JSON with the same exit code", func(t *testing.T) {
		code, out, errOut := runCLI(t, "report", "--in", files["json"], "--format", "text")
		require.Equal(t, exitFailed, code, errOut)
		require.Contains(t, out, "send_invoice: 1 error")
	})
}

func TestLintFailOnAndToolSelection(t *testing.T) {
	srv := startLintServer(t)
	for _, tc := range []struct {
		args   []string
		code   int
		output string
		reason string
	}{
		{[]string{"--tool", fixtures.MCPCreateTicket}, exitOK, "create_ticket: no findings", "the correct tool is clean"},
		{[]string{"--tool", fixtures.MCPSendSMS}, exitOK, "write-without-key", "an info finding does not fail --fail-on error"},
		{[]string{"--tool", fixtures.MCPSendSMS, "--fail-on", "info"}, exitFailed, "write-without-key", "but fails --fail-on info"},
		{[]string{"--tool", fixtures.MCPTransferFunds}, exitOK, "key-may-be-empty", "a warning does not fail --fail-on error"},
		{[]string{"--tool", fixtures.MCPTransferFunds, "--fail-on", "warning"}, exitFailed, "1 at or above --fail-on warning", "but fails --fail-on warning"},
		{[]string{"--fail-on", "never"}, exitOK, "send_invoice: 1 error", "never: findings are reported, the run passes"},
		{[]string{"--tool", fixtures.MCPDeleteRecord, "--tool", fixtures.MCPRefundPayment}, exitFailed, "refund_payment: 1 error", "two tools"},
		{[]string{"--tool", "nope"}, exitUsage, "has no such tool", "an unknown tool is a usage error"},
		{[]string{"--fail-on", "sometimes"}, exitUsage, "want error, warning, info or never", "a bad threshold"},
	} {
		code, out, errOut := runCLI(t, append([]string{"lint", "--mcp", srv.Endpoint()}, tc.args...)...)
		assert.Equal(t, tc.code, code, "%s\n%s\n%s", tc.reason, out, errOut)
		assert.Contains(t, out+errOut, tc.output, tc.reason)
	}
}

func TestLintUsageAndReach(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		output string
		reason string
	}{
		{nil, exitUsage, "exactly one of --mcp URL, --mcp-command CMD and --spec FILE", "nothing to lint"},
		{[]string{"--mcp", "http://127.0.0.1:1/mcp", "--spec", "x.yaml"}, exitUsage, "exactly one of", "both"},
		{[]string{"--mcp", "not a url"}, exitUsage, "want http://host:port/path", "a bad URL"},
		{[]string{"--mcp", "http://10.1.2.3:8090/mcp"}, exitUsage, "not a loopback address", "a remote server is refused"},
		{[]string{"--mcp", "http://" + freeAddr(t) + "/mcp"}, exitUnreachable, "unreachable", "nothing listens"},
		{[]string{"--spec", filepath.Join(t.TempDir(), "missing.yaml")}, exitUsage, "missing.yaml", "no spec file"},
		{[]string{"-h"}, exitOK, "--fail-on", "help"},
	} {
		code, out, errOut := runCLI(t, append([]string{"lint"}, tc.args...)...)
		assert.Equal(t, tc.code, code, "%s\n%s\n%s", tc.reason, out, errOut)
		assert.Contains(t, out+errOut, tc.output, tc.reason)
	}
}

// lintSpecText is a spec with an MCP entry whose key_argument the tool does
// not declare (line 8), a clean MCP entry, and an HTTP entry behind GET
// (line 22).
func lintSpecText(endpoint, count string) string {
	return fmt.Sprintf(`version: 1
tools:
  - name: invoices
    mcp:
      url: %[1]s
      tool: send_invoice
      arguments: '{"to":"{{.Marker}}","amount":{{.Int 1 9}}}'
      key_argument: invoice_key
    oracle:
      http: {url: "%[2]s", count: /count}
  - name: tickets
    mcp:
      url: %[1]s
      tool: create_ticket
      arguments: '{"subject":"{{.Marker}}","amount":{{.Int 1 9}}}'
      key_argument: idempotency_key
    oracle:
      http: {url: "%[2]s", count: /count}
  - name: get-writer
    http:
      url: http://127.0.0.1:9/tickets
      method: GET
      headers: {X-Marker: "{{.Marker}}"}
    oracle:
      http: {url: "%[2]s", count: /count}
`, endpoint, count)
}

func TestLintSpec(t *testing.T) {
	srv := startLintServer(t)
	count := srv.URL() + "/count?marker={{.Marker}}"
	path := filepath.Join(t.TempDir(), "tools.yaml")
	require.NoError(t, os.WriteFile(path, []byte(lintSpecText(srv.Endpoint(), count)), 0o644))
	out := filepath.Join(t.TempDir(), "lint.json")
	code, _, errOut := runCLI(t, "lint", "--spec", path, "--format", "json", "--out", out)
	require.Equal(t, exitFailed, code, errOut)
	r, rules := readReport(t, out)
	assert.Equal(t, map[string][]string{
		"invoices":   {"key-minted-per-call", "spec-key-argument-undeclared"},
		"tickets":    {},
		"get-writer": {"http-safe-method"},
	}, rules)
	where := map[string]string{}
	for _, f := range r.LintFindings() {
		where[f.Rule] = f.Where
	}
	assert.Equal(t, path+":8", where["spec-key-argument-undeclared"], "a spec field's own line")
	assert.Equal(t, path+":6", where["key-minted-per-call"], "the server's tool: the line of mcp.tool")
	assert.Equal(t, path+":22", where["http-safe-method"], "the method line")

	code, text, errOut := runCLI(t, "lint", "--spec", path, "--tool", "tickets")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, text, "tickets: no findings")

	// A spec naming a tool the server lacks is a spec error at mcp.tool.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(strings.Replace(lintSpecText(srv.Endpoint(), count), "tool: send_invoice", "tool: send_invoices", 1)), 0o644))
	code, _, errOut = runCLI(t, "lint", "--spec", bad)
	require.Equal(t, exitUsage, code, errOut)
	require.Contains(t, errOut, bad+":6: tools[0].mcp.tool: the server at")
}

// TestCertifyPrintsLintWithoutChangingItsVerdict certifies a planted tool on
// a scenario it passes: the lint's error is a warning on stderr and in the
// report, and the exit code is the verdict's.
func TestCertifyPrintsLintWithoutChangingItsVerdict(t *testing.T) {
	srv := startLintServer(t)
	count := srv.URL() + "/count?marker={{.Marker}}"
	path := filepath.Join(t.TempDir(), "tools.yaml")
	text := strings.Replace(lintSpecText(srv.Endpoint(), count), "key_argument: invoice_key", "key_argument: idempotency_key\n      timeout: 300ms", 1)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	out := filepath.Join(t.TempDir(), "report.json")
	code, _, errOut := runCLI(t, "certify", "--spec", path, "--tool", "invoices", "--scenario", "distinct-keys",
		"--checks", "3", "--max-backoff", "10ms", "--format", "json", "--out", out)
	require.Equal(t, exitOK, code, "distinct-keys passes: the lint does not change that\n%s", errOut)
	require.Contains(t, errOut, "lint: error key-minted-per-call invoices description")
	require.Contains(t, errOut, "they do not change the verdict")

	r, err := report.ReadReport(out)
	require.NoError(t, err)
	require.Len(t, r.Tools, 1)
	require.True(t, r.Tools[0].AgentReady)
	require.NotNil(t, r.Tools[0].Lint)
	assert.Equal(t, lint.Never, r.Tools[0].Lint.FailOn)
	assert.Equal(t, []string{"key-minted-per-call"}, rulesOfFindings(r.Tools[0].Lint.Findings))

	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(data, &raw))
	assert.NotContains(t, raw, "kind", "a certification is not a lint report")

	code, _, errOut = runCLI(t, "certify", "--spec", path, "--tool", "invoices", "--scenario", "distinct-keys",
		"--checks", "3", "--max-backoff", "10ms", "--quiet")
	require.Equal(t, exitOK, code)
	assert.Empty(t, errOut, "--quiet silences the lint warnings too")
}

func rulesOfFindings(fs []lint.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule)
	}
	return out
}
