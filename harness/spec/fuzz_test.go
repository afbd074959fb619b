package spec

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/onceproof/onceproof/harness"
)

// FuzzParseSpec feeds the spec loader arbitrary text, seeded with the
// malformed-input corpus, the examples and the golden specs. Whatever the
// input, it must not panic, and it must either return a spec whose every
// tool builds, or errors that each name the file and a line within it and
// wrap ErrSpec, in line order, the same on every parse.
func FuzzParseSpec(f *testing.F) {
	for _, pattern := range []string{"../testdata/bad/*.yaml", "../examples/*.yaml", "../examples/*/*.yaml", "testdata/spec/*.yaml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if (s == nil) == (err == nil) {
			t.Fatalf("want a spec or an error, got %v and %v", s, err)
		}
		if err != nil {
			checkSpecErrors(t, data, err)
			if _, again := Parse("fuzz.yaml", data); again == nil || again.Error() != err.Error() {
				t.Fatalf("a second parse said something else:\n%v\nthen:\n%v", err, again)
			}
			return
		}
		checkSpec(t, s)
	})
}

// checkSpecErrors checks every error of a failed parse.
func checkSpecErrors(t *testing.T, data []byte, err error) {
	t.Helper()
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	lines := lineCount(data)
	last := 0
	for _, e := range errs {
		var se *Error
		if !errors.As(e, &se) {
			t.Fatalf("not a *Error: %T %v", e, e)
		}
		if !errors.Is(e, ErrSpec) {
			t.Fatalf("does not wrap ErrSpec: %v", e)
		}
		if se.File != "fuzz.yaml" || se.Msg == "" {
			t.Fatalf("an error without its file or message: %#v", se)
		}
		if se.Line < 0 || se.Line > lines {
			t.Fatalf("line %d outside the file's %d lines: %v", se.Line, lines, e)
		}
		if se.Line < last {
			t.Fatalf("errors out of line order: %v", err)
		}
		last = se.Line
	}
}

// checkSpec builds every tool of a valid spec and checks its addresses with
// a guard that may neither resolve nor dial.
func checkSpec(t *testing.T, s *Spec) {
	t.Helper()
	if len(s.Tools) == 0 {
		t.Fatal("a valid spec without tools")
	}
	g := &harness.Guard{
		Hosts: func(string) []netip.Addr { return nil },
		Dial: func(context.Context, string, string) (net.Conn, error) {
			t.Fatal("checking targets dialled")
			return nil, nil
		},
	}
	for _, ts := range s.Tools {
		if !toolNameRE.MatchString(ts.Name) {
			t.Fatalf("tool name %q", ts.Name)
		}
		if ts.Common.Oracle == nil {
			t.Fatalf("tool %s without an oracle", ts.Name)
		}
		_ = ts.CheckTargets(g, s.Path)
		if ts.Container != nil {
			continue
		}
		c := ts.Common
		c.Guard = &harness.Guard{AllowRemote: true}
		tool, err := ts.Config.Build(c)
		if err != nil {
			t.Fatalf("tool %s of a valid spec does not build: %v", ts.Name, err)
		}
		if _, err := tool.Prepare(harness.Operation{ID: "op-f", Key: "k", Marker: "m-f", Seed: 3}); err != nil {
			t.Fatalf("tool %s of a valid spec does not render: %v", ts.Name, err)
		}
	}
}
