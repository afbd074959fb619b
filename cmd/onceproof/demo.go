package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/scenarios"
)

// demoTimeout is the fixtures' per-attempt deadline in the demo: short, so
// that lost responses and held originals cost little time.
const demoTimeout = 150 * time.Millisecond

// demo starts every fixture tool in-process, certifies each with the embedded
// Toxiproxy and prints a verdict table, one shrunk counterexample per failing
// cell, and whether every verdict matches the fixture's documentation.
func demo(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	var c common
	c.register(fs, 25, 50*time.Millisecond)
	if err := parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "Usage: onceproof demo [flags]")
			printDefaults(fs, stdout)
			return exitOK, nil
		}
		return 0, err
	}
	if c.shrinkTime == 20*time.Second {
		c.shrinkTime = 5 * time.Second
	}
	kinds := fixtures.Kinds()
	if len(c.tools) > 0 {
		kinds = nil
		for _, name := range c.tools {
			k, err := fixtures.ParseKind(name)
			if err != nil {
				return 0, usagef("--tool: %v", err)
			}
			kinds = append(kinds, k)
		}
	}
	if err := c.check(); err != nil {
		return 0, err
	}
	outs, err := c.outs.resolve()
	if err != nil {
		return 0, err
	}
	baseline, err := c.loadBaseline()
	if err != nil {
		return 0, err
	}
	if c.quiet {
		stderr = io.Discard
	}
	prog := newProgress(stderr, c.quiet)

	backend := faults.NewEmbedded()
	defer backend.Close(context.Background())
	report := &harness.Report{Version: harness.ReportVersion, Onceproof: version, Toxiproxy: backend.String(), Started: time.Now().UTC()}
	start := time.Now()
	fmt.Fprintf(stderr, "onceproof demo: %d fixture tools, embedded Toxiproxy, %d checks per scenario, seed %d\n", len(kinds), c.checks, c.seed)
	for _, kind := range kinds {
		tr, err := demoTool(ctx, kind, backend, c, prog, stderr)
		prog.done()
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if err != nil && !errors.Is(err, harness.ErrPreflight) {
			return 0, err
		}
		report.Tools = append(report.Tools, tr)
		fmt.Fprintf(stderr, "  %-15s done in %s\n", kind, tr.Duration.Round(time.Millisecond))
	}
	mismatches := mismatches(report)
	if baseline != nil {
		baseline.Apply(report)
	}
	for _, out := range outs {
		if out.format == "text" && out.path == "" {
			// The demo's own view: the verdict matrix and a counterexample
			// per failing cell.
			writeDemoText(stdout, report, mismatches, time.Since(start))
			continue
		}
		if err := writeOutputs(report, []output{out}, stdout); err != nil {
			return 0, err
		}
	}
	if len(mismatches) > 0 {
		return exitFailed, nil
	}
	return exitOK, nil
}

func demoTool(ctx context.Context, kind fixtures.Kind, backend faults.Backend, c common, prog *progress, stderr io.Writer) (harness.ToolReport, error) {
	srv, err := fixtures.Start(kind, "127.0.0.1:0", fixtures.Options{})
	if err != nil {
		return harness.ToolReport{Name: string(kind)}, err
	}
	defer srv.Close()
	tool, err := srv.HTTPTool(string(kind), demoTimeout)
	if err != nil {
		return harness.ToolReport{Name: string(kind)}, err
	}
	return scenarios.Run(ctx, tool, c.config(scenarios.Config{
		Backend: backend,
		Repro: func(id scenarios.ID, seed uint64) string {
			cmd := fmt.Sprintf("onceproof demo --tool %s --scenario %s --seed %d --checks %d", kind, id, seed, c.checks)
			if c.maxBackoff != 50*time.Millisecond {
				cmd += " --max-backoff " + c.maxBackoff.String()
			}
			return cmd
		},
	}, prog, stderr))
}

// mismatches lists the cells whose measured verdict differs from the
// fixture's documented one.
func mismatches(r *harness.Report) []string {
	var out []string
	for _, t := range r.Tools {
		want := fixtures.Expected(fixtures.Kind(t.Name))
		if t.Error != "" {
			out = append(out, fmt.Sprintf("%s: %s", t.Name, t.Error))
			continue
		}
		for _, s := range t.Scenarios {
			got := "fail"
			if s.Verdict == harness.Pass {
				got = "pass"
			} else if s.Verdict == harness.Inconclusive {
				got = "inconclusive"
			}
			if got != want[s.ID] {
				out = append(out, fmt.Sprintf("%s × %s: measured %s, documented %s (%s)", t.Name, s.ID, got, want[s.ID], s.Reason))
			}
		}
	}
	return out
}

func writeDemoText(w io.Writer, r *harness.Report, mismatches []string, elapsed time.Duration) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var ids []string
	if len(r.Tools) > 0 {
		for _, s := range r.Tools[0].Scenarios {
			ids = append(ids, s.ID)
		}
	}
	fmt.Fprintf(tw, "tool\t%s\tagent-ready\t\n", strings.Join(ids, "\t"))
	for _, t := range r.Tools {
		cells := []string{t.Name}
		for _, s := range t.Scenarios {
			cells = append(cells, cell(s))
		}
		ready := "no"
		if t.AgentReady {
			ready = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", strings.Join(cells, "\t"), ready)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	for _, t := range r.Tools {
		fmt.Fprintf(w, "%-15s %s\n", t.Name, fixtures.Description(fixtures.Kind(t.Name)))
	}
	for _, t := range r.Tools {
		for _, s := range t.Scenarios {
			if s.Counterexample == nil {
				continue
			}
			fmt.Fprintf(w, "\n%s × %s FAILED after %d checks (%d valid): %s\n", t.Name, s.ID, s.Checks, s.ValidTrials, s.Reason)
			fmt.Fprint(w, indent(s.Counterexample.String(), "  "))
			fmt.Fprintf(w, "  replay: %s\n", s.Repro)
		}
	}
	fmt.Fprintln(w)
	if len(mismatches) == 0 {
		fmt.Fprintf(w, "Every verdict matches the fixtures' documented behaviour (%s).\n", elapsed.Round(100*time.Millisecond))
		return
	}
	fmt.Fprintf(w, "%d verdicts differ from the fixtures' documented behaviour:\n", len(mismatches))
	for _, m := range mismatches {
		fmt.Fprintf(w, "  %s\n", m)
	}
}

func cell(s harness.ScenarioReport) string {
	switch s.Verdict {
	case harness.Pass:
		return "PASS " + strconv.Itoa(s.ValidTrials) + "/" + strconv.Itoa(s.Checks)
	case harness.Fail:
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
