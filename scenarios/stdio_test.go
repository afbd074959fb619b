package scenarios_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/mcp"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/repro"
	"github.com/onceproof/onceproof/harness/stdio"
	"github.com/onceproof/onceproof/scenarios"
)

// stdioArguments are the stdio fixture tools' argument templates.
var stdioArguments = map[string]struct{ args, keyArg, keyMeta string }{
	fixtures.StdioCreateTicket:       {`{"subject":"refund {{.Marker}}","amount":{{.Int 1 500}}}`, "idempotency_key", ""},
	fixtures.StdioCreateTicketMemory: {`{"subject":"refund {{.Marker}}","amount":{{.Int 1 500}}}`, "idempotency_key", ""},
	fixtures.StdioSendNotice:         {`{"to":"ops","text":"notice {{.Marker}}"}`, "idempotency_key", ""},
	fixtures.StdioTicketStats:        {`{"query":"{{.Marker}}"}`, "", "io.onceproof/idempotency-key"},
}

// stdioTool is the stdio fixture's tool name, served by this test binary
// re-executed (see TestMain) with a store file of its own.
func stdioTool(t *testing.T, name string, processes int) (*stdio.Tool, string) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	store := filepath.Join(t.TempDir(), "store.jsonl")
	a := stdioArguments[name]
	tool, err := stdio.New(stdio.Config{Name: name, Command: []string{self}, Env: map[string]string{fixtures.EnvStdioStore: store},
		Processes: processes,
		Call:      mcp.CallConfig{Tool: name, Arguments: a.args, KeyArgument: a.keyArg, KeyMeta: a.keyMeta, Timeout: fastTimeout},
		ResultID:  "/id",
		Oracle:    harness.OracleFunc(func(_ context.Context, marker string) (int, error) { return fixtures.StdioCount(store, marker) })})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tool.Close() })
	return tool, store
}

// TestStdioFixtureVerdicts certifies the stdio fixture tools, one trial
// at a time and with the default parallelism, and asserts their
// documented verdicts, crash-restart included.
func TestStdioFixtureVerdicts(t *testing.T) {
	setRapid(t, 10, 0)
	for _, parallel := range []int{1, 0} {
		t.Run("parallel-"+map[int]string{1: "1", 0: "default"}[parallel], func(t *testing.T) {
			for _, name := range fixtures.StdioTools() {
				t.Run(name, func(t *testing.T) {
					tool, _ := stdioTool(t, name, 0)
					cfg := fast
					cfg.Parallel = parallel
					rep, err := scenarios.Run(context.Background(), tool, cfg)
					require.NoError(t, err)
					got := verdictsOf(t, rep)
					require.Equal(t, fixtures.StdioExpected(name), got, "%s: documented verdicts\n%s", name, failures(rep))
				})
			}
		})
	}
}

// failures lists a report's failing scenarios with their plans.
func failures(rep report.ToolReport) string {
	var b strings.Builder
	for _, s := range rep.Scenarios {
		if s.Counterexample != nil {
			b.WriteString(s.ID + ": " + s.Reason + "\n  plan: " + s.Counterexample.Plan + "\n")
			for _, a := range s.Counterexample.Attempts {
				b.WriteString("  " + a.Line() + "\n")
			}
		} else if s.Verdict != report.Pass {
			b.WriteString(s.ID + ": " + string(s.Verdict) + " " + s.Reason + "\n")
		}
	}
	return b.String()
}

// TestStdioMemoryKeysWithOneProcess: with one server process, keys kept
// in process memory fail only where a process is restarted.
func TestStdioMemoryKeysWithOneProcess(t *testing.T) {
	setRapid(t, 10, 0)
	tool, _ := stdioTool(t, fixtures.StdioCreateTicketMemory, 1)
	rep, err := scenarios.Run(context.Background(), tool, fast)
	require.NoError(t, err)
	got := verdictsOf(t, rep)
	want := map[string]string{"lost-response": "fail", "pre-server-error": "pass", "concurrent-duplicate": "pass", "key-mismatch": "pass",
		"distinct-keys": "pass", "replay": "pass", "crash-restart": "fail", "annotations": "pass"}
	assert.Equal(t, want, got, "%s", failures(rep))
}

// TestStdioReproducerRuns: the reproducer of a stdio tool's failure, run
// with bash against a fresh store, makes the duplicate the report
// describes, with no proxy.
func TestStdioReproducerRuns(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid is not installed")
	}
	for _, tc := range []struct {
		tool   string
		id     scenarios.ID
		reason string
	}{
		{fixtures.StdioSendNotice, scenarios.LostResponse, "a lost response and a retry"},
		{fixtures.StdioCreateTicketMemory, scenarios.CrashRestart, "a crash after the commit: the restarted process has never seen the key"},
		{fixtures.StdioSendNotice, scenarios.ConcurrentDuplicate, "held duplicates released together"},
	} {
		t.Run(tc.tool+"/"+string(tc.id), func(t *testing.T) {
			tool, _ := stdioTool(t, tc.tool, 0)
			cfg := fast
			cfg.Scenarios, cfg.Checks, cfg.Seed = []scenarios.ID{tc.id}, 20, 3
			rep, err := scenarios.Run(context.Background(), tool, cfg)
			require.NoError(t, err)
			s := rep.Scenarios[0]
			require.Equal(t, report.Fail, s.Verdict, tc.reason)
			scripts, err := repro.WriteScripts(t.TempDir(), &report.Report{Tools: []report.ToolReport{rep}}, func(tr string) repro.ScriptFunc {
				if tr == stdio.Record {
					return stdio.Script
				}
				return nil
			})
			require.NoError(t, err)
			require.Len(t, scripts, 1)
			fresh := filepath.Join(t.TempDir(), "fresh.jsonl")
			cmd := exec.Command("bash", scripts[0])
			cmd.Env = append(os.Environ(), fixtures.EnvStdioStore+"="+fresh)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			marker := s.Counterexample.Effects[0].Marker
			n, err := fixtures.StdioCount(fresh, marker)
			require.NoError(t, err)
			require.Greater(t, n, 1, "the script makes a duplicate:\n%s", out)
		})
	}
}
