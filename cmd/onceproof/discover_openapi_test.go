package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness/report"
)

// fixtureDocument is the OpenAPI document describing the fixture tool.
const fixtureDocument = "../../harness/openapi/testdata/fixture.yaml"

// TestDiscoverOpenAPICertifiesTheFixture is the end to end of discover
// --openapi: the spec it writes from the fixture's OpenAPI document, with
// the oracle filled in as a user would, certifies a correct fixture and a
// naive one to their documented verdicts.
func TestDiscoverOpenAPICertifiesTheFixture(t *testing.T) {
	for _, kind := range []fixtures.Kind{fixtures.Correct, fixtures.Naive} {
		t.Run(string(kind), func(t *testing.T) {
			srv, err := fixtures.Start(kind, "127.0.0.1:0", fixtures.Options{})
			require.NoError(t, err)
			defer srv.Close()
			_, port, _ := strings.Cut(srv.Addr(), ":")
			dir := t.TempDir()
			spec := filepath.Join(dir, "tickets.yaml")
			code, out, errOut := runCLI(t, "discover", "--openapi", fixtureDocument, "--server-var", "port="+port, "--out", spec)
			require.Equal(t, exitOK, code, errOut)
			assert.Contains(t, out, "createTicket  POST    /tickets  write  Idempotency-Key")
			assert.Contains(t, errOut, "wrote "+spec)

			code, _, errOut = runCLI(t, "certify", "--spec", spec)
			require.Equal(t, exitUsage, code, "the oracle placeholder is refused")
			assert.Contains(t, errOut, "tickets.yaml:")
			assert.Contains(t, errOut, "oracle: FILL-IN is the placeholder")

			data, err := os.ReadFile(spec)
			require.NoError(t, err)
			filled := strings.Replace(string(data), "    oracle: FILL-IN\n",
				"    oracle:\n      http: {url: \""+srv.URL()+"/count?marker={{.Marker}}\", count: /count}\n", 1)
			// Keep the lost-response trials short.
			filled = strings.Replace(filled, "      # timeout: 2s", "      timeout: 150ms #", 1)
			require.NotEqual(t, string(data), filled)
			require.NoError(t, os.WriteFile(spec, []byte(filled), 0o644))

			reportPath := filepath.Join(dir, "report.json")
			code, out, errOut = runCLI(t, "certify", "--spec", spec, "--checks", "10", "--max-backoff", "10ms",
				"--format", "json", "--out", reportPath, "--quiet")
			rep, err := report.ReadReport(reportPath)
			require.NoError(t, err, "%s\n%s", out, errOut)
			require.Len(t, rep.Tools, 1)
			want := fixtures.Expected(kind)
			ran := map[string]bool{}
			failed := false
			for _, s := range rep.Tools[0].Scenarios {
				verdict, documented := want[s.ID]
				require.True(t, documented, "scenario %s has no documented verdict", s.ID)
				wantVerdict := report.Pass
				if verdict == "fail" {
					wantVerdict, failed = report.Fail, true
				}
				assert.Equal(t, wantVerdict, s.Verdict, "%s × %s", kind, s.ID)
				ran[s.ID] = true
			}
			for id := range want {
				assert.True(t, ran[id], "scenario %s did not run", id)
			}
			wantCode := exitOK
			if failed {
				wantCode = exitFailed
			}
			assert.Equal(t, wantCode, code, errOut)
		})
	}
}

// TestDiscoverOpenAPIErrors: every bad input exits with its code and says
// what is wrong.
func TestDiscoverOpenAPIErrors(t *testing.T) {
	srv := httptest.NewServer(http.FileServer(http.Dir("../../harness/openapi/testdata")))
	defer srv.Close()
	for _, tc := range []struct {
		args   []string
		code   int
		output string
		reason string
	}{
		{[]string{"--openapi", "missing.yaml"}, exitUsage, "missing.yaml: cannot read", "no such file"},
		{[]string{"--openapi", "../../harness/openapi/testdata/bad/missing-ref.yaml"}, exitUsage, "missing-ref.yaml:12:", "an invalid document names file and line"},
		{[]string{"--openapi", "../../harness/openapi/testdata/bad/swagger.yaml"}, exitUsage, "Swagger 2.0", "Swagger 2.0"},
		{[]string{"--openapi", "http://10.1.2.3/openapi.yaml"}, exitUsage, "remote target", "a remote document needs --allow-remote"},
		{[]string{"--openapi", srv.URL + "/nope.yaml"}, exitUsage, "404", "a URL that serves no document"},
		{[]string{"--mcp", "http://127.0.0.1:1/mcp", "--openapi", fixtureDocument}, exitUsage, "exactly one of", "both sources"},
		{[]string{}, exitUsage, "exactly one of", "no source"},
		{[]string{"--openapi", fixtureDocument, "--operation", "nope"}, exitUsage, "createTicket, listTickets, countTickets", "an unknown operation lists the ones there are"},
		{[]string{"--openapi", fixtureDocument, "--operation", "countTickets"}, exitUsage, "only reads", "a GET has nothing to certify"},
		{[]string{"--openapi", fixtureDocument, "--oracle-url", "http://127.0.0.1:1/c?m={{.Marker}}"}, exitOK, "url: 'http://127.0.0.1:1/c?m={{.Marker}}'", "--oracle-url fills every oracle, as with --mcp"},
		{[]string{"--openapi", fixtureDocument, "--oracle-url", "http://127.0.0.1:1/c"}, exitUsage, "want an http(s) URL template using {{.Marker}}", "an oracle URL without the marker"},
		{[]string{"--openapi", fixtureDocument}, exitOK, "oracle: FILL-IN", "without --oracle-url the oracle is the placeholder"},
		{[]string{"--mcp", "http://127.0.0.1:1/mcp", "--server-var", "a=b"}, exitUsage, "are for --openapi", "an OpenAPI flag with --mcp"},
		{[]string{"--openapi", fixtureDocument, "--server", "127.0.0.1:8080"}, exitUsage, "--server: want http://host:port", "a server without a scheme"},
		{[]string{"--openapi", fixtureDocument, "--server-var", "prot=1"}, exitUsage, `"prot"`, "a misspelt server variable"},
		{[]string{"--openapi", fixtureDocument, "--server-var", "nope"}, exitUsage, "want NAME=VALUE", "a server variable without a value"},
		{[]string{"--openapi", "../../harness/openapi/testdata/reads-only.yaml"}, exitOK, "no write operation: no spec written", "nothing to certify is not an error"},
		{[]string{"--openapi", srv.URL + "/fixture.yaml", "--server", "http://127.0.0.1:9/base"}, exitOK, "url: http://127.0.0.1:9/base/tickets", "a document on loopback, written to standard output"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"discover"}, tc.args...)...)
			require.Equal(t, tc.code, code, "%s\nstdout:\n%s\nstderr:\n%s", tc.reason, out, errOut)
			assert.Contains(t, out+errOut, tc.output, tc.reason)
		})
	}
}
