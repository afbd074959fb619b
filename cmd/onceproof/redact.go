package main

import (
	"context"
	"os"

	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/repro"
	"github.com/onceproof/onceproof/harness/spec"
)

// redactorKey is the context key of the run's report.Redactor.
type redactorKey struct{}

// withRedactor returns ctx carrying r, which run wraps its output streams
// in: every secret a spec names is added to it before anything is written.
func withRedactor(ctx context.Context, r *report.Redactor) context.Context {
	return context.WithValue(ctx, redactorKey{}, r)
}

// redactor is the run's redactor (a fresh one when ctx has none).
func redactor(ctx context.Context) *report.Redactor {
	if r, ok := ctx.Value(redactorKey{}).(*report.Redactor); ok {
		return r
	}
	return &report.Redactor{}
}

// loadSpec loads a spec file, first adding the values of the environment
// variables it reads ({{.Env "NAME"}}) to the run's redactor: no output,
// error message or report of the run shows them.
func loadSpec(ctx context.Context, path string) (*spec.Spec, error) {
	if data, err := os.ReadFile(path); err == nil {
		r := redactor(ctx)
		for _, name := range spec.EnvNames(data) {
			if v, ok := os.LookupEnv(name); ok {
				r.Add(name, v)
			}
		}
	}
	return spec.Load(path)
}

// transportScript is the reproducer of the transport whose attempts record
// transport, when it has its own (nil: repro's proxy-and-curl script).
func transportScript(transport string) repro.ScriptFunc {
	if k := spec.KindOf(transport); k != nil && k.Script != nil {
		return k.Script
	}
	return nil
}
