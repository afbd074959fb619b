package scenarios_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/mcp"
	"github.com/onceproof/onceproof/harness/report"
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
					got := map[string]string{}
					for _, s := range rep.Scenarios {
						got[s.ID] = verdictWord(s.Verdict)
						if s.Verdict == report.Fail {
							require.NotNil(t, s.Counterexample, s.ID)
						}
					}
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
	got := map[string]string{}
	for _, s := range rep.Scenarios {
		got[s.ID] = verdictWord(s.Verdict)
	}
	want := map[string]string{"lost-response": "fail", "pre-server-error": "pass", "concurrent-duplicate": "pass", "key-mismatch": "pass",
		"distinct-keys": "pass", "replay": "pass", "crash-restart": "fail", "annotations": "pass"}
	assert.Equal(t, want, got, "%s", failures(rep))
}
