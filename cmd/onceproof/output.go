package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/report/github"
	"github.com/onceproof/onceproof/harness/report/html"
	"github.com/onceproof/onceproof/harness/report/sarif"
	"github.com/onceproof/onceproof/scenarios"
)

// format is one report format: its --format name and how it renders a
// report (color: the writer is a terminal that shows colours).
type format struct {
	name  string
	write func(w io.Writer, r *report.Report, color bool) error
}

// formats are the report formats, in the order --help lists them. Adding a
// format is a package that renders a [report.Report] and a row here.
var formats = []format{
	{"text", func(w io.Writer, r *report.Report, color bool) error { return r.WriteTextColor(w, color) }},
	{"json", func(w io.Writer, r *report.Report, _ bool) error { return r.WriteJSON(w) }},
	{"junit", func(w io.Writer, r *report.Report, _ bool) error { return r.WriteJUnit(w) }},
	{"markdown", func(w io.Writer, r *report.Report, _ bool) error { return r.WriteMarkdown(w) }},
	{"html", func(w io.Writer, r *report.Report, _ bool) error { return html.Write(w, r) }},
	{"sarif", func(w io.Writer, r *report.Report, _ bool) error { return sarif.Write(w, r) }},
	{"github", func(w io.Writer, r *report.Report, _ bool) error { return github.Write(w, r) }},
}

// formatNames lists the formats' names.
func formatNames() []string {
	out := make([]string, len(formats))
	for i, f := range formats {
		out[i] = f.name
	}
	return out
}

// lookupFormat returns the format named name.
func lookupFormat(name string) (format, bool) {
	i := slices.IndexFunc(formats, func(f format) bool { return f.name == name })
	if i < 0 {
		return format{}, false
	}
	return formats[i], true
}

// output is one rendering of the report: a format and where it goes ("" is
// standard output), with its file opened before the run.
type output struct {
	format string
	path   string
	file   *target
}

// outputs collects --format/--out pairs: each --out belongs to the --format
// before it (an --out given first waits for the next --format).
type outputs struct {
	list    []output
	pending string
}

func (o *outputs) register(fs *flag.FlagSet) {
	names := strings.Join(formatNames(), ", ")
	fs.Func("format", "report `FORMAT`: "+names+" (repeatable, each with its own --out)", func(s string) error {
		if _, ok := lookupFormat(s); !ok {
			return fmt.Errorf("want one of %s", names)
		}
		o.list = append(o.list, output{format: s, path: o.pending})
		o.pending = ""
		return nil
	})
	fs.Func("out", "write the preceding --format to `FILE` instead of standard output", func(s string) error {
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

// open opens the file of every output that has one (see openTarget), before
// anything runs: a path that cannot be written is a usage error now, not a
// failure after the whole certification. On error nothing is left behind.
func openOutputs(outs []output) error {
	seen := map[string]bool{}
	for i := range outs {
		p := outs[i].path
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			if seen[abs] {
				discardOutputs(outs)
				return usagef("--out %s: given twice", p)
			}
			seen[abs] = true
		}
		t, err := openTarget("--out", p)
		if err != nil {
			discardOutputs(outs)
			return err
		}
		outs[i].file = t
	}
	return nil
}

// discardOutputs removes what openOutputs created and was not written.
func discardOutputs(outs []output) {
	for _, o := range outs {
		o.file.discard()
	}
}

// writeOutputs renders r in every requested format. Files are written
// atomically; text on standard output is coloured as colorable says. With
// GITHUB_STEP_SUMMARY set, a markdown output is also appended to it.
func writeOutputs(r *report.Report, outs []output, stdout io.Writer) error {
	for _, out := range outs {
		if out.path == "" {
			if err := render(r, out.format, stdout, colorable(stdout)); err != nil {
				return err
			}
			continue
		}
		t := out.file
		if t == nil {
			var err error
			if t, err = openTarget("--out", out.path); err != nil {
				return err
			}
		}
		if err := t.commit(func(w io.Writer) error { return render(r, out.format, w, false) }); err != nil {
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

func render(r *report.Report, name string, w io.Writer, color bool) error {
	f, ok := lookupFormat(name)
	if !ok {
		panic("onceproof: unknown format " + name)
	}
	return f.write(w, r, color)
}

// target is an output file opened before the run. A regular file is
// written as a temporary file beside it, created now (so that a directory
// that does not exist, or cannot be written, is found now) and renamed into
// place at the end; a device or pipe (/dev/stdout) is opened now and written
// as it is.
type target struct {
	path string
	tmp  *os.File // regular files: the temporary file beside path
	dev  *os.File // anything else: path itself
	done bool
}

// openTarget checks path and opens it; errors are usage errors naming flag.
func openTarget(flag, path string) (*target, error) {
	bad := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if flag == "" {
			return usagef("%s: %s", path, msg)
		}
		return usagef("%s %s: %s", flag, path, msg)
	}
	fi, statErr := os.Stat(path)
	switch {
	case statErr == nil && fi.IsDir():
		return nil, bad("is a directory; want a file name")
	case statErr == nil && !fi.Mode().IsRegular():
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, bad("cannot write it: %v", unwrapPath(err))
		}
		return &target{path: path, dev: f}, nil
	}
	dir := filepath.Dir(path)
	switch di, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, bad("directory %s does not exist", dir)
	case err != nil:
		return nil, bad("%v", unwrapPath(err))
	case !di.IsDir():
		return nil, bad("%s is not a directory", dir)
	case statErr != nil && !errors.Is(statErr, fs.ErrNotExist):
		return nil, bad("%v", unwrapPath(statErr))
	}
	tmp, err := os.CreateTemp(dir, ".onceproof-*")
	if err != nil {
		return nil, bad("cannot write in %s: %v", dir, unwrapPath(err))
	}
	return &target{path: path, tmp: tmp}, nil
}

// unwrapPath drops the path an *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// commit writes the target with write and puts it in place.
func (t *target) commit(write func(io.Writer) error) error {
	if t.done {
		return fmt.Errorf("%s: written twice", t.path)
	}
	t.done = true
	if t.dev != nil {
		err := write(t.dev)
		if cerr := t.dev.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", t.path, err)
		}
		return nil
	}
	defer os.Remove(t.tmp.Name()) // a no-op once renamed
	if err := write(t.tmp); err != nil {
		t.tmp.Close()
		return fmt.Errorf("%s: %w", t.path, err)
	}
	if err := t.tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", t.path, err)
	}
	if err := os.Chmod(t.tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("%s: %w", t.path, err)
	}
	if err := os.Rename(t.tmp.Name(), t.path); err != nil {
		return fmt.Errorf("%s: %w", t.path, err)
	}
	return nil
}

// discard removes the temporary file of a target that was not written (a
// nil target is fine).
func (t *target) discard() {
	if t == nil || t.done {
		return
	}
	t.done = true
	if t.dev != nil {
		_ = t.dev.Close()
		return
	}
	_ = t.tmp.Close()
	_ = os.Remove(t.tmp.Name())
}

// terminal reports whether w is a terminal.
func terminal(w io.Writer) bool {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// colorable reports whether text written to w is coloured: never with
// NO_COLOR set (no-color.org), always with FORCE_COLOR set (force-color.org;
// "0" and "false" turn it off) even when w is a pipe or a file (a CI log),
// otherwise when w is a terminal.
func colorable(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	switch force := os.Getenv("FORCE_COLOR"); force {
	case "":
	case "0", "false":
		return false
	default:
		return true
	}
	return terminal(w)
}

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
