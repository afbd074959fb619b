package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/fixtures"
)

// The command lines the README and examples/ci show are found by parsing
// those files, so that an edit to either is covered without touching this
// test: a line that can be run (no placeholder) is run, as written, against
// the fixtures; one with placeholders (a synopsis: FILE, [--tool NAME]...)
// names only flags its command has.

// docCommand is one onceproof command line found in a file.
type docCommand struct {
	where string // file: what part of it
	line  string // the command line, from "onceproof" (or "go run …onceproof") on
	// usage marks a line of a usage block: its flags are checked, it is
	// not run.
	usage bool
	env   map[string]string
	// runs are the values of a matrix the line is run with, one run each
	// (nil: once).
	runs []map[string]string
}

// commandRE finds a onceproof command: the binary by name or path, or go run
// of it, then a command of the table.
var commandRE = regexp.MustCompile(`(?:go run (?:\./cmd/onceproof|github\.com/onceproof/onceproof/cmd/onceproof@\S+)|(?:^|[\s;&|(/])(?:bin/)?onceproof)( +(?:--version|-h|--help|[a-z][a-z-]*)\b[^\n]*)`)

// synopsisRE marks a line with placeholders: a usage line, not a command.
var synopsisRE = regexp.MustCompile(`\[|\.\.\.|…|<[a-z]+>|\b(FILE|URL|ID|NAME|N|D|DIR|CMD|COMMAND|F|P|SHELL|POINTER|LOCAL)\b|[a-z]\|[a-z]`)

// extract finds the onceproof command lines of text: continuation lines
// ("\" at the end) are joined, comments and what follows the command (;,
// &&, ||, a pipe, &) are cut.
func extract(text string) []string {
	text = regexp.MustCompile(`\\\n[\s#]*`).ReplaceAllString(text, " ")
	var out []string
	for _, raw := range strings.Split(text, "\n") {
		raw = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(raw), "#"))
		m := commandRE.FindStringSubmatchIndex(raw)
		if m == nil {
			continue
		}
		line := "onceproof" + raw[m[2]:m[3]]
		if i := commentStart(line); i >= 0 {
			line = line[:i]
		}
		if i := strings.IndexByte(line, '`'); i >= 0 {
			line = line[:i] // the end of a code span in a comment
		}
		if f := strings.Fields(line); len(f) < 2 || !isCommandWord(f[1]) {
			continue // prose: "onceproof must be told ..."
		}
		for _, sep := range []string{" || ", " && ", "; ", " | ", " &"} {
			if i := strings.Index(line, sep); i >= 0 && !inQuotes(line, i) {
				line = line[:i]
			}
		}
		out = append(out, strings.TrimSpace(regexp.MustCompile(` {2,}`).ReplaceAllString(line, " ")))
	}
	return out
}

// isCommandWord reports whether w names a command of the table (or asks
// for the version or help).
func isCommandWord(w string) bool {
	if _, ok := lookupCommand(w); ok {
		return true
	}
	return w == "--version" || w == "-h" || w == "--help"
}

// commentStart is where a shell comment starts in line (-1: none).
func commentStart(line string) int {
	for i := 1; i < len(line); i++ {
		if line[i] == '#' && (line[i-1] == ' ' || line[i-1] == '\t') && !inQuotes(line, i) {
			return i
		}
	}
	return -1
}

// inQuotes reports whether byte i of line is inside shell quotes.
func inQuotes(line string, i int) bool {
	var q byte
	for j := 0; j < i; j++ {
		switch c := line[j]; {
		case q == 0 && (c == '\'' || c == '"'):
			q = c
		case c == q:
			q = 0
		}
	}
	return q != 0
}

// readmeCommands are the README's command lines: every line of its sh
// blocks, the usage lines of its other blocks (lines that start with
// onceproof; output blocks hold replay lines, which are not commands), and
// its inline code that is a whole command (with a flag).
func readmeCommands(t *testing.T) []docCommand {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	text := string(data)
	var out []docCommand
	for _, b := range regexp.MustCompile("(?s)```([a-z]*)\n(.*?)```").FindAllStringSubmatch(text, -1) {
		switch b[1] {
		case "sh":
			for _, l := range extract(b[2]) {
				out = append(out, docCommand{where: "README.md: sh block", line: l})
			}
		case "":
			for _, l := range strings.Split(b[2], "\n") {
				if strings.HasPrefix(l, "onceproof ") {
					if i := commentStart(l); i >= 0 {
						l = l[:i]
					}
					out = append(out, docCommand{where: "README.md: usage", line: strings.TrimSpace(l), usage: true})
				}
			}
		}
	}
	prose := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(text, "")
	for _, m := range regexp.MustCompile("`([^`\n]*)`").FindAllStringSubmatch(prose, -1) {
		if !regexp.MustCompile(`\s--?[a-z-]+ [^-\s]`).MatchString(m[1]) {
			continue // a command or a flag named in prose, not a command line
		}
		for _, l := range extract(m[1]) {
			out = append(out, docCommand{where: "README.md: inline", line: l})
		}
	}
	return out
}

// ciCommands are the command lines of examples/ci: the run scripts of the
// workflows (with each job's matrix and env) and their comments, the
// Kubernetes containers' commands (a shell's script, or onceproof's args).
func ciCommands(t *testing.T) []docCommand {
	t.Helper()
	paths, err := filepath.Glob("../../examples/ci/*.y*ml")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	var out []docCommand
	for _, path := range paths {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		name := filepath.Base(path)
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				break
			}
			var walk func(n *yaml.Node, env map[string]string, runs []map[string]string)
			walk = func(n *yaml.Node, env map[string]string, runs []map[string]string) {
				for _, c := range []string{n.HeadComment, n.LineComment, n.FootComment} {
					for _, l := range extract(c) {
						out = append(out, docCommand{where: name + ": comment", line: l, env: env, runs: runs})
					}
				}
				if n.Kind == yaml.MappingNode {
					env, runs = scopeOf(n, env, runs)
					if cmd, args := field(n, "command"), field(n, "args"); cmd != nil && args != nil && len(cmd.Content) > 0 {
						if strings.HasSuffix(cmd.Content[len(cmd.Content)-1].Value, "onceproof") {
							var words []string
							for _, a := range args.Content {
								words = append(words, a.Value)
							}
							out = append(out, docCommand{where: name + ": container", line: "onceproof " + strings.Join(words, " "), env: env, runs: runs})
						}
					}
				}
				if n.Kind == yaml.ScalarNode {
					for _, l := range extract(n.Value) {
						out = append(out, docCommand{where: name + ": script", line: l, env: env, runs: runs})
					}
				}
				for _, c := range n.Content {
					walk(c, env, runs)
				}
			}
			walk(&doc, nil, nil)
		}
	}
	return out
}

// field is the value of key in mapping n.
func field(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// scopeOf adds what mapping n declares for the commands inside it: env:
// values (a workflow's, a job's, a container's name/value list), a job
// matrix (strategy.matrix), and a Kubernetes indexed Job's completion
// indexes (JOB_COMPLETION_INDEX).
func scopeOf(n *yaml.Node, env map[string]string, runs []map[string]string) (map[string]string, []map[string]string) {
	if e := field(n, "env"); e != nil {
		env = cloneEnv(env)
		switch e.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(e.Content); i += 2 {
				env[e.Content[i].Value] = e.Content[i+1].Value
			}
		case yaml.SequenceNode:
			for _, v := range e.Content {
				if k, val := field(v, "name"), field(v, "value"); k != nil && val != nil {
					env[k.Value] = val.Value
				}
			}
		}
	}
	if s := field(n, "strategy"); s != nil {
		if m := field(s, "matrix"); m != nil {
			runs = nil
			for i := 0; i+1 < len(m.Content); i += 2 {
				for _, v := range m.Content[i+1].Content {
					runs = append(runs, map[string]string{"${{ matrix." + m.Content[i].Value + " }}": v.Value})
				}
			}
		}
	}
	if mode, c := field(n, "completionMode"), field(n, "completions"); mode != nil && mode.Value == "Indexed" && c != nil {
		runs = nil
		var count int
		fmt.Sscan(c.Value, &count)
		for i := range count {
			runs = append(runs, map[string]string{"$JOB_COMPLETION_INDEX": fmt.Sprint(i)})
		}
	}
	return env, runs
}

func cloneEnv(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// docWorkspace is where the documented commands run: the repository's
// files they name, with the fixtures' fixed addresses swapped for the
// running fixtures', the files a reader is assumed to have (a spec of the
// correct fixture as onceproof.yaml and tools.yaml, a report.json, the
// wrapper the certify-client line names), Kubernetes' /spec and /reports
// mounts as directories, and onceproof itself on PATH and as bin/onceproof.
type docWorkspace struct {
	dir, bin string
	env      []string
	swap     *strings.Replacer
}

func newDocWorkspace(t *testing.T) *docWorkspace {
	t.Helper()
	tool := startKind(t, fixtures.Correct)
	mcp, err := fixtures.StartMCP("127.0.0.1:0", fixtures.MCPOptions{Lint: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = mcp.Close() })
	mcpAddr := strings.TrimPrefix(mcp.URL(), "http://")
	dir := t.TempDir()
	_, port, _ := strings.Cut(tool, ":")
	// The fixture's OpenAPI document names port 8080 as its server
	// variable's default.
	swap := strings.NewReplacer("127.0.0.1:8080", tool, "127.0.0.1:8090", mcpAddr, `default: "8080"`, `default: "`+port+`"`,
		"/spec/tools.yaml", filepath.Join(dir, "spec", "tools.yaml"), "/reports/", filepath.Join(dir, "reports")+"/")
	copyTree := func(from, to string) {
		require.NoError(t, filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(from, p)
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			dst := filepath.Join(dir, to, rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			return os.WriteFile(dst, []byte(swap.Replace(string(data))), 0o644)
		}))
	}
	copyTree("../../examples", "examples")
	copyTree("../../harness/openapi/testdata", "harness/openapi/testdata")
	spec, err := os.ReadFile(filepath.Join(dir, "examples", "create-ticket.yaml"))
	require.NoError(t, err)
	for _, p := range []string{"onceproof.yaml", "tools.yaml", "spec/tools.yaml", "reports/.keep"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), spec, 0o644))
	}
	baseline, err := os.ReadFile("../../examples/ci/baseline.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "onceproof-baseline.yaml"), baseline, 0o644))

	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	for _, c := range []struct{ pkg, out string }{{".", "onceproof"}, {"../onceproof-wrapper", "onceproof-wrapper"}} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, c.out), c.pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "my-agent-tool-call"), []byte("#!/bin/sh\nexec onceproof-wrapper --wrapper good\n"), 0o755))
	ws := &docWorkspace{dir: dir, bin: filepath.Join(bin, "onceproof"), swap: swap,
		env: append(envWithout("GITHUB_STEP_SUMMARY", "PATH"), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))}
	// report.json: a saved report of the correct fixture; s1.json and
	// s2.json: the two shards of a run.
	for _, line := range []string{
		"onceproof certify --spec tools.yaml --checks 5 --max-backoff 10ms --quiet --format json --out report.json",
		"onceproof certify --spec tools.yaml --checks 5 --max-backoff 10ms --quiet --seed 1 --shard 1/2 --format json --out s1.json",
		"onceproof certify --spec tools.yaml --checks 5 --max-backoff 10ms --quiet --seed 1 --shard 2/2 --format json --out s2.json",
	} {
		code, out := ws.sh(t, line, nil)
		require.Equal(t, exitOK, code, "%s: %s", line, out)
	}
	return ws
}

// sh runs line with sh in the workspace; it returns the exit code and the
// output.
func (w *docWorkspace) sh(t *testing.T, line string, env map[string]string) (int, string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = w.dir
	cmd.Env = slices.Clone(w.env)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}

// runnable turns a documented line into the one the workspace runs: the
// fixtures' addresses and the mounts swapped, the matrix values put in. (go
// run of onceproof is already the built binary: extract spells every
// command from "onceproof" on, so exit codes 2–4 are not turned into 1.)
func (w *docWorkspace) runnable(line string, vars map[string]string) string {
	line = w.swap.Replace(line)
	for k, v := range vars {
		line = strings.ReplaceAll(line, k, v)
	}
	return line
}

// flagsOf lists the long flags a command line passes, outside quotes.
func flagsOf(line string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?:^|\s)(--?[a-z][a-z0-9-]*)`).FindAllStringSubmatchIndex(line, -1) {
		if !inQuotes(line, m[2]) {
			out = append(out, strings.TrimLeft(line[m[2]:m[3]], "-"))
		}
	}
	return out
}

// checkFlags checks that every flag of line is one its command has.
func checkFlags(t *testing.T, c docCommand) {
	t.Helper()
	words := strings.Fields(c.line)
	require.GreaterOrEqual(t, len(words), 2, "%s: %q", c.where, c.line)
	name := words[1]
	if name == "--version" || name == "-h" || name == "--help" {
		return
	}
	cmd, ok := lookupCommand(name)
	require.True(t, ok, "%s: %q: no command %s", c.where, c.line, name)
	fs := cmd.flagSet()
	for _, f := range flagsOf(strings.Join(words[2:], " ")) {
		if f == "h" || f == "help" {
			continue
		}
		require.NotNil(t, fs, "%s: %q: %s takes no flags", c.where, c.line, name)
		require.NotNil(t, fs.Lookup(f), "%s: %q: onceproof %s has no flag --%s", c.where, c.line, name, f)
	}
}

// TestDocumentedCommandLinesRun: every onceproof command line of the
// README and examples/ci runs, as written, against the fixtures: none is a
// usage error (2) or finds nothing to talk to (3), and every --out file it
// names is written; every usage line names flags its command has.
func TestDocumentedCommandLinesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the documented commands")
	}
	cmds := append(readmeCommands(t), ciCommands(t)...)
	var toRun []docCommand
	seen := map[string]bool{}
	for _, c := range cmds {
		checkFlags(t, c)
		if c.usage || synopsisRE.MatchString(c.line) {
			continue
		}
		if key := c.line + fmt.Sprint(c.runs); !seen[key] {
			seen[key] = true
			toRun = append(toRun, c)
		}
	}
	// The files name these, so a change that drops one fails here.
	for _, want := range []string{
		"onceproof report --merge shard-*.json --format markdown --out onceproof.md --format junit --out onceproof.xml --format html --out onceproof.html --format text",
		"onceproof certify --spec examples/create-ticket.yaml",
		"onceproof discover --openapi harness/openapi/testdata/fixture.yaml",
		"onceproof report --merge /reports/shard-1.json",
		"onceproof lint --spec examples/create-ticket.yaml",
	} {
		require.True(t, slices.ContainsFunc(toRun, func(c docCommand) bool { return strings.HasPrefix(c.line, want) }), "no documented command line starts with %q: %v", want, toRun)
	}
	ws := newDocWorkspace(t)
	// Workflow and Job order: every job's matrix runs before the commands
	// that merge its reports.
	for _, c := range toRun {
		runs := c.runs
		if runs == nil {
			runs = []map[string]string{nil}
		}
		for _, vars := range runs {
			line := ws.runnable(c.line, vars)
			t.Run(c.where+": "+line, func(t *testing.T) {
				env := cloneEnv(c.env)
				for k, v := range vars {
					if name, ok := strings.CutPrefix(k, "$"); ok {
						env[name] = v
					}
				}
				code, out := ws.sh(t, line, env)
				require.NotContains(t, []int{exitUsage, exitUnreachable, 127}, code, "%s\nexit %d:\n%s", line, code, out)
				for _, p := range outFiles(line, env) {
					if !filepath.IsAbs(p) {
						p = filepath.Join(ws.dir, p)
					}
					require.FileExists(t, p, "%s writes %s", line, p)
				}
			})
		}
	}
}

// outFiles are the files a command line's --out flags name (the shell's
// $((...)) and $VAR expanded as sh would).
func outFiles(line string, env map[string]string) []string {
	var out []string
	words := strings.Fields(line)
	for i, w := range words {
		if (w == "--out" || w == "--certificate") && i+1 < len(words) {
			p := strings.Trim(words[i+1], `"'`)
			if strings.Contains(p, "$") {
				cmd := exec.Command("sh", "-c", `printf '%s' "`+p+`"`)
				for k, v := range env {
					cmd.Env = append(cmd.Env, k+"="+v)
				}
				b, err := cmd.Output()
				if err != nil {
					continue
				}
				p = string(b)
			}
			if !strings.HasPrefix(p, "/dev/") {
				out = append(out, p)
			}
		}
	}
	return out
}
