package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/mcp"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/repro"
	"github.com/onceproof/onceproof/scenarios"
)

// demoTimeout is the fixtures' declared per-attempt timeout in the demo:
// the README example's, what a user would declare (plans draw shorter
// deadlines for black-holed responses and held originals, and keep some at
// this one).
const demoTimeout = 2 * time.Second

// demoParallel is how many times the default number of trials the demo
// keeps in flight unless --parallel says otherwise.
const demoParallel = 4

// demo starts every fixture tool in-process, certifies each with the embedded
// Toxiproxy and prints a verdict table, one shrunk counterexample per failing
// cell, and whether every verdict matches the fixture's documentation.
func demo(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	var c common
	c.register(fs, 20, scenarios.DefaultMaxBackoff)
	if help, err := parse(fs, args, "Usage: onceproof demo [flags]", stdout); help || err != nil {
		return exitOK, err
	}
	if c.shrinkTime == 20*time.Second {
		c.shrinkTime = 5 * time.Second
	}
	if !flagSet(fs, "parallel") {
		// The demo's trials are loopback calls to in-process fixtures that
		// mostly wait (drawn delays, callers' deadlines): more of them in
		// flight keep its many rows within a few seconds.
		c.parallel = demoParallel * scenarios.DefaultParallel()
	}
	rows := demoRows(c)
	if len(c.tools) > 0 {
		var picked []demoRow
		for _, name := range c.tools {
			i := slices.IndexFunc(rows, func(r demoRow) bool { return r.name == name })
			if i < 0 {
				var names []string
				for _, r := range rows {
					names = append(names, r.name)
				}
				return 0, usagef("--tool: no demo tool %q (have %s)", name, strings.Join(names, ", "))
			}
			picked = append(picked, rows[i])
		}
		rows = picked
	}
	outs, baseline, err := c.prepare(fs)
	if err != nil {
		return 0, err
	}
	defer discardOutputs(outs)
	reasons := stderr // the reason for a non-zero exit is printed even with --quiet
	if c.quiet {
		stderr = io.Discard
	}
	prog := newProgress(stderr, c.quiet)

	backend := faults.NewEmbedded()
	defer backend.Close(context.Background())
	rep := &report.Report{Version: report.ReportVersion, Onceproof: onceproofVersion(), Toxiproxy: backend.String(), Started: time.Now().UTC()}
	start := time.Now()
	fmt.Fprintf(stderr, "onceproof demo: %s (HTTP, MCP, agent-side wrappers), embedded Toxiproxy, %s per scenario, seed %d\n",
		report.Plural(len(rows), "fixture tool"), report.Plural(c.checks, "check"), c.seed)
	env := &demoEnv{backend: backend, c: c, prog: prog, stderr: stderr}
	defer env.close()
	// The rows at once, their trials sharing the slots; the agent-side
	// wrappers, whose checks judge the timing of retries, after the
	// others, on a quieter machine.
	rep.Tools = make([]report.ToolReport, len(rows))
	errs := make([]error, len(rows))
	for _, timing := range []bool{false, true} {
		var wg sync.WaitGroup
		for i, row := range rows {
			if row.timing != timing {
				continue
			}
			wg.Go(func() {
				tr, err := row.run(ctx, env)
				tr.Name = row.name
				rep.Tools[i], errs[i] = tr, err
				if ctx.Err() == nil {
					env.logf("  %-24s done in %s\n", row.name, tr.Duration.Round(time.Millisecond))
				}
			})
		}
		wg.Wait()
	}
	prog.done()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, harness.ErrPreflight) {
			return 0, err
		}
	}
	mismatches := mismatches(rep, rows)
	if baseline != nil {
		baseline.Apply(rep)
	}
	for _, out := range outs {
		if out.format == "text" && out.path == "" {
			// The demo's own view: the verdict matrix and a counterexample
			// per failing cell.
			writeDemoText(stdout, rep, rows, mismatches, time.Since(start))
			continue
		}
		if err := writeOutputs(rep, []output{out}, stdout); err != nil {
			return 0, err
		}
	}
	if c.repro != "" {
		scripts, err := repro.WriteScripts(c.repro, rep, transportScript)
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(stderr, "%s in %s\n", plural(len(scripts), "reproducer"), c.repro)
	}
	if len(mismatches) > 0 {
		fmt.Fprintf(reasons, "onceproof: %s from the fixtures' documented behaviour: %s\n",
			irregular(len(mismatches), "verdict differs", "verdicts differ"), strings.Join(mismatches, "; "))
		return exitFailed, nil
	}
	return exitOK, nil
}

// demoRow is one tool of the demo: an HTTP fixture, an MCP fixture tool,
// or an agent-side wrapper certified against the capture endpoint.
type demoRow struct {
	name     string
	describe string
	expected map[string]string
	// timing is set for rows whose checks judge the timing of retries.
	timing bool
	run    func(ctx context.Context, env *demoEnv) (report.ToolReport, error)
}

// demoEnv is what the rows share: the fault backend, the flags, and the MCP
// fixture server (started on first use).
type demoEnv struct {
	backend faults.Backend
	c       common
	prog    *progress
	stderr  io.Writer

	mu     sync.Mutex
	mcp    *fixtures.MCPServer
	mcpErr error
}

// mcpServer starts the MCP fixture server on first use.
func (e *demoEnv) mcpServer() (*fixtures.MCPServer, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mcp == nil && e.mcpErr == nil {
		e.mcp, e.mcpErr = fixtures.StartMCP("127.0.0.1:0", fixtures.MCPOptions{})
	}
	return e.mcp, e.mcpErr
}

func (e *demoEnv) logf(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fmt.Fprintf(e.stderr, format, args...)
}

func (e *demoEnv) close() {
	if e.mcp != nil {
		_ = e.mcp.Close()
	}
}

func (e *demoEnv) repro(name string) func(scenarios.ID, uint64) string {
	return func(id scenarios.ID, seed uint64) string {
		parts := append([]string{"onceproof demo --tool", name, "--scenario", string(id), "--seed", strconv.FormatUint(seed, 10)}, e.c.depthFlags()...)
		return strings.Join(append(parts, e.c.waitFlags()...), " ")
	}
}

// mcpArguments are the MCP fixture tools' argument templates and where
// their key travels.
var mcpArguments = map[string][3]string{
	"create_ticket": {`{"subject":"refund {{.Marker}}","amount":{{.Int 1 500}}}`, "idempotency_key", ""},
	"send_notice":   {`{"to":"ops","text":"notice {{.Marker}}"}`, "idempotency_key", ""},
	"ticket_stats":  {`{"query":"{{.Marker}}"}`, "", "io.onceproof/idempotency-key"},
}

func demoRows(c common) []demoRow {
	var rows []demoRow
	for _, kind := range append(fixtures.Kinds(), fixtures.LookupKinds()...) {
		if fixtures.Slow(kind) {
			// Its documented failure takes seconds of waiting (retention):
			// the scenarios tests assert it; the demo stays short.
			continue
		}
		rows = append(rows, demoRow{name: string(kind), describe: fixtures.Description(kind), expected: fixtures.Expected(kind),
			run: func(ctx context.Context, e *demoEnv) (report.ToolReport, error) {
				srv, err := fixtures.Start(kind, "127.0.0.1:0", fixtures.Options{})
				if err != nil {
					return report.ToolReport{}, err
				}
				defer srv.Close()
				tool, err := srv.HTTPTool(string(kind), demoTimeout)
				if err != nil {
					return report.ToolReport{}, err
				}
				cfg := e.c.config(scenarios.Config{Backend: e.backend, Repro: e.repro(string(kind))}, e.prog, e.stderr)
				cfg.Scenarios = documented(tool, fixtures.Expected(kind), cfg.Scenarios)
				if focus := fixtures.DemoScenarios(kind); focus != nil {
					cfg.Scenarios = slices.DeleteFunc(cfg.Scenarios, func(id scenarios.ID) bool { return !slices.Contains(focus, string(id)) })
				}
				if len(cfg.Scenarios) == 0 {
					return report.ToolReport{Name: string(kind)}, nil // only other scenarios were asked for
				}
				return scenarios.Run(ctx, tool, cfg)
			}})
	}
	for _, name := range fixtures.MCPTools() {
		row := "mcp/" + name
		rows = append(rows, demoRow{name: row, describe: fixtures.MCPDescription(name), expected: fixtures.MCPExpected(name),
			run: func(ctx context.Context, e *demoEnv) (report.ToolReport, error) {
				srv, err := e.mcpServer()
				if err != nil {
					return report.ToolReport{}, err
				}
				oracle, err := harness.NewHTTPOracle(srv.URL()+"/count?marker={{.Marker}}", "/count")
				if err != nil {
					return report.ToolReport{}, err
				}
				a := mcpArguments[name]
				tool, err := mcp.NewMCPTool(mcp.MCPConfig{Name: row, URL: srv.Endpoint(), Tool: name, Arguments: a[0],
					KeyArgument: a[1], KeyMeta: a[2], Timeout: demoTimeout, ResultID: "/id", Oracle: oracle})
				if err != nil {
					return report.ToolReport{}, err
				}
				return scenarios.Run(ctx, tool, e.c.config(scenarios.Config{Backend: e.backend, Repro: e.repro(row)}, e.prog, e.stderr))
			}})
	}
	for _, w := range fixtures.Wrappers() {
		row := "client/" + string(w)
		rows = append(rows, demoRow{name: row, describe: fixtures.WrapperDescription(w), expected: fixtures.WrapperExpected(w), timing: true,
			run: func(ctx context.Context, e *demoEnv) (report.ToolReport, error) {
				cfg := scenarios.ClientConfig{Name: row, Backend: e.backend, Repro: e.repro(row), Progress: e.prog.update,
					Trials: e.c.checks, Seed: e.c.seed, Budget: e.c.budget, Slots: e.c.slots, ShrinkTime: e.c.shrinkTime}
				if e.c.verbose {
					cfg.Attempts = e.stderr
				}
				for _, id := range e.c.scenarios {
					if _, err := scenarios.ParseClientID(string(id)); err == nil {
						cfg.Checks = append(cfg.Checks, id)
					}
				}
				if len(e.c.scenarios) > 0 && len(cfg.Checks) == 0 {
					return report.ToolReport{Name: row}, nil // only server-side scenarios were asked for
				}
				return scenarios.RunClient(ctx, w.Op(), cfg)
			}})
	}
	return rows
}

// documented is the scenarios of tool that its fixture documents a verdict
// for (want), in the order they run, narrowed to asked when the command
// line names scenarios.
func documented(tool harness.Tool, want map[string]string, asked []scenarios.ID) []scenarios.ID {
	ids := []scenarios.ID{}
	for _, id := range scenarios.Applicable(tool) {
		if _, ok := want[string(id)]; ok && (len(asked) == 0 || slices.Contains(asked, id)) {
			ids = append(ids, id)
		}
	}
	return ids
}

// mismatches lists the cells whose measured verdict differs from the
// fixture's documented one.
func mismatches(r *report.Report, rows []demoRow) []string {
	var out []string
	for i, t := range r.Tools {
		want := rows[i].expected
		if t.Error != "" {
			out = append(out, fmt.Sprintf("%s: %s", t.Name, t.Error))
			continue
		}
		for _, s := range t.Scenarios {
			got := "fail"
			if s.Verdict == report.Pass {
				got = "pass"
			} else if s.Verdict == report.Inconclusive {
				got = "unknown"
			}
			if got != want[s.ID] {
				out = append(out, fmt.Sprintf("%s × %s: measured %s, documented %s (%s)", t.Name, s.ID, got, want[s.ID], s.Reason))
			}
		}
	}
	return out
}

func writeDemoText(w io.Writer, r *report.Report, rows []demoRow, mismatches []string, elapsed time.Duration) {
	for _, g := range demoGroups(r) {
		fmt.Fprintf(w, "\n%s\n", g.title)
		writeVerdictTable(w, g.tools)
	}
	fmt.Fprintln(w)
	for _, row := range rows {
		fmt.Fprintf(w, "%-22s %s\n", row.name, row.describe)
	}
	for _, t := range r.Tools {
		for _, s := range t.Scenarios {
			if s.Counterexample == nil {
				continue
			}
			fmt.Fprintf(w, "\n%s × %s FAILED after %s (%d valid): %s\n", t.Name, s.ID, report.Plural(s.Checks, "check"), s.ValidTrials, s.Reason)
			fmt.Fprint(w, indent(s.Counterexample.String(), "  "))
			fmt.Fprintf(w, "  replay: %s\n", s.Repro)
		}
	}
	fmt.Fprintln(w)
	if len(mismatches) == 0 {
		fmt.Fprintf(w, "Every verdict matches the fixtures' documented behaviour (%s).\n", elapsed.Round(100*time.Millisecond))
		return
	}
	fmt.Fprintf(w, "%s from the fixtures' documented behaviour:\n", irregular(len(mismatches), "verdict differs", "verdicts differ"))
	for _, m := range mismatches {
		fmt.Fprintf(w, "  %s\n", m)
	}
}

// demoGroup is the tools of one kind (HTTP, MCP, agent-side wrappers),
// which share their scenarios and so one table.
type demoGroup struct {
	title string
	tools []report.ToolReport
}

// demoGroups splits the report's tools by kind, in the order they ran; a
// row's kind is the prefix of its name ("mcp/", "client/"; none for HTTP).
func demoGroups(r *report.Report) []demoGroup {
	titles := map[string]string{"": "HTTP tools", "mcp": "MCP tools", "client": "agent-side retry wrappers (onceproof plays the server)"}
	var groups []demoGroup
	index := map[string]int{}
	for _, t := range r.Tools {
		kind, _, ok := strings.Cut(t.Name, "/")
		if !ok {
			kind = ""
		}
		i, seen := index[kind]
		if !seen {
			title := titles[kind]
			if title == "" {
				title = kind + " tools"
			}
			i = len(groups)
			index[kind] = i
			groups = append(groups, demoGroup{title: title})
		}
		groups[i].tools = append(groups[i].tools, t)
	}
	return groups
}

// writeVerdictTable writes one row per tool and one column per scenario
// any of them ran.
func writeVerdictTable(w io.Writer, tools []report.ToolReport) {
	ids := (&report.Report{Tools: tools}).ScenarioIDs()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "tool\t%s\tagent-ready\t\n", strings.Join(ids, "\t"))
	for _, t := range tools {
		cells := []string{t.Name}
		for _, id := range ids {
			s, ok := t.Scenario(id)
			if !ok {
				cells = append(cells, "—")
				continue
			}
			cells = append(cells, cell(s))
		}
		ready := "no"
		if t.AgentReady {
			ready = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", strings.Join(cells, "\t"), ready)
	}
	_ = tw.Flush()
}

func cell(s report.ScenarioReport) string {
	switch s.Verdict {
	case report.Pass:
		return "PASS " + strconv.Itoa(s.ValidTrials) + "/" + strconv.Itoa(s.Checks)
	case report.Fail:
		return "FAIL"
	}
	return "UNKNOWN"
}

func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}
