// Command onceproof-fixture serves one fixture tool (see package fixtures)
// on a TCP address, for trying the onceproof harness by hand and for
// certifying the store-backed tools in containers.
//
// Usage:
//
//	onceproof-fixture --kind correct --listen 127.0.0.1:8080 [--work 2ms]
//	onceproof-fixture --kind correct-postgres --listen 0.0.0.0:8080 --postgres postgres://...
//	onceproof-fixture --kind correct-redis --listen 0.0.0.0:8080 --redis redis://redis:6379/0
//	onceproof-fixture --kind downstream-stable --listen 127.0.0.1:8080 --downstream http://127.0.0.1:9100
//
// Flags not given on the command line fall back to the environment: --kind
// to ONCEPROOF_FIXTURE_KIND, --listen to ONCEPROOF_FIXTURE_LISTEN,
// --postgres to DATABASE_URL, --redis to REDIS_URL and --downstream (the
// payment provider the downstream kinds call) to DOWNSTREAM_URL.
//
// A store-backed kind retries reaching its store for up to
// --connect-timeout (30s), logging why on stderr, and creates its schema. It
// prints "listening on http://ADDR" to stdout only once that is done and it
// accepts connections, and shuts down gracefully on SIGINT or SIGTERM. A bad
// flag, an unknown kind or a missing or unparsable store address exits with
// status 2; a store that cannot be reached in time, with status 1.
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
// status. Flags that are not given fall back to the process environment.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runEnv(ctx, args, os.Getenv, stdout, stderr)
}

// Environment fallbacks of the flags.
const (
	envKind     = "ONCEPROOF_FIXTURE_KIND"
	envListen   = "ONCEPROOF_FIXTURE_LISTEN"
	envPostgres = "DATABASE_URL"
	envRedis    = "REDIS_URL"
	envDown     = "DOWNSTREAM_URL"
)

// runEnv is run with getenv for the environment fallbacks.
func runEnv(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = "onceproof-fixture"
	var kinds []string
	for _, k := range fixtures.AllKinds() {
		kinds = append(kinds, string(k))
	}

	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	kindName := fs.String("kind", string(fixtures.Correct), "fixture kind (env "+envKind+"): "+strings.Join(kinds, ", "))
	listen := fs.String("listen", "127.0.0.1:8080", "TCP address to listen on, port 0 picks a free port (env "+envListen+")")
	work := fs.Duration("work", fixtures.DefaultWork, "how long the tool works between deciding to act and committing")
	postgres := fs.String("postgres", "", "PostgreSQL DSN, for the kinds that need it (env "+envPostgres+")")
	redisURL := fs.String("redis", "", "Redis URL redis://host:port/db, for the kinds that need it (env "+envRedis+")")
	downstream := fs.String("downstream", "", "the payment provider's base URL http://host:port, for the downstream kinds (env "+envDown+")")
	connectTimeout := fs.Duration("connect-timeout", 30*time.Second, "how long to retry reaching the store at startup")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s --kind KIND --listen ADDR [--work DURATION] [--postgres DSN] [--redis URL] [--downstream URL]\n\n", name)
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
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, fb := range []struct {
		flag string
		env  string
		dst  *string
	}{{"kind", envKind, kindName}, {"listen", envListen, listen}, {"postgres", envPostgres, postgres}, {"redis", envRedis, redisURL}, {"downstream", envDown, downstream}} {
		if v := getenv(fb.env); !given[fb.flag] && v != "" {
			*fb.dst = v
		}
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
	if *connectTimeout <= 0 {
		fmt.Fprintf(stderr, "%s: --connect-timeout must be positive, got %v\n", name, *connectTimeout)
		return exitUsage
	}
	if kind.NeedsPostgres() && *postgres == "" {
		fmt.Fprintf(stderr, "%s: kind %s needs a PostgreSQL DSN: pass --postgres or set %s\n", name, kind, envPostgres)
		return exitUsage
	}
	if kind.NeedsRedis() && *redisURL == "" {
		fmt.Fprintf(stderr, "%s: kind %s needs a Redis URL: pass --redis or set %s\n", name, kind, envRedis)
		return exitUsage
	}
	if kind.NeedsDownstream() && *downstream == "" {
		fmt.Fprintf(stderr, "%s: kind %s needs its payment provider's URL: pass --downstream or set %s\n", name, kind, envDown)
		return exitUsage
	}

	opts := fixtures.Options{
		Work:           *work,
		Postgres:       *postgres,
		Redis:          *redisURL,
		Downstream:     *downstream,
		ConnectTimeout: *connectTimeout,
		Log:            stderr,
	}
	srv, err := fixtures.StartContext(ctx, kind, *listen, opts)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		if errors.Is(err, fixtures.ErrBadOptions) {
			return exitUsage
		}
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
