package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/spec"
)

// discover lists the tools an MCP server (--mcp URL, or --mcp-command CMD
// for a server over stdio) or an OpenAPI document (--openapi) describes
// and writes a starter spec certify accepts once each oracle points at
// what counts the tool's effects.
func discover(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("discover", flag.ContinueOnError)
	servers := serverFlags(fs)
	document := fs.String("openapi", "", "an OpenAPI 3.0 or 3.1 document, a `FILE` or an http(s) URL")
	out := fs.String("out", "", "write the starter spec to `FILE` (default: standard output after the table)")
	var oracle oracleFlags
	oracle.register(fs)
	var o openapiFlags
	o.register(fs)
	if help, err := parse(fs, args, discoverUsage, stdout); help || err != nil {
		return exitOK, err
	}
	chosen := givenServers(servers)
	if len(chosen)+given(*document) != 1 {
		return 0, usagef("discover: want exactly one of %s and --openapi FILE|URL", serverChoices(servers))
	}
	// The starter spec's file is opened before anything is fetched.
	var file *target
	if *out != "" {
		var err error
		if file, err = openTarget("--out", *out); err != nil {
			return 0, err
		}
		defer file.discard()
	}
	if err := oracle.check(); err != nil {
		return 0, err
	}
	switch {
	case *document != "":
		return discoverOpenAPI(ctx, *document, file, o, oracle, stdout, stderr)
	case o.setForOpenAPI():
		return 0, usagef("discover: --operation, --server and --server-var are for --openapi")
	}
	f := chosen[0]
	if _, err := f.kind.Discover.Section(f.value); err != nil {
		return 0, usagef("discover: --%s: %v", f.kind.Discover.Flag, err)
	}
	srv, tools, err := reachServer(ctx, "discover", f, &harness.Guard{AllowRemote: o.allowRemote})
	if err != nil {
		return 0, err
	}
	printTools(stdout, tools)
	reach := srv.Reach()
	section := spec.MCPDraft{URL: reach.URL, Command: reach.Command}
	if len(reach.Command) > 0 && *out != "" {
		// The spec runs its server from where discover ran it.
		cwd, err1 := os.Getwd()
		dir, err2 := filepath.Abs(filepath.Dir(*out))
		if err1 == nil && err2 == nil {
			if rel, err := filepath.Rel(dir, cwd); err == nil && rel != "." {
				section.Dir = rel
			}
		}
	}
	return writeDraft(starterSpec(section, "--"+f.kind.Discover.Flag+" "+f.value, oracle, tools), file, oracle.todo(), stdout, stderr)
}

// given counts the flags set.
func given(values ...string) int {
	n := 0
	for _, v := range values {
		if v != "" {
			n++
		}
	}
	return n
}

// printTools prints the table of a server's tools and their annotations.
func printTools(stdout io.Writer, tools []*mcp.Tool) {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "tool\tclass\treadOnlyHint\tidempotentHint\tdestructiveHint\t")
	for _, t := range tools {
		ro, idem, destr := hints(t)
		class := "write"
		if ro {
			class = "read-only (claimed)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%v\t%s\t\n", t.Name, class, ro, idem, destr)
	}
	_ = tw.Flush()
}

// oracleFlags are the flags that give a starter spec's oracles (discover,
// init): an HTTP count endpoint, or the placeholder that certify refuses
// until it is replaced.
type oracleFlags struct {
	url, count string
}

func (o *oracleFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.url, "oracle-url", "", "the oracle of every drafted tool: a count endpoint `URL` template using {{.Marker}} (default: oracle: "+spec.OraclePlaceholder+", to replace)")
	fs.StringVar(&o.count, "oracle-count", "/count", "with --oracle-url: the JSON `POINTER` to the count in its answer")
}

// check refuses an oracle URL that is not an http(s) URL using the marker.
func (o oracleFlags) check() error {
	if o.url == "" {
		return nil
	}
	if u, err := url.Parse(o.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.Contains(o.url, "{{.Marker}}") {
		return usagef("--oracle-url %q: want an http(s) URL template using {{.Marker}}, e.g. http://127.0.0.1:8080/count?marker={{.Marker}}", o.url)
	}
	if !strings.HasPrefix(o.count, "/") {
		return usagef("--oracle-count %q: want a JSON pointer, e.g. /count", o.count)
	}
	return nil
}

// draft is the oracle a drafted tool gets, with its note.
func (o oracleFlags) draft() (spec.OracleDraft, spec.Note) {
	if o.url == "" {
		return spec.OracleDraft{}, spec.Note{Text: "TODO: what counts this tool's effects for one marker (an HTTP count endpoint,\na command, a SQL query, a Redis command); certify refuses " + spec.OraclePlaceholder}
	}
	return spec.OracleDraft{HTTP: &spec.OracleHTTPDraft{URL: o.url, Count: o.count}}, spec.Note{Text: "given with --oracle-url: check that it counts this tool's effects for one marker"}
}

// todo says what is left to do with a starter spec.
func (o oracleFlags) todo() string {
	if o.url == "" {
		return "replace each oracle: " + spec.OraclePlaceholder + " and check the guessed lines"
	}
	return "check the guessed lines"
}

// specSchemaPath is where the spec file's JSON Schema is published in the
// repository (it is added with the spec restructuring; see specSchemaURL).
const specSchemaPath = "harness/spec/spec.schema.json"

// releaseRE matches a release version (no pre-release, no pseudo-version).
var releaseRE = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// specSchemaURL is the URL of the spec's JSON Schema for this onceproof's
// version: the file at its release tag, or on main for any other build.
func specSchemaURL() string {
	ref := "main"
	if v := onceproofVersion(); releaseRE.MatchString(v) {
		ref = v
	}
	return "https://raw.githubusercontent.com/onceproof/onceproof/" + ref + "/" + specSchemaPath
}

// writeDraft writes a starter spec to file (opened before the run), or to
// stdout after a blank line when file is nil. Its first line gives editors
// the spec's schema (the yaml-language-server modeline).
func writeDraft(d spec.Draft, file *target, todo string, stdout, stderr io.Writer) (int, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# yaml-language-server: $schema=%s\n", specSchemaURL())
	if err := spec.Write(&b, d); err != nil {
		return 0, err
	}
	if file == nil {
		fmt.Fprint(stdout, "\n"+b.String())
		return exitOK, nil
	}
	if err := file.commit(func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err }); err != nil {
		return 0, err
	}
	fmt.Fprintf(stderr, "wrote %s: %s, then run onceproof certify --spec %s\n", file.path, todo, file.path)
	return exitOK, nil
}

const discoverUsage = `Usage: onceproof discover --mcp URL | --mcp-command CMD [--out FILE] [--oracle-url URL [--oracle-count POINTER]]
       onceproof discover --openapi FILE|URL [--out FILE] [--operation ID]... [--server URL]
                          [--server-var NAME=VALUE]... [--oracle-url URL [--oracle-count POINTER]] [--allow-remote]`

// discoverTimeout bounds listing an MCP server's tools or fetching a document.
const discoverTimeout = 15 * time.Second

func hints(t *mcp.Tool) (readOnly, idempotent bool, destructive string) {
	destructive = "unset"
	if t.Annotations == nil {
		return false, false, destructive
	}
	if t.Annotations.DestructiveHint != nil {
		destructive = fmt.Sprint(*t.Annotations.DestructiveHint)
	}
	return t.Annotations.ReadOnlyHint, t.Annotations.IdempotentHint, destructive
}

// starterSpec drafts a spec entry per tool, each with section (its url, or
// its command) and the oracle the flags give (the placeholder without
// --oracle-url).
func starterSpec(section spec.MCPDraft, source string, oracle oracleFlags, tools []*mcp.Tool) spec.Draft {
	d := spec.Draft{Comment: []string{
		"Starter spec written by onceproof discover " + source,
		"Lines marked guessed hold values the server does not state: check them.",
	}}
	if oracle.url == "" {
		d.Comment = append(d.Comment, "Replace each oracle: "+spec.OraclePlaceholder+" with something that counts the tool's",
			"effects for one marker (an HTTP count endpoint, a command reading the server's store, SQL...).")
	}
	od, on := oracle.draft()
	for _, t := range tools {
		ro, _, _ := hints(t)
		args, keyArg, marker := argumentsTemplate(t.InputSchema)
		class := "write tool: every scenario runs"
		if ro {
			class = "claims readOnlyHint: only the annotations check runs"
		}
		m := section
		m.Tool, m.Arguments, m.KeyArgument = t.Name, args, keyArg
		td := spec.ToolDraft{
			Name:    specName(t.Name),
			Comment: []string{t.Name + " — " + class},
			MCP:     &m,
			// Most tools that create something return its id; the preflight
			// refuses a result_id that finds nothing.
			ResultID: resultIDPointer(t.OutputSchema),

			Oracle: od,
			Notes: map[string]spec.Note{
				"mcp.arguments": {Guessed: true, Text: "from the input schema: every property, the marker in the first string"},
				"result_id":     {Guessed: true, Text: "the id the output schema names"},
				"oracle":        on,
			},
		}
		if td.ResultID == "" {
			delete(td.Notes, "result_id")
		}
		switch {
		case keyArg != "":
			td.Notes["mcp.key_argument"] = spec.Note{Guessed: true, Text: "the argument named like an idempotency key"}
		case ro:
			// A tool that claims readOnlyHint needs no key.
		default:
			td.MCP.KeyMeta = "idempotency-key"
			td.Notes["mcp.key_meta"] = spec.Note{Guessed: true, Text: "the tool takes no key argument: the key travels in _meta"}
		}
		if !marker {
			td.Notes["mcp.arguments"] = spec.Note{Text: "TODO: no string argument carries {{.Marker}}; the spec is refused until one does"}
		}
		if !ro {
			td.Optional = append(td.Optional, spec.ContractOptionals(false, harness.ProfileIETF, nil, "structured-content fields a replay may change (examples)", "")...)
		}
		d.Tools = append(d.Tools, td)
	}
	return d
}

// argumentsTemplate renders a JSON object template from an input schema:
// the first string property carries the marker, numbers draw from .Int, a
// property named like an idempotency key becomes key_argument.
func argumentsTemplate(schema any) (tpl, keyArg string, marker bool) {
	raw, _ := json.Marshal(schema)
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(raw, &s)
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		lower := strings.ToLower(n)
		if keyArg == "" && strings.Contains(lower, "key") && (strings.Contains(lower, "idempot") || lower == "key" || strings.Contains(lower, "request")) {
			keyArg = n
			continue
		}
		typ := fmt.Sprint(s.Properties[n].Type)
		var v string
		switch {
		case strings.Contains(typ, "string") && !marker:
			v, marker = `"onceproof {{.Marker}}"`, true
		case strings.Contains(typ, "string"):
			v = `"onceproof"`
		case strings.Contains(typ, "integer"), strings.Contains(typ, "number"):
			v = "{{.Int 1 100}}"
		case strings.Contains(typ, "boolean"):
			v = "false"
		case strings.Contains(typ, "array"):
			v = "[]"
		default:
			v = "{}"
		}
		parts = append(parts, fmt.Sprintf("%q:%s", n, v))
	}
	return "{" + strings.Join(parts, ",") + "}", keyArg, marker
}

// resultIDPointer is "/id" when an output schema has an "id" property, ""
// otherwise.
func resultIDPointer(schema any) string {
	raw, _ := json.Marshal(schema)
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(raw, &s)
	if _, ok := s.Properties["id"]; ok {
		return "/id"
	}
	return ""
}

func specName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, s)
}
