package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// OraclePlaceholder is the value [Write] writes for an oracle it cannot
// know. [Parse] refuses it with a message saying what to put there, so a
// spec is never certified before its oracle is filled in.
const OraclePlaceholder = "FILL-IN"

// ErrDraft marks a [Draft] that cannot be written (no tool, a tool
// without a name or with other than one transport section).
var ErrDraft = errors.New("bad spec draft")

// Draft is a spec file to be written by [Write]: the tools of a
// starter spec, with notes saying which values were guessed.
type Draft struct {
	// Comment lines are written at the top of the file ("# " is added).
	Comment []string
	Tools   []ToolDraft
}

// ToolDraft is one tool entry of a [Draft]. Exactly one of HTTP and MCP
// is set.
type ToolDraft struct {
	Name string
	// Comment lines are written above the entry.
	Comment []string
	HTTP    *HTTPDraft
	MCP     *MCPDraft
	// ResultID is a JSON pointer ("" leaves result_id out).
	ResultID string
	// Oracle is written as given; its zero value is [OraclePlaceholder].
	Oracle OracleDraft
	// Notes annotate single fields, keyed by the field's path in the tool:
	// "http.url", "http.headers.Content-Type", "mcp.arguments",
	// "result_id", "oracle". Each is written on the lines above its field,
	// or where the field would be when it is left out.
	Notes map[string]Note
	// Optional fields are written commented out at the end of their
	// section, for the user to enable.
	Optional []OptionalField
}

// Note is a comment on one field of a [ToolDraft].
type Note struct {
	// Guessed marks a value that was inferred rather than read from a
	// source: the comment starts with "guessed:".
	Guessed bool
	// Text says where the value came from or what to check; it may hold
	// several lines.
	Text string
}

// OptionalField is a field written commented out, e.g. "# timeout: 2s".
type OptionalField struct {
	// Path is the field's path in the tool: "http.timeout", "result_id",
	// "oracle.settle". Its section must be written (http, mcp or the tool).
	Path string
	// Value is written as a YAML string, or as written when Raw is set (a
	// flow list such as [/created, /request_id]).
	Value string
	Raw   bool
	// Note, if set, follows the value as a comment.
	Note string
}

// HTTPDraft is the http section of a [ToolDraft]. Empty fields are left
// out, so the loader's defaults apply.
type HTTPDraft struct {
	URL    string
	Method string
	// Headers are written in this order.
	Headers []Header
	Body    string
	// KeyHeader is written when set; a pointer to "" writes key_header: ""
	// (the key travels in the body through {{.Key}}).
	KeyHeader *string
	KeyFormat harness.KeyFormat
	Timeout   time.Duration
}

// Header is one request header of an [HTTPDraft]; Value is a template.
type Header struct {
	Name, Value string
}

// MCPDraft is the mcp section of a [ToolDraft]: a Streamable HTTP
// server's URL or a stdio server's Command (with its Dir). Empty fields
// are left out.
type MCPDraft struct {
	URL         string
	Command     []string
	Dir         string
	Tool        string
	Arguments   string
	KeyArgument string
	KeyMeta     string
	KeyFormat   harness.KeyFormat
	Timeout     time.Duration
}

// OracleDraft is the oracle of a [ToolDraft]. At most one of HTTP and
// Command is set; neither writes [OraclePlaceholder].
type OracleDraft struct {
	HTTP    *OracleHTTPDraft
	Command []string
	// Settle is written when positive and the oracle is given.
	Settle time.Duration
}

// OracleHTTPDraft is an http oracle: a URL template using {{.Marker}} and
// the JSON pointer to the count.
type OracleHTTPDraft struct {
	URL, Count string
}

// Write writes d as a version 1 spec file that [Parse] reads (once
// any oracle placeholder is replaced), with the notes and optional fields as
// comments. A draft that cannot be written gives an error wrapping
// [ErrDraft] and writes nothing.
func Write(w io.Writer, d Draft) error {
	if err := d.check(); err != nil {
		return err
	}
	var b bytes.Buffer
	for _, c := range d.Comment {
		writeComment(&b, "", c)
	}
	fmt.Fprintf(&b, "version: %d\ntools:\n", Version)
	for i, t := range d.Tools {
		if i > 0 {
			b.WriteString("\n")
		}
		t.write(&b)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func (d Draft) check() error {
	if len(d.Tools) == 0 {
		return fmt.Errorf("%w: no tools", ErrDraft)
	}
	seen := map[string]bool{}
	for i, t := range d.Tools {
		switch {
		case !toolNameRE.MatchString(t.Name):
			return fmt.Errorf("%w: tools[%d]: bad tool name %q: want letters, digits, '-', '_', '.'", ErrDraft, i, t.Name)
		case seen[t.Name]:
			return fmt.Errorf("%w: tools[%d]: duplicate tool name %q", ErrDraft, i, t.Name)
		case (t.HTTP == nil) == (t.MCP == nil):
			return fmt.Errorf("%w: tool %s: want exactly one of an http and an mcp section", ErrDraft, t.Name)
		case t.MCP != nil && (t.MCP.URL == "") == (len(t.MCP.Command) == 0):
			return fmt.Errorf("%w: tool %s: an mcp section has a url or a command", ErrDraft, t.Name)
		case t.Oracle.HTTP != nil && t.Oracle.Command != nil:
			return fmt.Errorf("%w: tool %s: an oracle is http or command, not both", ErrDraft, t.Name)
		}
		seen[t.Name] = true
		for _, o := range t.Optional {
			if sec := sectionOf(o.Path); sec != "" && sec != "oracle" && !(sec == "http" && t.HTTP != nil) && !(sec == "mcp" && t.MCP != nil) {
				return fmt.Errorf("%w: tool %s: optional field %s: the tool has no %s section", ErrDraft, t.Name, o.Path, sec)
			}
		}
	}
	return nil
}

// sectionOf is the section an optional field's path belongs to ("" for
// the tool itself).
func sectionOf(path string) string {
	sec, _, ok := strings.Cut(path, ".")
	if !ok {
		return ""
	}
	return sec
}

// toolWriter writes one tool entry.
type toolWriter struct {
	b *bytes.Buffer
	t ToolDraft
}

func (t ToolDraft) write(b *bytes.Buffer) {
	for _, c := range t.Comment {
		writeComment(b, "  ", c)
	}
	fmt.Fprintf(b, "  - name: %s\n", yamlScalar(t.Name))
	w := toolWriter{b, t}
	const in = "    "
	if h := t.HTTP; h != nil {
		b.WriteString(in + "http:\n")
		const in = in + "  "
		w.field(in, "http.url", "url", h.URL)
		w.field(in, "http.method", "method", h.Method)
		if len(h.Headers) > 0 {
			w.note(in, "http.headers")
			b.WriteString(in + "headers:\n")
			for _, hd := range h.Headers {
				w.field(in+"  ", "http.headers."+hd.Name, hd.Name, hd.Value)
			}
		}
		w.field(in, "http.body", "body", h.Body)
		if h.KeyHeader != nil {
			w.note(in, "http.key_header")
			fmt.Fprintf(b, "%skey_header: %s\n", in, yamlScalar(*h.KeyHeader))
		}
		w.field(in, "http.key_format", "key_format", string(h.KeyFormat))
		w.duration(in, "http.timeout", "timeout", h.Timeout)
		w.optional(in, "http")
	}
	if m := t.MCP; m != nil {
		b.WriteString(in + "mcp:\n")
		const in = in + "  "
		w.field(in, "mcp.url", "url", m.URL)
		if len(m.Command) > 0 {
			w.note(in, "mcp.command")
			fmt.Fprintf(w.b, "%scommand: %s\n", in, flowList(m.Command))
		}
		w.field(in, "mcp.dir", "dir", m.Dir)
		w.field(in, "mcp.tool", "tool", m.Tool)
		w.field(in, "mcp.arguments", "arguments", m.Arguments)
		w.field(in, "mcp.key_argument", "key_argument", m.KeyArgument)
		w.field(in, "mcp.key_meta", "key_meta", m.KeyMeta)
		w.field(in, "mcp.key_format", "key_format", string(m.KeyFormat))
		w.duration(in, "mcp.timeout", "timeout", m.Timeout)
		w.optional(in, "mcp")
	}
	w.field(in, "result_id", "result_id", t.ResultID)
	w.oracle(in)
	w.optional(in, "")
}

// field writes "name: value" after its note; an empty value leaves the
// field out but still writes its note (a TODO in its place).
func (w toolWriter) field(indent, path, name, value string) {
	w.note(indent, path)
	if value == "" {
		return
	}
	fmt.Fprintf(w.b, "%s%s: %s\n", indent, yamlScalar(name), yamlScalar(value))
}

func (w toolWriter) duration(indent, path, name string, d time.Duration) {
	if d > 0 {
		w.field(indent, path, name, d.String())
	}
}

// note writes the note of path, if any, as comment lines.
func (w toolWriter) note(indent, path string) {
	n, ok := w.t.Notes[path]
	if !ok || n.Text == "" {
		return
	}
	for i, line := range strings.Split(n.Text, "\n") {
		if i == 0 && n.Guessed {
			line = "guessed: " + line
		}
		writeComment(w.b, indent, line)
	}
}

// optional writes the optional fields of section, commented out.
func (w toolWriter) optional(indent, section string) {
	for _, o := range w.t.Optional {
		if sectionOf(o.Path) != section || section == "oracle" {
			continue
		}
		name := o.Path[len(section):]
		name = strings.TrimPrefix(name, ".")
		line := fmt.Sprintf("%s: %s", name, o.value())
		if o.Note != "" {
			line += "  # " + o.Note
		}
		writeComment(w.b, indent, line)
	}
}

// oracle writes the oracle section, or the placeholder with instructions.
func (w toolWriter) oracle(indent string) {
	o := w.t.Oracle
	w.note(indent, "oracle")
	in := indent + "  "
	switch {
	case o.HTTP == nil && o.Command == nil:
		fmt.Fprintf(w.b, "%soracle: %s\n", indent, OraclePlaceholder)
	case o.HTTP != nil:
		fmt.Fprintf(w.b, "%soracle:\n", indent)
		fmt.Fprintf(w.b, "%shttp:\n%s  url: %s\n%s  count: %s\n", in, in, yamlScalar(o.HTTP.URL), in, yamlScalar(o.HTTP.Count))
	default:
		fmt.Fprintf(w.b, "%soracle:\n", indent)
		fmt.Fprintf(w.b, "%scommand: %s\n", in, flowList(o.Command))
	}
	if o.Settle > 0 && (o.HTTP != nil || o.Command != nil) {
		fmt.Fprintf(w.b, "%ssettle: %s\n", in, o.Settle)
	}
	for _, f := range w.t.Optional {
		if sectionOf(f.Path) == "oracle" {
			line := fmt.Sprintf("%s: %s", strings.TrimPrefix(f.Path, "oracle."), f.value())
			if f.Note != "" {
				line += "  # " + f.Note
			}
			writeComment(w.b, in, line)
		}
	}
}

// flowList spells ss as a YAML flow sequence, [a, b].
func flowList(ss []string) string {
	items := make([]string, len(ss))
	for i, s := range ss {
		items[i] = yamlFlowScalar(s)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// value spells the field's value.
func (o OptionalField) value() string {
	if o.Raw {
		return o.Value
	}
	return yamlScalar(o.Value)
}

// ContractOptionals are the contract fields a starter spec offers, commented
// out: profile, retention and volatile (with the fields given, or examples),
// and for an HTTP tool the replayed header (replayed, or Stripe's
// Idempotent-Replayed).
func ContractOptionals(http bool, profile harness.Profile, volatile []string, volatileNote, replayed string) []OptionalField {
	if profile == "" {
		profile = harness.ProfileIETF
	}
	names := make([]string, 0, len(report.Profiles()))
	for _, p := range report.Profiles() {
		names = append(names, string(p))
	}
	vol := "[/created, /request_id]"
	if len(volatile) > 0 {
		vol = "[" + strings.Join(volatile, ", ") + "]"
	}
	if volatileNote == "" {
		volatileNote = "body fields a replay may change (examples)"
	}
	out := []OptionalField{
		{Path: "profile", Value: string(profile), Note: "the contract the tool promises: " + strings.Join(names, ", ") + " (custom takes codes:)"},
		{Path: "retention", Value: "24h", Note: "how long keys are honoured; checked up to --max-wait"},
		{Path: "volatile", Value: vol, Raw: true, Note: volatileNote},
	}
	if http {
		note := "present on replays, absent on first executions"
		if replayed == "" {
			replayed, note = "Idempotent-Replayed", note+" (Stripe's name)"
		} else {
			note += " (declared by the response)"
		}
		out = append(out, OptionalField{Path: "replayed_header", Value: replayed, Note: note})
	}
	return out
}

// LookupOptional is the lookup section a starter spec offers an HTTP tool
// whose endpoint is toolURL, commented out: an example lookup by key on
// the tool's own address, which scenario reconcile asks after every
// ambiguous attempt.
func LookupOptional(toolURL string) OptionalField {
	base := strings.TrimSuffix(toolURL, "/")
	if u, err := url.Parse(toolURL); err == nil && u.Host != "" {
		base = strings.TrimSuffix((&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String(), "/")
	}
	return OptionalField{
		Path:  "lookup",
		Value: fmt.Sprintf("{url: %s, found: [200], not_found: [404]}", yamlFlowScalar(base+"/{{.Key}}")),
		Raw:   true,
		Note:  "example: how a caller looks an operation up by its key after an ambiguous attempt (scenario reconcile)",
	}
}

// LongRunningOptional is the long_running section a starter spec offers
// for an HTTP tool whose url is toolURL, commented out on one line: when
// the trigger's answer names the status by a header (idHeader, Location)
// or a body field (idPointer, /status_url), a status call that follows it
// as it is; otherwise one on the tool's host and port naming the operation
// by {{.OperationID}}, read at /id (example values). Done when /status
// says succeeded.
func LongRunningOptional(toolURL, idHeader, idPointer string) OptionalField {
	base := toolURL
	if u, err := url.Parse(toolURL); err == nil && u.Host != "" {
		base = u.Scheme + "://" + u.Host
	}
	status := fmt.Sprintf("status: {url: %s}, operation_id: /id", yamlFlowScalar(base+"/operations/{{.OperationID}}"))
	note := "if the write starts an operation that a status call reports on (example values)"
	switch {
	case idHeader != "":
		status = fmt.Sprintf("status: {url: %s}, operation_id_header: %s", yamlFlowScalar("{{.OperationID}}"), yamlFlowScalar(idHeader))
		note = "the status call follows the answer's " + idHeader + " header; check the done values"
	case idPointer != "":
		status = fmt.Sprintf("status: {url: %s}, operation_id: %s", yamlFlowScalar("{{.OperationID}}"), yamlFlowScalar(idPointer))
		note = "the status call follows the answer's " + idPointer + "; check the done values"
	}
	return OptionalField{
		Path:  "long_running",
		Value: "{" + status + ", done: {pointer: /status, values: [succeeded], failed: [failed]}}",
		Raw:   true,
		Note:  note,
	}
}

// writeComment writes text as comment lines at indent.
func writeComment(b *bytes.Buffer, indent, text string) {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if line == "" {
			fmt.Fprintf(b, "%s#\n", indent)
			continue
		}
		fmt.Fprintf(b, "%s# %s\n", indent, line)
	}
}

// plainRE matches strings that may be written as plain YAML scalars (URLs,
// header names, pointers, names); yamlScalar still checks how YAML reads
// them.
var plainRE = regexp.MustCompile(`^[A-Za-z0-9_./][A-Za-z0-9_./:@+=?&%-]*$`)

// yamlScalar spells s as a YAML scalar for block context that reads back
// as the string s: plain when that is unambiguous (and not a YAML 1.1
// boolean such as yes), single-quoted when s has no control characters,
// double-quoted (JSON escapes, which YAML reads) otherwise.
func yamlScalar(s string) string { return scalar(s, false) }

// yamlFlowScalar is yamlScalar for an item of a flow sequence, [a, b].
func yamlFlowScalar(s string) string { return scalar(s, true) }

func scalar(s string, flow bool) string {
	if plainRE.MatchString(s) && !strings.HasSuffix(s, ":") && !yaml11Bool(s) && readsAs(s, "v: "+s) && (!flow || readsAs(s, "v: ["+s+"]")) {
		return s
	}
	if !strings.ContainsFunc(s, func(r rune) bool {
		return r < 0x20 || r == 0x7f || r == 0xfeff || r == 0x85 || r == 0x2028 || r == 0x2029
	}) {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// readsAs reports whether doc, "v: X" or "v: [X]", reads X as the string s.
func readsAs(s, doc string) bool {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil || len(n.Content) != 1 || len(n.Content[0].Content) != 2 {
		return false
	}
	v := n.Content[0].Content[1]
	if v.Kind == yaml.SequenceNode {
		if len(v.Content) != 1 {
			return false
		}
		v = v.Content[0]
	}
	return v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" && v.Value == s
}

// yaml11Bool reports whether YAML 1.1 readers take s for a boolean.
func yaml11Bool(s string) bool {
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "on", "off", "true", "false":
		return true
	}
	return false
}

// placeholderHint says what replaces [OraclePlaceholder].
func placeholderHint() string {
	kinds := slices.DeleteFunc(slices.Clone(oracleFields), func(s string) bool { return s == "timeout" || s == "settle" })
	return fmt.Sprintf("replace it with an oracle that counts this tool's effects for one marker: one of %s, e.g. http: {url: \"http://127.0.0.1:8080/count?marker={{.Marker}}\", count: /count}", strings.Join(kinds, ", "))
}
