package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
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

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `onceproof certifies write tools as agent-ready.

Usage:
  onceproof demo [flags]       certify the built-in fixture tools (no Docker, no config)
  onceproof certify [flags]    certify the tools of a spec file
  onceproof certify-client [flags] certify an agent-side retry wrapper (--exec CMD performs one operation)
  onceproof discover --mcp URL | --openapi FILE|URL
                               list an MCP server's tools or an OpenAPI document's operations
                               and write a starter spec
  onceproof lint --mcp URL | --spec FILE
                               check what the model reads: key instructions, hints, key schemas
  onceproof report [flags]     convert a saved JSON report (--in FILE) to other formats
  onceproof verify-certificate FILE
                               recompute a certificate's sha256
  onceproof sweep              remove containers and networks that killed runs left behind
  onceproof version

Run "onceproof COMMAND -h" for a command's flags.

Exit codes: 0 agent-ready, 1 a scenario failed, 2 usage or spec error,
3 tool or oracle unreachable / preflight failed, 4 inconclusive, 130 interrupted.
`

// usageError is a bad command line; it exits with exitUsage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var code int
	var err error
	switch args[0] {
	case "certify":
		code, err = certify(ctx, args[1:], stdout, stderr)
	case "certify-client":
		code, err = certifyClient(ctx, args[1:], stdout, stderr)
	case "demo":
		code, err = demo(ctx, args[1:], stdout, stderr)
	case "discover":
		code, err = discover(ctx, args[1:], stdout, stderr)
	case "lint":
		code, err = lintCmd(ctx, args[1:], stdout, stderr)
	case "report":
		code, err = reportCmd(args[1:], stdout, stderr)
	case "verify-certificate":
		code, err = verifyCertificate(args[1:], stdout)
	case "sweep":
		code, err = sweep(ctx, args[1:], stdout)
	case "version":
		fmt.Fprintf(stdout, "onceproof %s\n", version)
		return exitOK
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "onceproof: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "onceproof: %v\n", err)
		return exitCode(ctx, err)
	}
	return code
}

// exitCode maps an error to its exit code.
func exitCode(ctx context.Context, err error) int {
	var ue *usageError
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &ue), errors.Is(err, flag.ErrHelp), errors.Is(err, harness.ErrSpec), errors.Is(err, harness.ErrRemoteTarget):
		return exitUsage
	case errors.Is(err, scenarios.ErrNotApplicable):
		return exitUsage
	case errors.Is(err, harness.ErrPreflight), errors.Is(err, harness.ErrUnreachable), errors.Is(err, harness.ErrNoDocker):
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
	slots      *scenarios.Slots
}

func (c *common) register(fs *flag.FlagSet, checks int, backoff time.Duration) {
	fs.IntVar(&c.checks, "checks", checks, "trials per scenario; a pass with N valid trials rules out a per-trial failure rate of about 3/N at 95% confidence (100 checks: 3%)")
	fs.IntVar(&c.parallel, "parallel", scenarios.DefaultParallel(), "trials in flight at once, over every scenario and tool (1: one at a time)")
	fs.DurationVar(&c.budget, "budget", 0, "time the trials of each tool may take: trials keep starting until it is spent (--checks then caps them only if given); trades time for depth")
	fs.Uint64Var(&c.seed, "seed", 0, "seed for the fault plans (0: pick one and print it)")
	fs.DurationVar(&c.maxBackoff, "max-backoff", backoff, "longest retry delay a plan draws")
	fs.DurationVar(&c.maxWait, "max-wait", scenarios.DefaultMaxWait, "longest wait the retention scenario sleeps before its retry: it checks keys up to min(retention, max-wait)")
	fs.DurationVar(&c.shrinkTime, "shrink-time", 20*time.Second, "longest time spent shrinking one failure")
	c.outs.register(fs)
	fs.BoolVar(&c.quiet, "quiet", false, "no progress or status lines on standard error")
	fs.BoolVar(&c.verbose, "v", false, "log every attempt on standard error")
	fs.StringVar(&c.baseline, "baseline", "", "YAML file of known failing (tool, scenario) pairs: they do not fail the run; an entry that passes now does (stale)")
	fs.Func("scenario", "scenario id to run (repeatable; default all: "+idList()+")", func(s string) error {
		id, err := scenarios.ParseID(s)
		if err != nil {
			return err
		}
		c.scenarios = append(c.scenarios, id)
		return nil
	})
	fs.Func("tool", "tool name to certify (repeatable; default all)", func(s string) error {
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
	if c.checks < 1 {
		return usagef("--checks %d: want at least 1", c.checks)
	}
	if c.maxBackoff < 0 {
		return usagef("--max-backoff %s: want a duration of zero or more", c.maxBackoff)
	}
	if c.maxWait < 0 || c.maxWait == 0 && flagSet(fs, "max-wait") {
		return usagef("--max-wait %s: want a positive duration", c.maxWait)
	}
	if c.parallel < 1 {
		return usagef("--parallel %d: want at least 1", c.parallel)
	}
	if c.budget < 0 {
		return usagef("--budget %s: want a positive duration", c.budget)
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

// flagSet reports whether the command line set flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parse parses args with fs, turning flag errors into usage errors. For -h
// it prints usage and the flags to stdout and reports help: the command is
// done.
func parse(fs *flag.FlagSet, args []string, usage string, stdout io.Writer) (help bool, err error) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, usage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return true, nil
		}
		return false, usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return false, usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return false, nil
}

func certify(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("certify", flag.ContinueOnError)
	var c common
	c.register(fs, 100, scenarios.DefaultMaxBackoff)
	specPath := fs.String("spec", "", "spec file (YAML, version: 1)")
	toxiproxyURL := fs.String("toxiproxy", "", "drive a toxiproxy-server at this URL instead of the embedded one")
	certificate := fs.String("certificate", "", "write a certificate (JSON, with an SVG badge beside it) when the tool is agent-ready")
	allowRemote := fs.Bool("allow-remote", false, "allow tools and oracles that are not on loopback (onceproof duplicates writes on purpose)")
	localImages := fs.Bool("local-images", false, "run container images only from local builds (postgres, redis and toxiproxy map to the images `make images` builds); never pull")
	var imageMap []string
	fs.Func("image", "NAME=LOCAL: run image NAME as the local image LOCAL (repeatable; implies --local-images)", func(s string) error {
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
	outs, baseline, err := c.prepare(fs)
	if err != nil {
		return 0, err
	}
	spec, err := harness.LoadSpec(*specPath)
	if err != nil {
		if !errors.Is(err, harness.ErrSpec) {
			return 0, usagef("%v", err)
		}
		return 0, err
	}
	selected := spec.Tools
	if len(c.tools) > 0 {
		selected = nil
		for _, name := range c.tools {
			ts, err := spec.Find(name)
			if err != nil {
				return 0, usagef("--tool: %v", err)
			}
			selected = append(selected, ts)
		}
	}
	for _, ts := range selected {
		if err := ts.CheckTargets(ctx, spec.Path, *allowRemote); err != nil {
			return 0, err
		}
		if !ts.IsContainer() && ts.MCP == nil {
			if _, err := ts.Tool(); err != nil {
				return 0, err
			}
		}
	}
	lints := lintBeforeCertify(ctx, selected, c.quiet, stderr)
	envOpts, closeDocker, err := containerOptions(ctx, selected, *localImages || len(imageMap) > 0, imageMap, stderr)
	if err != nil {
		return 0, err
	}
	defer closeDocker()

	var backend faults.Backend
	if *toxiproxyURL != "" {
		r, err := faults.NewRemote(ctx, *toxiproxyURL)
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
			parts := []string{"onceproof certify", "--spec", shellQuote(spec.Path), "--tool", shellQuote(tool),
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
	report := &harness.Report{Version: harness.ReportVersion, Onceproof: version, Toxiproxy: backend.String(), Started: time.Now().UTC()}
	if *certificate != "" && len(selected) != 1 {
		return 0, usagef("--certificate: a certificate is for one tool; select it with --tool (the spec has %d)", len(selected))
	}
	prog := newProgress(stderr, c.quiet)
	report.Tools = make([]harness.ToolReport, len(selected))
	errs := make([]error, len(selected))
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
			report.Tools[i], errs[i] = certifyTool(ctx, ts, envOpts, c.config(scenarios.Config{Backend: backend, Repro: repro(ts.Name)}, prog, stderr), c, stderr)
		})
	}
	wg.Wait()
	prog.done()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, harness.ErrPreflight) {
			return 0, err
		}
	}
	attachLint(report, lints)
	return finish(report, baseline, outs, *certificate, stdout, stderr)
}

// finish applies the baseline, writes every output and the certificate, and
// returns the exit code the report earns.
func finish(report *harness.Report, baseline *harness.Baseline, outs []output, certificate string, stdout, stderr io.Writer) (int, error) {
	if baseline != nil {
		for _, f := range baseline.Apply(report) {
			fmt.Fprintf(stderr, "baseline: %s / %s did not run\n", f.Tool, f.Scenario)
		}
	}
	if err := writeOutputs(report, outs, stdout); err != nil {
		return 0, err
	}
	if certificate != "" {
		if err := writeCertificate(report, certificate, stderr); err != nil {
			return 0, err
		}
	}
	return verdictCode(report), nil
}

// writeCertificate writes the certificate of the report's one tool, and its
// SVG badge beside it, when the tool is agent-ready.
func writeCertificate(report *harness.Report, path string, stderr io.Writer) error {
	cert, err := harness.NewCertificate(report, report.Tools[0], time.Now())
	if errors.Is(err, harness.ErrNotAgentReady) {
		fmt.Fprintf(stderr, "no certificate: %v\n", err)
		return nil
	}
	if err != nil {
		return err
	}
	if err := writeFile(path, cert.WriteJSON); err != nil {
		return fmt.Errorf("--certificate %w", err)
	}
	badge := strings.TrimSuffix(path, filepath.Ext(path)) + ".svg"
	if err := writeFile(badge, cert.WriteBadge); err != nil {
		return fmt.Errorf("--certificate badge %w", err)
	}
	fmt.Fprintf(stderr, "certificate %s (sha256 %s), badge %s\n", path, cert.SHA256, badge)
	return nil
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
func (c *common) prepare(fs *flag.FlagSet) ([]output, *harness.Baseline, error) {
	if err := c.check(fs); err != nil {
		return nil, nil, err
	}
	outs, err := c.outs.resolve()
	if err != nil {
		return nil, nil, err
	}
	baseline, err := c.loadBaseline()
	return outs, baseline, err
}

func (c *common) loadBaseline() (*harness.Baseline, error) {
	if c.baseline == "" {
		return nil, nil
	}
	return harness.LoadBaseline(c.baseline)
}

// certifyTool starts ts (its containers, if any), certifies it and removes
// what it started, whatever happens. The report's Duration runs from the
// start of the containers to the verdict.
func certifyTool(ctx context.Context, ts harness.ToolSpec, envOpts harness.EnvOptions, cfg scenarios.Config, c common, stderr io.Writer) (harness.ToolReport, error) {
	began := time.Now()
	if c.quiet {
		stderr = io.Discard
		envOpts.Log = nil
	}
	fmt.Fprintf(stderr, "certifying %s (%s, seed %d)\n", ts.Name, c.depth(), c.seed)
	tool, stop, err := ts.Start(ctx, envOpts)
	if err != nil {
		if ctx.Err() != nil {
			return harness.ToolReport{Name: ts.Name}, ctx.Err()
		}
		return harness.ToolReport{Name: ts.Name, Error: err.Error()}, err
	}
	defer stop(context.Background())
	startup := time.Since(began)
	if ts.IsContainer() {
		fmt.Fprintf(stderr, "  containers ready in %s\n", startup.Round(time.Millisecond))
	}
	tr, err := scenarios.Run(ctx, tool, cfg)
	if ct, ok := tool.(*harness.ContainerTool); ok {
		tr.Startup = startup
		tr.Image, tr.ImageDigest, _ = ct.Env().ToolImage(context.WithoutCancel(ctx))
	}
	tr.Duration = time.Since(began)
	return tr, err
}

// containerOptions prepares the container environment of the selected tools:
// a Docker engine must answer (else an error wrapping harness.ErrNoDocker),
// and with local set, images come only from local builds.
func containerOptions(ctx context.Context, selected []harness.ToolSpec, local bool, imageMap []string, log io.Writer) (harness.EnvOptions, func(), error) {
	opts := harness.EnvOptions{Log: log}
	need := false
	for _, ts := range selected {
		need = need || ts.IsContainer()
	}
	if !need {
		return opts, func() {}, nil
	}
	docker, err := harness.DockerClient(ctx)
	if err != nil {
		return opts, nil, fmt.Errorf("%w (the spec runs tools as containers; start Docker or certify a running tool by its URL)", err)
	}
	if local {
		m := harness.DefaultLocalImages()
		for _, kv := range imageMap {
			name, l, _ := strings.Cut(kv, "=")
			m[name] = l
		}
		opts.Images = harness.LocalImages{Map: m, Docker: docker}
	}
	return opts, func() { _ = docker.Close() }, nil
}

// reportCmd converts a saved JSON report to other formats (and applies a
// baseline to it).
func reportCmd(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	in := fs.String("in", "", "a JSON report written by certify or demo --format json")
	var outs outputs
	outs.register(fs)
	baselinePath := fs.String("baseline", "", "apply this baseline to the report")
	if help, err := parse(fs, args, "Usage: onceproof report --in report.json [--format F [--out FILE]]...", stdout); help || err != nil {
		return exitOK, err
	}
	if *in == "" {
		return 0, usagef("report: --in is required")
	}
	report, err := harness.ReadReport(*in)
	if err != nil {
		return 0, usagef("%v", err)
	}
	list, err := outs.resolve()
	if err != nil {
		return 0, err
	}
	var baseline *harness.Baseline
	if *baselinePath != "" {
		if baseline, err = harness.LoadBaseline(*baselinePath); err != nil {
			return 0, err
		}
	}
	return finish(report, baseline, list, "", stdout, stderr)
}

// verifyCertificate recomputes a certificate's hash: exit 0 when it
// matches, 1 when the content was changed.
func verifyCertificate(args []string, stdout io.Writer) (int, error) {
	if len(args) != 1 {
		return 0, usagef("verify-certificate: want one certificate file")
	}
	cert, err := harness.ReadCertificate(args[0])
	if err != nil {
		return 0, usagef("%v", err)
	}
	if err := cert.Verify(); err != nil {
		fmt.Fprintf(stdout, "%s: INVALID: %v\n", args[0], err)
		return exitFailed, nil
	}
	fmt.Fprintf(stdout, "%s: valid: %s agent-ready on %s (%d scenarios, onceproof %s), sha256 %s\n",
		args[0], cert.Tool, cert.Issued.Format("2006-01-02"), len(cert.Scenarios), cert.Onceproof, cert.SHA256)
	if cert.Contract != nil {
		fmt.Fprintf(stdout, "  contract: %s\n", cert.Contract.Summary())
	}
	if k := cert.KeysHonoured(); k != "" {
		fmt.Fprintf(stdout, "  %s\n", k)
	}
	return exitOK, nil
}

// sweep removes what onceproof runs killed before they could clean up left
// behind (containers and networks whose owning process is gone).
func sweep(ctx context.Context, args []string, stdout io.Writer) (int, error) {
	if len(args) > 0 {
		return 0, usagef("sweep: unexpected argument %q", args[0])
	}
	docker, err := harness.DockerClient(ctx)
	if err != nil {
		return 0, err
	}
	defer docker.Close()
	n, err := harness.Sweep(ctx, docker)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "removed %d containers and networks of finished runs\n", n)
	return exitOK, nil
}

// verdictCode is the exit code a finished report earns.
func verdictCode(r *harness.Report) int {
	if r.Kind == harness.KindLint {
		return lintExitCode(r)
	}
	code := exitOK
	for _, t := range r.Tools {
		if t.Error != "" {
			return exitUnreachable
		}
		for _, s := range t.Scenarios {
			switch {
			case s.Baseline == harness.BaselineStale:
				code = exitFailed
			case s.Verdict == harness.Fail && s.Baseline == harness.BaselineKnown:
			case s.Verdict == harness.Fail:
				code = exitFailed
			case s.Verdict == harness.Inconclusive:
				if code == exitOK {
					code = exitInconclusive
				}
			}
		}
	}
	return code
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

func plural(n int, noun string) string { return harness.Plural(n, noun) }

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
