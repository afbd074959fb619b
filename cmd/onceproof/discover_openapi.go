package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/openapi"
)

// openapiFlags are the flags of discover --openapi.
type openapiFlags struct {
	operations  []string
	server      string
	vars        map[string]string
	allowRemote bool
}

func (o *openapiFlags) register(fs *flag.FlagSet) {
	fs.Func("operation", "--openapi: draft the operation `ID` (an operationId, tool name or \"METHOD /path\"; repeatable; default every write)", func(s string) error {
		o.operations = append(o.operations, s)
		return nil
	})
	fs.StringVar(&o.server, "server", "", "--openapi: the base `URL` the operations are served at, replacing the document's servers")
	fs.Func("server-var", "--openapi: `NAME=VALUE`: give a server variable a value other than its default (repeatable)", func(s string) error {
		name, value, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return fmt.Errorf("want NAME=VALUE, got %q", s)
		}
		if o.vars == nil {
			o.vars = map[string]string{}
		}
		o.vars[name] = value
		return nil
	})
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "fetch a document from, or list the tools of, a host that is not loopback")
}

// setForOpenAPI reports whether a flag only --openapi takes was given
// (--allow-remote serves --mcp too).
func (o openapiFlags) setForOpenAPI() bool {
	return len(o.operations) > 0 || o.server != "" || len(o.vars) > 0
}

// discoverOpenAPI lists the operations of an OpenAPI document with their
// class and writes a starter spec for the writes (or the operations named
// with --operation).
func discoverOpenAPI(ctx context.Context, src string, out *target, o openapiFlags, oracle oracleFlags, stdout, stderr io.Writer) (int, error) {
	if o.server != "" {
		if err := checkServerURL(o.server); err != nil {
			return 0, err
		}
	}
	guard := &harness.Guard{AllowRemote: o.allowRemote}
	opts := openapi.Options{Server: o.server, Vars: o.vars, AllowRemote: o.allowRemote, Client: guard.HTTPClient(discoverTimeout)}
	opts.Oracle, _ = oracle.draft()
	doc, err := openapi.Load(ctx, src, opts)
	if errors.Is(err, openapi.ErrDocument) {
		return 0, usagef("discover: %v", err)
	}
	if err != nil {
		return 0, fmt.Errorf("discover: %w", err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "operation\tmethod\tpath\tclass\tidempotency key\twhy\t")
	for _, op := range doc.Operations {
		key := "-"
		if op.Key != nil {
			key = op.Key.Name
			if op.Key.InBody {
				key += " (body)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", op.Name, op.Method, op.Path, op.Class, key, op.Why)
	}
	_ = tw.Flush()
	selected, err := selectOperations(doc, o.operations)
	if err != nil {
		return 0, err
	}
	draft, err := doc.Draft(selected)
	switch {
	case errors.Is(err, openapi.ErrNoWrites):
		fmt.Fprintf(stderr, "%s has no write operation: no spec written (name one with --operation to draft it anyway)\n", src)
		return exitOK, nil
	case errors.Is(err, openapi.ErrOption):
		return 0, usagef("discover: --server-var: %v", err)
	case err != nil:
		return 0, err
	}
	return writeDraft(draft, out, oracle.todo(), stdout, stderr)
}

// selectOperations returns the operations named (nil when none is), or a
// usage error naming what the document has.
func selectOperations(doc *openapi.Document, names []string) ([]*openapi.Operation, error) {
	var out []*openapi.Operation
	for _, name := range names {
		var found *openapi.Operation
		for _, op := range doc.Operations {
			if op.Matches(name) {
				found = op
				break
			}
		}
		if found == nil {
			var all []string
			for _, op := range doc.Operations {
				all = append(all, op.Name)
			}
			return nil, usagef("discover: --operation %q: no such operation (the document has: %s)", name, strings.Join(all, ", "))
		}
		switch found.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, "QUERY":
			return nil, usagef("discover: --operation %q: %s only reads: nothing to certify", name, found.Method)
		}
		if !slices.Contains(out, found) {
			out = append(out, found)
		}
	}
	return out, nil
}

// checkServerURL refuses a --server that is not an http(s) base URL.
func checkServerURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return usagef("discover: --server: want http://host:port[/base], got %q", s)
	}
	return nil
}
