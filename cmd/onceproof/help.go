package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3" (the
// release builds do); see onceproofVersion.
var version = ""

// onceproofVersion is the version this binary reports: the -ldflags value
// of a release build, else the main module's version from its build
// information (go install M@v1.2.3, or the pseudo-version the go command
// stamps from version control), else "devel".
func onceproofVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

const usage = `onceproof certifies write tools as agent-ready.

Usage:
  onceproof demo [flags]            certify the built-in fixture tools (no Docker, no config)
  onceproof certify [flags]         certify the tools of a spec file
  onceproof certify-client [flags]  certify an agent-side retry wrapper (--exec CMD performs one operation)
  onceproof chaos --spec FILE       many agents, many operations, faults raining: one check of the whole history
  onceproof discover --mcp URL | --openapi FILE|URL
                                    list an MCP server's tools or an OpenAPI document's operations
                                    and write a starter spec
  onceproof lint --mcp URL | --spec FILE
                                    check what the model reads: key instructions, hints, key schemas
  onceproof report [flags]          convert a saved JSON report (--in FILE) to other formats,
                                    or merge shard reports (--merge FILE...)
  onceproof verify-certificate FILE recompute a certificate's sha256
  onceproof sweep                   remove containers and networks that killed runs left behind
  onceproof init [flags]            write a starter spec file (onceproof.yaml)
  onceproof completion SHELL        print a completion script for bash, zsh or fish
  onceproof version                 print onceproof's version (also --version)
  onceproof help COMMAND            print a command's usage and flags (also onceproof COMMAND --help)

Flags go anywhere after the command, before or after its arguments.

Exit codes: 0 agent-ready, 1 a scenario failed, 2 usage or spec error,
3 tool or oracle unreachable / preflight failed, 4 inconclusive, 130 interrupted.
`

// The usage of the commands without flags.
const (
	verifyUsage = `Usage: onceproof verify-certificate FILE

Recomputes the certificate's sha256 over its content: exit 0 when it matches,
1 when the certificate was changed.
`
	sweepUsage = `Usage: onceproof sweep

Removes the containers and networks of onceproof runs whose process is gone
(a run killed before it could clean up). Every run also does this before it
starts containers.
`
	versionUsage = `Usage: onceproof version (or onceproof --version)

Prints onceproof's version: the release it was built as, else the module
version it was built from, else "devel".
`
)

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// help prints the usage of command cmd (the top-level usage for "").
func help(ctx context.Context, cmd string, stdout, stderr io.Writer) int {
	if cmd == "" || isHelp(cmd) {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	c, ok := lookupCommand(cmd)
	switch {
	case !ok:
		fmt.Fprintf(stderr, "onceproof: help: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	case c.usage != "":
		fmt.Fprint(stdout, c.usage)
		return exitOK
	}
	return run(ctx, []string{cmd, "--help"}, stdout, stderr)
}

// printFlags writes fs's flags the way the README spells them: "--name" (a
// one-letter flag keeps its single dash, "-v"), the argument's placeholder
// (none for a boolean), then the usage and the default.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, text := flag.UnquoteUsage(f)
		if isBoolFlag(f) {
			arg = ""
		}
		dashes := "--"
		if len(f.Name) == 1 {
			dashes = "-"
		}
		line := "  " + dashes + f.Name
		if arg != "" {
			line += " " + arg
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(text, "\n", "\n    \t"))
		switch f.DefValue {
		case "", "0", "0s", "false":
		default:
			if _, ok := f.Value.(interface{ String() string }); ok && arg == "string" {
				fmt.Fprintf(w, " (default %q)", f.DefValue)
			} else {
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
		}
		fmt.Fprintln(w)
	})
}

// irregular spells a count whose noun phrase has an irregular plural: n,
// then one when n is 1, many otherwise ("1 verdict differs", "2 verdicts
// differ").
func irregular(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
