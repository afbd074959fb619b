package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onceproof/onceproof/harness"
)

// discover lists an MCP server's tools with their annotations, classifies
// them (read-only or write) and writes a starter spec certify accepts: one
// entry per tool, with an arguments template drawn from its input schema
// and an oracle for the user to point at what counts the tool's effects.
func discover(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("discover", flag.ContinueOnError)
	endpoint := fs.String("mcp", "", "the MCP server's Streamable HTTP endpoint `URL`, e.g. http://127.0.0.1:8090/mcp")
	out := fs.String("out", "", "write the starter spec to `FILE` (default: standard output after the table)")
	oracle := fs.String("oracle-url", "", "oracle `URL` template for the starter spec (default: the server's /count?marker={{.Marker}}; adjust it)")
	allowRemote := fs.Bool("allow-remote", false, "allow an MCP server that is not on loopback")
	if help, err := parse(fs, args, "Usage: onceproof discover --mcp URL [--out FILE]", stdout); help || err != nil {
		return exitOK, err
	}
	u, err := url.Parse(*endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 0, usagef("discover: --mcp: want http://host:port/path, got %q", *endpoint)
	}
	if *oracle == "" {
		*oracle = u.Scheme + "://" + u.Host + "/count?marker={{.Marker}}"
	}
	var file *target
	if *out != "" {
		if file, err = openTarget("--out", *out); err != nil {
			return 0, err
		}
		defer file.discard()
	}
	guard := &harness.Guard{AllowRemote: *allowRemote}
	if err := guard.CheckURL(*endpoint); err != nil {
		return 0, fmt.Errorf("--mcp: %w", err)
	}
	tools, err := listTools(ctx, *endpoint, guard)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", harness.ErrUnreachable, err)
	}
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
	spec := starterSpec(*endpoint, *oracle, tools)
	if *out == "" {
		fmt.Fprint(stdout, "\n"+spec)
		return exitOK, nil
	}
	if err := file.commit(func(w io.Writer) error { _, err := io.WriteString(w, spec); return err }); err != nil {
		return 0, err
	}
	fmt.Fprintf(stderr, "wrote %s: fill in each tool's oracle, then run onceproof certify --spec %s\n", *out, *out)
	return exitOK, nil
}

func listTools(ctx context.Context, endpoint string, guard *harness.Guard) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
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

// starterSpec writes a spec entry per tool.
func starterSpec(endpoint, oracle string, tools []*mcp.Tool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Starter spec written by onceproof discover --mcp %s\n", endpoint)
	b.WriteString("# Check each tool's arguments and point its oracle at something that counts the\n")
	b.WriteString("# tool's effects for a marker (an HTTP count endpoint, a SQL query, a command).\n")
	b.WriteString("version: 1\ntools:\n")
	for _, t := range tools {
		ro, _, _ := hints(t)
		args, keyArg, marker := argumentsTemplate(t.InputSchema)
		class := "write tool: every scenario runs"
		if ro {
			class = "claims readOnlyHint: only the annotations check runs"
		}
		fmt.Fprintf(&b, "  # %s — %s\n", t.Name, class)
		fmt.Fprintf(&b, "  - name: %s\n    mcp:\n      url: %s\n      tool: %s\n      arguments: %s\n", specName(t.Name), endpoint, t.Name, yamlQuote(args))
		switch {
		case keyArg != "":
			fmt.Fprintf(&b, "      key_argument: %s\n", keyArg)
		case ro:
			b.WriteString("      # no key: the tool claims readOnlyHint, so only its annotations are checked\n")
		default:
			b.WriteString("      key_meta: idempotency-key   # the tool takes no key argument: the key travels in _meta\n")
		}
		if !marker {
			b.WriteString("      # TODO: no string argument carries {{.Marker}}; the spec is refused until one does\n")
		}
		if p := resultIDPointer(t.OutputSchema); p != "" {
			fmt.Fprintf(&b, "    result_id: %s\n", p)
		} else {
			b.WriteString("    # result_id: the output schema names no id; point this at the result's id if it has one\n")
		}
		fmt.Fprintf(&b, "    oracle:\n      http: {url: %s, count: /count}   # TODO: count this tool's effects\n", yamlQuote(oracle))
	}
	return b.String()
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
// otherwise (a pointer that matches nothing fails the preflight).
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

// yamlQuote single-quotes s for YAML.
func yamlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
