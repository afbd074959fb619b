// Command onceproof-mcp-fixture serves the MCP fixture tools (see
// fixtures.MCPServer: create_ticket, send_notice, ticket_stats) over the MCP
// Streamable HTTP transport, for trying the onceproof harness's MCP support
// by hand and for certifying it in containers.
//
// Usage:
//
//	onceproof-mcp-fixture --listen 127.0.0.1:8090 [--json] [--stateless] [--work 2ms]
//	onceproof-mcp-fixture --stdio --store FILE [--work 2ms]
//	onceproof-mcp-fixture count --store FILE [MARKER]
//
// --stdio serves the stdio fixture tools (fixtures.StdioTools:
// create_ticket, create_ticket_memory, send_notice, ticket_stats) over
// stdin and stdout instead, every process started with the same --store
// sharing it; count prints how many effects in the store carry MARKER (or
// $ONCEPROOF_MARKER: a command oracle).
//
// The endpoint is /mcp; GET /count?marker=X counts the effects of all tools
// whose text contains X. --json answers POSTs with application/json instead
// of an SSE stream; --stateless serves without sessions. --listen falls back
// to ONCEPROOF_MCP_FIXTURE_LISTEN when not given.
//
// It prints "listening on http://ADDR/mcp" to stdout once it accepts
// connections, describes the tools on stderr, and shuts down gracefully on
// SIGINT or SIGTERM. A bad flag exits with status 2; failing to listen, with
// status 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/onceproof/onceproof/fixtures"
)

// shutdownTimeout bounds the graceful shutdown before connections are cut.
const shutdownTimeout = 5 * time.Second

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// envListen is the environment fallback of --listen.
const envListen = "ONCEPROOF_MCP_FIXTURE_LISTEN"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args, serves the MCP fixture until ctx is done and returns the
// exit status. getenv provides the environment fallbacks.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = "onceproof-mcp-fixture"
	if len(args) > 0 && args[0] == "count" {
		return count(args[1:], getenv, stdout, stderr)
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8090", "TCP address to listen on, port 0 picks a free port (env "+envListen+")")
	jsonResponse := fs.Bool("json", false, "answer POSTs with application/json instead of an SSE stream")
	stateless := fs.Bool("stateless", false, "serve without sessions (no Mcp-Session-Id)")
	work := fs.Duration("work", fixtures.DefaultWork, "how long a tool works between deciding to write and committing")
	lintTools := fs.Bool("lint", false, "also serve the tools with planted problems for onceproof lint")
	stdio := fs.Bool("stdio", false, "serve the stdio fixture tools over stdin and stdout (needs --store)")
	store := fs.String("store", "", "--stdio: the store file every process shares")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s --listen ADDR [--json] [--stateless] [--work DURATION] [--lint]\n\n", name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage // the flag package has printed the error and usage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments: %s\n", name, strings.Join(fs.Args(), " "))
		return exitUsage
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "listen" })
	if v := getenv(envListen); !given && v != "" {
		*listen = v
	}
	if *work <= 0 {
		fmt.Fprintf(stderr, "%s: --work must be positive, got %v\n", name, *work)
		return exitUsage
	}
	if *stdio {
		if *store == "" {
			fmt.Fprintf(stderr, "%s: --stdio needs --store FILE\n", name)
			return exitUsage
		}
		for _, tool := range fixtures.StdioTools() {
			fmt.Fprintf(stderr, "%s: stdio tool %s: %s\n", name, tool, fixtures.StdioDescription(tool))
		}
		if err := fixtures.ServeStdio(ctx, os.Stdin, os.Stdout, fixtures.StdioOptions{Store: *store, Work: *work}); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return exitError
		}
		return exitOK
	}

	srv, err := fixtures.StartMCP(*listen, fixtures.MCPOptions{JSONResponse: *jsonResponse, Stateless: *stateless, Work: *work, Lint: *lintTools})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		if errors.Is(err, fixtures.ErrBadOptions) {
			return exitUsage
		}
		return exitError
	}
	mode := "SSE"
	if *jsonResponse {
		mode = "JSON"
	}
	sessions := "sessions"
	if *stateless {
		sessions = "stateless"
	}
	fmt.Fprintf(stderr, "%s: %s responses, %s, work %v\n", name, mode, sessions, *work)
	for _, tool := range fixtures.MCPTools() {
		fmt.Fprintf(stderr, "%s: tool %s: %s\n", name, tool, fixtures.MCPDescription(tool))
	}
	if *lintTools {
		for _, tool := range fixtures.MCPLintTools() {
			fmt.Fprintf(stderr, "%s: tool %s: planted for lint: %s\n", name, tool, strings.Join(fixtures.MCPLintExpected(tool), ", "))
		}
	}
	fmt.Fprintf(stdout, "listening on %s\n", srv.Endpoint())

	<-ctx.Done()
	fmt.Fprintf(stderr, "%s: shutting down\n", name)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		fmt.Fprintf(stderr, "%s: %v; closing connections\n", name, err)
	}
	if err := srv.Close(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return exitError
	}
	return exitOK
}

// count prints the number of effects in a stdio fixture's store that carry
// a marker.
func count(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("onceproof-mcp-fixture count", flag.ContinueOnError)
	fs.SetOutput(stderr)
	store := fs.String("store", "", "the stdio fixture's store file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	marker := getenv("ONCEPROOF_MARKER")
	if fs.NArg() > 0 {
		marker = fs.Arg(0)
	}
	if *store == "" || marker == "" || fs.NArg() > 1 {
		fmt.Fprintln(stderr, "usage: onceproof-mcp-fixture count --store FILE [MARKER] (or ONCEPROOF_MARKER)")
		return exitUsage
	}
	n, err := fixtures.StdioCount(*store, marker)
	if err != nil {
		fmt.Fprintf(stderr, "onceproof-mcp-fixture count: %v\n", err)
		return exitError
	}
	fmt.Fprintln(stdout, n)
	return exitOK
}
