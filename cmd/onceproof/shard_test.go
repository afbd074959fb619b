package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness/report"
)

// multiSpec writes a spec with one tool per fixture kind.
func multiSpec(t *testing.T, kinds ...fixtures.Kind) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("version: 1\ntools:\n")
	for _, k := range kinds {
		addr := startKind(t, k)
		fmt.Fprintf(&b, `  - name: %s
    http:
      url: http://%s/tickets
      headers: {Content-Type: application/json}
      body: '{"subject":"refund {{.Marker}}","amount":{{.Int 1 500}}}'
    result_id: /id
    oracle:
      http: {url: "http://%s/count?marker={{.Marker}}", count: /count}
`, k, addr, addr)
	}
	path := filepath.Join(t.TempDir(), "tools.yaml")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

func verdicts(r *report.Report) map[string]report.Verdict {
	out := map[string]report.Verdict{}
	for _, tool := range r.Tools {
		for _, s := range tool.Scenarios {
			out[tool.Name+"/"+s.ID] = s.Verdict
		}
	}
	return out
}

// TestShardsMergeToTheWholeRun: four shards of a run over the fixtures,
// merged, give the verdicts of the unsharded run; reports of different runs
// do not merge.
func TestShardsMergeToTheWholeRun(t *testing.T) {
	spec := multiSpec(t, fixtures.Correct, fixtures.Naive, fixtures.CheckThenAct, fixtures.NoFingerprint)
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.json")
	common := []string{"certify", "--spec", spec, "--checks", "10", "--seed", "11", "--max-backoff", "10ms", "--quiet"}
	code, _, errOut := runCLI(t, append(common, "--format", "json", "--out", whole)...)
	require.Equal(t, exitFailed, code, errOut)

	var shards []string
	for i := 1; i <= 4; i++ {
		p := filepath.Join(dir, fmt.Sprintf("shard%d.json", i))
		code, _, errOut := runCLI(t, append(common, "--shard", fmt.Sprintf("%d/4", i), "--format", "json", "--out", p)...)
		require.Contains(t, []int{exitOK, exitFailed}, code, errOut)
		shards = append(shards, p)
	}
	merged := filepath.Join(dir, "merged.json")
	code, _, errOut = runCLI(t, append([]string{"report", "--merge", "--format", "json", "--out", merged}, shards...)...)
	require.Equal(t, exitFailed, code, errOut)

	w, err := report.ReadReport(whole)
	require.NoError(t, err)
	m, err := report.ReadReport(merged)
	require.NoError(t, err)
	require.Equal(t, verdicts(w), verdicts(m))
	require.Len(t, m.Tools, 4)
	require.Equal(t, 4, m.Run.Merged)
	for i, tool := range m.Tools {
		require.Equal(t, w.Tools[i].Name, tool.Name, "the run's tool order")
		require.Equal(t, w.Tools[i].AgentReady, tool.AgentReady, tool.Name)
	}

	for _, tc := range []struct {
		args   []string
		output string
		reason string
	}{
		{shards[:3], "shard 4/4 is missing", "a missing shard"},
		{append(shards, shards[0]), "given twice", "a shard given twice"},
		{[]string{shards[0], whole}, "not a shard's", "a whole run is no shard"},
	} {
		code, out, errOut := runCLI(t, append([]string{"report", "--merge"}, tc.args...)...)
		require.Equal(t, exitUsage, code, tc.reason)
		require.Contains(t, out+errOut, tc.output, tc.reason)
	}
	// Another seed is another run.
	other := filepath.Join(dir, "other.json")
	code, _, _ = runCLI(t, "certify", "--spec", spec, "--checks", "10", "--seed", "12", "--quiet", "--shard", "4/4", "--format", "json", "--out", other)
	require.Contains(t, []int{exitOK, exitFailed}, code)
	code, out, errOut := runCLI(t, append([]string{"report", "--merge"}, append(shards[:3], other)...)...)
	require.Equal(t, exitUsage, code)
	require.Contains(t, out+errOut, "seed", "different seeds do not merge")

	code, _, errOut = runCLI(t, "certify", "--spec", spec, "--shard", "5/4")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "1 ≤ I ≤ N")
}

// commandFlags is the set of flags the CLI command cmd has, from its help.
func commandFlags(t *testing.T, cmd string) map[string]bool {
	t.Helper()
	_, out, _ := runCLI(t, cmd, "-h")
	flags := map[string]bool{}
	for _, m := range helpFlagRE.FindAllStringSubmatch(out, -1) {
		flags[m[1]] = true
	}
	require.NotEmpty(t, flags, "%s -h lists its flags", cmd)
	return flags
}

// TestShardExamplesShardAndMerge: the CI matrix and the Kubernetes Job
// shard a run and merge its reports (their command lines, found by
// ciCommands, are run by TestDocumentedCommandLinesRun).
func TestShardExamplesShardAndMerge(t *testing.T) {
	for _, file := range []string{"github-shards.yml", "kubernetes-shards.yaml"} {
		var merged, sharded bool
		for _, c := range ciCommands(t) {
			if !strings.HasPrefix(c.where, file+":") {
				continue
			}
			checkFlags(t, c)
			f := flagsOf(c.line)
			merged = merged || strings.HasPrefix(c.line, "onceproof report ") && slices.Contains(f, "merge")
			sharded = sharded || strings.HasPrefix(c.line, "onceproof certify ") && slices.Contains(f, "shard") && len(c.runs) > 1
		}
		require.True(t, merged && sharded, "%s shards a run over a matrix and merges its reports", file)
	}
}

// TestReproFlag: --repro writes a reproducer per failing scenario (certify
// and report), and an unwritable --repro is a usage error before any run.
func TestReproFlag(t *testing.T) {
	spec := writeSpec(t, startKind(t, fixtures.Naive))
	dir := filepath.Join(t.TempDir(), "repro")
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, errOut := runCLI(t, "certify", "--spec", spec, "--scenario", "lost-response", "--checks", "5", "--quiet", "--repro", dir, "--format", "json", "--out", out)
	require.Equal(t, exitFailed, code, errOut)
	script, err := os.ReadFile(filepath.Join(dir, "create-ticket-lost-response.sh"))
	require.NoError(t, err)
	require.Contains(t, string(script), "curl")
	require.Contains(t, string(script), "onceproof-lose-response")

	again := filepath.Join(t.TempDir(), "again")
	code, _, errOut = runCLI(t, "report", "--in", out, "--repro", again)
	require.Equal(t, exitFailed, code, errOut)
	_, err = os.Stat(filepath.Join(again, "create-ticket-lost-response.sh"))
	require.NoError(t, err, "report --repro writes it from a saved report")

	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	code, _, errOut = runCLI(t, "certify", "--spec", spec, "--repro", filepath.Join(file, "sub"))
	require.Equal(t, exitUsage, code, errOut)
	require.Contains(t, errOut, "--repro")
}
