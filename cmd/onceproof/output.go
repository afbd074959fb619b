package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/scenarios"
)

// formats are the report formats, in the order --help lists them.
var formats = []string{"text", "json", "junit", "markdown", "html"}

// output is one rendering of the report: a format and where it goes ("" is
// standard output).
type output struct {
	format string
	path   string
}

// outputs collects --format/--out pairs: each --out belongs to the --format
// before it (an --out given first waits for the next --format).
type outputs struct {
	list    []output
	pending string
}

func (o *outputs) register(fs *flag.FlagSet) {
	fs.Func("format", "report format: "+strings.Join(formats, ", ")+" (repeatable, each with its own --out)", func(s string) error {
		if !slices.Contains(formats, s) {
			return fmt.Errorf("want one of %s", strings.Join(formats, ", "))
		}
		o.list = append(o.list, output{format: s, path: o.pending})
		o.pending = ""
		return nil
	})
	fs.Func("out", "write the preceding --format to this file instead of standard output", func(s string) error {
		if s == "" {
			return fmt.Errorf("empty file name")
		}
		if n := len(o.list); n > 0 && o.list[n-1].path == "" && o.pending == "" {
			o.list[n-1].path = s
			return nil
		}
		if o.pending != "" {
			return fmt.Errorf("two --out in a row (%s, %s): give each its --format", o.pending, s)
		}
		o.pending = s
		return nil
	})
}

// resolve applies the defaults (text on standard output) and checks that at
// most one format goes to standard output.
func (o *outputs) resolve() ([]output, error) {
	list := slices.Clone(o.list)
	if o.pending != "" {
		list = append(list, output{format: "text", path: o.pending})
	}
	if len(list) == 0 {
		list = []output{{format: "text"}}
	}
	toStdout := 0
	for _, out := range list {
		if out.path == "" {
			toStdout++
		}
	}
	if toStdout > 1 {
		return nil, usagef("--format: only one format can go to standard output; give the others an --out FILE")
	}
	return list, nil
}

// writeOutputs renders r in every requested format. Files are written
// atomically; text on a terminal is coloured unless NO_COLOR is set. With
// GITHUB_STEP_SUMMARY set, a markdown output is also appended to it.
func writeOutputs(r *harness.Report, outs []output, stdout io.Writer) error {
	for _, out := range outs {
		if out.path == "" {
			if err := render(r, out.format, stdout, colorable(stdout)); err != nil {
				return err
			}
			continue
		}
		if err := writeFile(out.path, func(w io.Writer) error { return render(r, out.format, w, false) }); err != nil {
			return err
		}
	}
	if summary := os.Getenv("GITHUB_STEP_SUMMARY"); summary != "" && slices.ContainsFunc(outs, func(o output) bool { return o.format == "markdown" }) {
		f, err := os.OpenFile(summary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("GITHUB_STEP_SUMMARY %s: %w", summary, err)
		}
		err = r.WriteMarkdown(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("GITHUB_STEP_SUMMARY %s: %w", summary, err)
		}
	}
	return nil
}

func render(r *harness.Report, format string, w io.Writer, color bool) error {
	switch format {
	case "text":
		return r.WriteTextColor(w, color)
	case "json":
		return r.WriteJSON(w)
	case "junit":
		return r.WriteJUnit(w)
	case "markdown":
		return r.WriteMarkdown(w)
	case "html":
		return r.WriteHTML(w)
	}
	panic("onceproof: unknown format " + format)
}

// writeFile writes path atomically: a temporary file renamed into place, so
// a failed run leaves no half-written report.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".onceproof-*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// terminal reports whether w is a terminal.
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// colorable reports whether w is a terminal that did not ask for NO_COLOR.
func colorable(w io.Writer) bool { return terminal(w) && os.Getenv("NO_COLOR") == "" }

// progress shows one live line on a terminal for everything running at
// once: scenarios running and done, trials so far, failures being shrunk.
type progress struct {
	w     io.Writer
	live  bool
	began time.Time

	mu    sync.Mutex
	last  string
	shown time.Time
	state map[string]scenarios.Progress // by "tool/scenario"
}

func newProgress(w io.Writer, quiet bool) *progress {
	return &progress{w: w, live: !quiet && terminal(w), began: time.Now(), state: map[string]scenarios.Progress{}}
}

func (p *progress) update(ev scenarios.Progress) {
	if !p.live {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state[ev.Tool+"/"+string(ev.Scenario)] = ev
	if time.Since(p.shown) < 100*time.Millisecond {
		return
	}
	tools := map[string]bool{}
	trials, valid, shrinking := 0, 0, 0
	for _, s := range p.state {
		tools[s.Tool] = true
		trials += s.Checks
		valid += s.Valid
		if s.Shrinking {
			shrinking++
		}
	}
	line := fmt.Sprintf("%s, %s: %s, %s valid", plural(len(tools), "tool"), plural(len(p.state), "scenario"), plural(trials, "trial"), strconv.Itoa(valid))
	if shrinking > 0 {
		line += fmt.Sprintf(", %s shrinking", plural(shrinking, "failure"))
	}
	line += " — " + time.Since(p.began).Round(100*time.Millisecond).String()
	if line != p.last {
		fmt.Fprintf(p.w, "\r\x1b[K%s", line)
		p.last, p.shown = line, time.Now()
	}
}

// line shows a live line of the caller's own.
func (p *progress) line(line string) {
	if !p.live {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if line != p.last {
		fmt.Fprintf(p.w, "\r\x1b[K%s", line)
		p.last = line
	}
}

// done ends the live line.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live && p.last != "" {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.last = ""
	}
}
