package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"io/fs"
	"net/url"
	"os"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/spec"
)

const initUsage = `Usage: onceproof init [--out FILE] [--name NAME] [--url URL | --mcp URL --tool NAME]
                      [--oracle-url URL [--oracle-count POINTER]] [--force]

Writes a starter spec for one tool (an HTTP endpoint, or with --mcp a tool of
an MCP server) with a comment on every field, and the line that gives editors
the spec's JSON Schema. Its oracle stays FILL-IN, which certify refuses, until
it points at what counts the tool's effects (or give --oracle-url).`

// initCmd writes a starter spec file.
func initCmd(_ context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	set := flag.NewFlagSet("init", flag.ContinueOnError)
	out := set.String("out", "onceproof.yaml", "write the spec to `FILE`")
	name := set.String("name", "create-ticket", "the tool's `NAME` in the spec and in reports")
	endpoint := set.String("url", "http://127.0.0.1:8080/tickets", "the HTTP tool's endpoint `URL` (the write it performs)")
	mcpURL := set.String("mcp", "", "describe an MCP tool instead: the server's Streamable HTTP endpoint `URL`")
	mcpTool := set.String("tool", "create_ticket", "with --mcp: the MCP tool's `NAME` as tools/list shows it")
	force := set.Bool("force", false, "overwrite the file if it exists")
	var oracle oracleFlags
	oracle.register(set)
	if help, err := parse(set, args, initUsage, stdout); help || err != nil {
		return exitOK, err
	}
	if *mcpURL != "" && flagSet(set, "url") {
		return 0, usagef("init: give --url (an HTTP tool) or --mcp (an MCP tool), not both")
	}
	if flagSet(set, "tool") && *mcpURL == "" {
		return 0, usagef("init: --tool names the MCP tool of --mcp")
	}
	target := *endpoint
	if *mcpURL != "" {
		target = *mcpURL
	}
	if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 0, usagef("init: want an http(s) URL, got %q", target)
	}
	if err := oracle.check(); err != nil {
		return 0, err
	}
	if _, err := os.Stat(*out); err == nil && !*force {
		return 0, usagef("init: %s exists; give --force to overwrite it, or --out another FILE", *out)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, usagef("init: %s: %v", *out, unwrapPath(err))
	}
	file, err := openTarget("--out", *out)
	if err != nil {
		return 0, err
	}
	defer file.discard()
	d := starterDraft(*name, *endpoint, *mcpURL, *mcpTool, oracle)
	todo := "check each field"
	if oracle.url == "" {
		todo = "replace oracle: " + spec.OraclePlaceholder + " with what counts the tool's effects and check each field"
	}
	return writeDraft(d, file, todo, stdout, stderr)
}

// starterDraft is the one-tool spec init writes: an HTTP tool at endpoint,
// or the MCP tool mcpTool of the server at mcpURL.
func starterDraft(name, endpoint, mcpURL, mcpTool string, oracle oracleFlags) spec.Draft {
	d := spec.Draft{Comment: []string{
		"Starter spec written by onceproof init. Every field is explained where it is;",
		"the whole format is in the README (Certify your own tool). Check each value,",
		"then run: onceproof certify --spec FILE",
	}}
	t := spec.ToolDraft{
		Name: name,
		Notes: map[string]spec.Note{
			"result_id": {Text: "a JSON pointer to the id the answer names (every 2xx of one key must name the same)"},
		},
		ResultID: "/id",
	}
	if mcpURL != "" {
		t.Comment = []string{"An MCP tool: onceproof calls it with tools/call, as an agent does."}
		t.MCP = &spec.MCPDraft{URL: mcpURL, Tool: mcpTool, Arguments: `{"subject":"onceproof {{.Marker}}","amount":{{.Int 1 500}}}`, KeyArgument: "idempotency_key"}
		t.Notes["mcp.arguments"] = spec.Note{Text: "the tool's arguments, a template: {{.Marker}} must appear (the oracle counts by it)"}
		t.Notes["mcp.key_argument"] = spec.Note{Text: "the argument that carries the idempotency key (or key_meta: a _meta field)"}
		t.Notes["result_id"] = spec.Note{Text: "a JSON pointer into the result's structured content: the id it names"}
		t.Optional = append(t.Optional, spec.OptionalField{Path: "mcp.timeout", Value: "2s", Note: "the caller's deadline per attempt"})
	} else {
		t.Comment = []string{"An HTTP tool: onceproof puts its fault proxy in front of the URL's host and port."}
		key := harness.DefaultKeyHeader
		t.HTTP = &spec.HTTPDraft{URL: endpoint, Method: "POST", Headers: []spec.Header{{Name: "Content-Type", Value: "application/json"}},
			Body: `{"subject":"onceproof {{.Marker}}","amount":{{.Int 1 500}}}`, KeyHeader: &key}
		t.Notes["http.url"] = spec.Note{Text: "the endpoint of the write"}
		t.Notes["http.body"] = spec.Note{Text: "a template: {{.Marker}} must appear (the oracle counts by it); {{.Int lo hi}} draws a number"}
		t.Notes["http.key_header"] = spec.Note{Text: "the header that carries the idempotency key (\"\" with {{.Key}} in the body)"}
		t.Optional = append(t.Optional, spec.OptionalField{Path: "http.timeout", Value: "2s", Note: "the caller's deadline per attempt"})
		t.Optional = append(t.Optional, spec.OptionalField{Path: "http.error_body", Value: `{"subject":"onceproof {{.Marker}}","amount":"none"}`, Note: "a request the tool refuses (replay checks the refusal is replayed)"})
	}
	t.Optional = append(t.Optional, spec.ContractOptionals(t.HTTP != nil, harness.ProfileIETF, nil, "", "")...)
	if t.HTTP != nil {
		t.Optional = append(t.Optional, spec.LookupOptional(endpoint))
	}
	t.Oracle, t.Notes["oracle"] = oracle.draft()
	d.Tools = []spec.ToolDraft{t}
	return d
}
