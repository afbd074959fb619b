package reporttest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/lint"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/spec"
)

func Sample() *report.Report {
	return &report.Report{
		Version: report.ReportVersion, Onceproof: "test", Toxiproxy: "embedded",
		Started: time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC),
		Tools: []report.ToolReport{{
			Name: "naive",
			Scenarios: []report.ScenarioReport{
				{ID: "lost-response", Verdict: report.Fail, Checks: 1, ValidTrials: 1, Seed: 42,
					Reason: "2 effects for marker m1, want exactly 1",
					Counterexample: &report.Counterexample{
						Plan:      "lose-response/limit-data, then delivered after 0s",
						Violation: "2 effects for marker m1, want exactly 1",
						Attempts: []report.Attempt{
							{N: 1, Op: "op-1a2b3c4d-00000007", Fault: "lose-response/limit-data", Phase: report.PhaseResponseLost, Start: 66 * time.Microsecond, Outcome: report.Unknown, Before: 0, After: 1},
							{N: 2, Op: "op-1a2b3c4d-00000007", Start: 4 * time.Millisecond, Outcome: report.OK, Status: 201, ResultID: "t-7", Before: 1, After: 2},
						},
						Effects: []report.Effect{{Marker: "m1", Count: 2, Want: 1}},
					},
					Repro: "onceproof certify --spec tools.yaml --tool naive --scenario lost-response --seed 42"},
				{ID: "pre-server-error", Verdict: report.Pass, Passed: true, Checks: 100, ValidTrials: 100, Seed: 42},
				{ID: "concurrent-duplicate", Verdict: report.Inconclusive, Checks: 100, ValidTrials: 3, Seed: 42,
					Reason: "only 3 of 100 trials had their fault fire"},
			},
		}},
	}
}

// Contracted is a run under a declared contract: a replay that
// drops its Location (with the headers it recorded), an acknowledged write
// without an effect, and a retention pass.
func Contracted(t testing.TB) *report.Report {
	t.Helper()
	c, err := report.Contract{Retention: 24 * time.Hour, Volatile: []string{"/request_id"}, ReplayedHeader: "Idempotent-Replayed"}.Resolve()
	require.NoError(t, err)
	drift := &report.Counterexample{
		Plan:      "a delivered call, then 1 replay with the same key after 0s",
		Violation: `profile ietf: attempt 2 replays attempt 1 but does not repeat its answer byte for byte: header Location: absent, want "/tickets/t-7"`,
		Rule:      report.RuleReplayFidelity,
		Attempts: []report.Attempt{
			{N: 1, Op: "op-1a2b3c4d-00000007", Start: 66 * time.Microsecond, End: 2 * time.Millisecond, Outcome: report.OK, Status: 201, ResultID: "t-7",
				Headers: map[string]string{"Location": "/tickets/t-7", "Content-Type": "application/json"}, Before: 0, After: 1},
			{N: 2, Op: "op-1a2b3c4d-00000007", Start: 3 * time.Millisecond, End: 4 * time.Millisecond, Outcome: report.OK, Status: 201, ResultID: "t-7",
				Headers: map[string]string{"Content-Type": "application/json", "Idempotent-Replayed": "true"}, Before: 1, After: 1},
		},
		Effects: []report.Effect{{Marker: "m1", Count: 1, Want: 1}},
	}
	lost := &report.Counterexample{
		Plan:      "lose-response/reset, then delivered after 0s, then a replay after 0s",
		Violation: "acknowledged, no effect: attempt 2 answered 201, but the oracle counts 0 effects for marker m2 (want 1)",
		Rule:      report.RuleAckedNoEffect,
		Attempts: []report.Attempt{
			{N: 1, Op: "op-1a2b3c4d-00000009", Fault: "lose-response/reset", Phase: report.PhaseResponseLost, Start: 66 * time.Microsecond, End: time.Millisecond, Outcome: report.Unknown, Before: 0, After: 0},
			{N: 2, Op: "op-1a2b3c4d-00000009", Start: 2 * time.Millisecond, End: 3 * time.Millisecond, Outcome: report.OK, Status: 201, ResultID: "t-9", Before: 0, After: 0},
		},
		Effects: []report.Effect{{Marker: "m2", Count: 0, Want: 1}},
	}
	r := &report.Report{
		Version: report.ReportVersion, Onceproof: "test", Toxiproxy: "embedded",
		Started: time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC),
		Tools: []report.ToolReport{{
			Name:     "tickets",
			Contract: &c,
			Scenarios: []report.ScenarioReport{
				{ID: "lost-response", Verdict: report.Fail, Checks: 3, ValidTrials: 3, Seed: 42, Reason: lost.Violation, Counterexample: lost,
					Repro: "onceproof certify --spec tools.yaml --tool tickets --scenario lost-response --seed 44"},
				{ID: "replay", Verdict: report.Fail, Checks: 1, ValidTrials: 1, Seed: 42, Reason: drift.Violation, Counterexample: drift,
					Repro: "onceproof certify --spec tools.yaml --tool tickets --scenario replay --seed 42"},
				{ID: "retention", Verdict: report.Pass, Passed: true, Checks: 20, ValidTrials: 20, Seed: 42, RuledOut: report.RuledOut(20),
					LongestDelay: 2400 * time.Millisecond},
			},
		}},
	}
	r.Tools[0].Finish()
	return r
}

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

// Lint is a lint report built by the lint itself: an MCP tool
// whose description mints keys per call and whose key is optional, the
// spec's HTTP tools, and a tool that could not be linted.
func Lint(t testing.TB, failOn lint.Severity) *report.Report {
	t.Helper()
	var payment mcp.Tool
	require.NoError(t, json.Unmarshal([]byte(`{"name":"create_payment","description":"Charges a card. Use a new idempotency_key for every call.",
		"annotations":{"idempotentHint":true},
		"inputSchema":{"type":"object","properties":{"amount":{"type":"integer"},
		"idempotency_key":{"type":"string","minLength":1,"description":"the payment's key"}},"required":["amount"]}}`), &payment))
	s, err := spec.Parse("tools.yaml", []byte(lintTestSpec))
	require.NoError(t, err)
	results := []lint.Result{lint.MCP(&payment, lint.MCPOptions{}), s.Tools[0].LintHTTP(), s.Tools[1].LintHTTP(), {Skipped: "mcp http://127.0.0.1:1/mcp: connection refused", Findings: []lint.Finding{}}}
	names := []string{"create_payment", "get-writer", "create-ticket", "offline"}
	r := &report.Report{Version: report.ReportVersion, Kind: report.KindLint, Onceproof: "test", Started: time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)}
	for i, res := range results {
		res.FailOn = failOn
		r.Tools = append(r.Tools, report.ToolReport{Name: names[i], Lint: &res})
	}
	return r
}
