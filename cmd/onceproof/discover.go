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
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/spec"
	"github.com/onceproof/onceproof/harness/stdio"
)

// discover lists the tools an MCP server (--mcp URL, or --mcp-command CMD
// for a server over stdio) or an OpenAPI document (--openapi) describes
// and writes a starter spec certify accepts once each oracle points at
// what counts the tool's effects.
func discover(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("discover", flag.ContinueOnError)
	endpoint := fs.String("mcp", "", "the MCP server's Streamable HTTP endpoint `URL`, e.g. http://127.0.0.1:8090/mcp")
	serverCmd := fs.String("mcp-command", "", "an MCP server over stdio: its command line `CMD`, e.g. 'node build/index.js' (started, asked, stopped)")
	document := fs.String("openapi", "", "an OpenAPI 3.0 or 3.1 document, a `FILE` or an http(s) URL")
	out := fs.String("out", "", "write the starter spec to `FILE` (default: standard output after the table)")
	oracle := fs.String("oracle-url", "", "--mcp: oracle `URL` template for the starter spec (default: the server's /count?marker={{.Marker}}; adjust it)")
	var o openapiFlags
	o.register(fs)
	if help, err := parse(fs, args, discoverUsage, stdout); help || err != nil {
		return exitOK, err
	}
	if given(*endpoint, *document, *serverCmd) != 1 {
		return 0, usagef("discover: want exactly one of --mcp URL, --mcp-command CMD and --openapi FILE|URL")
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
	switch {
	case *document != "":
		if *oracle != "" {
			return 0, usagef("discover: --oracle-url is for --mcp; an OpenAPI spec gets an oracle placeholder")
		}
		return discoverOpenAPI(ctx, *document, file, o, stdout, stderr)
	case o.setForOpenAPI():
		return 0, usagef("discover: --operation, --server and --server-var are for --openapi")
	case *serverCmd != "":
		if *oracle != "" {
			return 0, usagef("discover: --oracle-url is for --mcp; a stdio server's spec gets an oracle placeholder")
		}
		return discoverCommand(ctx, *serverCmd, *out, file, stdout, stderr)
	}
	u, err := url.Parse(*endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 0, usagef("discover: --mcp: want http://host:port/path, got %q", *endpoint)
	}
	guard := &harness.Guard{AllowRemote: o.allowRemote}
	if err := guard.CheckURL(*endpoint); err != nil {
		return 0, fmt.Errorf("--mcp: %w", err)
	}
	if *oracle == "" {
		*oracle = u.Scheme + "://" + u.Host + "/count?marker={{.Marker}}"
	}
	tools, err := listTools(ctx, *endpoint, guard)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", harness.ErrUnreachable, err)
	}
	printTools(stdout, tools)
	return writeDraft(starterSpec(spec.MCPDraft{URL: *endpoint}, "--mcp "+*endpoint, *oracle, tools), file, "fill in each tool's oracle", stdout, stderr)
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

// discoverCommand starts the stdio MCP server line, lists its tools and
// writes a starter spec whose entries start it the same way (from the
// directory discover ran in) with an oracle placeholder.
func discoverCommand(ctx context.Context, line, out string, file *target, stdout, stderr io.Writer) (int, error) {
	argv, err := splitCommand(line)
	if err != nil {
		return 0, usagef("discover: --mcp-command: %v", err)
	}
	tools, err := stdio.ListTools(ctx, argv, nil, "")
	if err != nil {
		return 0, fmt.Errorf("%w: %w", harness.ErrUnreachable, err)
	}
	printTools(stdout, tools)
	section := spec.MCPDraft{Command: argv}
	if out != "" {
		// The spec runs its server from where discover ran it.
		cwd, err1 := os.Getwd()
		dir, err2 := filepath.Abs(filepath.Dir(out))
		if err1 == nil && err2 == nil {
			if rel, err := filepath.Rel(dir, cwd); err == nil && rel != "." {
				section.Dir = rel
			}
		}
	}
	return writeDraft(starterSpec(section, "--mcp-command "+line, "", tools), file, "fill in each tool's oracle", stdout, stderr)
}

// splitCommand splits a command line into words as a shell would, with
// single and double quotes and backslashes (no expansion of any kind).
func splitCommand(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord, quote := false, rune(0)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]):
				i++
				w.WriteRune(rs[i])
			default:
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			w.WriteRune(rs[i])
			inWord = true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return words, nil
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

// writeDraft writes a starter spec to file (opened before the run), or to
// stdout after a blank line when file is nil.
func writeDraft(d spec.Draft, file *target, todo string, stdout, stderr io.Writer) (int, error) {
	var b bytes.Buffer
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

const discoverUsage = `Usage: onceproof discover --mcp URL [--out FILE] [--oracle-url URL]
       onceproof discover --mcp-command CMD [--out FILE]
       onceproof discover --openapi FILE|URL [--out FILE] [--operation ID]... [--server URL]
                          [--server-var NAME=VALUE]... [--allow-remote]`

// discoverTimeout bounds listing an MCP server's tools or fetching a document.
const discoverTimeout = 15 * time.Second

// listTools lists an MCP server's tools, connecting only where guard lets
// it.
func listTools(ctx context.Context, endpoint string, guard *harness.Guard) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, discoverTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "onceproof-discover", Version: onceproofVersion()}, nil)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1, DisableStandaloneSSE: true,
		HTTPClient: guard.HTTPClient(0)}, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp %s: %w", endpoint, err)
	}
	defer s.Close()
	var tools []*mcp.Tool
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcp %s: tools/list: %w", endpoint, err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

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
// its command) and oracle ("" for the placeholder).
func starterSpec(section spec.MCPDraft, source, oracle string, tools []*mcp.Tool) spec.Draft {
	d := spec.Draft{Comment: []string{
		"Starter spec written by onceproof discover " + source,
		"Check each tool's arguments and point its oracle at something that counts the",
		"tool's effects for a marker (an HTTP count endpoint, a SQL query, a command).",
	}}
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

			Notes: map[string]spec.Note{
				"mcp.arguments": {Guessed: true, Text: "from the input schema: every property, the marker in the first string"},
				"result_id":     {Guessed: true, Text: "the id the output schema names"},
				"oracle":        {Guessed: true, Text: "the server's /count (or --oracle-url): TODO: point it at what counts this tool's effects"},
			},
		}
		if td.ResultID == "" {
			delete(td.Notes, "result_id")
		}
		if oracle != "" {
			td.Oracle = spec.OracleDraft{HTTP: &spec.OracleHTTPDraft{URL: oracle, Count: "/count"}}
		} else {
			td.Notes["oracle"] = spec.Note{Text: "TODO: an oracle that counts this tool's effects for one marker (a command reading the server's store, an HTTP count, SQL...)"}
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
