package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/baseline"
	"github.com/onceproof/onceproof/harness/container"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/repro"
	"github.com/onceproof/onceproof/harness/spec"
	"github.com/onceproof/onceproof/scenarios"
)

// Exit codes.
const (
	exitOK           = 0
	exitFailed       = 1
	exitUsage        = 2
	exitUnreachable  = 3
	exitInconclusive = 4
	exitInterrupted  = 130
)

// The longest durations the flags accept; a longer one is a usage error.
const (
	maxBackoffLimit = time.Minute    // --max-backoff
	maxWaitLimit    = 24 * time.Hour // --max-wait
	maxShrinkTime   = time.Hour      // --shrink-time
	maxOpTimeLimit  = time.Hour      // certify-client --max-op-time
	maxBudget       = 24 * time.Hour // --budget, chaos --duration
	maxParallel     = 1024           // --parallel
	maxChecks       = 10_000_000     // --checks
)

// checkDuration refuses a negative duration given to flag name, or one
// longer than limit.
func checkDuration(name string, d, limit time.Duration) error {
	switch {
	case d < 0:
		return usagef("--%s %s: want a duration of zero or more", name, d)
	case d > limit:
		return usagef("--%s %s: too long, at most %s", name, d, report.FormatDuration(limit))
	}
	return nil
}

// cleanupTimeout bounds removing what a run started (containers, proxies),
// which happens even after an interrupt.
const cleanupTimeout = 30 * time.Second

// usageError is a bad command line; it exits with exitUsage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	red := &report.Redactor{}
	ctx = withRedactor(ctx, red)
	stdout, stderr = red.Writer(stdout), red.Writer(stderr)
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "--version", "-version":
		args = []string{"version"}
	case "-h", "-help", "--help":
		args = []string{"help"}
	}
	if args[0] == "help" {
		if len(args) > 2 {
			fmt.Fprintf(stderr, "onceproof: help: want one command, got %q\n", args[1:])
			return exitUsage
		}
		if len(args) == 2 {
			return help(ctx, args[1], stdout, stderr)
		}
		return help(ctx, "", stdout, stderr)
	}
	cmd, ok := lookupCommand(args[0])
	if !ok {
		fmt.Fprintf(stderr, "onceproof: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	code, err := cmd.run(ctx, args[1:], stdout, stderr)
	if ctx.Err() != nil && (err != nil || code != exitOK) {
		fmt.Fprintf(stderr, "onceproof: %s\n", interruption(ctx))
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "onceproof: %v\n", err)
		return exitCode(ctx, err)
	}
	return code
}

// interruption says why ctx ended: the signal's message, or "interrupted".
func interruption(ctx context.Context) string {
	if cause := context.Cause(ctx); errors.Is(cause, errInterrupted) {
		return cause.Error()
	}
	return errInterrupted.Error()
}

// exitCode maps an error to its exit code.
func exitCode(ctx context.Context, err error) int {
	var ue *usageError
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &ue), errors.Is(err, flag.ErrHelp), errors.Is(err, spec.ErrSpec), errors.Is(err, baseline.ErrBaseline), errors.Is(err, harness.ErrRemoteTarget):
		return exitUsage
	case errors.Is(err, scenarios.ErrNotApplicable), errors.Is(err, container.ErrImageVersion):
		return exitUsage
	case errors.Is(err, harness.ErrPreflight), errors.Is(err, harness.ErrUnreachable), errors.Is(err, container.ErrNoDocker):
		return exitUnreachable
	}
	return exitUnreachable
}

// common holds the flags certify and demo share.
type common struct {
	checks     int
	seed       uint64
	maxBackoff time.Duration
	maxWait    time.Duration
	shrinkTime time.Duration
	outs       outputs
	quiet      bool
	verbose    bool
	baseline   string
	scenarios  []scenarios.ID
	tools      []string
	parallel   int
	budget     time.Duration
	repro      string
	slots      *scenarios.Slots
}

func (c *common) register(fs *flag.FlagSet, checks int, backoff time.Duration) {
	fs.IntVar(&c.checks, "checks", checks, "`N` trials per scenario; a pass with N valid trials rules out a per-trial failure rate of about 3/N at 95% confidence (100 checks: 3%)")
	fs.IntVar(&c.parallel, "parallel", scenarios.DefaultParallel(), "`N` trials in flight at once, over every scenario and tool (1: one at a time)")
	fs.DurationVar(&c.budget, "budget", 0, "time the trials of each tool may take: trials keep starting until the `duration` (at most "+report.FormatDuration(maxBudget)+") is spent (--checks then caps them only if given); trades time for depth")
	fs.Uint64Var(&c.seed, "seed", 0, "seed the fault plans with `N` (0: pick one and print it)")
	fs.DurationVar(&c.maxBackoff, "max-backoff", backoff, "longest retry delay a plan draws, a `duration` of at most "+report.FormatDuration(maxBackoffLimit))
	fs.DurationVar(&c.maxWait, "max-wait", scenarios.DefaultMaxWait, "longest wait the retention scenario sleeps before its retry (it checks keys up to min(retention, max-wait)), a `duration` of at most "+report.FormatDuration(maxWaitLimit))
	fs.DurationVar(&c.shrinkTime, "shrink-time", 20*time.Second, "longest time spent shrinking one failure, a `duration` of at most "+report.FormatDuration(maxShrinkTime))
	c.outs.register(fs)
	fs.BoolVar(&c.quiet, "quiet", false, "no progress or status lines on standard error")
	fs.BoolVar(&c.verbose, "v", false, "log every attempt on standard error")
	fs.StringVar(&c.baseline, "baseline", "", "YAML `FILE` of known failing (tool, scenario) pairs: they do not fail the run; an entry that passes now does (stale)")
	fs.StringVar(&c.repro, "repro", "", "write a reproducer (a bash script with curl and toxiproxy commands, and its toxics) for every failing scenario into `DIR`")
	fs.Func("scenario", "scenario `ID` to run (repeatable; default all: "+idList()+")", func(s string) error {
		id, err := scenarios.ParseID(s)
		if err != nil {
			return err
		}
		c.scenarios = append(c.scenarios, id)
		return nil
	})
	fs.Func("tool", "tool `NAME` to certify (repeatable; default all)", func(s string) error {
		c.tools = append(c.tools, s)
		return nil
	})
}

func idList() string {
	var s []string
	for _, id := range scenarios.All() {
		s = append(s, string(id))
	}
	return strings.Join(s, ", ")
}

// check validates the shared flags.
func (c *common) check(fs *flag.FlagSet) error {
	if c.checks < 1 || c.checks > maxChecks {
		return usagef("--checks %d: want 1 to %d", c.checks, maxChecks)
	}
	if c.parallel < 1 || c.parallel > maxParallel {
		return usagef("--parallel %d: want 1 to %d", c.parallel, maxParallel)
	}
	if c.maxWait == 0 && flagSet(fs, "max-wait") {
		return usagef("--max-wait %s: want a positive duration", c.maxWait)
	}
	for _, d := range []struct {
		name         string
		value, limit time.Duration
	}{{"max-backoff", c.maxBackoff, maxBackoffLimit}, {"max-wait", c.maxWait, maxWaitLimit}, {"shrink-time", c.shrinkTime, maxShrinkTime}, {"budget", c.budget, maxBudget}} {
		if err := checkDuration(d.name, d.value, d.limit); err != nil {
			return err
		}
	}
	if c.budget > 0 && !flagSet(fs, "checks") {
		c.checks = 0 // the budget alone bounds the search
	}
	if c.seed == 0 {
		c.seed = scenarios.RandomSeed()
	}
	c.slots = scenarios.NewSlots(c.parallel)
	return nil
}

// mergeFlag reports whether fs has a --merge flag that was set (its
// arguments follow the flags).
func mergeFlag(fs *flag.FlagSet) bool {
	f := fs.Lookup("merge")
	return f != nil && f.Value.String() == "true"
}

// flagSet reports whether the command line set flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parse parses args with fs, turning flag errors into usage errors. Flags
// may come anywhere on the command line, before, between and after the
// command's arguments (see interleave); "--" ends the flags. For -h it
// prints usage and the flags to stdout and reports help: the command is
// done. The arguments are fs.Args() afterwards.
func parse(fs *flag.FlagSet, args []string, usage string, stdout io.Writer) (help bool, err error) {
	if help, err := parseArgs(fs, args, usage, stdout); help || err != nil {
		return help, err
	}
	if fs.NArg() > 0 && !mergeFlag(fs) {
		return false, usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return false, nil
}

// parseArgs is parse for a command that takes arguments: they are left in
// fs.Args() for it to check.
func parseArgs(fs *flag.FlagSet, args []string, usage string, stdout io.Writer) (help bool, err error) {
	if rec, ok := stdout.(*flagRecorder); ok {
		rec.fs = fs // asked for the flags only (see command.flagSet)
		return true, nil
	}
	fs.SetOutput(io.Discard)
	if err := fs.Parse(interleave(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, usage)
			n := 0
			fs.VisitAll(func(*flag.Flag) { n++ })
			if n > 0 {
				fmt.Fprint(stdout, "\nFlags:\n")
				printFlags(stdout, fs)
			}
			return true, nil
		}
		return false, usagef("%s: %v", fs.Name(), err)
	}
	return false, nil
}

// interleave moves the flags of args (with their values) before its other
// arguments, which follow a "--": the flag package stops at the first
// argument that is not a flag, and a command line such as
// "report --merge a.json b.json --format markdown --out m.md" must mean
// what it says. A flag fs does not define is kept in place for fs.Parse to
// refuse; a non-boolean flag without "=" takes the next argument as its
// value, whatever it looks like (as fs.Parse does).
func interleave(fs *flag.FlagSet, args []string) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		name, _, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		f := fs.Lookup(name)
		if f == nil || hasValue || isBoolFlag(f) {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return append(append(flags, "--"), rest...)
}

// isBoolFlag reports whether f takes no value.
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func certify(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("certify", flag.ContinueOnError)
	var c common
	c.register(fs, 100, scenarios.DefaultMaxBackoff)
	specPath := fs.String("spec", "", "spec `FILE` (YAML, version: 1)")
	toxiproxyURL := fs.String("toxiproxy", "", "drive the toxiproxy-server whose API is at `URL` instead of the embedded one")
	certificate := fs.String("certificate", "", "write a certificate to `FILE` (JSON, with an SVG badge beside it) when the tool is agent-ready")
	allowRemote := fs.Bool("allow-remote", false, "allow tools and oracles that are not on loopback (onceproof duplicates writes on purpose)")
	var shard *report.Shard
	fs.Func("shard", "`I/N`: run only share I of N of the (tool, scenario) pairs (a CI matrix job); merge the reports with onceproof report --merge", func(v string) error {
		s, err := parseShard(v)
		shard = s
		return err
	})
	localImages := fs.Bool("local-images", false, "run container images only from local builds (postgres, redis and toxiproxy map to the images make images builds); never pull")
	var imageMap []string
	fs.Func("image", "`NAME=LOCAL` runs image NAME as the local image LOCAL (repeatable; implies --local-images)", func(s string) error {
		if name, local, ok := strings.Cut(s, "="); !ok || name == "" || local == "" {
			return fmt.Errorf("want NAME=LOCAL, got %q", s)
		}
		imageMap = append(imageMap, s)
		return nil
	})
	if help, err := parse(fs, args, "Usage: onceproof certify --spec FILE [flags]", stdout); help || err != nil {
		return exitOK, err
	}
	if *specPath == "" {
		return 0, usagef("certify: --spec is required")
	}
	if *toxiproxyURL != "" {
		if u, err := url.Parse(*toxiproxyURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			return 0, usagef("--toxiproxy %q: want the toxiproxy-server API's URL, e.g. http://127.0.0.1:8474", *toxiproxyURL)
		}
	}
	outs, baseline, err := c.prepare(fs)
	if err != nil {
		return 0, err
	}
	defer discardOutputs(outs)
	var cert *certificateFiles
	if *certificate != "" {
		if cert, err = openCertificate(*certificate, outs); err != nil {
			return 0, err
		}
		defer cert.discard()
	}
	sp, err := loadSpec(ctx, *specPath)
	if err != nil {
		if !errors.Is(err, spec.ErrSpec) {
			return 0, usagef("%v", err)
		}
		return 0, err
	}
	selected := slices.Clone(sp.Tools)
	if len(c.tools) > 0 {
		selected = nil
		for _, name := range c.tools {
			ts, err := sp.Find(name)
			if err != nil {
				return 0, usagef("--tool: %v", err)
			}
			selected = append(selected, ts)
		}
	}
	if cert != nil && len(selected) != 1 {
		return 0, usagef("--certificate: a certificate is for one tool; select it with --tool (the spec has %s)", report.Plural(len(selected), "tool"))
	}
	guard := &harness.Guard{AllowRemote: *allowRemote}
	for i, ts := range selected {
		if err := ts.CheckTargets(guard, sp.Path); err != nil {
			return 0, err
		}
		ts = ts.WithGuard(guard)
		if err := ts.Check(); err != nil {
			return 0, err
		}
		selected[i] = ts
	}
	lints := lintBeforeCertify(ctx, selected, c.quiet, stderr)
	envLog := stderr
	if c.quiet {
		envLog = nil
	}
	envOpts, closeDocker, err := containerOptions(ctx, selected, *localImages || len(imageMap) > 0, imageMap, envLog)
	if err != nil {
		return 0, err
	}
	defer closeDocker()

	var backend faults.Backend
	if *toxiproxyURL != "" {
		api, err := guard.ResolveURL(*toxiproxyURL)
		if err != nil {
			return 0, fmt.Errorf("--toxiproxy: %w", err)
		}
		r, err := faults.NewRemote(ctx, api)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", harness.ErrUnreachable, err)
		}
		defer r.Close(context.Background())
		backend = r
	} else {
		e := faults.NewEmbedded()
		defer e.Close(context.Background())
		backend = e
	}

	repro := func(tool string) func(scenarios.ID, uint64) string {
		return func(id scenarios.ID, seed uint64) string {
			parts := []string{"onceproof certify", "--spec", shellQuote(sp.Path), "--tool", shellQuote(tool),
				"--scenario", string(id), "--seed", strconv.FormatUint(seed, 10)}
			parts = append(parts, c.depthFlags()...)
			parts = append(parts, c.waitFlags()...)
			if *toxiproxyURL != "" {
				parts = append(parts, "--toxiproxy", shellQuote(*toxiproxyURL))
			}
			if *allowRemote {
				parts = append(parts, "--allow-remote")
			}
			return strings.Join(parts, " ")
		}
	}
	rep := &report.Report{Version: report.ReportVersion, Onceproof: onceproofVersion(), Toxiproxy: backend.String(), Started: time.Now().UTC()}
	run, err := runInfo(sp, selected, c, shard)
	if err != nil {
		return 0, err
	}
	rep.Run = run
	prog := newProgress(stderr, c.quiet)
	rep.Tools = make([]report.ToolReport, len(selected))
	errs := make([]error, len(selected))
	skipped := make([]bool, len(selected))
	// The tools are certified at once, each starting when a slot is free
	// (their trials share the slots).
	var wg sync.WaitGroup
	tools := make(chan struct{}, c.parallel)
	for i, ts := range selected {
		wg.Go(func() {
			select {
			case tools <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-tools }()
			cfg := c.config(scenarios.Config{Backend: backend, Repro: repro(ts.Name)}, prog, stderr)
			if shard != nil {
				if cfg.Only = shareOf(run, *shard, i); cfg.Only == nil {
					skipped[i] = true // none of its pairs is this shard's
					return
				}
			}
			rep.Tools[i], errs[i] = certifyTool(ctx, ts, envOpts, cfg, c, stderr)
			if shard != nil && rep.Tools[i].Error == "" && len(rep.Tools[i].Scenarios) == 0 {
				skipped[i] = true // its pairs here do not apply to it
			}
		})
	}
	wg.Wait()
	prog.done()
	var kept []report.ToolReport
	for i, t := range rep.Tools {
		if !skipped[i] && t.Name != "" {
			kept = append(kept, t)
		}
	}
	rep.Tools = kept
	if ctx.Err() != nil {
		if !failedAny(rep) {
			return 0, ctx.Err()
		}
		// Interrupted with a failure found (perhaps while shrinking it):
		// report the smallest case so far; the run still exits 130.
		redactor(ctx).Report(rep)
		return finish(rep, baseline, outs, nil, c.repro, stdout, stderr)
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, harness.ErrPreflight) {
			return 0, err
		}
	}
	attachLint(rep, lints)
	redactor(ctx).Report(rep) // before any output: no secret is written
	return finish(rep, baseline, outs, cert, c.repro, stdout, stderr)
}

// failedAny reports whether a scenario of r failed.
func failedAny(r *report.Report) bool {
	for _, t := range r.Tools {
		for _, s := range t.Scenarios {
			if s.Verdict == report.Fail {
				return true
			}
		}
	}
	return false
}

// finish applies the baseline, writes every output and the certificate, and
// returns the exit code the report earns. A non-zero code's reason goes to
// stderr, whatever the outputs are.
func finish(rep *report.Report, known *baseline.Baseline, outs []output, cert *certificateFiles, reproDir string, stdout, stderr io.Writer) (int, error) {
	if known != nil {
		for _, f := range known.Apply(rep) {
			fmt.Fprintf(stderr, "baseline: %s / %s did not run\n", f.Tool, f.Scenario)
		}
	}
	if reproDir != "" {
		scripts, err := repro.WriteScripts(reproDir, rep, transportScript)
		if err != nil {
			return 0, err
		}
		for _, s := range scripts {
			fmt.Fprintf(stderr, "reproducer %s\n", s)
		}
	}
	if err := writeOutputs(rep, outs, stdout); err != nil {
		return 0, err
	}
	if cert != nil {
		if err := cert.write(rep, stderr); err != nil {
			return 0, err
		}
	}
	code := verdictCode(rep)
	if code != exitOK {
		fmt.Fprintf(stderr, "onceproof: %s\n", verdictReason(rep))
	}
	return code, nil
}

// config completes a scenarios.Config with the shared flags.
func (c *common) config(cfg scenarios.Config, prog *progress, stderr io.Writer) scenarios.Config {
	cfg.Scenarios, cfg.MaxBackoff, cfg.MaxWait, cfg.Progress = c.scenarios, c.maxBackoff, c.maxWait, prog.update
	cfg.Checks, cfg.Seed, cfg.Budget, cfg.ShrinkTime, cfg.Slots = c.checks, c.seed, c.budget, c.shrinkTime, c.slots
	if c.verbose {
		cfg.Attempts = stderr
	}
	return cfg
}

// prepare checks the shared flags, resolves the outputs and loads the
// baseline: everything a command needs before it runs.
func (c *common) prepare(fs *flag.FlagSet) ([]output, *baseline.Baseline, error) {
	if err := c.check(fs); err != nil {
		return nil, nil, err
	}
	outs, err := c.outs.resolve()
	if err != nil {
		return nil, nil, err
	}
	baseline, err := c.loadBaseline()
	if err != nil {
		return nil, nil, err
	}
	if err := checkDir("repro", c.repro); err != nil {
		return nil, nil, err
	}
	if err := openOutputs(outs); err != nil {
		return nil, nil, err
	}
	return outs, baseline, nil
}

// checkDir makes sure the directory given to flag name exists (creating
// it) and can be written, before the run: a usage error otherwise.
func checkDir(name, dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("--%s %s: %v", name, dir, err)
	}
	f, err := os.CreateTemp(dir, ".onceproof-check-*")
	if err != nil {
		return usagef("--%s %s: cannot write there: %v", name, dir, err)
	}
	_ = f.Close()
	return os.Remove(f.Name())
}

func (c *common) loadBaseline() (*baseline.Baseline, error) {
	if c.baseline == "" {
		return nil, nil
	}
	b, err := baseline.Load(c.baseline)
	if err != nil && !errors.Is(err, baseline.ErrBaseline) {
		return nil, usagef("--baseline: %v", err) // an unreadable file
	}
	return b, err
}

// certifyTool starts ts (its containers, if any), certifies it and removes
// what it started, whatever happens. The report's Duration runs from the
// start of the containers to the verdict.
func certifyTool(ctx context.Context, ts spec.Tool, envOpts container.EnvOptions, cfg scenarios.Config, c common, stderr io.Writer) (report.ToolReport, error) {
	began := time.Now()
	if c.quiet {
		stderr = io.Discard
		envOpts.Log = nil
	}
	fmt.Fprintf(stderr, "certifying %s (%s, seed %d)\n", ts.Name, c.depth(), c.seed)
	tool, stop, err := ts.Start(ctx, envOpts)
	if err != nil {
		if ctx.Err() != nil {
			return report.ToolReport{Name: ts.Name}, ctx.Err()
		}
		return report.ToolReport{Name: ts.Name, Error: err.Error()}, err
	}
	defer func() {
		// Cleanup runs even after an interrupt, bounded.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		_ = stop(cctx)
	}()
	startup := time.Since(began)
	if ts.IsContainer() {
		fmt.Fprintf(stderr, "  containers ready in %s\n", startup.Round(time.Millisecond))
	}
	tr, err := scenarios.Run(ctx, tool, cfg)
	if err != nil {
		// A preflight finding about one field names its file and line.
		err = ts.Locate(err)
		tr.Error = err.Error()
	}
	if ct, ok := tool.(*container.ContainerTool); ok {
		tr.Startup = startup
		tr.Image, tr.ImageDigest, _ = ct.Env().ToolImage(context.WithoutCancel(ctx))
	}
	tr.Duration, tr.Line = time.Since(began), ts.Line
	return tr, err
}

// containerOptions prepares the container environment of the selected tools:
// a Docker engine must answer (else an error wrapping container.ErrNoDocker),
// and with local set, images come only from local builds.
func containerOptions(ctx context.Context, selected []spec.Tool, local bool, imageMap []string, log io.Writer) (container.EnvOptions, func(), error) {
	opts := container.EnvOptions{Log: log}
	need := false
	for _, ts := range selected {
		need = need || ts.IsContainer()
	}
	if !need {
		return opts, func() {}, nil
	}
	docker, err := container.DockerClient(ctx)
	if err != nil {
		return opts, nil, fmt.Errorf("%w (the spec runs tools as containers; start Docker or certify a running tool by its URL)", err)
	}
	if local {
		m, explicit := container.DefaultLocalImages(), map[string]bool{}
		for _, kv := range imageMap {
			name, l, _ := strings.Cut(kv, "=")
			m[name], explicit[name] = l, true
		}
		li := container.LocalImages{Map: m, Explicit: explicit, Docker: docker}
		// Every image is resolved before anything starts, and what runs in
		// its place is said.
		var images []string
		for _, ts := range selected {
			if ts.IsContainer() {
				images = append(images, ts.Container.Images()...)
			}
		}
		slices.Sort(images)
		subs, err := li.Plan(slices.Compact(images))
		if err != nil {
			_ = docker.Close()
			return opts, nil, err
		}
		for _, s := range subs {
			if s.Local != s.Image && log != nil {
				line := fmt.Sprintf("image %s runs as the local build %s", s.Image, s.Local)
				if s.Note != "" {
					line += " (" + s.Note + ")"
				}
				fmt.Fprintln(log, line)
			}
		}
		opts.Images = li
	}
	return opts, func() { _ = docker.Close() }, nil
}

// depth says how deep each scenario searches, for status lines.
func (c *common) depth() string {
	switch {
	case c.budget > 0 && c.checks > 0:
		return fmt.Sprintf("up to %s per scenario within %s", plural(c.checks, "check"), c.budget)
	case c.budget > 0:
		return fmt.Sprintf("as many checks as %s allows", c.budget)
	}
	return plural(c.checks, "check") + " per scenario"
}

// waitFlags are the flags that replay a search's waits, when not the
// defaults.
func (c *common) waitFlags() []string {
	var out []string
	if c.maxBackoff != scenarios.DefaultMaxBackoff {
		out = append(out, "--max-backoff", c.maxBackoff.String())
	}
	if c.maxWait != scenarios.DefaultMaxWait {
		out = append(out, "--max-wait", c.maxWait.String())
	}
	return out
}

// depthFlags are the flags that replay the search's depth.
func (c *common) depthFlags() []string {
	var out []string
	if c.checks > 0 {
		out = append(out, "--checks", strconv.Itoa(c.checks))
	}
	if c.budget > 0 {
		out = append(out, "--budget", c.budget.String())
	}
	return out
}

func plural(n int, noun string) string { return report.Plural(n, noun) }

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
