package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/report"
)

func TestDemoPrintsOneTablePerKindOfTool(t *testing.T) {
	tool := func(name string, ids ...string) report.ToolReport {
		tr := report.ToolReport{Name: name, AgentReady: true}
		for _, id := range ids {
			tr.Scenarios = append(tr.Scenarios, report.ScenarioReport{ID: id, Verdict: report.Pass, Passed: true, Checks: 20, ValidTrials: 20})
		}
		return tr
	}
	http := []string{"lost-response", "pre-server-error", "concurrent-duplicate", "key-mismatch", "distinct-keys"}
	client := []string{"client-key-present", "client-key-stable", "client-no-retry-4xx", "client-backoff", "client-bounded", "client-key-no-pii"}
	r := &report.Report{Tools: []report.ToolReport{
		tool("correct", http...), tool("naive", http...),
		tool("mcp/create_ticket", append(http, "annotations")...), tool("mcp/ticket_stats", "annotations"),
		tool("client/good", client...),
	}}
	var b bytes.Buffer
	writeDemoText(&b, r, nil, nil, 0)
	out := b.String()

	tables := map[string][]string{}
	var title string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "HTTP tools", line == "MCP tools", strings.HasPrefix(line, "agent-side retry wrappers"):
			title = line
		case title != "" && line == "":
			title = ""
		case title != "":
			tables[title] = append(tables[title], line)
		}
	}
	require.Len(t, tables, 3, out)
	header := func(title string) []string { return strings.Fields(tables[title][0]) }
	require.Equal(t, append(append([]string{"tool"}, http...), "agent-ready"), header("HTTP tools"))
	require.Equal(t, append(append([]string{"tool"}, http...), "annotations", "agent-ready"), header("MCP tools"))
	require.Equal(t, append(append([]string{"tool"}, client...), "agent-ready"), header("agent-side retry wrappers (onceproof plays the server)"))
	require.Len(t, tables["HTTP tools"], 3, "a header and one row per HTTP tool")
	require.Contains(t, tables["MCP tools"][2], "—", "a scenario a tool did not run")
	for _, line := range strings.Split(out, "\n") {
		require.Less(t, len(line), 160, "no 14-column line: %q", line)
	}
}
