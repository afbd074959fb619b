// Command onceproof-images builds, locally, every container image the
// onceproof project uses, for a machine with Docker but no registry:
//
//	onceproof/fixture:dev    the onceproof-fixture server, static, FROM scratch
//	onceproof/toxiproxy:dev  toxiproxy-server from the module's toxiproxy, static, FROM scratch
//	onceproof/postgres:15    PostgreSQL 15 from the host's postgresql-15 package, FROM scratch
//	onceproof/redis:7        Redis 7 from the host's redis-server package, FROM scratch
//
// Usage:
//
//	go run ./cmd/onceproof-images [--only NAME]... [--force] [--list]
//
// The Postgres and Redis images hold the host's binaries, every shared
// library ldd lists for them, and an entrypoint written in Go
// (./cmd/onceproof-images/entrypoint) that does what the official images'
// shell entrypoints do, so that testcontainers-go's postgres and redis
// modules work with them unchanged.
//
// Building is idempotent: each image is labelled org.onceproof.context-hash
// with the SHA-256 of its build context (Dockerfile and every file, with its
// path and mode), and an image that already carries the hash of the context
// just computed is left alone. Every image is labelled org.onceproof.image=true.
// It prints one line per image, "built" or "up to date", with the time taken.
//
// It exits 1 when Docker is not reachable or a host package is missing
// (apt-get install postgresql-15 redis-server), and 2 on a bad flag.
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
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "onceproof-images"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var only stringList
	fs.Var(&only, "only", "build only this image (full name or fixture, toxiproxy, postgres, redis); repeatable")
	force := fs.Bool("force", false, "rebuild even the images that are up to date")
	list := fs.Bool("list", false, "print the image names and what they are, and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [--only NAME]... [--force] [--list]\n\n", name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments: %s\n", name, strings.Join(fs.Args(), " "))
		return 2
	}
	if *list {
		listImages(stdout)
		return 0
	}
	if _, err := selectImages(only); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	if _, err := Build(ctx, Options{Only: only, Force: *force, Out: stdout}); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}
