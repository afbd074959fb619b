package spec

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness"
)

// update rewrites golden files. It is the only -update flag of the harness
// test package: other tests reuse it.
var update = flag.Bool("update", false, "rewrite golden files")

// doc joins lines into a spec text, so that a case's line numbers are its
// indexes plus one.
func doc(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// head is the first two lines of most specs; tools start on line 3.
var head = []string{"version: 1", "tools:"}

// spec returns head followed by lines.
func spec(lines ...string) string { return doc(append(append([]string{}, head...), lines...)...) }

// okOracle is a valid oracle section at the tool's indentation.
var okOracle = []string{
	"    oracle:",
	`      http: {url: "http://127.0.0.1:8080/count?marker={{.Marker}}", count: /count}`,
}

// tool returns a spec with one tool: name t, the given http section lines
// (at 6 spaces) and a valid oracle. Lines: 3 name, 4 http:, 5.. http fields.
func tool(httpLines ...string) string {
	lines := []string{"  - name: t", "    http:"}
	for _, l := range httpLines {
		lines = append(lines, "      "+l)
	}
	return spec(append(lines, okOracle...)...)
}

// withOracle returns a spec with a valid http section and the given oracle
// lines (at 6 spaces): 3 name, 4-6 http, 7 oracle:, 8.. oracle fields.
func withOracle(oracleLines ...string) string {
	lines := []string{
		"  - name: t",
		"    http:",
		"      url: http://127.0.0.1:8080/tickets",
		`      body: '{"m":"{{.Marker}}"}'`,
		"    oracle:",
	}
	for _, l := range oracleLines {
		lines = append(lines, "      "+l)
	}
	return spec(lines...)
}

const fullSpec = `version: 1
tools:
  - name: create-ticket
    http:
      url: http://127.0.0.1:8080/tickets
      method: PUT
      headers: {Content-Type: application/json, X-Trace: "t-{{.Op}}"}
      body: '{"subject":"refund {{.Marker}}","amount":{{.Int 1 500}}}'
      key_header: X-Request-Key
      key_format: hex
      timeout: 750ms
    result_id: /id
    oracle:
      http:
        url: "http://127.0.0.1:8080/count?marker={{.Marker}}"
        count: /count
        headers: {Authorization: Bearer x}
      timeout: 3s
      settle: 100ms
  - name: refund.v2
    http:
      url: https://localhost/refunds
      body: "{{.Marker}}"
    oracle:
      command: ["sh", "-c", "echo 0"]
`

func TestParseSpecValid(t *testing.T) {
	tests := []struct {
		reason string
		spec   string
		check  func(t *testing.T, s *Spec)
	}{
		{
			reason: "every field of a full spec is read",
			spec:   fullSpec,
			check: func(t *testing.T, s *Spec) {
				require.Len(t, s.Tools, 2)
				assert.Equal(t, 1, s.Version)
				ts := s.Tools[0]
				assert.Equal(t, "create-ticket", ts.Name)
				assert.Equal(t, 3, ts.Line)
				c := ts.HTTP
				assert.Equal(t, "create-ticket", c.Name)
				assert.Equal(t, "http://127.0.0.1:8080/tickets", c.URL)
				assert.Equal(t, "PUT", c.Method)
				assert.Equal(t, map[string]string{"Content-Type": "application/json", "X-Trace": "t-{{.Op}}"}, c.Headers)
				assert.Equal(t, `{"subject":"refund {{.Marker}}","amount":{{.Int 1 500}}}`, c.Body)
				require.NotNil(t, c.KeyHeader)
				assert.Equal(t, "X-Request-Key", *c.KeyHeader)
				assert.Equal(t, harness.KeyHex, c.KeyFormat)
				assert.Equal(t, 750*time.Millisecond, c.Timeout)
				assert.Equal(t, "/id", c.ResultID)
				assert.Equal(t, "http GET http://127.0.0.1:8080/count?marker={{.Marker}} /count (settle 100ms)", c.Oracle.String())
				o, ok := harness.UnwrapOracle(c.Oracle).(*harness.HTTPOracle)
				require.True(t, ok)
				assert.Equal(t, map[string]string{"Authorization": "Bearer x"}, o.Headers)
				assert.Equal(t, 3*time.Second, o.Timeout)

				tool, err := ts.httpTool(ts.HTTP)
				require.NoError(t, err)
				assert.Equal(t, "127.0.0.1:8080", tool.Upstream())
				assert.Equal(t, 750*time.Millisecond, tool.Timeout())
				op := harness.Operation{ID: "op-1", Key: harness.KeyHex.Key("op-1"), Marker: "m-1", Seed: 7}
				call, err := tool.Prepare(op)
				require.NoError(t, err)
				wire := string(call.Wire)
				assert.Contains(t, wire, "PUT /tickets HTTP/1.1\r\n")
				assert.Contains(t, wire, "X-Request-Key: "+op.Key+"\r\n")
				assert.Contains(t, wire, "X-Trace: t-op-1\r\n")
				assert.Contains(t, wire, `"subject":"refund m-1"`)

				ts = s.Tools[1]
				assert.Equal(t, "refund.v2", ts.Name)
				assert.Equal(t, 20, ts.Line)
				tool, err = ts.httpTool(ts.HTTP)
				require.NoError(t, err)
				up, err := netip.ParseAddrPort(tool.Upstream())
				require.NoError(t, err, "localhost reaches the proxy as a literal address, never as a name to resolve")
				assert.True(t, up.Addr().IsLoopback())
				assert.Equal(t, uint16(443), up.Port())
			},
		},
		{
			reason: "defaults: method POST, key header Idempotency-Key, uuid keys, 2s timeout, no settling",
			spec:   tool("url: http://127.0.0.1:8080/tickets", `body: '{"m":"{{.Marker}}"}'`),
			check: func(t *testing.T, s *Spec) {
				c := s.Tools[0].HTTP
				assert.Equal(t, "POST", c.Method)
				require.NotNil(t, c.KeyHeader)
				assert.Equal(t, harness.DefaultKeyHeader, *c.KeyHeader)
				assert.Equal(t, harness.KeyUUID, c.KeyFormat)
				assert.Equal(t, 2*time.Second, c.Timeout)
				assert.Empty(t, c.ResultID)
				assert.IsType(t, &harness.HTTPOracle{}, c.Oracle, "settle 0 leaves the oracle unwrapped")
				assert.Zero(t, c.Oracle.(*harness.HTTPOracle).Timeout, "no oracle timeout: the oracle's default")
				tool, err := s.Tools[0].httpTool(s.Tools[0].HTTP)
				require.NoError(t, err)
				call, err := tool.Prepare(harness.Operation{ID: "o", Key: "k-1", Marker: "m"})
				require.NoError(t, err)
				assert.Contains(t, string(call.Wire), "POST /tickets HTTP/1.1\r\n")
				assert.Contains(t, string(call.Wire), "Idempotency-Key: k-1\r\n")
			},
		},
		{
			reason: `key_header: "" sends the key only in the body through {{.Key}}`,
			spec:   tool("url: http://127.0.0.1:8080/tickets", `key_header: ""`, `body: '{"key":"{{.Key}}","m":"{{.Marker}}"}'`),
			check: func(t *testing.T, s *Spec) {
				c := s.Tools[0].HTTP
				require.NotNil(t, c.KeyHeader)
				assert.Equal(t, "", *c.KeyHeader)
				tool, err := s.Tools[0].httpTool(s.Tools[0].HTTP)
				require.NoError(t, err)
				call, err := tool.Prepare(harness.Operation{ID: "o", Key: "k-1", Marker: "m"})
				require.NoError(t, err)
				assert.NotContains(t, string(call.Wire), harness.DefaultKeyHeader)
				assert.Contains(t, string(call.Wire), `{"key":"k-1","m":"m"}`)
			},
		},
		{
			reason: "a command oracle is an argv list with an optional timeout; settle wraps it",
			spec:   withOracle(`command: ["sh", "-c", 'test "$ONCEPROOF_MARKER" = m-7 && echo 3']`, "timeout: 5s", "settle: 1ms"),
			check: func(t *testing.T, s *Spec) {
				c := s.Tools[0].HTTP
				assert.Equal(t, `command sh -c test "$ONCEPROOF_MARKER" = m-7 && echo 3 (settle 1ms)`, c.Oracle.String())
				_, bare := c.Oracle.(*harness.CommandOracle)
				require.False(t, bare, "settle wraps the oracle")
				co, ok := harness.UnwrapOracle(c.Oracle).(*harness.CommandOracle)
				require.True(t, ok)
				assert.Equal(t, 5*time.Second, co.Timeout)
				n, err := c.Oracle.Count(context.Background(), "m-7")
				require.NoError(t, err)
				assert.Equal(t, 3, n)
			},
		},
		{
			reason: "the marker may reach the request through a header only, and GET needs no body",
			spec:   tool("url: http://127.0.0.1:8080/tickets", "method: GET", `headers: {X-Marker: "{{.Marker}}"}`),
			check: func(t *testing.T, s *Spec) {
				assert.Equal(t, "GET", s.Tools[0].HTTP.Method)
				assert.Empty(t, s.Tools[0].HTTP.Body)
			},
		},
		{
			reason: "anchors and merge keys share configuration between tools",
			spec: doc(
				"version: 1",
				"tools:",
				"  - name: a",
				"    http: &base",
				"      url: http://127.0.0.1:8080/tickets",
				"      headers: &hdr {Content-Type: application/json}",
				`      body: '{"m":"{{.Marker}}"}'`,
				"      timeout: 1s",
				"    oracle: &oracle",
				`      http: {url: "http://127.0.0.1:8080/count?marker={{.Marker}}", count: /count}`,
				"  - name: b",
				"    http:",
				"      <<: *base",
				"      timeout: 3s",
				"    oracle: *oracle",
			),
			check: func(t *testing.T, s *Spec) {
				require.Len(t, s.Tools, 2)
				a, b := s.Tools[0].HTTP, s.Tools[1].HTTP
				assert.Equal(t, time.Second, a.Timeout)
				assert.Equal(t, 3*time.Second, b.Timeout, "a mapping's own key wins over a merged one")
				assert.Equal(t, a.URL, b.URL)
				assert.Equal(t, a.Headers, b.Headers)
				assert.Equal(t, 11, s.Tools[1].Line)
			},
		},
		{
			reason: "a body may be a block scalar and a plain number is a fine string",
			spec: tool(
				"url: http://127.0.0.1:8080/tickets",
				"headers: {Content-Type: application/json, X-Version: 2}",
				"body: |",
				`  {"subject": "{{.Marker}}", "n": {{.Int 1 9}}}`,
			),
			check: func(t *testing.T, s *Spec) {
				assert.Equal(t, "{\"subject\": \"{{.Marker}}\", \"n\": {{.Int 1 9}}}\n", s.Tools[0].HTTP.Body)
				assert.Equal(t, "2", s.Tools[0].HTTP.Headers["X-Version"])
			},
		},
		{
			reason: "an MCP tool may leave out where its key travels: a read-only one needs none (the preflight checks)",
			spec: spec("  - name: stats", "    mcp:", "      url: http://127.0.0.1:8090/mcp", "      tool: ticket_stats",
				`      arguments: '{"query":"{{.Marker}}"}'`, okOracle[0], okOracle[1]),
			check: func(t *testing.T, s *Spec) {
				srv, ok := s.Tools[0].MCPServer()
				require.True(t, ok)
				assert.Empty(t, srv.Call().KeyArgument)
				assert.Empty(t, srv.Call().KeyMeta)
			},
		},
		{
			reason: `count "" reads a bare number or array`,
			spec:   withOracle(`http: {url: "http://127.0.0.1:9/c/{{.Marker}}", count: ""}`),
			check: func(t *testing.T, s *Spec) {
				assert.Equal(t, "", harness.UnwrapOracle(s.Tools[0].HTTP.Oracle).(*harness.HTTPOracle).Pointer.String())
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			s, err := Parse("spec.yaml", []byte(tt.spec))
			require.NoError(t, err, tt.reason)
			assert.Equal(t, "spec.yaml", s.Path)
			tt.check(t, s)
		})
	}
}

func TestParseSpecErrors(t *testing.T) {
	tests := []struct {
		reason string
		spec   string
		// want is the first error's exact "FILE:LINE: field" prefix.
		want string
		// msg is part of the first error's message.
		msg string
	}{
		// YAML itself.
		{"a YAML syntax error is located at its line", spec("  - name: t", "    http: {url: x"), "spec.yaml:4", "bad YAML: did not find expected ',' or '}'"},
		{"a scanner error is located at its line", doc("version: 1", "tools: a: b"), "spec.yaml:2", "bad YAML: mapping values are not allowed"},
		{"tabs get a hint", doc("version: 1", "tools:", "\t- name: t"), "spec.yaml:3", "tabs are not allowed"},
		{"an unknown anchor is located where it is used", spec("  - *nope"), "spec.yaml:3", "unknown anchor 'nope' referenced"},
		{"a file holds one document", doc("version: 1", "tools: []", "---", "version: 1"), "spec.yaml:3", "a second YAML document"},
		{"an empty file is an error", "", "spec.yaml:1", "empty spec"},
		{"a comment-only file is an error", "# nothing\n", "spec.yaml:1", "empty spec"},

		// Top level.
		{"the root must be a mapping", doc("- version: 1"), "spec.yaml:1", "want a mapping with version: 1 and tools, got a list"},
		{"version is required", doc("tools: []"), "spec.yaml:1: version", "missing: want version: 1"},
		{"version must be 1", doc("version: 2", "tools: []"), "spec.yaml:1: version", "unsupported version 2: this onceproof reads version 1"},
		{"version must be a number", doc(`version: "1"`, "tools: []"), "spec.yaml:1: version", `want 1, got the string "1"`},
		{"unknown top-level field", "defaults: {}\n" + tool("url: http://127.0.0.1:1/x", "body: '{{.Marker}}'"), "spec.yaml:1: defaults", "unknown field (allowed: version, tools)"},
		{"tools is required", doc("version: 1"), "spec.yaml:1: tools", "missing: want a list of tools"},
		{"tools must not be empty", doc("version: 1", "tools: []"), "spec.yaml:2: tools", "empty: want at least one tool"},
		{"tools must be a list", doc("version: 1", "tools:", "  t: {}"), "spec.yaml:2: tools", "want a list of tools, got a mapping"},
		{"a tool must be a mapping", spec("  - create-ticket"), "spec.yaml:3: tools[0]", `want a mapping, got the string "create-ticket"`},
		{"duplicate keys are errors", doc("version: 1", "version: 1", "tools: []"), "spec.yaml:2: version", "duplicate key (first at line 1)"},

		// Tool entries.
		{"name is required", spec("  - http: {url: 'http://127.0.0.1:1/x', body: '{{.Marker}}'}", okOracle[0], okOracle[1]), "spec.yaml:3: tools[0].name", "missing: want a tool name"},
		{"name must not be empty", spec(`  - name: ""`, "    http: {url: 'http://127.0.0.1:1/x', body: '{{.Marker}}'}", okOracle[0], okOracle[1]), "spec.yaml:3: tools[0].name", "empty"},
		{"name is letters, digits, -, _ and .", spec(`  - name: "a b"`, "    http: {url: 'http://127.0.0.1:1/x', body: '{{.Marker}}'}", okOracle[0], okOracle[1]), "spec.yaml:3: tools[0].name", `bad tool name "a b"`},
		{"name must be a string", spec("  - name: [a]", "    http: {url: 'http://127.0.0.1:1/x', body: '{{.Marker}}'}", okOracle[0], okOracle[1]), "spec.yaml:3: tools[0].name", "want a string, got a list"},
		{"an unknown tool field (a future transport) lists the allowed fields", spec("  - name: t", "    grpc: {}", "    http: {url: 'http://127.0.0.1:1/x', body: '{{.Marker}}'}", okOracle[0], okOracle[1]), "spec.yaml:4: tools[0].grpc", "unknown field (allowed: name, http, mcp, container, downstream, result_id, oracle, profile, codes, retention, volatile, replay_headers, replayed_header, lookup, long_running)"},
		{"a transport section is required", spec("  - name: t", okOracle[0], okOracle[1]), "spec.yaml:3: tools[0]", "no transport section: want exactly one of: http"},
		{"an oracle is required", spec("  - name: t", "    http: {url: 'http://127.0.0.1:1/x', body: '{{.Marker}}'}"), "spec.yaml:3: tools[0].oracle", "missing: want an oracle"},
		{"duplicate tool names", spec(
			"  - name: t", "    http: {url: 'http://127.0.0.1:1/x', body: '{{.Marker}}'}", okOracle[0], okOracle[1],
			"  - name: t", "    http: {url: 'http://127.0.0.1:1/x', body: '{{.Marker}}'}", okOracle[0], okOracle[1],
		), "spec.yaml:7: tools[1].name", `duplicate tool name "t" (first at line 3)`},
		{"bad result_id pointer", spec("  - name: t", "    http: {url: 'http://127.0.0.1:1/x', body: '{{.Marker}}'}", "    result_id: id", okOracle[0], okOracle[1]), "spec.yaml:5: tools[0].result_id", `JSON pointer "id" must start with "/"`},

		// The http section.
		{"http must be a mapping", spec("  - name: t", "    http: [url]", okOracle[0], okOracle[1]), "spec.yaml:4: tools[0].http", "want a mapping, got a list"},
		{"unknown http field", tool("url: http://127.0.0.1:1/x", "body: '{{.Marker}}'", "retries: 3"), "spec.yaml:7: tools[0].http.retries", "unknown field (allowed: url, method, headers, body, key_header, key_format, timeout, error_body)"},
		{"a misspelt field gets a suggestion", tool("url: http://127.0.0.1:1/x", "body: '{{.Marker}}'", "key-header: X-Key"), "spec.yaml:7: tools[0].http.key-header", "unknown field; did you mean key_header? (allowed: "},
		{"a misspelt field gets a suggestion (typo)", tool("url: http://127.0.0.1:1/x", "body: '{{.Marker}}'", "timout: 1s"), "spec.yaml:7: tools[0].http.timout", "did you mean timeout?"},
		{"key_header cannot be a header the harness writes", tool("url: http://127.0.0.1:1/x", "key_header: content-length", "body: '{{.Marker}}'"), "spec.yaml:6: tools[0].http.key_header", "Content-Length is set by the harness"},
		{"duplicate http key", tool("url: http://127.0.0.1:1/x", "body: '{{.Marker}}'", "url: http://127.0.0.1:2/x"), "spec.yaml:7: tools[0].http.url", "duplicate key (first at line 5)"},
		{"url is required (located at its section)", tool("body: '{{.Marker}}'"), "spec.yaml:4: tools[0].http.url", "missing"},
		{"url must be http or https", tool("url: ftp://127.0.0.1/x", "body: '{{.Marker}}'"), "spec.yaml:5: tools[0].http.url", `bad URL "ftp://127.0.0.1/x": want http://host:port/path`},
		{"url needs a host", tool("url: http:///x", "body: '{{.Marker}}'"), "spec.yaml:5: tools[0].http.url", "no host"},
		{"url must parse", tool("url: 'http://127.0.0.1:99999/x'", "body: '{{.Marker}}'"), "spec.yaml:5: tools[0].http.url", "bad URL"},
		{"url is not a template", tool("url: 'http://127.0.0.1:1/x/{{.Marker}}'", "body: '{{.Marker}}'"), "spec.yaml:5: tools[0].http.url", "not a template"},
		{"url credentials are refused", tool("url: 'http://u:p@127.0.0.1:1/x'", "body: '{{.Marker}}'"), "spec.yaml:5: tools[0].http.url", "use an Authorization header"},
		{"method must be a token", tool("url: http://127.0.0.1:1/x", "method: 'PO ST'", "body: '{{.Marker}}'"), "spec.yaml:6: tools[0].http.method", `bad method "PO ST"`},
		{"method is case-sensitive", tool("url: http://127.0.0.1:1/x", "method: post", "body: '{{.Marker}}'"), "spec.yaml:6: tools[0].http.method", "case-sensitive, want POST"},
		{"headers must be a mapping", tool("url: http://127.0.0.1:1/x", "headers: [a]", "body: '{{.Marker}}'"), "spec.yaml:6: tools[0].http.headers", "want a mapping, got a list"},
		{"a header value must be a string", tool("url: http://127.0.0.1:1/x", "headers: {X-A: {b: c}}", "body: '{{.Marker}}'"), "spec.yaml:6: tools[0].http.headers.X-A", "want a string, got a mapping"},
		{"a header the harness writes is refused", tool("url: http://127.0.0.1:1/x", "headers: {content-length: '3'}", "body: '{{.Marker}}'"), "spec.yaml:6: tools[0].http.headers.content-length", "Content-Length is set by the harness"},
		{"a header repeating the key header is refused", tool("url: http://127.0.0.1:1/x", "headers: {idempotency-key: x}", "body: '{{.Marker}}'"), "spec.yaml:6: tools[0].http.headers.idempotency-key", "duplicates key_header Idempotency-Key"},
		{"header names differing in case only", tool("url: http://127.0.0.1:1/x", "headers: {X-A: a, x-a: b}", "body: '{{.Marker}}'"), "spec.yaml:6: tools[0].http.headers.x-a", "duplicate header (same as X-A at line 6)"},
		{"a bad header name is refused", tool("url: http://127.0.0.1:1/x", "headers: {'X A': a}", "body: '{{.Marker}}'"), `spec.yaml:6: tools[0].http.headers["X A"]`, `bad header name "X A"`},
		{"header template parse error", tool("url: http://127.0.0.1:1/x", "headers: {X-A: '{{.Marker'}", "body: '{{.Marker}}'"), "spec.yaml:6: tools[0].http.headers.X-A", "template: header X-A:1: "},
		{"header template execution error", tool("url: http://127.0.0.1:1/x", "headers: {X-A: '{{.Nope}}'}", "body: '{{.Marker}}'"), "spec.yaml:6: tools[0].http.headers.X-A", "can't evaluate field Nope"},
		{"body must be a string", tool("url: http://127.0.0.1:1/x", `body: {"m": 1}`), "spec.yaml:6: tools[0].http.body", "want a string, got a mapping"},
		{"body null is not an empty body", tool("url: http://127.0.0.1:1/x", `body:`), "spec.yaml:6: tools[0].http.body", "want a string, got null"},
		{"body template parse error", tool("url: http://127.0.0.1:1/x", `body: '{{.Marker}'`), "spec.yaml:6: tools[0].http.body", "template: body:1: "},
		{"body template execution error", tool("url: http://127.0.0.1:1/x", `body: '{{.Marker}} {{.Int 9 1}}'`), "spec.yaml:6: tools[0].http.body", "Int 9 1: hi is below lo"},
		{"a JSON content type needs a JSON body", tool("url: http://127.0.0.1:1/x", "headers: {Content-Type: application/json}", `body: '{"m": {{.Marker}}}'`), "spec.yaml:7: tools[0].http.body", "Content-Type is application/json but the rendered body is not JSON"},
		{"the marker must reach the request (NewHTTPTool's check, located)", tool("url: http://127.0.0.1:1/x", `body: '{"a":1}'`), "spec.yaml:6: tools[0].http.body", "never uses {{.Marker}}"},
		{"the marker must reach the request even without a body", tool("url: http://127.0.0.1:1/x", "method: DELETE"), "spec.yaml:4: tools[0].http.body", "never uses {{.Marker}}"},
		{`key_header: "" needs {{.Key}} in the body`, tool("url: http://127.0.0.1:1/x", `key_header: ""`, "body: '{{.Marker}}'"), "spec.yaml:6: tools[0].http.key_header", "the body never uses {{.Key}}"},
		{"key_header null is refused with a hint", tool("url: http://127.0.0.1:1/x", "key_header:", "body: '{{.Marker}}'"), "spec.yaml:6: tools[0].http.key_header", `write key_header: ""`},
		{"bad key_format", tool("url: http://127.0.0.1:1/x", "key_format: ulid", "body: '{{.Marker}}'"), "spec.yaml:6: tools[0].http.key_format", `key format "ulid": want uuid or hex`},
		{"bad timeout", tool("url: http://127.0.0.1:1/x", "body: '{{.Marker}}'", "timeout: 2x"), "spec.yaml:7: tools[0].http.timeout", `bad duration "2x": time: unknown unit "x" in duration "2x"`},
		{"a timeout needs a unit", tool("url: http://127.0.0.1:1/x", "body: '{{.Marker}}'", "timeout: 2"), "spec.yaml:7: tools[0].http.timeout", `bad duration "2": time: missing unit in duration "2"`},
		{"a zero timeout is refused", tool("url: http://127.0.0.1:1/x", "body: '{{.Marker}}'", "timeout: 0s"), "spec.yaml:7: tools[0].http.timeout", `bad duration "0s": must be positive`},
		{"a negative timeout is refused", tool("url: http://127.0.0.1:1/x", "body: '{{.Marker}}'", "timeout: -1s"), "spec.yaml:7: tools[0].http.timeout", `bad duration "-1s": must not be negative`},

		// The oracle.
		{"oracle must be a mapping", spec("  - name: t", "    http: {url: 'http://127.0.0.1:1/x', body: '{{.Marker}}'}", "    oracle: http://x"), "spec.yaml:5: tools[0].oracle", `want a mapping, got the string "http://x"`},
		{"an unknown oracle field", withOracle("command: [echo, '1']", "mongo: {}"), "spec.yaml:9: tools[0].oracle.mongo", "unknown field (allowed: http, command, sql, redis, timeout, settle)"},
		{"an oracle needs http or command", withOracle("settle: 1s"), "spec.yaml:7: tools[0].oracle", "want exactly one of http (a count endpoint), command (a program printing the count), sql"},
		{"an oracle is http or command, not both", withOracle("http: {url: 'http://127.0.0.1:1/{{.Marker}}', count: /n}", "command: [echo, '1']"), "spec.yaml:9: tools[0].oracle.command", "an oracle is one of http, command, sql, redis; this one is already http (line 8)"},
		{"unknown oracle.http field", withOracle("http: {url: 'http://127.0.0.1:1/{{.Marker}}', count: /n, method: GET}"), "spec.yaml:8: tools[0].oracle.http.method", "unknown field (allowed: url, count, headers)"},
		{"oracle.http.url is required", withOracle("http: {count: /n}"), "spec.yaml:8: tools[0].oracle.http.url", "missing"},
		{"oracle.http.count is required", withOracle("http: {url: 'http://127.0.0.1:1/{{.Marker}}'}"), "spec.yaml:8: tools[0].oracle.http.count", "missing"},
		{"bad oracle count pointer", withOracle("http:", "  url: 'http://127.0.0.1:1/{{.Marker}}'", "  count: /a~2"), "spec.yaml:10: tools[0].oracle.http.count", `JSON pointer "/a~2": bad escape`},
		{"oracle url template parse error", withOracle("http:", "  url: 'http://127.0.0.1:1/{{.Marker'", "  count: /n"), "spec.yaml:9: tools[0].oracle.http.url", "template: oracle.http.url:1: "},
		{"oracle url template execution error", withOracle("http:", "  url: 'http://127.0.0.1:1/{{.Marker}}/{{.Pick}}'", "  count: /n"), "spec.yaml:9: tools[0].oracle.http.url", "Pick needs at least one choice"},
		{"oracle url must use the marker", withOracle("http:", "  url: 'http://127.0.0.1:1/count'", "  count: /n"), "spec.yaml:9: tools[0].oracle.http.url", "never uses {{.Marker}}"},
		{"oracle url must be http", withOracle("http:", "  url: 'ftp://127.0.0.1/{{.Marker}}'", "  count: /n"), "spec.yaml:9: tools[0].oracle.http.url", `rendered bad URL "ftp://127.0.0.1/marker-check"`},
		{"oracle headers are not templates", withOracle("http:", "  url: 'http://127.0.0.1:1/{{.Marker}}'", "  count: /n", "  headers: {X-M: '{{.Marker}}'}"), "spec.yaml:11: tools[0].oracle.http.headers.X-M", "not rendered as templates"},
		{"command must be a list", withOracle("command: echo 1"), "spec.yaml:8: tools[0].oracle.command", `want a list of strings (argv), e.g. [sh, -c, "psql -tAc ..."], got the string "echo 1"`},
		{"command must not be empty", withOracle("command: []"), "spec.yaml:8: tools[0].oracle.command", "empty"},
		{"command items are strings", withOracle("command:", "  - echo", "  - [1]"), "spec.yaml:10: tools[0].oracle.command[1]", "want a string, got a list"},
		{"bad oracle timeout", withOracle("command: [echo, '1']", "timeout: soon"), "spec.yaml:9: tools[0].oracle.timeout", `bad duration "soon"`},
		{"a negative settle is refused", withOracle("command: [echo, '1']", "settle: -5ms"), "spec.yaml:9: tools[0].oracle.settle", `bad duration "-5ms": must not be negative`},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			s, err := Parse("spec.yaml", []byte(tt.spec))
			require.Error(t, err, tt.reason)
			assert.Nil(t, s)
			assert.ErrorIs(t, err, ErrSpec)
			first := strings.SplitN(err.Error(), "\n", 2)[0]
			assert.True(t, strings.HasPrefix(first, tt.want+": "), "%s\nwant prefix %q\ngot         %q", tt.reason, tt.want, first)
			assert.Contains(t, first, tt.msg, tt.reason)
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "spec.yaml", se.File)
			assert.NotZero(t, se.Line, "every error has a line")
		})
	}
}

func TestParseSpecReportsEveryError(t *testing.T) {
	_, err := Parse("spec.yaml", []byte(tool(
		"url: ftp://x",
		"timeout: 2x",
		"body: '{{.Marker}'",
		"bogus: 1",
	)))
	require.Error(t, err)
	assert.Equal(t, strings.Join([]string{
		`spec.yaml:5: tools[0].http.url: bad URL "ftp://x": want http://host:port/path (scheme http or https)`,
		`spec.yaml:6: tools[0].http.timeout: bad duration "2x": time: unknown unit "x" in duration "2x"`,
		`spec.yaml:7: tools[0].http.body: template: body:1: bad character U+007D '}'`,
		`spec.yaml:8: tools[0].http.bogus: unknown field (allowed: url, method, headers, body, key_header, key_format, timeout, error_body)`,
	}, "\n"), err.Error())
	var errs interface{ Unwrap() []error }
	require.ErrorAs(t, err, &errs)
	for _, e := range errs.Unwrap() {
		assert.ErrorIs(t, e, ErrSpec)
		assert.IsType(t, &Error{}, e)
	}
}

func TestLoadSpec(t *testing.T) {
	t.Run("a readable file is parsed and named by its path", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "tools.yaml")
		require.NoError(t, os.WriteFile(path, []byte(fullSpec), 0o600))
		s, err := Load(path)
		require.NoError(t, err)
		assert.Equal(t, path, s.Path)
		assert.Len(t, s.Tools, 2)
	})
	t.Run("content errors name the path", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "tools.yaml")
		require.NoError(t, os.WriteFile(path, []byte("version: 3\ntools: []\n"), 0o600))
		_, err := Load(path)
		require.ErrorIs(t, err, ErrSpec)
		assert.Equal(t, path+":1: version: unsupported version 3: this onceproof reads version 1", err.Error())
	})
	t.Run("an unreadable file is a plain error, not ErrSpec", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "missing.yaml")
		_, err := Load(path)
		require.Error(t, err)
		assert.ErrorIs(t, err, fs.ErrNotExist)
		assert.NotErrorIs(t, err, ErrSpec)
		assert.True(t, strings.HasPrefix(err.Error(), "spec "+path+": "), err.Error())
	})
	t.Run("a directory is a plain error", func(t *testing.T) {
		_, err := Load(t.TempDir())
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrSpec)
	})
}

func TestSpecFind(t *testing.T) {
	s, err := Parse("tools.yaml", []byte(fullSpec))
	require.NoError(t, err)
	ts, err := s.Find("refund.v2")
	require.NoError(t, err)
	assert.Equal(t, "refund.v2", ts.Name)
	_, err = s.Find("nope")
	require.ErrorIs(t, err, ErrSpec)
	assert.Equal(t, `spec error: tools.yaml: no tool named "nope" (the spec has: create-ticket, refund.v2)`, err.Error())
}

func TestSpecError(t *testing.T) {
	tests := []struct {
		reason string
		err    Error
		want   string
	}{
		{"all parts", Error{File: "tool.yaml", Line: 7, Field: "tools[0].http.timeout", Msg: "bad"}, "tool.yaml:7: tools[0].http.timeout: bad"},
		{"no field", Error{File: "tool.yaml", Line: 2, Msg: "bad YAML"}, "tool.yaml:2: bad YAML"},
		{"no line", Error{File: "tool.yaml", Msg: "too big"}, "tool.yaml: too big"},
		{"no file", Error{Line: 3, Field: "name", Msg: "empty"}, "line 3: name: empty"},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.err.Error())
			assert.ErrorIs(t, &tt.err, ErrSpec)
		})
	}
	e := &Error{File: "f", Line: 1, Field: "x", Msg: "m", Kind: harness.ErrRemoteTarget}
	assert.ErrorIs(t, e, harness.ErrRemoteTarget)
	assert.NotErrorIs(t, e, ErrSpec)
}

func TestToolErrorIsLocated(t *testing.T) {
	s, err := Parse("spec.yaml", []byte(fullSpec))
	require.NoError(t, err)
	ts := s.Tools[0]
	ts.Common.Oracle = nil // a caller's mistake: NewHTTPTool refuses it
	err = ts.Check()
	var se *Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "spec.yaml", se.File)
	assert.Equal(t, 13, se.Line)
	assert.Equal(t, "tools[0].oracle", se.Field)
	assert.ErrorIs(t, err, ErrSpec)
}

// TestSpecGolden loads every testdata/spec/*.yaml and compares the errors
// (or, for a valid spec, a summary of its tools) with the .golden file next
// to it. Run with -update to rewrite the golden files.
func TestSpecGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/spec/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			file = filepath.ToSlash(file)
			var got string
			s, err := Load(file)
			if err != nil {
				assert.ErrorIs(t, err, ErrSpec)
				got = err.Error() + "\n"
			} else {
				got = summarize(s)
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test -run TestSpecGolden -update to create it")
			assert.Equal(t, string(want), got)
		})
	}
}

// summarize describes a valid spec for its golden file.
func summarize(s *Spec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version %d, %d tools\n", s.Version, len(s.Tools))
	for _, t := range s.Tools {
		c := t.HTTP
		fmt.Fprintf(&b, "tool %s (line %d)\n", t.Name, t.Line)
		fmt.Fprintf(&b, "  %s %s\n", c.Method, c.URL)
		keys := make([]string, 0, len(c.Headers))
		for k := range c.Headers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  header %s: %s\n", k, c.Headers[k])
		}
		fmt.Fprintf(&b, "  body %q\n", c.Body)
		fmt.Fprintf(&b, "  key header %q, key format %s, timeout %s, result id %q\n", *c.KeyHeader, c.KeyFormat, c.Timeout, c.ResultID)
		fmt.Fprintf(&b, "  oracle %s\n", c.Oracle)
		if k := c.Contract; k.Profile != "" || k.Retention > 0 || k.Volatile != nil || k.ReplayHeaders != nil || k.ReplayedHeader != "" {
			fmt.Fprintf(&b, "  contract %+v\n", k)
			r, err := k.Resolve()
			if err != nil {
				fmt.Fprintf(&b, "  resolve: %v\n", err)
			} else {
				fmt.Fprintf(&b, "  %s; replay headers %v\n", r.Summary(), r.ReplayHeaders)
			}
		}
		if c.ErrorBody != "" {
			fmt.Fprintf(&b, "  error body %q\n", c.ErrorBody)
		}
		if l := c.Lookup; l != nil {
			fmt.Fprintf(&b, "  lookup %s %s headers %v found %v not found %v result id %q\n", l.Method, l.URL, l.Headers, l.Found, l.NotFound, l.ResultID)
		}
		if l := c.LongRunning; l != nil {
			fmt.Fprintf(&b, "  long-running: status %s %s headers %v, operation id %q header %q, state %s done %v failed %v, within %s\n",
				l.StatusMethod, l.StatusURL, l.StatusHeaders, l.OperationID, l.OperationIDHeader, l.State, l.Done, l.Failed, l.FinishWithin)
		}
	}
	return b.String()
}

// TestSpecErrorsAreFoundQuickly: locating a syntax error re-parses
// prefixes of the file, and a template is executed at load time; neither may
// turn a large or hostile spec into a long wait.
func TestSpecErrorsAreFoundQuickly(t *testing.T) {
	for _, tc := range []struct {
		reason string
		src    string
		msg    string
	}{
		{"an error at the end of a long file", strings.Repeat("a: b\n", 20000) + "\t:", "spec.yaml:20001: bad YAML"},
		{"many quoted values left open", "version: 1\ntools:\n" + strings.Repeat("  - 'abc\n", 20000), "spec.yaml:3: bad YAML"},
		{"deep nesting", "version: 1\ntools: " + strings.Repeat("{a: ", 5000), "spec.yaml:2: bad YAML"},
		{"a loop in a template", spec("  - name: t", "    http: {url: 'http://127.0.0.1:1/x', body: '{{range 2000000000}}{{end}}{{.Marker}}'}", okOracle[0], okOracle[1]), "range is not allowed"},
		{"a template that renders without end", spec("  - name: t", `    http: {url: 'http://127.0.0.1:1/x', body: '{{.Marker}}{{printf "%0999999d" 1}}{{printf "%0999999d" 2}}'}`, okOracle[0], okOracle[1]), "renders more than 1048576 bytes"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			start := time.Now()
			_, err := Parse("spec.yaml", []byte(tc.src))
			require.ErrorContains(t, err, tc.msg)
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
}
