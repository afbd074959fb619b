package harness

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// contractSampleReport is a run under a declared contract: a replay that
// drops its Location (with the headers it recorded), an acknowledged write
// without an effect, and a retention pass.
func contractSampleReport(t *testing.T) *Report {
	t.Helper()
	c, err := Contract{Retention: 24 * time.Hour, Volatile: []string{"/request_id"}, ReplayedHeader: "Idempotent-Replayed"}.Resolve()
	require.NoError(t, err)
	drift := &Counterexample{
		Plan:      "a delivered call, then 1 replay with the same key after 0s",
		Violation: `profile ietf: attempt 2 replays attempt 1 but does not repeat its answer byte for byte: header Location: absent, want "/tickets/t-7"`,
		Rule:      RuleReplayFidelity,
		Attempts: []Attempt{
			{N: 1, Op: "op-1a2b3c4d-00000007", Start: 66 * time.Microsecond, End: 2 * time.Millisecond, Outcome: OK, Status: 201, ResultID: "t-7",
				Headers: map[string]string{"Location": "/tickets/t-7", "Content-Type": "application/json"}, Before: 0, After: 1},
			{N: 2, Op: "op-1a2b3c4d-00000007", Start: 3 * time.Millisecond, End: 4 * time.Millisecond, Outcome: OK, Status: 201, ResultID: "t-7",
				Headers: map[string]string{"Content-Type": "application/json", "Idempotent-Replayed": "true"}, Before: 1, After: 1},
		},
		Effects: []Effect{{Marker: "m1", Count: 1, Want: 1}},
	}
	lost := &Counterexample{
		Plan:      "lose-response/reset, then delivered after 0s, then a replay after 0s",
		Violation: "acknowledged, no effect: attempt 2 answered 201, but the oracle counts 0 effects for marker m2 (want 1)",
		Rule:      RuleAckedNoEffect,
		Attempts: []Attempt{
			{N: 1, Op: "op-1a2b3c4d-00000009", Fault: "lose-response/reset", Start: 66 * time.Microsecond, End: time.Millisecond, Outcome: Unknown, Before: 0, After: 0},
			{N: 2, Op: "op-1a2b3c4d-00000009", Start: 2 * time.Millisecond, End: 3 * time.Millisecond, Outcome: OK, Status: 201, ResultID: "t-9", Before: 0, After: 0},
		},
		Effects: []Effect{{Marker: "m2", Count: 0, Want: 1}},
	}
	r := &Report{
		Version: ReportVersion, Onceproof: "test", Toxiproxy: "embedded",
		Started: time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC),
		Tools: []ToolReport{{
			Name:     "tickets",
			Contract: &c,
			Scenarios: []ScenarioReport{
				{ID: "lost-response", Verdict: Fail, Checks: 3, ValidTrials: 3, Seed: 42, Reason: lost.Violation, Counterexample: lost,
					Repro: "onceproof certify --spec tools.yaml --tool tickets --scenario lost-response --seed 44"},
				{ID: "replay", Verdict: Fail, Checks: 1, ValidTrials: 1, Seed: 42, Reason: drift.Violation, Counterexample: drift,
					Repro: "onceproof certify --spec tools.yaml --tool tickets --scenario replay --seed 42"},
				{ID: "retention", Verdict: Pass, Passed: true, Checks: 20, ValidTrials: 20, Seed: 42, RuledOut: RuledOut(20),
					LongestDelay: 2400 * time.Millisecond},
			},
		}},
	}
	r.Tools[0].Finish()
	return r
}

// TestContractReportGolden pins every format's rendering of the contract,
// the rule broken, the recorded headers and the longest retention delay.
func TestContractReportGolden(t *testing.T) {
	r := contractSampleReport(t)
	for _, tc := range []struct {
		file   string
		render func(*bytes.Buffer) error
		wants  []string
	}{
		{"contract.txt.golden", func(b *bytes.Buffer) error { return r.WriteText(b) }, []string{
			"contract: profile ietf (missing key 400", "keys honoured for 24h",
			"violation (replay-fidelity)", "violation (acknowledged-no-effect): acknowledged, no effect",
			"#1 headers: Content-Type: application/json; Location: /tickets/t-7",
			"keys honoured for at least 2.4s (the longest delay checked)"}},
		{"contract.json.golden", func(b *bytes.Buffer) error { return r.WriteJSON(b) }, []string{
			`"rule": "replay-fidelity"`, `"longest_delay_ns": 2400000000`, `"profile": "ietf"`, `"Idempotent-Replayed": "true"`}},
		{"contract.md.golden", func(b *bytes.Buffer) error { return r.WriteMarkdown(b) }, []string{
			"- **tickets**: profile ietf", "<code>replay-fidelity</code>", "keys ≥2.4s"}},
		{"contract.junit.golden", func(b *bytes.Buffer) error { return r.WriteJUnit(b) }, []string{
			`type="replay-fidelity"`, `type="acknowledged-no-effect"`, `name="profile" value="ietf"`, "keys honoured for at least 2.4s"}},
		{"contract.html.golden", func(b *bytes.Buffer) error { return r.WriteHTML(b) }, []string{
			`<span class="tool-contract">profile ietf`, `<span class="rule" title="the rule broken">replay-fidelity</span>`,
			"201 t-7 · replayed", "<th>headers</th>", "keys ≥2.4s"}},
	} {
		var b bytes.Buffer
		require.NoError(t, tc.render(&b))
		for _, w := range tc.wants {
			assert.Contains(t, b.String(), w, tc.file)
		}
		path := filepath.Join("testdata", tc.file)
		if *update {
			require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test -update to create %s", path)
		assert.Equal(t, string(want), b.String(), tc.file)
	}
}

// TestReportSchemaCoversContract ties the schema's rule list to Rules and
// validates a report with a contract against it.
func TestReportSchemaCoversContract(t *testing.T) {
	var s struct {
		Defs struct {
			Rule struct {
				Enum []string `json:"enum"`
			} `json:"rule_broken"`
			Contract struct {
				Properties struct {
					Profile struct {
						Enum []string `json:"enum"`
					} `json:"profile"`
				} `json:"properties"`
			} `json:"contract"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal([]byte(ReportSchema), &s))
	var rules, profiles []string
	for _, r := range Rules() {
		rules = append(rules, string(r))
	}
	for _, p := range Profiles() {
		profiles = append(profiles, string(p))
	}
	assert.Equal(t, rules, s.Defs.Rule.Enum, "report.schema.json $defs.rule_broken lists every rule")
	assert.Equal(t, profiles, s.Defs.Contract.Properties.Profile.Enum, "report.schema.json lists every profile")

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
	r := contractSampleReport(t)
	require.NoError(t, validate(r))
	r.Tools[0].Scenarios[1].Counterexample.Rule = "no-such-rule"
	require.Error(t, validate(r), "an unknown rule fails the schema")
	r = contractSampleReport(t)
	r.Tools[0].Contract.Codes.Replay = "sometimes"
	require.Error(t, validate(r), "an unknown replay mode fails the schema")
}

// TestCertificateSaysHowLongKeysLast: a certificate carries the contract
// and the longest retention delay checked, in words.
func TestCertificateSaysHowLongKeysLast(t *testing.T) {
	r := contractSampleReport(t)
	tr := r.Tools[0]
	tr.Scenarios = tr.Scenarios[2:] // the retention pass alone
	tr.Finish()
	require.True(t, tr.AgentReady)
	cert, err := NewCertificate(r, tr, time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.Equal(t, "keys honoured for at least 2.4s", cert.KeysHonoured())
	require.NotNil(t, cert.Contract)
	assert.Equal(t, ProfileIETF, cert.Contract.Profile)
	require.NoError(t, cert.Verify())
	cert.Scenarios[0].LongestDelay = time.Hour
	assert.ErrorIs(t, cert.Verify(), ErrTampered, "the delay is sealed")
}
