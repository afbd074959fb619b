package report_test

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

	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/report/reporttest"
)

// TestContractReportGolden pins every format's rendering of the contract,
// the rule broken, the recorded headers and the longest retention delay.
func TestContractReportGolden(t *testing.T) {
	r := reporttest.Contracted(t)
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
	require.NoError(t, json.Unmarshal([]byte(report.ReportSchema), &s))
	var rules, profiles []string
	for _, r := range report.Rules() {
		rules = append(rules, string(r))
	}
	for _, p := range report.Profiles() {
		profiles = append(profiles, string(p))
	}
	assert.Equal(t, rules, s.Defs.Rule.Enum, "report.schema.json $defs.rule_broken lists every rule")
	assert.Equal(t, profiles, s.Defs.Contract.Properties.Profile.Enum, "report.schema.json lists every profile")

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
	r := reporttest.Contracted(t)
	require.NoError(t, validate(r))
	r.Tools[0].Scenarios[1].Counterexample.Rule = "no-such-rule"
	require.Error(t, validate(r), "an unknown rule fails the schema")
	r = reporttest.Contracted(t)
	r.Tools[0].Contract.Codes.Replay = "sometimes"
	require.Error(t, validate(r), "an unknown replay mode fails the schema")
}

// TestCertificateSaysHowLongKeysLast: a certificate carries the contract
// and the longest retention delay checked, in words.
func TestCertificateSaysHowLongKeysLast(t *testing.T) {
	r := reporttest.Contracted(t)
	tr := r.Tools[0]
	tr.Scenarios = tr.Scenarios[2:] // the retention pass alone
	tr.Finish()
	require.True(t, tr.AgentReady)
	cert, err := report.NewCertificate(r, tr, time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.Equal(t, "keys honoured for at least 2.4s", cert.KeysHonoured())
	require.NotNil(t, cert.Contract)
	assert.Equal(t, report.ProfileIETF, cert.Contract.Profile)
	require.NoError(t, cert.Verify())
	cert.Scenarios[0].LongestDelay = time.Hour
	assert.ErrorIs(t, cert.Verify(), report.ErrTampered, "the delay is sealed")
}

// TestReportSchemaListsAttemptKinds ties the schema's attempt phase and
// failure enums to Phases and Failures: a new kind that the schema does not
// list fails here, not in a user's validator.
func TestReportSchemaListsAttemptKinds(t *testing.T) {
	var s struct {
		Defs struct {
			Attempt struct {
				Properties struct {
					Phase struct {
						Enum []string `json:"enum"`
					} `json:"phase"`
					Failure struct {
						Enum []string `json:"enum"`
					} `json:"failure"`
				} `json:"properties"`
			} `json:"attempt"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal([]byte(report.ReportSchema), &s))
	var phases, failures []string
	for _, p := range report.Phases() {
		phases = append(phases, string(p))
	}
	for _, f := range report.Failures() {
		failures = append(failures, string(f))
	}
	assert.Equal(t, phases, s.Defs.Attempt.Properties.Phase.Enum, "report.schema.json $defs.attempt.phase lists every phase")
	assert.Equal(t, failures, s.Defs.Attempt.Properties.Failure.Enum, "report.schema.json $defs.attempt.failure lists every failure")
}
