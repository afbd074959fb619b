package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildWrapper builds cmd/onceproof-wrapper once for the test.
func buildWrapper(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "onceproof-wrapper")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/onceproof/onceproof/cmd/onceproof-wrapper").CombinedOutput()
	require.NoError(t, err, "build onceproof-wrapper: %s", out)
	return bin
}

func TestCertifyClient(t *testing.T) {
	bin := buildWrapper(t)
	wrapper := func(name string) string { return shellQuote(bin) + " --wrapper " + name }
	fast := []string{"--checks", "5"}
	for _, tc := range []struct {
		args   []string
		code   int
		output []string
		reason string
	}{
		{append([]string{"certify-client", "--exec", wrapper("good")}, fast...), exitOK,
			[]string{"client: agent-ready", "client-key-present", "client-key-no-pii"}, "the reference wrapper is agent-ready"},
		{append([]string{"certify-client", "--exec", wrapper("fresh-key"), "--name", "fresh"}, fast...), exitFailed,
			[]string{"fresh: NOT agent-ready", "client-key-stable      FAIL", "a retry must reuse its operation's key",
				"replay: onceproof certify-client --exec", "--scenario client-key-stable --seed"}, "a fresh key per attempt fails with a replay command"},
		{append([]string{"certify-client", "--exec", wrapper("no-key"), "--scenario", "client-key-no-pii"}, fast...), exitInconclusive,
			[]string{"UNKNOWN", "no attempt carried a key"}, "a wrapper without keys cannot show that its keys carry no personal data"},
		{append([]string{"certify-client", "--exec", "true", "--scenario", "client-key-present"}, fast...), exitInconclusive,
			[]string{"made no attempt in 5 trials"}, "a command that sends nothing is unknown, never ok"},
		{append([]string{"certify-client", "--exec", "exit 1", "--scenario", "client-bounded"}, fast...), exitInconclusive,
			[]string{"made no attempt", "exit status 1"}, "a failing command that sends nothing is unknown and says how it failed"},
		{[]string{"certify-client"}, exitUsage, []string{"--exec is required"}, "no command"},
		{[]string{"certify-client", "--exec", "true", "--ops", "0"}, exitUsage, []string{"--ops 0"}, "bad ops"},
		{[]string{"certify-client", "--exec", "true", "--max-attempts", "0"}, exitUsage, []string{"--max-attempts"}, "bad attempts bound"},
		{[]string{"certify-client", "--exec", "true", "--max-op-time", "0s"}, exitUsage, []string{"--max-op-time"}, "bad time bound"},
		{[]string{"certify-client", "--exec", "true", "--scenario", "lost-response"}, exitUsage, []string{"unknown client check"}, "a server scenario is not a client check"},
		{[]string{"certify-client", "--exec", "true", "--checks", "0"}, exitUsage, []string{"--checks"}, "bad checks"},
		{[]string{"certify-client", "--exec", "true", "--format", "xml"}, exitUsage, []string{"want one of text, json"}, "bad format"},
		{[]string{"certify-client", "--exec", "true", "stray"}, exitUsage, []string{"unexpected argument"}, "stray argument"},
		{[]string{"certify-client", "-h"}, exitOK, []string{"Usage: onceproof certify-client", "-exec", "-ops"}, "help"},
		{[]string{"help"}, exitOK, []string{"certify-client"}, "the command list names certify-client"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			require.Equal(t, tc.code, code, "%s\nstdout:\n%s\nstderr:\n%s", tc.reason, out, errOut)
			for _, want := range tc.output {
				require.Contains(t, out+errOut, want, tc.reason)
			}
		})
	}
}

func TestCertifyClientJSONReport(t *testing.T) {
	bin := buildWrapper(t)
	out := filepath.Join(t.TempDir(), "report.json")
	code, _, errOut := runCLI(t, "certify-client", "--exec", shellQuote(bin)+" --wrapper retry-everything",
		"--scenario", "client-no-retry-4xx", "--scenario", "client-key-present", "--checks", "5", "--seed", "7",
		"--ops", "2", "--name", "storm", "-v", "--format", "json", "--out", out)
	require.Equal(t, exitFailed, code, errOut)
	require.Contains(t, errOut, "storm/client-no-retry-4xx #1 op-1", "-v logs every attempt")
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep struct {
		Version int `json:"version"`
		Tools   []struct {
			Name       string `json:"name"`
			AgentReady bool   `json:"agent_ready"`
			Scenarios  []struct {
				ID             string `json:"id"`
				Verdict        string `json:"verdict"`
				Checks         int    `json:"checks"`
				Seed           uint64 `json:"seed"`
				Repro          string `json:"repro"`
				Counterexample *struct {
					Plan      string `json:"plan"`
					Violation string `json:"violation"`
					Attempts  []struct {
						Op     string `json:"op"`
						Status int    `json:"status"`
						Body   string `json:"body"`
					} `json:"attempts"`
				} `json:"counterexample"`
			} `json:"scenarios"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(data, &rep))
	require.Equal(t, 1, rep.Version)
	require.Len(t, rep.Tools, 1)
	tool := rep.Tools[0]
	require.Equal(t, "storm", tool.Name)
	require.False(t, tool.AgentReady)
	require.Len(t, tool.Scenarios, 2)
	bad, good := tool.Scenarios[0], tool.Scenarios[1]
	require.Equal(t, "client-no-retry-4xx", bad.ID)
	require.Equal(t, "failed", bad.Verdict)
	require.NotNil(t, bad.Counterexample)
	require.Contains(t, bad.Counterexample.Violation, "a 4xx is final")
	require.Contains(t, bad.Counterexample.Plan, "(final, and again to every retry)")
	require.NotEmpty(t, bad.Counterexample.Attempts)
	require.Regexp(t, `^POST /onceproof/t\d+/1/tickets `, bad.Counterexample.Attempts[0].Body)
	require.Contains(t, bad.Repro, "--scenario client-no-retry-4xx")
	require.Contains(t, bad.Repro, "--ops 2")
	require.Equal(t, "client-key-present", good.ID)
	require.Equal(t, "ok", good.Verdict)
	require.Equal(t, 5, good.Checks)
	require.Equal(t, uint64(7), good.Seed)
}
