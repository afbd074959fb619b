package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/onceproof/onceproof/harness/baseline"
	"github.com/onceproof/onceproof/harness/container"
	"github.com/onceproof/onceproof/harness/report"
)

// reportCmd converts a saved JSON report to other formats (and applies a
// baseline to it); with --merge, it first combines the reports of a run's
// shards into one.
func reportCmd(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	in := fs.String("in", "", "a JSON report `FILE` written by certify or demo --format json")
	merge := fs.Bool("merge", false, "merge the shard reports given as arguments (certify --shard I/N --format json) into the report of the whole run")
	var outs outputs
	outs.register(fs)
	baselinePath := fs.String("baseline", "", "apply the baseline in `FILE` to the report")
	reproDir := fs.String("repro", "", "write a reproducer (a bash script with curl and toxiproxy commands, and its toxics) for every failing scenario into `DIR`")
	const usage = "Usage: onceproof report --in report.json [--format F [--out FILE]]...\n       onceproof report --merge shard1.json shard2.json ... [--format F [--out FILE]]..."
	if help, err := parse(fs, args, usage, stdout); help || err != nil {
		return exitOK, err
	}
	switch {
	case *merge && *in != "":
		return 0, usagef("report: give --in or --merge, not both")
	case *merge && fs.NArg() == 0:
		return 0, usagef("report --merge: name the shard reports to merge")
	case !*merge && *in == "":
		return 0, usagef("report: --in is required (or --merge with shard reports)")
	}
	list, err := outs.resolve()
	if err != nil {
		return 0, err
	}
	if err := checkDir("repro", *reproDir); err != nil {
		return 0, err
	}
	if err := openOutputs(list); err != nil {
		return 0, err
	}
	defer discardOutputs(list)
	var rep *report.Report
	if *merge {
		var shards []*report.Report
		for _, path := range fs.Args() {
			r, err := report.ReadReport(path)
			if err != nil {
				return 0, usagef("%v", err)
			}
			shards = append(shards, r)
		}
		if rep, err = report.MergeReports(shards); err != nil {
			return 0, usagef("report --merge: %v", err)
		}
	} else if rep, err = report.ReadReport(*in); err != nil {
		return 0, usagef("%v", err)
	}
	var known *baseline.Baseline
	if *baselinePath != "" {
		if known, err = baseline.Load(*baselinePath); err != nil {
			if !errors.Is(err, baseline.ErrBaseline) {
				return 0, usagef("--baseline: %v", err)
			}
			return 0, err
		}
	}
	return finish(rep, known, list, nil, *reproDir, stdout, stderr)
}

// verifyCertificate recomputes a certificate's hash: exit 0 when it
// matches, 1 when the content was changed.
func verifyCertificate(args []string, stdout io.Writer) (int, error) {
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprint(stdout, verifyUsage)
		return exitOK, nil
	}
	if len(args) != 1 {
		return 0, usagef("verify-certificate: want one certificate file")
	}
	cert, err := report.ReadCertificate(args[0])
	if err != nil {
		return 0, usagef("%v", err)
	}
	if err := cert.Verify(); err != nil {
		fmt.Fprintf(stdout, "%s: INVALID: %v\n", args[0], err)
		return exitFailed, nil
	}
	fmt.Fprintf(stdout, "%s: valid: %s agent-ready on %s (%s, onceproof %s), sha256 %s\n",
		args[0], cert.Tool, cert.Issued.Format("2006-01-02"), report.Plural(len(cert.Scenarios), "scenario"), cert.Onceproof, cert.SHA256)
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
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprint(stdout, sweepUsage)
		return exitOK, nil
	}
	if len(args) > 0 {
		return 0, usagef("sweep: unexpected argument %q", args[0])
	}
	docker, err := container.DockerClient(ctx)
	if err != nil {
		return 0, err
	}
	defer docker.Close()
	n, err := container.Sweep(ctx, docker)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "removed %s of finished runs\n", irregular(n, "container or network", "containers and networks"))
	return exitOK, nil
}

// verdictCode is the exit code a finished report earns.
func verdictCode(r *report.Report) int {
	if r.Kind == report.KindLint {
		return lintExitCode(r)
	}
	code := exitOK
	for _, t := range r.Tools {
		if t.Error != "" {
			return exitUnreachable
		}
		for _, s := range t.Scenarios {
			switch {
			case s.Baseline == report.BaselineStale:
				code = exitFailed
			case s.Verdict == report.Fail && s.Baseline == report.BaselineKnown:
			case s.Verdict == report.Fail:
				code = exitFailed
			case s.Verdict == report.Inconclusive:
				if code == exitOK {
					code = exitInconclusive
				}
			}
		}
	}
	return code
}

// verdictReason says in one line why a report earns a non-zero exit code.
func verdictReason(r *report.Report) string {
	var errs, failed, stale, unknown []string
	for _, t := range r.Tools {
		if t.Error != "" {
			errs = append(errs, t.Name+": "+t.Error)
			continue
		}
		for _, s := range t.Scenarios {
			cell := t.Name + " × " + s.ID
			switch {
			case s.Baseline == report.BaselineStale:
				stale = append(stale, cell)
			case s.Verdict == report.Fail && s.Baseline == report.BaselineKnown:
			case s.Verdict == report.Fail:
				failed = append(failed, cell)
			case s.Verdict == report.Inconclusive:
				unknown = append(unknown, cell+" ("+s.Reason+")")
			}
		}
	}
	var parts []string
	if len(errs) > 0 {
		parts = append(parts, strings.Join(errs, "; "))
	}
	if len(failed) > 0 {
		parts = append(parts, report.Plural(len(failed), "scenario")+" failed: "+strings.Join(failed, ", "))
	}
	if len(stale) > 0 {
		parts = append(parts, irregular(len(stale), "stale baseline entry", "stale baseline entries")+" (they pass now): "+strings.Join(stale, ", "))
	}
	if len(unknown) > 0 {
		parts = append(parts, report.Plural(len(unknown), "scenario")+" inconclusive: "+strings.Join(unknown, ", "))
	}
	if len(parts) == 0 {
		return "no verdict"
	}
	return strings.Join(parts, "; ")
}
