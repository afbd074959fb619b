package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/spec"
	"github.com/onceproof/onceproof/scenarios"
)

const chaosUsage = "Usage: onceproof chaos --spec FILE [--tool NAME] [--agents N] [--ops N] [--fault-rate P] [--duration D] [--format text|json] [--out FILE]"

// chaosDocument is the JSON form of a chaos run.
type chaosDocument struct {
	Version   int                 `json:"version"`
	Kind      string              `json:"kind"`
	Onceproof string              `json:"onceproof"`
	Started   time.Time           `json:"started"`
	Chaos     *report.ChaosReport `json:"chaos"`
}

// chaosCmd runs a chaos workload: many simulated agents performing many
// operations against one tool of a spec while faults rain on them, then one
// check of the whole history. Exit 0 when no operation broke exactly-once,
// 1 when one did.
func chaosCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	specPath := fs.String("spec", "", "spec file (YAML, version: 1)")
	toolName := fs.String("tool", "", "the tool to load (default: the spec's only tool)")
	agents := fs.Int("agents", scenarios.DefaultChaosAgents, "simulated agents at once (1 to 1024)")
	ops := fs.Int("ops", scenarios.DefaultChaosOps, "operations in all (1 to 10,000,000)")
	faultRate := fs.Float64("fault-rate", scenarios.DefaultChaosFaultRate, "probability that an attempt meets a fault (0 to 1)")
	dupRate := fs.Float64("duplicate-rate", scenarios.DefaultChaosDuplicateRate, "probability that a second agent performs an operation at the same time (0 to 1)")
	duration := fs.Duration("duration", 0, "no operation starts after this long (0: --ops alone bounds the run)")
	maxAttempts := fs.Int("max-attempts", scenarios.DefaultChaosMaxAttempts, "most attempts an agent makes for one operation")
	maxBackoff := fs.Duration("max-backoff", scenarios.DefaultMaxBackoff, "longest retry delay")
	seed := fs.Uint64("seed", 0, "seed for every draw (0: pick one and print it)")
	format := fs.String("format", "text", "text or json")
	out := fs.String("out", "", "write the report to this file instead of standard output")
	quiet := fs.Bool("quiet", false, "no progress or status lines on standard error")
	allowRemote := fs.Bool("allow-remote", false, "allow tools and oracles that are not on loopback")
	if help, err := parse(fs, args, chaosUsage, stdout); help || err != nil {
		return exitOK, err
	}
	switch {
	case *specPath == "":
		return 0, usagef("chaos: --spec is required")
	case *format != "text" && *format != "json":
		return 0, usagef("chaos: --format %q: want text or json", *format)
	case *agents < 1, *ops < 1, *maxAttempts < 1:
		return 0, usagef("chaos: agents %d, ops %d, max attempts %d: want at least 1 each", *agents, *ops, *maxAttempts)
	}
	if err := checkDuration("duration", *duration, maxBudget); err != nil {
		return 0, err
	}
	if err := checkDuration("max-backoff", *maxBackoff, maxBackoffLimit); err != nil {
		return 0, err
	}
	cfg := scenarios.ChaosConfig{Agents: *agents, Ops: *ops, FaultRate: *faultRate, NoFaults: *faultRate == 0,
		DuplicateRate: *dupRate, Duration: *duration, MaxAttempts: *maxAttempts, MaxBackoff: *maxBackoff, Seed: *seed}
	if cfg.Seed == 0 {
		cfg.Seed = scenarios.RandomSeed()
	}
	if err := scenarios.CheckChaosConfig(cfg); err != nil {
		return 0, usagef("chaos: %v", err)
	}
	// The report's file is opened before the run.
	var file *target
	if *out != "" {
		var err error
		if file, err = openTarget("--out", *out); err != nil {
			return 0, err
		}
		defer file.discard()
	}
	sp, err := loadSpec(ctx, *specPath)
	if err != nil {
		if !errors.Is(err, spec.ErrSpec) {
			return 0, usagef("%v", err)
		}
		return 0, err
	}
	ts, err := pickTool(sp, *toolName)
	if err != nil {
		return 0, err
	}
	guard := &harness.Guard{AllowRemote: *allowRemote}
	if err := ts.CheckTargets(guard, sp.Path); err != nil {
		return 0, err
	}
	ts = ts.WithGuard(guard)
	log := stderr
	if *quiet {
		log = io.Discard
	}
	envOpts, closeDocker, err := containerOptions(ctx, []spec.Tool{ts}, false, nil, log)
	if err != nil {
		return 0, err
	}
	defer closeDocker()
	tool, stop, err := ts.Start(ctx, envOpts)
	if err != nil {
		return 0, err
	}
	defer stop(context.Background())
	backend := faults.NewEmbedded()
	defer backend.Close(context.Background())
	cfg.Backend = backend
	prog := newProgress(stderr, *quiet)
	cfg.Progress = func(p scenarios.ChaosProgress) {
		prog.line(fmt.Sprintf("chaos %s: %d/%d operations, %d attempts, %d faulted — %s", tool.Name(), p.Done, p.Ops, p.Attempts, p.Faults, p.Elapsed.Round(100*time.Millisecond)))
	}
	fmt.Fprintf(log, "chaos %s: %s, %s, fault rate %s, seed %d\n", tool.Name(), plural(cfg.Agents, "agent"), plural(cfg.Ops, "operation"), report.Percent(cfg.FaultRate), cfg.Seed)
	started := time.Now().UTC()
	rep, err := scenarios.Chaos(ctx, tool, cfg)
	prog.done()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if err != nil {
		return 0, err
	}
	write := func(w io.Writer) error {
		if *format == "json" {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(chaosDocument{Version: report.ReportVersion, Kind: "chaos", Onceproof: onceproofVersion(), Started: started, Chaos: &rep})
		}
		return rep.WriteText(w)
	}
	if file == nil {
		err = write(stdout)
	} else {
		err = file.commit(write)
	}
	if err != nil {
		return 0, err
	}
	if len(rep.Violations) > 0 {
		return exitFailed, nil
	}
	return exitOK, nil
}

// pickTool returns the spec's tool named name, or its only tool when name
// is empty.
func pickTool(sp *spec.Spec, name string) (spec.Tool, error) {
	if name != "" {
		ts, err := sp.Find(name)
		if err != nil {
			return ts, usagef("--tool: %v", err)
		}
		return ts, nil
	}
	if len(sp.Tools) != 1 {
		return spec.Tool{}, usagef("the spec has %d tools: choose one with --tool", len(sp.Tools))
	}
	return sp.Tools[0], nil
}
