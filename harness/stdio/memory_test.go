package stdio_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/mcp"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/stdio"
	"github.com/onceproof/onceproof/scenarios"
)

// memoryServer builds the MCP Go SDK's example "memory" server (a
// knowledge graph kept in a JSON file, the Go port of the reference
// server) from the module cache: third-party code, not committed here.
func memoryServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "memory")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/examples/server/memory").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// memoryTool is create_entities of the memory server with its graph in
// file, an entity's name carrying the marker and an observation the key
// (the tool takes none); the oracle counts the entities so named in the
// file.
func memoryTool(t *testing.T, bin, file string, processes int) *stdio.Tool {
	t.Helper()
	oracle := &harness.CommandOracle{Argv: []string{"sh", "-c", `grep -o "\"name\":\"onceproof $ONCEPROOF_MARKER\"" "$0" 2>/dev/null | wc -l`, file}, Timeout: 10 * time.Second}
	tool, err := stdio.New(stdio.Config{Name: "memory", Command: []string{bin, "-memory", file}, Processes: processes,
		Call: mcp.CallConfig{Tool: "create_entities", Timeout: 2 * time.Second,
			Arguments: `{"entities":[{"name":"onceproof {{.Marker}}","entityType":"ticket","observations":["key {{.Key}}"]}]}`},
		Oracle: harness.Settled(oracle, 20*time.Millisecond)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tool.Close() })
	return tool
}

// summary is a report's verdicts with their reasons, for the log.
func summary(rep report.ToolReport) (map[string]string, string) {
	got := map[string]string{}
	var b strings.Builder
	for _, s := range rep.Scenarios {
		got[s.ID] = string(s.Verdict)
		b.WriteString(s.ID + " " + string(s.Verdict) + " " + s.Reason + "\n")
		if s.Counterexample != nil {
			for _, a := range s.Counterexample.Attempts {
				b.WriteString("  " + a.Line() + "\n")
			}
		}
	}
	return got, b.String()
}

// TestCertifyTheSDKMemoryServer certifies create_entities of the MCP Go
// SDK's memory server over stdio (what it finds is in the README). Each
// scenario on a fresh graph, one trial at a time, one process: it dedupes
// on the entity's name, so a retry adds nothing (lost-response and
// crash-restart pass), but a replay's answer is not the first one's
// ("entities": null), two operations with the same name are merged, a
// reused key with another payload is executed, and identical calls at once
// race (each call reads the file, adds, rewrites it whole): duplicates, or
// a file left unreadable. With trials side by side on two processes it
// loses acknowledged writes; every "acknowledged, no effect" the harness
// reports is checked against the file itself.
func TestCertifyTheSDKMemoryServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the SDK's example server")
	}
	bin := memoryServer(t)
	t.Run("each scenario on a fresh graph, one trial at a time", func(t *testing.T) {
		want := map[scenarios.ID]report.Verdict{
			scenarios.LostResponse: report.Pass, scenarios.PreServerError: report.Pass, scenarios.ConcurrentDuplicate: report.Fail,
			scenarios.KeyMismatch: report.Fail, scenarios.DistinctKeys: report.Fail, scenarios.Replay: report.Fail, scenarios.CrashRestart: report.Pass,
		}
		for id, verdict := range want {
			t.Run(string(id), func(t *testing.T) {
				tool := memoryTool(t, bin, filepath.Join(t.TempDir(), "graph.json"), 1)
				rep, err := scenarios.Run(context.Background(), tool, scenarios.Config{Scenarios: []scenarios.ID{id}, Checks: 20, Seed: 7,
					MaxBackoff: 10 * time.Millisecond, Parallel: 1})
				require.NoError(t, err)
				_, log := summary(rep)
				require.Equal(t, verdict, rep.Scenarios[0].Verdict, "%s", log)
				if id == scenarios.Replay {
					assert.Equal(t, report.RuleReplayFidelity, rep.Scenarios[0].Counterexample.Rule, "a retry's answer is not the first one's: %s", log)
				}
				assert.Contains(t, rep.ServerLog, "create_entities", "the server's stderr (its JSON-RPC log) is kept")
			})
		}
	})
	t.Run("side by side, two processes", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "graph.json")
		tool := memoryTool(t, bin, file, 2)
		rep, err := scenarios.Run(context.Background(), tool, scenarios.Config{Checks: 10, Seed: 7, MaxBackoff: 10 * time.Millisecond})
		require.NoError(t, err)
		_, log := summary(rep)
		t.Logf("%s", log)
		graph, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, s := range rep.Scenarios {
			c := s.Counterexample
			if c == nil || c.Rule != report.RuleAckedNoEffect {
				continue
			}
			for _, e := range c.Effects {
				if e.Count == 0 {
					assert.NotContains(t, string(graph), `"name":"onceproof `+e.Marker+`"`, "%s: an acknowledged write the harness says is missing is missing from the file", s.ID)
				}
			}
		}
	})
}
