// Command onceproof-wrapper performs one logical write through one of the
// agent-side retry wrapper fixtures (see fixtures.Wrapper), for
// onceproof certify-client --exec:
//
//	onceproof certify-client --exec "onceproof-wrapper --wrapper good"
//
// It reads the base URL from ONCEPROOF_URL and the operation's payload
// number from ONCEPROOF_OP, POSTs {"subject":"op <n>","to":"alice@example.com"}
// to <url>/tickets through the wrapper, and exits 0 when the wrapper reports
// success, 1 when it reports failure (why goes to standard error) and 2 on a
// usage error.
//
// --wrapper is good, fresh-key, retry-everything or no-key (see the fixtures
// package for what each does and the verdicts it must get); --policy fast
// (the default: backoff from 2ms, capped at 50ms, 6 attempts, 5s) or default
// (fixtures.DefaultRetryPolicy, for real use).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/onceproof/onceproof/fixtures"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stderr)
	stop()
	os.Exit(code)
}

// run performs one operation and returns the exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	fs := flag.NewFlagSet("onceproof-wrapper", flag.ContinueOnError)
	fs.SetOutput(stderr)
	names := make([]string, 0, len(fixtures.Wrappers()))
	for _, w := range fixtures.Wrappers() {
		names = append(names, string(w))
	}
	wrapper := fs.String("wrapper", "", "the wrapper fixture: "+strings.Join(names, ", "))
	policy := fs.String("policy", "fast", "retry policy: fast (for tests) or default (for real use)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "onceproof-wrapper: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() > 0 {
		return usage("unexpected argument %q", fs.Arg(0))
	}
	w, err := fixtures.ParseWrapper(*wrapper)
	if err != nil {
		return usage("--wrapper: %v", err)
	}
	var p fixtures.RetryPolicy
	switch *policy {
	case "fast":
		p = fixtures.FastRetryPolicy()
	case "default":
		p = fixtures.DefaultRetryPolicy()
	default:
		return usage("--policy %q: want fast or default", *policy)
	}
	url := getenv("ONCEPROOF_URL")
	if url == "" {
		return usage("ONCEPROOF_URL is not set (run me from onceproof certify-client --exec)")
	}
	n, err := strconv.Atoi(getenv("ONCEPROOF_OP"))
	if err != nil {
		return usage("ONCEPROOF_OP %q: want an operation number", getenv("ONCEPROOF_OP"))
	}
	if err := w.OpWithPolicy(p)(ctx, url, n); err != nil {
		fmt.Fprintf(stderr, "onceproof-wrapper: %s: op %d: %v\n", w, n, err)
		return exitError
	}
	return exitOK
}
