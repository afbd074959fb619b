package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness/report"
)

// demoReport runs the demo on the naive and check-then-act fixtures (real
// runs with failures) and writes every format; it returns the files.
func demoReport(t *testing.T, extra ...string) (map[string]string, int, string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{}
	args := []string{"demo", "--tool", "naive", "--tool", "check-then-act", "--checks", "10", "--max-backoff", "10ms", "--seed", "7", "--quiet"}
	for _, f := range formatNames() {
		files[f] = filepath.Join(dir, "report."+f)
		args = append(args, "--format", f, "--out", files[f])
	}
	code, out, errOut := runCLI(t, append(args, extra...)...)
	return files, code, out + errOut
}

// validateReport checks the JSON report at path against the published
// schema, and returns the compiled schema.
func validateReport(t *testing.T, path string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	schema, err := jsonschema.UnmarshalJSON(strings.NewReader(report.ReportSchema))
	require.NoError(t, err)
	require.NoError(t, c.AddResource("report.schema.json", schema))
	sch, err := c.Compile("report.schema.json")
	require.NoError(t, err)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	require.NoError(t, err)
	require.NoError(t, sch.Validate(doc), path)
	return sch
}

func TestFormatsFromARealRun(t *testing.T) {
	t.Setenv("GITHUB_STEP_SUMMARY", filepath.Join(t.TempDir(), "summary.md"))
	files, code, out := demoReport(t)
	require.Equal(t, exitOK, code, out) // the demo's verdicts match the fixtures' documentation

	t.Run("json validates against the published schema", func(t *testing.T) {
		sch := validateReport(t, files["json"])
		// And the schema is not vacuous: a broken report fails it.
		var broken map[string]any
		data, _ := os.ReadFile(files["json"])
		require.NoError(t, json.Unmarshal(data, &broken))
		broken["tools"].([]any)[0].(map[string]any)["scenarios"].([]any)[0].(map[string]any)["verdict"] = "maybe"
		b, _ := json.Marshal(broken)
		doc2, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		require.NoError(t, err)
		require.Error(t, sch.Validate(doc2))
	})

	t.Run("junit parses with one suite per tool and the counterexample in the failure", func(t *testing.T) {
		data, err := os.ReadFile(files["junit"])
		require.NoError(t, err)
		var root struct {
			Failures int `xml:"failures,attr"`
			Suites   []struct {
				Name  string `xml:"name,attr"`
				Cases []struct {
					Name    string `xml:"name,attr"`
					Failure *struct {
						Message string `xml:"message,attr"`
						Type    string `xml:"type,attr"`
						Body    string `xml:",chardata"`
					} `xml:"failure"`
				} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		require.NoError(t, xml.Unmarshal(data, &root))
		require.Len(t, root.Suites, 2)
		require.Equal(t, "naive", root.Suites[0].Name)
		require.Len(t, root.Suites[0].Cases, len(fixtures.Expected(fixtures.Naive)))
		failed := map[string]string{}
		types := map[string]string{}
		for _, s := range root.Suites {
			for _, c := range s.Cases {
				if c.Failure != nil {
					failed[s.Name+"/"+c.Name] = c.Failure.Body
					types[s.Name+"/"+c.Name] = c.Failure.Type
				}
			}
		}
		require.Equal(t, 6, root.Failures) // naive: 5, check-then-act: 1
		require.Equal(t, "key-required", types["naive/missing-key"], "the failure type is the rule broken")
		require.Equal(t, "exactly-once", types["check-then-act/concurrent-duplicate"])
		body := failed["check-then-act/concurrent-duplicate"]
		require.Contains(t, body, "plan: ")
		require.Contains(t, body, "replay: onceproof demo --tool check-then-act --scenario concurrent-duplicate")
	})

	t.Run("markdown table and job summary", func(t *testing.T) {
		data, err := os.ReadFile(files["markdown"])
		require.NoError(t, err)
		md := string(data)
		require.Contains(t, md, "## onceproof: 0 of 2 tools agent-ready")
		require.Contains(t, md, "| naive | ❌ FAIL | ✅ PASS")
		require.Contains(t, md, "<summary><b>check-then-act × concurrent-duplicate</b>")
		summary, err := os.ReadFile(os.Getenv("GITHUB_STEP_SUMMARY"))
		require.NoError(t, err)
		require.Equal(t, md, string(summary), "the job summary gets the same markdown")
	})

	t.Run("html is one self-contained file with the matrix and timelines", func(t *testing.T) {
		data, err := os.ReadFile(files["html"])
		require.NoError(t, err)
		h := string(data)
		require.Contains(t, h, "<svg")
		require.Contains(t, h, `href="#fail-`)
		for _, bad := range []string{`src="http`, `href="http`, `rel="stylesheet"`, `@import`, `<script src`} {
			require.False(t, strings.Contains(h, bad), "no external assets: found %s", bad)
		}
	})

	t.Run("report converts the saved JSON to the same outputs", func(t *testing.T) {
		md := filepath.Join(t.TempDir(), "again.md")
		code, out, errOut := runCLI(t, "report", "--in", files["json"], "--format", "markdown", "--out", md, "--format", "text")
		require.Equal(t, exitFailed, code, errOut)
		require.Contains(t, out, "check-then-act: NOT agent-ready")
		a, _ := os.ReadFile(md)
		b, _ := os.ReadFile(files["markdown"])
		require.Equal(t, string(b), string(a))
	})
}

// TestEveryFormatSaysHowDeep: every passing scenario, in every format,
// states the per-trial failure rate its valid trials rule out.
func TestEveryFormatSaysHowDeep(t *testing.T) {
	files, _, _ := demoReport(t)
	// 10 valid trials rule out 26% (1 - 0.05^(1/10) = 0.259).
	for _, tc := range []struct {
		format, want, reason string
	}{
		{"text", "rules out a per-trial failure rate of 26% or more (95% confidence)", "the verdict line"},
		{"json", `"ruled_out_rate": 0.2588`, "a field of each passing scenario"},
		{"junit", "rules out a per-trial failure rate of 26% or more", "each passing testcase's output"},
		{"markdown", "✅ PASS 10/10 (rules out ≥26%)", "each passing cell"},
		{"html", "10/10 · rules out ≥26%", "each passing cell"},
	} {
		data, err := os.ReadFile(files[tc.format])
		require.NoError(t, err)
		require.Contains(t, string(data), tc.want, "%s: %s", tc.format, tc.reason)
	}
}

func TestBaselineSemantics(t *testing.T) {
	// check-then-act's race is a matter of timing: 40 checks find it on a
	// loaded machine too, where 10 may not (its entry would then be stale).
	files, _, _ := demoReport(t, "--checks", "40")
	write := func(body string) string {
		p := filepath.Join(t.TempDir(), "baseline.yaml")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	all := `version: 1
known_failures:
  - {tool: naive, scenario: lost-response, reason: "no idempotency yet"}
  - {tool: naive, scenario: concurrent-duplicate}
  - {tool: naive, scenario: key-mismatch}
  - {tool: naive, scenario: replay}
  - {tool: naive, scenario: missing-key}
  - {tool: check-then-act, scenario: concurrent-duplicate}
`
	for _, tc := range []struct {
		baseline string
		code     int
		output   string
		reason   string
	}{
		{all, exitOK, "(known failure: baseline)", "every failure is known: the run passes"},
		{strings.Replace(all, "  - {tool: check-then-act, scenario: concurrent-duplicate}\n", "", 1), exitFailed, "check-then-act: NOT agent-ready", "a failure the baseline does not list fails the run"},
		{all + "  - {tool: naive, scenario: pre-server-error}\n", exitFailed, "STALE baseline entry", "an entry that passes now is stale and fails the run"},
		{"version: 1\nknown_failures:\n  - {tool: naive}\n", exitUsage, "known_failures[0]: want tool and scenario", "a bad baseline is a usage error"},
		{"version: 1\nknown_failure: []\n", exitUsage, "field known_failure not found", "an unknown field is named"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			code, out, errOut := runCLI(t, "report", "--in", files["json"], "--baseline", write(tc.baseline))
			require.Equal(t, tc.code, code, "%s\n%s\n%s", tc.reason, out, errOut)
			require.Contains(t, out+errOut, tc.output, tc.reason)
		})
	}
}

func TestCertificate(t *testing.T) {
	spec := writeSpec(t, startKind(t, "correct"))
	dir := t.TempDir()
	cert := filepath.Join(dir, "create-ticket.cert.json")
	code, _, errOut := runCLI(t, "certify", "--spec", spec, "--checks", "5", "--max-backoff", "10ms", "--certificate", cert, "--quiet")
	require.Equal(t, exitOK, code, errOut)
	c, err := report.ReadCertificate(cert)
	require.NoError(t, err)
	require.Equal(t, "create-ticket", c.Tool)
	require.Len(t, c.Scenarios, len(fixtures.Expected(fixtures.Correct)))
	require.NotNil(t, c.Contract, "the certificate names the contract")
	require.Len(t, c.SHA256, 64)
	badge, err := os.ReadFile(filepath.Join(dir, "create-ticket.cert.svg"))
	require.NoError(t, err)
	require.NoError(t, xml.Unmarshal(badge, new(struct{})), "the badge is well-formed SVG")
	require.Contains(t, string(badge), "agent-ready: create-ticket")

	code, out, _ := runCLI(t, "verify-certificate", cert)
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, "valid: create-ticket agent-ready")

	// Change one check count: the hash no longer matches.
	data, err := os.ReadFile(cert)
	require.NoError(t, err)
	tampered := filepath.Join(dir, "tampered.json")
	require.NoError(t, os.WriteFile(tampered, bytes.Replace(data, []byte(`"checks": 5`), []byte(`"checks": 500`), 1), 0o644))
	code, out, _ = runCLI(t, "verify-certificate", tampered)
	require.Equal(t, exitFailed, code, out)
	require.Contains(t, out, "INVALID")

	// A tool that is not agent-ready gets no certificate.
	naive := writeSpec(t, startKind(t, "naive"))
	none := filepath.Join(dir, "naive.cert.json")
	code, _, errOut = runCLI(t, "certify", "--spec", naive, "--checks", "5", "--max-backoff", "10ms", "--certificate", none)
	require.Equal(t, exitFailed, code)
	require.Contains(t, errOut, "no certificate")
	require.NoFileExists(t, none)
}

// TestRetentionCertificate: a tool that declares how long it keeps keys is
// checked up to --max-wait, and its certificate says how long keys were
// shown to last.
func TestRetentionCertificate(t *testing.T) {
	spec := writeSpec(t, startKind(t, fixtures.Expiring))
	src, err := os.ReadFile(spec)
	require.NoError(t, err)
	text := strings.Replace(string(src), "    # retention: 24h", "    retention: 500ms #", 1)
	require.NotEqual(t, string(src), text)
	require.NoError(t, os.WriteFile(spec, []byte(text), 0o644))
	dir := t.TempDir()
	cert := filepath.Join(dir, "create-ticket.cert.json")
	code, out, errOut := runCLI(t, "certify", "--spec", spec, "--scenario", "retention", "--checks", "20", "--max-wait", "5s", "--certificate", cert, "--quiet")
	require.Equal(t, exitOK, code, "%s\n%s", out, errOut)
	require.Contains(t, out, "keys honoured for at least ")
	code, out, _ = runCLI(t, "verify-certificate", cert)
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, "contract: profile ietf")
	require.Contains(t, out, "keys honoured for at least ")

	code, _, errOut = runCLI(t, "certify", "--spec", spec, "--max-wait", "0s")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "--max-wait 0s: want a positive duration")
}

func TestOutputFlags(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		want   []output
		err    string
		reason string
	}{
		{nil, []output{{format: "text", path: ""}}, "", "default: text on standard output"},
		{[]string{"--format", "json", "--out", "r.json"}, []output{{format: "json", path: "r.json"}}, "", "a format and its file"},
		{[]string{"--out", "r.xml", "--format", "junit"}, []output{{format: "junit", path: "r.xml"}}, "", "an --out before its --format"},
		{[]string{"--format", "json", "--out", "r.json", "--format", "text"}, []output{{format: "json", path: "r.json"}, {format: "text"}}, "", "a file and standard output"},
		{[]string{"--out", "r.txt"}, []output{{format: "text", path: "r.txt"}}, "", "--out alone is text"},
		{[]string{"--format", "json", "--format", "text"}, nil, "only one format can go to standard output", "two formats on standard output"},
		{[]string{"--format", "pdf"}, nil, "want one of", "unknown format"},
	} {
		fs := newFlagSet()
		var o outputs
		o.register(fs)
		err := fs.Parse(tc.args)
		var got []output
		if err == nil {
			got, err = o.resolve()
		}
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.reason)
			continue
		}
		require.NoError(t, err, tc.reason)
		require.Equal(t, tc.want, got, tc.reason)
	}
}

func newFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}
