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
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
