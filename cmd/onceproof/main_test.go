package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
)

// writeSpec writes the README's spec for a tool at addr (timeout shortened to
// keep lost-response trials quick).
func writeSpec(t *testing.T, addr string) string {
	t.Helper()
	src, err := os.ReadFile("../../examples/create-ticket.yaml")
	require.NoError(t, err)
	text := strings.ReplaceAll(string(src), "127.0.0.1:8080", addr)
	text = strings.ReplaceAll(text, "timeout: 2s", "timeout: 150ms")
	path := filepath.Join(t.TempDir(), "tools.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func startKind(t *testing.T, kind fixtures.Kind) string {
	t.Helper()
	srv, err := fixtures.Start(kind, "127.0.0.1:0", fixtures.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return srv.Addr()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCertifyExitCodes(t *testing.T) {
	correct := writeSpec(t, startKind(t, fixtures.Correct))
	naive := writeSpec(t, startKind(t, fixtures.Naive))
	gone := writeSpec(t, freeAddr(t))
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("version: 1\ntools:\n  - name: x\n    htp: {}\n"), 0o644))
	remote := filepath.Join(t.TempDir(), "remote.yaml")
	src, err := os.ReadFile(correct)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(remote, bytes.ReplaceAll(src, []byte("http://127.0.0.1:"), []byte("http://10.1.2.3:")), 0o644))

	fast := []string{"--checks", "10", "--max-backoff", "10ms"}
	for _, tc := range []struct {
		args   []string
		code   int
		output string
		reason string
	}{
		{append([]string{"certify", "--spec", correct}, fast...), exitOK, "create-ticket: agent-ready", "a correct tool is agent-ready"},
		{append([]string{"certify", "--spec", naive}, fast...), exitFailed, "replay: onceproof certify --spec", "a naive tool fails with a replay command"},
		{append([]string{"certify", "--spec", gone}, fast...), exitUnreachable, "preflight failed", "nothing listens at the tool's address"},
		{[]string{"certify", "--spec", bad}, exitUsage, "bad.yaml:4", "an unknown field names file and line"},
		{[]string{"certify", "--spec", remote}, exitUsage, "remote", "a non-loopback target needs --allow-remote"},
		{[]string{"certify"}, exitUsage, "--spec is required", "no spec"},
		{[]string{"certify", "--spec", correct, "--scenario", "nope"}, exitUsage, "unknown scenario", "bad scenario id"},
		{[]string{"certify", "--spec", correct, "--tool", "nope"}, exitUsage, "nope", "unknown tool"},
		{[]string{"certify", "--spec", correct, "--checks", "0"}, exitUsage, "--checks", "bad checks"},
		{[]string{"certify", "--spec", correct, "--format", "xml"}, exitUsage, "flag -format: want one of text, json", "bad format"},
		{[]string{"certify", "--spec", filepath.Join(t.TempDir(), "missing.yaml")}, exitUsage, "missing.yaml", "no such file"},
		{[]string{"frobnicate"}, exitUsage, "unknown command", "bad command"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			require.Equal(t, tc.code, code, "%s\nstdout:\n%s\nstderr:\n%s", tc.reason, out, errOut)
			require.Contains(t, out+errOut, tc.output, tc.reason)
		})
	}
}

func TestCertifyJSONReport(t *testing.T) {
	spec := writeSpec(t, startKind(t, fixtures.CheckThenAct))
	out := filepath.Join(t.TempDir(), "report.json")
	code, _, errOut := runCLI(t, "certify", "--spec", spec, "--checks", "10", "--max-backoff", "10ms",
		"--seed", "99", "--format", "json", "--out", out)
	require.Equal(t, exitFailed, code, errOut)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep struct {
		Version int `json:"version"`
		Tools   []struct {
			Name       string `json:"name"`
			AgentReady bool   `json:"agent_ready"`
			Scenarios  []struct {
				ID             string          `json:"id"`
				Passed         bool            `json:"passed"`
				Checks         int             `json:"checks"`
				ValidTrials    int             `json:"valid_trials"`
				Seed           uint64          `json:"seed"`
				Counterexample json.RawMessage `json:"counterexample"`
				Repro          string          `json:"repro"`
			} `json:"scenarios"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(data, &rep))
	require.Equal(t, 1, rep.Version)
	require.Len(t, rep.Tools, 1)
	require.False(t, rep.Tools[0].AgentReady)
	failed := 0
	for _, s := range rep.Tools[0].Scenarios {
		require.Positive(t, s.Checks, s.ID)
		require.NotZero(t, s.Seed, s.ID)
		if !s.Passed {
			failed++
			require.Equal(t, "concurrent-duplicate", s.ID)
			require.NotEmpty(t, s.Counterexample)
			require.Contains(t, s.Repro, "--scenario concurrent-duplicate --seed ")
		}
	}
	require.Equal(t, 1, failed)
}

// TestByHand starts the fixture binary and the onceproof binary as a user
// would, and checks the exit codes through os.Exit, with the embedded and a
// remote Toxiproxy.
func TestByHand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	dir := t.TempDir()
	for _, pkg := range []string{"github.com/onceproof/onceproof/cmd/onceproof", "github.com/onceproof/onceproof/cmd/onceproof-fixture",
		"github.com/Shopify/toxiproxy/v2/cmd/server"} {
		name := filepath.Base(pkg)
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	fixture := func(kind string) string {
		cmd := exec.Command(filepath.Join(dir, "onceproof-fixture"), "--kind", kind, "--listen", "127.0.0.1:0")
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err)
		return strings.TrimPrefix(strings.TrimSpace(line), "listening on http://")
	}
	toxiAddr := freeAddr(t)
	host, port, _ := net.SplitHostPort(toxiAddr)
	toxi := exec.Command(filepath.Join(dir, "server"), "-host", host, "-port", port)
	toxi.Env = append(os.Environ(), "LOG_LEVEL=error")
	require.NoError(t, toxi.Start())
	t.Cleanup(func() { _ = toxi.Process.Kill(); _ = toxi.Wait() })
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", toxiAddr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)

	correct, naive := writeSpec(t, fixture("correct")), writeSpec(t, fixture("naive"))
	for _, tc := range []struct {
		args   []string
		code   int
		reason string
	}{
		{[]string{"certify", "--spec", correct, "--checks", "5"}, exitOK, "embedded Toxiproxy, correct tool"},
		{[]string{"certify", "--spec", naive, "--checks", "5"}, exitFailed, "embedded Toxiproxy, naive tool"},
		{[]string{"certify", "--spec", correct, "--checks", "5", "--toxiproxy", "http://" + toxiAddr}, exitOK, "remote Toxiproxy, correct tool"},
		{[]string{"certify", "--spec", naive, "--checks", "5", "--toxiproxy", "http://" + toxiAddr}, exitFailed, "remote Toxiproxy, naive tool"},
		{[]string{"certify", "--spec", correct, "--toxiproxy", "http://" + freeAddr(t)}, exitUnreachable, "remote Toxiproxy not running"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(dir, "onceproof"), tc.args...)
			out, _ := cmd.CombinedOutput()
			require.Equal(t, tc.code, cmd.ProcessState.ExitCode(), "%s\n%s", tc.reason, out)
		})
	}

	t.Run("interrupted run leaves no proxy behind", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(dir, "onceproof"), "certify", "--spec", correct, "--checks", "100000",
			"--toxiproxy", "http://"+toxiAddr)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool { return proxies(t, toxiAddr) > 0 }, 10*time.Second, 10*time.Millisecond,
			"the run never created its proxy")
		time.Sleep(300 * time.Millisecond) // well inside the scenarios
		require.NoError(t, cmd.Process.Signal(os.Interrupt))
		_ = cmd.Wait()
		require.Equal(t, exitInterrupted, cmd.ProcessState.ExitCode(), out.String())
		require.Zero(t, proxies(t, toxiAddr), "proxies left on the toxiproxy-server after SIGINT")
	})
}

// proxies counts the proxies a toxiproxy-server holds.
func proxies(t *testing.T, addr string) int {
	resp, err := http.Get("http://" + addr + "/proxies")
	require.NoError(t, err)
	defer resp.Body.Close()
	var m map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	return len(m)
}

func TestDemoMatchesDocumentation(t *testing.T) {
	code, out, errOut := runCLI(t, "demo", "--checks", "10", "--max-backoff", "10ms")
	require.Equal(t, exitOK, code, "%s\n%s", out, errOut)
	require.Contains(t, out, "Every verdict matches")
	for _, kind := range fixtures.Kinds() {
		if fixtures.Slow(kind) {
			require.NotContains(t, out, string(kind), "a slow kind stays out of the demo")
			continue
		}
		require.Contains(t, out, string(kind))
	}
	require.Contains(t, out, "stripe-as-ietf × key-mismatch FAILED", "the profile decides the codes")
	require.Contains(t, out, "profile ietf: a reused key with another payload must be refused with 422 (got 400")
	require.Contains(t, out, "replay: onceproof demo --tool naive --scenario lost-response --seed ")
}

func TestVerdictCode(t *testing.T) {
	mk := func(vs ...harness.Verdict) *harness.Report {
		tr := harness.ToolReport{Name: "t"}
		for _, v := range vs {
			tr.Scenarios = append(tr.Scenarios, harness.ScenarioReport{Verdict: v})
		}
		return &harness.Report{Tools: []harness.ToolReport{tr}}
	}
	for _, tc := range []struct {
		report *harness.Report
		code   int
		reason string
	}{
		{mk(harness.Pass, harness.Pass), exitOK, "all passed"},
		{mk(harness.Pass, harness.Fail), exitFailed, "one failed"},
		{mk(harness.Inconclusive, harness.Pass), exitInconclusive, "inconclusive is not a pass"},
		{mk(harness.Inconclusive, harness.Fail), exitFailed, "a failure outranks inconclusive"},
		{&harness.Report{Tools: []harness.ToolReport{{Name: "t", Error: "preflight"}}}, exitUnreachable, "preflight failed"},
	} {
		require.Equal(t, tc.code, verdictCode(tc.report), tc.reason)
	}
}

func TestShellQuote(t *testing.T) {
	for _, tc := range []struct{ in, want, reason string }{
		{"tools.yaml", "tools.yaml", "plain"},
		{"my tools.yaml", "'my tools.yaml'", "space"},
		{"it's", `'it'\''s'`, "quote"},
		{"", "''", "empty"},
	} {
		require.Equal(t, tc.want, shellQuote(tc.in), tc.reason)
	}
}
