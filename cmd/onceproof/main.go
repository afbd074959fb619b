// Command onceproof certifies write tools as agent-ready: it drives each tool
// through fault scenarios (lost responses, requests that never arrive,
// concurrent duplicates, key reuse) and checks that every side effect happens
// exactly once.
//
//	onceproof demo                                   # fixture tools, embedded Toxiproxy, no Docker
//	onceproof certify --spec tools.yaml [--tool NAME] [--scenario ID]... [--checks N] [--seed N]
//	                  [--max-backoff D] [--toxiproxy URL] [--format text|json] [--out FILE] [--allow-remote]
//
// Exit codes: 0 every scenario passed (agent-ready); 1 a scenario failed;
// 2 usage or spec error; 3 a tool or oracle could not be reached, or its
// preflight failed; 4 inconclusive (too few trials had their fault fire);
// 130 interrupted.
//
// SIGINT or SIGTERM cancels the run: every wait ends, what the run started
// is removed, and onceproof exits 130 saying "interrupted". A second signal
// exits at once.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	tclog "github.com/testcontainers/testcontainers-go/log"
)

func main() {
	// testcontainers-go prints its banner (the Docker engine's details) and
	// image substitutions through its package's default logger, which no
	// logger option reaches (v0.45: DockerClient.Info); every container
	// onceproof starts has a no-op logger already (WithLogger). The CLI's
	// standard error is its own: what it starts and substitutes it says
	// itself, and --quiet silences all of it. This is the process's
	// configuration, set once here; run and the packages never touch it.
	tclog.SetDefault(tclog.NewNoopLogger())
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go onSignals(sigs, cancel, os.Stderr, os.Exit)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	os.Exit(code)
}

// errInterrupted is the cause of a run's cancellation by a signal.
var errInterrupted = errors.New("interrupted")

// onSignals cancels the run on the first signal (with errInterrupted as the
// cause) and exits 130 at once on the second, without waiting for cleanup.
func onSignals(sigs <-chan os.Signal, cancel context.CancelCauseFunc, stderr io.Writer, exit func(int)) {
	sig, ok := <-sigs
	if !ok {
		return
	}
	cancel(fmt.Errorf("%w (%s)", errInterrupted, signalName(sig)))
	sig, ok = <-sigs
	if !ok {
		return
	}
	fmt.Fprintf(stderr, "onceproof: interrupted (%s again): exiting without cleaning up; run onceproof sweep if containers were started\n", signalName(sig))
	exit(exitInterrupted)
}

// signalName names a signal the way shells do.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}
