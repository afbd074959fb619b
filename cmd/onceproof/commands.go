package main

import (
	"context"
	"flag"
	"io"
)

// command is one onceproof command: its name, a one-line summary (for
// completion), and what runs it.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error)
	// usage is the help of a command that has no flag set of its own ("" for
	// the others: their help is their flag set's).
	usage string
}

// commands is the CLI's command table: run dispatches through it, and help,
// the top-level usage's test and shell completion are derived from it.
func commands() []command {
	return []command{
		{name: "certify", summary: "certify the tools of a spec file", run: certify},
		{name: "certify-client", summary: "certify an agent-side retry wrapper", run: certifyClient},
		{name: "chaos", summary: "many agents, many operations, faults raining", run: chaosCmd},
		{name: "completion", summary: "print a shell completion script (bash, zsh, fish)", run: completionCmd},
		{name: "demo", summary: "certify the built-in fixture tools", run: demo},
		{name: "discover", summary: "list an MCP server's tools or an OpenAPI document's operations", run: discover},
		{name: "init", summary: "write a starter spec file", run: initCmd},
		{name: "lint", summary: "check what the model reads", run: lintCmd},
		{name: "report", summary: "convert or merge saved JSON reports", run: func(_ context.Context, args []string, stdout, stderr io.Writer) (int, error) {
			return reportCmd(args, stdout, stderr)
		}},
		{name: "verify-certificate", summary: "check a certificate", usage: verifyUsage, run: func(_ context.Context, args []string, stdout, _ io.Writer) (int, error) {
			return verifyCertificate(args, stdout)
		}},
		{name: "sweep", summary: "remove what killed runs left behind", usage: sweepUsage, run: func(ctx context.Context, args []string, stdout, _ io.Writer) (int, error) {
			return sweep(ctx, args, stdout)
		}},
		{name: "version", summary: "print onceproof's version", usage: versionUsage, run: func(_ context.Context, args []string, stdout, _ io.Writer) (int, error) {
			if len(args) == 1 && isHelp(args[0]) {
				_, err := io.WriteString(stdout, versionUsage)
				return exitOK, err
			}
			if len(args) > 0 {
				return 0, usagef("version: unexpected argument %q", args[0])
			}
			_, err := io.WriteString(stdout, "onceproof "+onceproofVersion()+"\n")
			return exitOK, err
		}},
		{name: "help", summary: "print a command's usage and flags", usage: usage},
	}
}

// lookupCommand returns the command named name.
func lookupCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// flagRecorder is a standard output that asks a command for its flag set
// instead of running it: parse hands the flag set over and reports help, so
// the command returns before doing anything.
type flagRecorder struct {
	io.Writer
	fs *flag.FlagSet
}

// flagSet returns the flag set of command c, nil when it has none.
func (c command) flagSet() *flag.FlagSet {
	if c.run == nil || c.usage != "" {
		return nil
	}
	rec := &flagRecorder{Writer: io.Discard}
	_, _ = c.run(context.Background(), nil, rec, io.Discard)
	return rec.fs
}
