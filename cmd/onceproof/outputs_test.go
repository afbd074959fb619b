package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// leftovers lists the temporary files onceproof left in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".onceproof-*"))
	require.NoError(t, err)
	return m
}

func TestOutputPathsAreCheckedBeforeTheRun(t *testing.T) {
	// Nothing listens at the tool's address: had the run started, it would
	// exit 3 (unreachable), not 2.
	gone := writeSpec(t, freeAddr(t))
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct {
		args   []string
		msg    string
		reason string
	}{
		{[]string{"--format", "json", "--out", filepath.Join(dir, "missing", "r.json")}, "--out " + filepath.Join(dir, "missing", "r.json") + ": directory " + filepath.Join(dir, "missing") + " does not exist", "a missing directory"},
		{[]string{"--out", dir}, "--out " + dir + ": is a directory", "a directory"},
		{[]string{"--out", filepath.Join(file, "r.txt")}, "is not a directory", "a file as the directory"},
		{[]string{"--format", "html", "--out", "/sys/kernel/onceproof-report.html"}, "--out /sys/kernel/onceproof-report.html: cannot write in /sys/kernel", "a directory nobody may write in"},
		{[]string{"--format", "json", "--out", filepath.Join(dir, "r"), "--format", "html", "--out", filepath.Join(dir, "r")}, "given twice", "one file for two formats"},
		{[]string{"--certificate", filepath.Join(dir, "missing", "c.json")}, "--certificate " + filepath.Join(dir, "missing", "c.json") + ": directory", "a certificate in a missing directory"},
		{[]string{"--certificate", filepath.Join(dir, "c.json"), "--out", filepath.Join(dir, "c.svg")}, "is also an --out file", "the badge would overwrite a report"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"certify", "--spec", gone, "--checks", "1"}, tc.args...)...)
			require.Equal(t, exitUsage, code, "%s\nstdout:\n%s\nstderr:\n%s", tc.reason, out, errOut)
			require.Contains(t, errOut, tc.msg)
			require.NotContains(t, errOut, "certifying", "nothing ran")
			require.Empty(t, leftovers(t, dir))
		})
	}
	t.Run("discover checks its --out before it connects", func(t *testing.T) {
		code, _, errOut := runCLI(t, "discover", "--mcp", "http://"+freeAddr(t)+"/mcp", "--out", filepath.Join(dir, "missing", "spec.yaml"))
		require.Equal(t, exitUsage, code, errOut)
		require.Contains(t, errOut, "does not exist")
	})
	t.Run("a spec error after the outputs were opened leaves nothing behind", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.yaml")
		require.NoError(t, os.WriteFile(bad, []byte("version: 1\ntools: []\n"), 0o644))
		out := filepath.Join(dir, "r.json")
		code, _, errOut := runCLI(t, "certify", "--spec", bad, "--format", "json", "--out", out, "--certificate", filepath.Join(dir, "c.json"))
		require.Equal(t, exitUsage, code, errOut)
		require.NoFileExists(t, out)
		require.Empty(t, leftovers(t, dir))
	})
}

func TestEveryFailingExitSaysWhyOnStderr(t *testing.T) {
	dir := t.TempDir()
	gone := writeSpec(t, freeAddr(t))
	naive := writeSpec(t, startKind(t, "naive"))
	for _, tc := range []struct {
		spec   string
		code   int
		reason string
		msg    string
	}{
		{gone, exitUnreachable, "a preflight failure with the report in a file", "preflight failed"},
		{naive, exitFailed, "a failed scenario with the report in a file", "failed: create-ticket × "},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			out := filepath.Join(dir, "r.json")
			code, stdout, errOut := runCLI(t, "certify", "--spec", tc.spec, "--checks", "5", "--max-backoff", "10ms", "--quiet", "--format", "json", "--out", out)
			require.Equal(t, tc.code, code, errOut)
			require.Empty(t, stdout)
			require.Contains(t, errOut, "onceproof: ")
			require.Contains(t, errOut, tc.msg)
			require.FileExists(t, out, "the report is written all the same")
			require.Empty(t, leftovers(t, dir))
		})
	}
}

func TestOutputToADevice(t *testing.T) {
	correct := writeSpec(t, startKind(t, "correct"))
	code, _, errOut := runCLI(t, "certify", "--spec", correct, "--checks", "3", "--max-backoff", "10ms", "--scenario", "distinct-keys",
		"--format", "json", "--out", os.DevNull)
	require.Equal(t, exitOK, code, errOut)
	fi, err := os.Stat(os.DevNull)
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeCharDevice, "the device was written to, not replaced")
}
