package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/scenarios"
)

// certifyClient certifies an agent-side retry wrapper: onceproof plays the
// server (a capture endpoint behind the embedded Toxiproxy) and runs --exec
// through "sh -c" once per operation, with ONCEPROOF_URL and ONCEPROOF_OP in
// its environment; the command's exit status is its verdict. Exit codes and
// outputs are certify's.
func certifyClient(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("certify-client", flag.ContinueOnError)
	var c common
	fs.IntVar(&c.checks, "checks", 25, "run `N` trials per check, each of --ops operations through the wrapper (fewer than certify's 100: every trial runs the command --ops times)")
	fs.Uint64Var(&c.seed, "seed", 0, "seed the server's plans with `N` (0: pick one and print it)")
	fs.DurationVar(&c.shrinkTime, "shrink-time", 10*time.Second, "longest time spent shrinking one failure, a `duration` of at most "+report.FormatDuration(maxShrinkTime))
	fs.IntVar(&c.parallel, "parallel", scenarios.DefaultParallel(), "`N` trials in flight at once (1: one at a time)")
	fs.DurationVar(&c.budget, "budget", 0, "time the trials may take: trials keep starting until the `duration` is spent")
	c.outs.register(fs)
	fs.BoolVar(&c.quiet, "quiet", false, "no progress or status lines on standard error")
	fs.BoolVar(&c.verbose, "v", false, "log every attempt received on standard error")
	fs.StringVar(&c.baseline, "baseline", "", "YAML `FILE` of known failing (name, check) pairs: they do not fail the run; an entry that passes now does (stale)")
	command := fs.String("exec", "", "shell `COMMAND` performing one operation through the wrapper (sh -c; env ONCEPROOF_URL, ONCEPROOF_OP; exit 0 = success)")
	ops := fs.Int("ops", scenarios.DefaultClientOps, "`N` operations per trial")
	name := fs.String("name", "client", "the wrapper's `NAME` in reports")
	maxAttempts := fs.Int("max-attempts", scenarios.DefaultClientMaxAttempts, "client-bounded: the most attempts (`N`) one operation may make")
	maxOpTime := fs.Duration("max-op-time", scenarios.DefaultClientMaxOpTime, "client-bounded: the longest one operation may take, a `duration` of at most "+report.FormatDuration(maxOpTimeLimit))
	var checks []scenarios.ID
	fs.Func("scenario", "client check `ID` to run (repeatable; default all: "+clientIDList()+")", func(s string) error {
		id, err := scenarios.ParseClientID(s)
		if err != nil {
			return err
		}
		checks = append(checks, id)
		return nil
	})
	if help, err := parse(fs, args, `Usage: onceproof certify-client --exec "CMD" [flags]`, stdout); help || err != nil {
		return exitOK, err
	}
	switch {
	case strings.TrimSpace(*command) == "":
		return 0, usagef("certify-client: --exec is required")
	case *ops < 1:
		return 0, usagef("--ops %d: want at least 1", *ops)
	case *maxAttempts < 1:
		return 0, usagef("--max-attempts %d: want at least 1", *maxAttempts)
	case *maxOpTime <= 0:
		return 0, usagef("--max-op-time %s: want a positive duration", *maxOpTime)
	case *maxOpTime > maxOpTimeLimit:
		return 0, usagef("--max-op-time %s: too long, at most %s", *maxOpTime, report.FormatDuration(maxOpTimeLimit))
	case *name == "":
		return 0, usagef("--name: want a name")
	}
	outs, baseline, err := c.prepare(fs)
	if err != nil {
		return 0, err
	}
	defer discardOutputs(outs)
	log := stderr
	if c.quiet {
		log = io.Discard
	}
	prog := newProgress(stderr, c.quiet)

	backend := faults.NewEmbedded()
	defer backend.Close(context.Background())
	rep := &report.Report{Version: report.ReportVersion, Onceproof: onceproofVersion(), Toxiproxy: backend.String(), Started: time.Now().UTC()}
	repro := func(id scenarios.ID, seed uint64) string {
		parts := []string{"onceproof certify-client", "--exec", shellQuote(*command), "--scenario", string(id),
			"--seed", strconv.FormatUint(seed, 10)}
		parts = append(parts, c.depthFlags()...)
		if *ops != scenarios.DefaultClientOps {
			parts = append(parts, "--ops", strconv.Itoa(*ops))
		}
		if *maxAttempts != scenarios.DefaultClientMaxAttempts {
			parts = append(parts, "--max-attempts", strconv.Itoa(*maxAttempts))
		}
		if *maxOpTime != scenarios.DefaultClientMaxOpTime {
			parts = append(parts, "--max-op-time", maxOpTime.String())
		}
		return strings.Join(parts, " ")
	}
	cfg := scenarios.ClientConfig{Name: *name, Checks: checks, Ops: *ops, MaxAttempts: *maxAttempts, MaxOpTime: *maxOpTime,
		Trials: c.checks, Seed: c.seed, Budget: c.budget, Slots: c.slots, ShrinkTime: c.shrinkTime,
		Backend: backend, Repro: repro, Progress: prog.update}
	if c.verbose {
		cfg.Attempts = stderr
	}
	fmt.Fprintf(log, "certifying client %s: %s (%s, %s per trial, seed %d)\n", *name, *command, c.depth(), plural(*ops, "operation"), c.seed)
	tr, err := scenarios.RunClient(ctx, scenarios.ExecClientOp(*command), cfg)
	prog.done()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if err != nil {
		return 0, err
	}
	rep.Tools = append(rep.Tools, tr)
	return finish(rep, baseline, outs, nil, "", stdout, stderr)
}

func clientIDList() string {
	var s []string
	for _, id := range scenarios.ClientChecks() {
		s = append(s, string(id))
	}
	return strings.Join(s, ", ")
}
