package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryFormatShowsLookups: a reconcile failure (the lagging lookup)
// shows its lookups, typed, in every format: the JSON's lookup field (which
// the schema knows), the attempt tables' lookup column, the timeline's
// lanes.
func TestEveryFormatShowsLookups(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	args := []string{"demo", "--tool", "lookup-lagging", "--tool", "lookup", "--checks", "10", "--max-backoff", "10ms", "--seed", "5", "--quiet"}
	for _, f := range formatNames() {
		files[f] = filepath.Join(dir, "report."+f)
		args = append(args, "--format", f, "--out", files[f])
	}
	code, out, errOut := runCLI(t, args...)
	require.Equal(t, exitOK, code, "the documented verdicts: %s%s", out, errOut)

	read := func(f string) string {
		data, err := os.ReadFile(files[f])
		require.NoError(t, err)
		return string(data)
	}
	validateReport(t, files["json"])
	var rep struct {
		Tools []struct {
			Name      string `json:"name"`
			Scenarios []struct {
				ID             string `json:"id"`
				Verdict        string `json:"verdict"`
				Counterexample *struct {
					Rule     string `json:"rule"`
					Attempts []struct {
						Lookup string `json:"lookup"`
						Before int    `json:"before"`
					} `json:"attempts"`
				} `json:"counterexample"`
			} `json:"scenarios"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(read("json")), &rep))
	found := false
	for _, tool := range rep.Tools {
		for _, s := range tool.Scenarios {
			if tool.Name != "lookup-lagging" || s.ID != "reconcile" {
				continue
			}
			require.NotNil(t, s.Counterexample)
			require.Equal(t, "lookup-truth", s.Counterexample.Rule)
			for _, a := range s.Counterexample.Attempts {
				found = found || a.Lookup == "not-found" && a.Before >= 1
			}
		}
	}
	require.True(t, found, "the JSON records the lookup that said not found after the commit")

	for _, f := range formatNames() {
		text := read(f)
		switch f {
		case "json":
		case "sarif", "github":
			// Alerts: the rule and the violation, not the attempt table.
			require.Contains(t, text, "lookup-truth", f)
			require.Contains(t, text, "the lookup said not found", f)
		case "html":
			require.Contains(t, text, "<th>lookup</th>", f)
			require.Contains(t, text, "lookup: not found", "the timeline names the lookup's answer")
		default:
			require.Contains(t, text, "lookup-truth", f)
			require.True(t, strings.Contains(text, "lookup") && strings.Contains(text, "not-found"), "%s shows the lookup column:\n%s", f, text)
		}
	}
}
