// Command onceproof-fixture serves one fixture tool (see package fixtures)
// on a TCP address, for trying the onceproof harness by hand.
//
// Usage:
//
//	onceproof-fixture --kind correct --listen 127.0.0.1:8080 [--work 2ms]
//
// It prints "listening on http://ADDR" to stdout once it accepts
// connections, and shuts down gracefully on SIGINT or SIGTERM. A bad flag or
// an unknown kind exits with status 2.
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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args, serves the fixture until ctx is done and returns the exit
// status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "onceproof-fixture"
	kinds := make([]string, 0, len(fixtures.Kinds()))
	for _, k := range fixtures.Kinds() {
		kinds = append(kinds, string(k))
	}

	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	kindName := fs.String("kind", string(fixtures.Correct), "fixture kind: "+strings.Join(kinds, ", "))
	listen := fs.String("listen", "127.0.0.1:8080", "TCP address to listen on (port 0 picks a free port)")
	work := fs.Duration("work", fixtures.DefaultWork, "how long the tool works between deciding to act and committing")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s --kind KIND --listen ADDR [--work DURATION]\n\n", name)
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
	kind, err := fixtures.ParseKind(*kindName)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	if *work <= 0 {
		fmt.Fprintf(stderr, "%s: --work must be positive, got %v\n", name, *work)
		return exitUsage
	}

	srv, err := fixtures.Start(kind, *listen, fixtures.Options{Work: *work})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return exitError
	}
	fmt.Fprintf(stderr, "%s: kind %s (work %v): %s\n", name, kind, *work, fixtures.Description(kind))
	fmt.Fprintf(stdout, "listening on %s\n", srv.URL())

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
