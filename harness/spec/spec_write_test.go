package spec

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/harness"
)

func strPtr(s string) *string { return &s }

// countOracle is the fixture's count endpoint as an oracle draft.
var countOracle = OracleDraft{HTTP: &OracleHTTPDraft{URL: "http://127.0.0.1:8080/count?marker={{.Marker}}", Count: "/count"}}

// TestWriteSpecRoundTrip writes drafts and reads them back with Parse:
// every value arrives as written, whatever YAML would make of it unquoted.
func TestWriteSpecRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		reason string
		tool   ToolDraft
		check  func(t *testing.T, ts Tool)
	}{
		{
			reason: "an http tool with every field set",
			tool: ToolDraft{
				Name: "create-ticket", Comment: []string{"createTicket: POST /tickets", "", "a write"},
				HTTP: &HTTPDraft{
					URL: "http://127.0.0.1:8080/v1/tickets?mode=x&y=1", Method: "PUT",
					Headers:   []Header{{"Content-Type", "application/json"}, {"X-Trace", "# not a comment {{.Op}}"}, {"!Odd", "yes"}},
					Body:      `{"subject":"it's {{.Marker}}","n":{{.Int 1 5}},"s":"a: b #c"}`,
					KeyHeader: strPtr("X-Idempotency-Key"), KeyFormat: harness.KeyHex, Timeout: 1500 * time.Millisecond,
				},
				ResultID: "/data/id",
				Oracle:   OracleDraft{HTTP: countOracle.HTTP, Settle: 100 * time.Millisecond},
				Notes: map[string]Note{
					"http.url": {Guessed: true, Text: "the first server\nvariables at their defaults"}, "http.body": {Text: "required fields only"},
					"http.headers.X-Trace": {Text: "a header note"}, "result_id": {Guessed: true, Text: "the 201 response's id"}, "oracle": {Text: "the fixture's count"},
				},
				Optional: []OptionalField{{Path: "oracle.timeout", Value: "5s", Note: "the count endpoint is slow"}},
			},
			check: func(t *testing.T, ts Tool) {
				c := ts.HTTP
				assert.Equal(t, "http://127.0.0.1:8080/v1/tickets?mode=x&y=1", c.URL)
				assert.Equal(t, "PUT", c.Method)
				assert.Equal(t, map[string]string{"Content-Type": "application/json", "X-Trace": "# not a comment {{.Op}}", "!Odd": "yes"}, c.Headers)
				assert.Equal(t, `{"subject":"it's {{.Marker}}","n":{{.Int 1 5}},"s":"a: b #c"}`, c.Body)
				assert.Equal(t, "X-Idempotency-Key", *c.KeyHeader)
				assert.Equal(t, harness.KeyHex, c.KeyFormat)
				assert.Equal(t, 1500*time.Millisecond, c.Timeout)
				assert.Equal(t, "/data/id", c.ResultID)
				assert.Contains(t, c.Oracle.String(), "count?marker=")
			},
		},
		{
			reason: "defaults are left to the loader; key_header \"\" sends the key in the body",
			tool: ToolDraft{
				Name:     "t.2",
				HTTP:     &HTTPDraft{URL: "http://127.0.0.1:1/x", Body: "key={{.Key}}&memo={{.Marker}}", KeyHeader: strPtr("")},
				Oracle:   OracleDraft{Command: []string{"sh", "-c", "echo 1 # {{.Marker}}", "it's", "[x]"}},
				Optional: []OptionalField{{Path: "http.timeout", Value: "2s", Note: "the caller's deadline"}, {Path: "result_id", Value: "/id"}},
			},
			check: func(t *testing.T, ts Tool) {
				assert.Equal(t, "POST", ts.HTTP.Method)
				assert.Equal(t, "", *ts.HTTP.KeyHeader)
				assert.Equal(t, 2*time.Second, ts.HTTP.Timeout)
				assert.Equal(t, "", ts.HTTP.ResultID, "an optional field is only a comment")
				co, ok := ts.HTTP.Oracle.(*harness.CommandOracle)
				require.True(t, ok, "%T", ts.HTTP.Oracle)
				assert.Equal(t, []string{"sh", "-c", "echo 1 # {{.Marker}}", "it's", "[x]"}, co.Argv)
			},
		},
		{
			reason: "an mcp tool",
			tool: ToolDraft{
				Name:     "send_notice",
				MCP:      &MCPDraft{URL: "http://127.0.0.1:8090/mcp", Tool: "send notice", Arguments: `{"text":"{{.Marker}}","n":{{.Int 1 100}}}`, KeyMeta: "idempotency-key", Timeout: 300 * time.Millisecond},
				ResultID: "/id", Oracle: countOracle,
				Notes: map[string]Note{"mcp.key_meta": {Guessed: true, Text: "no key argument"}},
			},
			check: func(t *testing.T, ts Tool) {
				srv, ok := ts.MCPServer()
				require.True(t, ok)
				call := srv.Call()
				assert.Equal(t, "send notice", call.Tool)
				assert.Equal(t, `{"text":"{{.Marker}}","n":{{.Int 1 100}}}`, call.Arguments)
				assert.Equal(t, "idempotency-key", call.KeyMeta)
				assert.Equal(t, 300*time.Millisecond, call.Timeout)
			},
		},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, Write(&b, Draft{Comment: []string{"written by a test", "line two"}, Tools: []ToolDraft{tc.tool}}))
			s, err := Parse("draft.yaml", b.Bytes())
			require.NoError(t, err, "%s\n%s", tc.reason, b.String())
			require.Len(t, s.Tools, 1)
			assert.Equal(t, tc.tool.Name, s.Tools[0].Name)
			tc.check(t, s.Tools[0])
		})
	}
}

// TestWriteSpecPlaceholder: a draft without an oracle is refused by the
// loader at the placeholder's line, and loads once the line is replaced.
func TestWriteSpecPlaceholder(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Write(&b, Draft{Tools: []ToolDraft{{
		Name:     "create",
		HTTP:     &HTTPDraft{URL: "http://127.0.0.1:8080/tickets", Body: `{"subject":"{{.Marker}}"}`},
		Notes:    map[string]Note{"oracle": {Text: "TODO: count this tool's effects"}},
		Optional: []OptionalField{{Path: "oracle.settle", Value: "2s", Note: "a long-running job"}},
	}}}))
	text := b.String()
	line := strings.Count(text[:strings.Index(text, "oracle: "+OraclePlaceholder)], "\n") + 1
	_, err := Parse("draft.yaml", b.Bytes())
	var se *Error
	require.ErrorAs(t, err, &se, text)
	assert.Equal(t, line, se.Line)
	assert.Equal(t, "tools[0].oracle", se.Field)
	assert.Contains(t, se.Msg, "placeholder")
	assert.ErrorIs(t, err, ErrSpec)

	filled := strings.Replace(text, "oracle: "+OraclePlaceholder, "oracle:\n      http: {url: \"http://127.0.0.1:8080/count?marker={{.Marker}}\", count: /count}", 1)
	_, err = Parse("draft.yaml", []byte(filled))
	require.NoError(t, err, filled)
}

func TestWriteSpecRefusesBadDrafts(t *testing.T) {
	good := ToolDraft{Name: "a", HTTP: &HTTPDraft{URL: "http://127.0.0.1:1/"}}
	for _, tc := range []struct {
		reason string
		draft  Draft
		want   string
	}{
		{"no tools", Draft{}, "no tools"},
		{"a bad name", Draft{Tools: []ToolDraft{{Name: "a b", HTTP: good.HTTP}}}, "bad tool name"},
		{"a duplicate name", Draft{Tools: []ToolDraft{good, good}}, "duplicate"},
		{"no transport", Draft{Tools: []ToolDraft{{Name: "a"}}}, "exactly one"},
		{"two transports", Draft{Tools: []ToolDraft{{Name: "a", HTTP: good.HTTP, MCP: &MCPDraft{}}}}, "exactly one"},
		{"two oracle kinds", Draft{Tools: []ToolDraft{{Name: "a", HTTP: good.HTTP, Oracle: OracleDraft{HTTP: countOracle.HTTP, Command: []string{"x"}}}}}, "not both"},
		{"an optional field of a missing section", Draft{Tools: []ToolDraft{{Name: "a", HTTP: good.HTTP, Optional: []OptionalField{{Path: "mcp.timeout", Value: "1s"}}}}}, "no mcp section"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			var b bytes.Buffer
			err := Write(&b, tc.draft)
			require.ErrorIs(t, err, ErrDraft, tc.reason)
			assert.Contains(t, err.Error(), tc.want, tc.reason)
			assert.Zero(t, b.Len(), "nothing is written")
		})
	}
}

// TestYAMLScalar: every string reads back as itself, and the plain spelling
// is used only where YAML reads a string.
func TestYAMLScalar(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		reason   string
		flow     string // the flow spelling when it differs
	}{
		{"Idempotency-Key", "Idempotency-Key", "a header name stays plain", ""},
		{"http://127.0.0.1:8080/a?b=c&d=e", "http://127.0.0.1:8080/a?b=c&d=e", "a URL stays plain", "'http://127.0.0.1:8080/a?b=c&d=e'"},
		{"/id", "/id", "a pointer stays plain", ""},
		{"", "''", "the empty string", ""},
		{"yes", "'yes'", "a YAML 1.1 boolean", ""},
		{"true", "'true'", "a boolean", ""},
		{"null", "'null'", "null", ""},
		{"~", "'~'", "the null tilde", ""},
		{"1e3", "'1e3'", "a float", ""},
		{"0x1F", "'0x1F'", "a hex integer", ""},
		{"2s", "2s", "a duration is a string", ""},
		{"a:", "'a:'", "a trailing colon", ""},
		{"a: b", "'a: b'", "a colon and a space", ""},
		{"x #y", "'x #y'", "a comment sign", ""},
		{"-c", "'-c'", "a leading dash", ""},
		{"it's", "'it''s'", "a single quote", ""},
		{"{{.Marker}}", "'{{.Marker}}'", "a template", ""},
		{"line\nbreak", `"line\nbreak"`, "a line break", ""},
		{"tab\there", `"tab\there"`, "a tab", ""},
		{"bell\x07", `"bell\u0007"`, "a control character", ""},
		{"ünïcode <&>", "'ünïcode <&>'", "non-ASCII and HTML characters", ""},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			got, flow := yamlScalar(tc.in), yamlFlowScalar(tc.in)
			assert.Equal(t, tc.want, got, tc.reason)
			if tc.flow == "" {
				tc.flow = tc.want
			}
			assert.Equal(t, tc.flow, flow, tc.reason)
			for _, doc := range []string{"v: " + got, "v: [" + flow + "]"} {
				var v struct{ V any }
				require.NoError(t, yaml.Unmarshal([]byte(doc), &v), doc)
				if l, ok := v.V.([]any); ok {
					require.Len(t, l, 1, doc)
					v.V = l[0]
				}
				assert.Equal(t, tc.in, v.V, "%s reads back: %s", tc.reason, doc)
			}
		})
	}
}

// ExampleWriteSpec writes a starter spec for one HTTP tool whose oracle is
// left for the user.
func ExampleWrite() {
	key := "Idempotency-Key"
	err := Write(os.Stdout, Draft{
		Comment: []string{"Starter spec: fill in the oracle."},
		Tools: []ToolDraft{{
			Name:    "createTicket",
			Comment: []string{"createTicket — POST /tickets: write"},
			HTTP: &HTTPDraft{
				URL: "http://127.0.0.1:8080/tickets", Method: "POST",
				Headers:   []Header{{"Content-Type", "application/json"}},
				Body:      `{"subject":"onceproof {{.Marker}}"}`,
				KeyHeader: &key,
			},
			ResultID: "/id",
			Notes: map[string]Note{
				"http.body": {Guessed: true, Text: `the required fields; the marker in "subject"`},
				"result_id": {Guessed: true, Text: `"id" of the 201 response`},
				"oracle":    {Text: "TODO: count this tool's effects for {{.Marker}}"},
			},
			Optional: []OptionalField{{Path: "http.timeout", Value: "2s", Note: "the caller's deadline per attempt"}},
		}},
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// # Starter spec: fill in the oracle.
	// version: 1
	// tools:
	//   # createTicket — POST /tickets: write
	//   - name: createTicket
	//     http:
	//       url: http://127.0.0.1:8080/tickets
	//       method: POST
	//       headers:
	//         Content-Type: application/json
	//       # guessed: the required fields; the marker in "subject"
	//       body: '{"subject":"onceproof {{.Marker}}"}'
	//       key_header: Idempotency-Key
	//       # timeout: 2s  # the caller's deadline per attempt
	//     # guessed: "id" of the 201 response
	//     result_id: /id
	//     # TODO: count this tool's effects for {{.Marker}}
	//     oracle: FILL-IN
}

// TestContractOptionalsLoad: the contract fields a starter spec writes
// commented out are a valid spec once uncommented, and say what they mean.
func TestContractOptionalsLoad(t *testing.T) {
	for _, tc := range []struct {
		reason string
		http   bool
		opts   []OptionalField
		check  func(t *testing.T, c harness.Contract)
	}{
		{"an http tool, volatile fields found in its response", true,
			ContractOptionals(true, harness.ProfilePayPal, []string{"/created_at", "/request_id"}, "guessed", "X-Replayed"),
			func(t *testing.T, c harness.Contract) {
				assert.Equal(t, harness.ProfilePayPal, c.Profile)
				assert.Equal(t, 24*time.Hour, c.Retention)
				assert.Equal(t, []string{"/created_at", "/request_id"}, c.Volatile)
				assert.Equal(t, "X-Replayed", c.ReplayedHeader)
			}},
		{"an mcp tool: examples, no headers", false, ContractOptionals(false, "", nil, "", ""),
			func(t *testing.T, c harness.Contract) {
				assert.Equal(t, harness.ProfileIETF, c.Profile)
				assert.Equal(t, []string{"/created", "/request_id"}, c.Volatile)
				assert.Empty(t, c.ReplayedHeader)
			}},
	} {
		td := ToolDraft{Name: "t", ResultID: "/id", Oracle: countOracle, Optional: tc.opts}
		if tc.http {
			td.HTTP = &HTTPDraft{URL: "http://127.0.0.1:8080/t", Body: `{"m":"{{.Marker}}"}`}
		} else {
			td.MCP = &MCPDraft{URL: "http://127.0.0.1:8090/mcp", Tool: "t", Arguments: `{"m":"{{.Marker}}"}`, KeyArgument: "key"}
		}
		var b bytes.Buffer
		require.NoError(t, Write(&b, Draft{Tools: []ToolDraft{td}}), tc.reason)
		for _, name := range []string{"profile", "retention", "volatile"} {
			assert.Contains(t, b.String(), "    # "+name+": ", "%s: %s is offered", tc.reason, name)
		}
		text := b.String()
		for _, name := range []string{"profile", "retention", "volatile", "replayed_header"} {
			text = strings.Replace(text, "    # "+name+": ", "    "+name+": ", 1)
		}
		s, err := Parse("draft.yaml", []byte(text))
		require.NoError(t, err, "%s:\n%s", tc.reason, text)
		tc.check(t, s.Tools[0].Common.Contract)
	}
}

// TestLookupOptionalLoads: the lookup a starter spec offers, commented out,
// loads once uncommented, on the tool's own address and by key.
func TestLookupOptionalLoads(t *testing.T) {
	for _, tc := range []struct {
		reason, url, want string
	}{
		{"a plain endpoint", "http://127.0.0.1:8080/tickets", "http://127.0.0.1:8080/tickets/{{.Key}}"},
		{"a query and a trailing slash are left out", "https://localhost:8443/v1/refunds/?x=1", "https://localhost:8443/v1/refunds/{{.Key}}"},
	} {
		td := ToolDraft{Name: "t", Oracle: countOracle, Optional: []OptionalField{LookupOptional(tc.url)},
			HTTP: &HTTPDraft{URL: tc.url, Body: `{"m":"{{.Marker}}"}`}}
		var b bytes.Buffer
		require.NoError(t, Write(&b, Draft{Tools: []ToolDraft{td}}), tc.reason)
		require.Contains(t, b.String(), "    # lookup: ", tc.reason)
		text := strings.Replace(b.String(), "    # lookup: ", "    lookup: ", 1)
		s, err := Parse("draft.yaml", []byte(text))
		require.NoError(t, err, "%s:\n%s", tc.reason, text)
		l := s.Tools[0].HTTP.Lookup
		require.NotNil(t, l, tc.reason)
		assert.Equal(t, tc.want, l.URL, tc.reason)
		assert.Equal(t, []int{200}, l.Found, tc.reason)
		assert.Equal(t, []int{404}, l.NotFound, tc.reason)
	}
}

// TestLongRunningOptionalLoads: the long_running section a starter spec
// writes commented out loads once uncommented, with its status call on the
// tool's host, or following what the answer declares.
func TestLongRunningOptionalLoads(t *testing.T) {
	const toolURL = "http://127.0.0.1:8080/v1/jobs?x=1"
	for _, tc := range []struct {
		reason            string
		header, pointer   string
		url, idHeader, id string
	}{
		{"nothing declared: example values", "", "", "http://127.0.0.1:8080/operations/{{.OperationID}}", "", "/id"},
		{"a Location header", "Location", "", "{{.OperationID}}", "Location", ""},
		{"a status link in the body", "", "/_links/status", "{{.OperationID}}", "", "/_links/status"},
	} {
		td := ToolDraft{Name: "t", ResultID: "/id", Oracle: countOracle,
			HTTP:     &HTTPDraft{URL: toolURL, Body: `{"m":"{{.Marker}}"}`},
			Optional: []OptionalField{LongRunningOptional(toolURL, tc.header, tc.pointer)}}
		var b bytes.Buffer
		require.NoError(t, Write(&b, Draft{Tools: []ToolDraft{td}}), tc.reason)
		text := b.String()
		require.Contains(t, text, "    # long_running: {status: ", "%s: written commented out at the tool's level", tc.reason)
		s, err := Parse("draft.yaml", []byte(text))
		require.NoError(t, err, tc.reason)
		assert.Nil(t, s.Tools[0].HTTP.LongRunning, "%s: commented out, not in effect", tc.reason)

		s, err = Parse("draft.yaml", []byte(strings.Replace(text, "    # long_running: ", "    long_running: ", 1)))
		require.NoError(t, err, "%s:\n%s", tc.reason, text)
		lr := s.Tools[0].HTTP.LongRunning
		require.NotNil(t, lr, tc.reason)
		assert.Equal(t, tc.url, lr.StatusURL, tc.reason)
		assert.Equal(t, tc.idHeader, lr.OperationIDHeader, tc.reason)
		assert.Equal(t, tc.id, lr.OperationID, tc.reason)
		assert.Equal(t, "/status", lr.State, tc.reason)
		assert.Equal(t, []string{"succeeded"}, lr.Done, tc.reason)
		assert.Equal(t, []string{"failed"}, lr.Failed, tc.reason)
	}
}
