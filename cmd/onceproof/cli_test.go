package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/spec"
)

func TestInterleave(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("merge", false, "")
	fs.String("format", "", "")
	fs.String("out", "", "")
	fs.Bool("v", false, "")
	for _, tc := range []struct {
		args, want []string
		reason     string
	}{
		{[]string{"--merge", "a", "b", "--format", "markdown", "--out", "m.md"}, []string{"--merge", "--format", "markdown", "--out", "m.md", "--", "a", "b"}, "flags after the arguments move before them"},
		{[]string{"a", "--format=json", "b"}, []string{"--format=json", "--", "a", "b"}, "a flag with = takes no further argument"},
		{[]string{"--out", "--merge", "a"}, []string{"--out", "--merge", "--", "a"}, "a value is taken as it is, whatever it looks like"},
		{[]string{"a", "--", "--format", "b"}, []string{"--", "a", "--format", "b"}, "-- ends the flags"},
		{[]string{"-v", "a", "-", "--nope", "x"}, []string{"-v", "--nope", "--", "a", "-", "x"}, "an unknown flag stays for Parse to refuse; - is an argument"},
		{[]string{"--format"}, []string{"--format", "--"}, "a missing value is Parse's error"},
	} {
		assert.Equal(t, tc.want, interleave(fs, tc.args), tc.reason)
	}
}

// TestFlagsAnywhere: every command takes its flags before or after its
// arguments — the README's own order for report --merge included.
func TestFlagsAnywhere(t *testing.T) {
	spec := multiSpec(t, fixtures.Correct, fixtures.Naive)
	dir := t.TempDir()
	common := []string{"--checks", "5", "--seed", "3", "--max-backoff", "10ms", "--quiet", "--scenario", "lost-response"}
	var shards []string
	for _, i := range []string{"1", "2"} {
		p := filepath.Join(dir, "shard"+i+".json")
		code, _, errOut := runCLI(t, append(append([]string{"certify"}, common...), "--format", "json", "--out", p, "--shard", i+"/2", "--spec", spec)...)
		require.Contains(t, []int{exitOK, exitFailed}, code, errOut)
		shards = append(shards, p)
	}
	md := filepath.Join(dir, "m.md")
	code, out, errOut := runCLI(t, "report", "--merge", shards[0], shards[1], "--format", "markdown", "--out", md, "--format", "text")
	require.Equal(t, exitFailed, code, "the naive tool fails: %s", errOut)
	require.FileExists(t, md)
	require.Contains(t, out, "naive: NOT agent-ready", "the text went to standard output")
	code, _, errOut = runCLI(t, "report", shards[0], "--format", "json", "--merge", shards[1], "--out", filepath.Join(dir, "m.json"))
	require.Equal(t, exitFailed, code, errOut)
	require.FileExists(t, filepath.Join(dir, "m.json"))

	code, _, errOut = runCLI(t, "report", "--in", shards[0], "stray.json")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, `unexpected argument "stray.json"`)

	code, out, _ = runCLI(t, "completion", "bash", "--help")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "Usage: onceproof completion")
}

// TestEveryValueFlagNamesItsArgument: help spells each flag's argument
// (--shard I/N, --format FORMAT), never the flag package's "value".
func TestEveryValueFlagNamesItsArgument(t *testing.T) {
	for _, c := range commands() {
		fs := c.flagSet()
		if fs == nil || c.name == "chaos" { // chaos's flags: issue 16 rewrites them
			continue
		}
		fs.VisitAll(func(f *flag.Flag) {
			arg, _ := flag.UnquoteUsage(f)
			if isBoolFlag(f) {
				return
			}
			assert.NotContains(t, []string{"value", "string", "int", "uint", "float"}, arg, "%s --%s: name its argument in its usage (`ARG`)", c.name, f.Name)
		})
	}
	_, out, _ := runCLI(t, "help", "certify")
	require.Contains(t, out, "\n  --shard I/N\n")
}

// TestUsageListsEveryCommand ties the top-level usage to the command table.
func TestUsageListsEveryCommand(t *testing.T) {
	for _, c := range commands() {
		require.Regexp(t, regexp.MustCompile(`(?m)^  onceproof `+regexp.QuoteMeta(c.name)+`\b`), usage, "the usage lists %s", c.name)
		require.NotEmpty(t, c.summary, c.name)
	}
}

func TestInit(t *testing.T) {
	addr := startKind(t, fixtures.Correct)
	dir := t.TempDir()
	path := filepath.Join(dir, "onceproof.yaml")
	code, _, errOut := runCLI(t, "init", "--out", path, "--url", "http://"+addr+"/tickets")
	require.Equal(t, exitOK, code, errOut)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(data), "# yaml-language-server: $schema="+specSchemaURL()+"\n"), "%s", data)
	require.Contains(t, specSchemaURL(), specSchemaPath)
	_, err = spec.Load(path)
	require.ErrorContains(t, err, "FILL-IN is the placeholder", "certify refuses the spec until the oracle is given")

	code, _, errOut = runCLI(t, "init", "--out", path, "--url", "http://"+addr+"/tickets")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "exists; give --force")

	// With the oracle given, the starter spec certifies the correct fixture.
	code, _, errOut = runCLI(t, "init", "--force", "--out", path, "--url", "http://"+addr+"/tickets", "--oracle-url", "http://"+addr+"/count?marker={{.Marker}}")
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut := runCLI(t, "certify", "--spec", path, "--checks", "5", "--max-backoff", "10ms", "--quiet",
		"--scenario", "pre-server-error", "--scenario", "distinct-keys", "--scenario", "replay")
	require.Equal(t, exitOK, code, "%s\n%s", out, errOut)

	mcpPath := filepath.Join(dir, "mcp.yaml")
	code, _, errOut = runCLI(t, "init", "--out", mcpPath, "--mcp", "http://127.0.0.1:8090/mcp", "--tool", "create_ticket", "--oracle-url", "http://127.0.0.1:8090/count?marker={{.Marker}}")
	require.Equal(t, exitOK, code, errOut)
	sp, err := spec.Load(mcpPath)
	require.NoError(t, err)
	_, isMCP := sp.Tools[0].MCPServer()
	require.True(t, isMCP, "an MCP tool")

	for _, tc := range []struct {
		args   []string
		output string
	}{
		{[]string{"--url", "ftp://x"}, "want an http(s) URL"},
		{[]string{"--url", "http://127.0.0.1:1/x", "--mcp", "http://127.0.0.1:1/mcp"}, "not both"},
		{[]string{"--tool", "x"}, "--tool names the MCP tool"},
		{[]string{"--oracle-url", "http://127.0.0.1:1/count"}, "{{.Marker}}"},
		{[]string{"--out", filepath.Join(dir, "no", "such", "x.yaml")}, "does not exist"},
	} {
		code, _, errOut := runCLI(t, append([]string{"init"}, tc.args...)...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Contains(t, errOut, tc.output, tc.args)
	}
}

// TestCompletion: each shell's script is valid for that shell and offers
// the commands, flags and values of the command table.
func TestCompletion(t *testing.T) {
	for _, sh := range shellNames() {
		code, out, errOut := runCLI(t, "completion", sh)
		require.Equal(t, exitOK, code, errOut)
		for _, c := range commands() {
			require.Contains(t, out, c.name, "%s completes %s", sh, c.name)
		}
		require.Contains(t, out, "shard", sh)
		require.Contains(t, out, "lost-response", sh)
		require.Contains(t, out, "markdown", sh)
		path, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("%s is not installed: its script is not run", sh)
			continue
		}
		script := filepath.Join(t.TempDir(), "completion."+sh)
		require.NoError(t, os.WriteFile(script, []byte(out), 0o644))
		switch sh {
		case "zsh":
			res, err := exec.Command(path, "-n", script).CombinedOutput()
			require.NoError(t, err, "zsh -n: %s", res)
			// Sourced after compinit, it registers itself for onceproof.
			res, err = exec.Command(path, "-f", "-c", "autoload -U compinit && compinit -u -D && source "+script+" && print -r -- $_comps[onceproof]").CombinedOutput()
			require.NoError(t, err, "%s", res)
			require.Equal(t, "_onceproof", strings.TrimSpace(string(res)))
		case "fish":
			res, err := exec.Command(path, "--no-execute", script).CombinedOutput()
			require.NoError(t, err, "fish --no-execute: %s", res)
			// fish completes a command line itself.
			res, err = exec.Command(path, "--no-config", "-c", "source "+script+"; complete -C 'onceproof certify --form'; complete -C 'onceproof lint --fail-on '").CombinedOutput()
			require.NoError(t, err, "%s", res)
			require.Contains(t, string(res), "--format")
			require.Contains(t, string(res), "warning")
		}
	}
	// bash runs the completion function as readline would.
	_, script, _ := runCLI(t, "completion", "bash")
	complete := func(words ...string) []string {
		t.Helper()
		line := `source /dev/stdin; COMP_WORDS=(` + strings.Join(quoteAll(words), " ") + `); COMP_CWORD=` + strconv.Itoa(len(words)-1) + `; _onceproof; printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c", line)
		cmd.Stdin = strings.NewReader(script)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.Fields(string(out))
	}
	assert.Contains(t, complete("onceproof", "cert"), "certify")
	assert.Contains(t, complete("onceproof", "cert"), "certify-client")
	assert.Contains(t, complete("onceproof", "certify", "--sh"), "--shard")
	assert.Contains(t, complete("onceproof", "certify", "--sh"), "--shrink-time")
	assert.Equal(t, []string{"markdown"}, complete("onceproof", "report", "--format", "mark"))
	assert.Equal(t, []string{"client-backoff", "client-bounded"}, complete("onceproof", "certify-client", "--scenario", "client-b"))
	assert.Equal(t, []string{"lost-response"}, complete("onceproof", "certify", "--scenario", "lost"))
	assert.Equal(t, []string{"fish"}, complete("onceproof", "completion", "fi"))
	assert.Empty(t, complete("onceproof", "certify", "--checks", ""), "a number is not completed")

	code, _, errOut := runCLI(t, "completion", "tcsh")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "want one of bash, zsh, fish")
	code, _, _ = runCLI(t, "completion")
	require.Equal(t, exitUsage, code)
}

func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuoteAlways(w)
	}
	return out
}

func shellQuoteAlways(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestColorable(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out.txt"))
	require.NoError(t, err)
	defer f.Close()
	for _, tc := range []struct {
		noColor, force string
		want           bool
		reason         string
	}{
		{"", "", false, "a file is not a terminal"},
		{"", "1", true, "FORCE_COLOR colours a file (a CI log)"},
		{"", "true", true, "any value but 0 and false forces"},
		{"", "0", false, "FORCE_COLOR=0 does not"},
		{"", "false", false, "FORCE_COLOR=false does not"},
		{"1", "1", false, "NO_COLOR wins"},
	} {
		t.Setenv("NO_COLOR", tc.noColor)
		t.Setenv("FORCE_COLOR", tc.force)
		assert.Equal(t, tc.want, colorable(f), tc.reason)
	}
	// A forced run's text report carries colour codes.
	rep := &report.Report{Version: report.ReportVersion, Tools: []report.ToolReport{{Name: "t", AgentReady: true}}}
	t.Setenv("NO_COLOR", "")
	t.Setenv("FORCE_COLOR", "1")
	var b strings.Builder
	require.NoError(t, writeOutputs(rep, []output{{format: "text"}}, &b))
	require.Contains(t, b.String(), "\x1b[", "FORCE_COLOR colours the text report on any writer")
}
