package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/lint"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/spec"
)

const lintUsage = "Usage: onceproof lint --mcp URL | --mcp-command CMD | --spec FILE [--tool NAME]... [--format F [--out FILE]]... [--fail-on error|warning|info|never] [--allow-remote]"

// lintCmd reads what the model reads about each tool — an MCP server's
// tools as tools/list shows them (--mcp), or a spec's tools (--spec: its
// MCP tools from their servers, against the entry; its HTTP tools as
// declared) — and reports the findings of the lint rules. Exit 1 when a
// finding reaches --fail-on, 3 when an MCP server cannot be reached.
func lintCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	servers := serverFlags(fs)
	specPath := fs.String("spec", "", "a spec `FILE`: lint its tools (MCP tools are listed from their servers)")
	var tools []string
	fs.Func("tool", "lint only the tool `NAME` (repeatable; the MCP tool's name with --mcp, the spec entry's with --spec)", func(s string) error {
		tools = append(tools, s)
		return nil
	})
	var outs outputs
	outs.register(fs)
	failOn := fs.String("fail-on", string(lint.Error), "exit 1 when a finding of `SEVERITY` or worse exists: error, warning, info or never")
	allowRemote := fs.Bool("allow-remote", false, "allow MCP servers that are not on loopback")
	if help, err := parse(fs, args, lintUsage, stdout); help || err != nil {
		return exitOK, err
	}
	threshold, err := lint.ParseSeverity(*failOn)
	if err != nil {
		return 0, usagef("lint: --fail-on: %v", err)
	}
	chosen := givenServers(servers)
	if len(chosen)+given(*specPath) != 1 {
		return 0, usagef("lint: give exactly one of %s and --spec FILE", serverChoices(servers))
	}
	list, err := outs.resolve()
	if err != nil {
		return 0, err
	}
	if err := openOutputs(list); err != nil {
		return 0, err
	}
	defer discardOutputs(list)
	rep := &report.Report{Version: report.ReportVersion, Kind: report.KindLint, Onceproof: onceproofVersion(), Started: time.Now().UTC()}
	switch {
	case len(chosen) > 0:
		rep.Tools, err = lintServer(ctx, chosen[0], tools, *allowRemote)
	default:
		rep.Tools, err = lintSpec(ctx, *specPath, tools, *allowRemote)
	}
	if err != nil {
		return 0, err
	}
	for i := range rep.Tools {
		rep.Tools[i].Lint.FailOn = threshold
	}
	if err := writeOutputs(rep, list, stdout); err != nil {
		return 0, err
	}
	return lintExitCode(rep), nil
}

// lintExitCode is exitFailed when a finding reaches its threshold.
func lintExitCode(r *report.Report) int {
	if len(r.LintFailing()) > 0 {
		return exitFailed
	}
	return exitOK
}

// lintServer lints the tools of the server a server flag names (those
// named, when names are given).
func lintServer(ctx context.Context, f *serverFlag, names []string, allowRemote bool) ([]report.ToolReport, error) {
	_, listed, err := reachServer(ctx, "lint", f, &harness.Guard{AllowRemote: allowRemote})
	if err != nil {
		return nil, err
	}
	return lintListed(f.value, listed, names)
}

// lintListed lints the listed tools of the server where (those named, when
// names are given).
func lintListed(where string, listed []*mcp.Tool, names []string) ([]report.ToolReport, error) {
	var have []string
	for _, t := range listed {
		have = append(have, t.Name)
	}
	for _, n := range names {
		if !slices.Contains(have, n) {
			return nil, usagef("lint: --tool %s: %s has no such tool (it has: %s)", n, where, strings.Join(have, ", "))
		}
	}
	var out []report.ToolReport
	for _, t := range listed {
		if len(names) > 0 && !slices.Contains(names, t.Name) {
			continue
		}
		res := lint.MCP(t, lint.MCPOptions{})
		out = append(out, report.ToolReport{Name: t.Name, Lint: &res})
	}
	return out, nil
}

// lintSpec lints a spec's tools (those named, when names are given).
func lintSpec(ctx context.Context, path string, names []string, allowRemote bool) ([]report.ToolReport, error) {
	sp, err := loadSpec(ctx, path)
	if err != nil {
		if !errors.Is(err, spec.ErrSpec) {
			return nil, usagef("%v", err)
		}
		return nil, err
	}
	selected := sp.Tools
	if len(names) > 0 {
		selected = nil
		for _, n := range names {
			ts, err := sp.Find(n)
			if err != nil {
				return nil, usagef("--tool: %v", err)
			}
			selected = append(selected, ts)
		}
	}
	servers := map[string][]*mcp.Tool{}
	var out []report.ToolReport
	for _, ts := range selected {
		var res lint.Result
		if _, ok := ts.MCPServer(); !ok {
			res = ts.LintHTTP()
			out = append(out, report.ToolReport{Name: ts.Name, Lint: &res})
			continue
		}
		guard := &harness.Guard{AllowRemote: allowRemote}
		if err := ts.CheckTargets(guard, sp.Path); err != nil {
			return nil, err
		}
		tool, err := specMCPTool(ctx, ts, servers, guard)
		if err != nil {
			return nil, err
		}
		res = ts.LintMCP(tool)
		out = append(out, report.ToolReport{Name: ts.Name, Lint: &res})
	}
	return out, nil
}

// specMCPTool lists the tools of ts's MCP server (once per server, cached
// in servers) and returns the one ts names. A server that does not answer
// is ErrUnreachable; one without the tool, a spec error at mcp.tool.
func specMCPTool(ctx context.Context, ts spec.Tool, servers map[string][]*mcp.Tool, guard *harness.Guard) (*mcp.Tool, error) {
	srv, _ := ts.MCPServer()
	listed, ok := servers[srv.Where()]
	if !ok {
		var err error
		if listed, err = srv.ListTools(ctx, guard); err != nil {
			return nil, fmt.Errorf("%w: tool %s: %w", harness.ErrUnreachable, ts.Name, err)
		}
		servers[srv.Where()] = listed
	}
	var have []string
	for _, t := range listed {
		if t.Name == srv.Call().Tool {
			return t, nil
		}
		have = append(have, t.Name)
	}
	return nil, ts.FieldError("mcp.tool", fmt.Sprintf("%s has no tool %q (it has: %s)", srv.Where(), srv.Call().Tool, strings.Join(have, ", ")))
}

// lintBeforeCertify lints the selected tools of a spec before certify runs
// them. Findings never change certify's exit code: they are printed as
// warnings on stderr (unless quiet) and kept for the report (see
// attachLint). A tool whose MCP server cannot be reached now is marked
// skipped: certify itself will report it.
func lintBeforeCertify(ctx context.Context, selected []spec.Tool, quiet bool, stderr io.Writer) map[string]*lint.Result {
	out := map[string]*lint.Result{}
	servers := map[string][]*mcp.Tool{}
	n := 0
	for _, ts := range selected {
		var res lint.Result
		if _, ok := ts.MCPServer(); !ok {
			res = ts.LintHTTP()
		} else if tool, err := specMCPTool(ctx, ts, servers, ts.Common.Guard); err != nil {
			res = lint.Result{Skipped: err.Error(), Findings: []lint.Finding{}}
		} else {
			res = ts.LintMCP(tool)
		}
		res.FailOn = lint.Never
		out[ts.Name] = &res
		lint.Sort(res.Findings)
		for _, f := range res.Findings {
			n++
			if !quiet {
				fmt.Fprintf(stderr, "lint: %s\n", f)
			}
		}
	}
	if n > 0 && !quiet {
		fmt.Fprintf(stderr, "lint: %s; they do not change the verdict (onceproof lint --spec FILE explains each)\n", plural(n, "finding"))
	}
	return out
}

// attachLint puts each tool's lint result into its report.
func attachLint(r *report.Report, results map[string]*lint.Result) {
	for i := range r.Tools {
		if res, ok := results[r.Tools[i].Name]; ok {
			r.Tools[i].Lint = res
		}
	}
}
