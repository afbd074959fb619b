package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// SpecVersion is the spec file format this package reads.
const SpecVersion = 1

// maxSpecBytes bounds the size of a spec file.
const maxSpecBytes = 4 << 20

// defaultToolTimeout is a tool's per-attempt timeout when its spec sets none
// (the same default as [NewHTTPTool]).
const defaultToolTimeout = 2 * time.Second

// ErrSpec marks every error about the spec's content (callers map it to exit
// code 2).
var ErrSpec = errors.New("spec error")

// SpecError is an error located in a spec file.
type SpecError struct {
	// File is the spec file as named by the caller.
	File string
	// Line is the 1-based line the error is about (0 when unknown).
	Line int
	// Field is the path of the field, e.g. "tools[0].http.timeout" ("" for
	// the file as a whole).
	Field string
	// Msg says what is wrong.
	Msg string
	// Kind is the sentinel the error wraps; nil means [ErrSpec]. A target
	// check sets it to [ErrRemoteTarget].
	Kind error
}

// Error returns "FILE:LINE: FIELD: MSG", leaving out the parts that are
// unknown.
func (e *SpecError) Error() string {
	loc := e.File
	if e.Line > 0 {
		if loc == "" {
			loc = "line " + strconv.Itoa(e.Line)
		} else {
			loc += ":" + strconv.Itoa(e.Line)
		}
	}
	parts := make([]string, 0, 3)
	if loc != "" {
		parts = append(parts, loc)
	}
	if e.Field != "" {
		parts = append(parts, e.Field)
	}
	return strings.Join(append(parts, e.Msg), ": ")
}

// Unwrap returns Kind, or ErrSpec when Kind is nil.
func (e *SpecError) Unwrap() error {
	if e.Kind != nil {
		return e.Kind
	}
	return ErrSpec
}

// Spec is a loaded spec file.
type Spec struct {
	Version int
	// Path is the file the spec was read from (the name given to
	// [ParseSpec]).
	Path  string
	Tools []ToolSpec
}

// ToolSpec is one tool of a spec, validated and ready to build.
type ToolSpec struct {
	Name string
	// Line is the line of the tool's entry in the file.
	Line int
	// HTTP is the tool's configuration with every default applied (Method,
	// KeyHeader, KeyFormat, Timeout) and its Oracle already built, Settled
	// applied.
	HTTP HTTPConfig
	// Container is set when the tool runs as a container (Start starts it).
	Container *ContainerSpec
	// MCP is set for a tool served by an MCP server (its mcp: section); its
	// Oracle and ResultID are those of the spec entry.
	MCP *MCPConfig

	file  string         // the spec file, for errors
	path  string         // the tool's field path, "tools[3]"
	lines map[string]int // line of each field, keyed relative to the tool ("http.url")
}

// Tool builds the tool. Errors are [*SpecError]s located at the most
// specific field known.
func (t ToolSpec) Tool() (*HTTPTool, error) {
	tool, err := NewHTTPTool(t.HTTP)
	if err != nil {
		return nil, t.toolError(err)
	}
	return tool, nil
}

// toolError locates an error from NewHTTPTool, whose messages name the part
// of the configuration at fault.
func (t ToolSpec) toolError(err error) *SpecError {
	msg := strings.TrimPrefix(err.Error(), "tool "+t.HTTP.Name+": ")
	field := "http"
	cut := func(prefix string) bool {
		rest, ok := strings.CutPrefix(msg, prefix)
		if ok {
			msg = rest
		}
		return ok
	}
	switch {
	case strings.HasPrefix(msg, "http tool: name"):
		field = "name"
	case strings.HasPrefix(msg, "url "):
		field = "http.url"
	case strings.HasPrefix(msg, "header "):
		if name, rest, ok := strings.Cut(strings.TrimPrefix(msg, "header "), ": "); ok {
			field, msg = "http.headers"+fieldKey(name), rest
		}
	case cut("body: "):
		field = "http.body"
	case cut("error_body: "):
		field = "http.error_body"
	case cut("result_id: "):
		field = "result_id"
	case strings.HasPrefix(msg, "no oracle"):
		field = "oracle"
	case strings.HasPrefix(msg, "key_header"):
		field = "http.key_header"
	case strings.Contains(msg, "{{.Marker}}"):
		// The marker belongs in the body (or a header).
		field = "http.body"
	}
	return t.locate(t.file, field, msg)
}

// locate returns a SpecError for field (relative to the tool) at the line of
// that field or, failing that, of its closest enclosing field.
func (t ToolSpec) locate(file, field, msg string) *SpecError {
	line := t.Line
	for f := field; f != ""; {
		if l, ok := t.lines[f]; ok {
			line = l
			break
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	full := field
	if t.path != "" {
		full = joinField(t.path, field)
	}
	return &SpecError{File: file, Line: line, Field: full, Msg: msg}
}

// Find returns the tool named name, or an error (wrapping ErrSpec) listing
// the names.
func (s *Spec) Find(name string) (ToolSpec, error) {
	names := make([]string, 0, len(s.Tools))
	for _, t := range s.Tools {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return ToolSpec{}, fmt.Errorf("%w: %s: no tool named %q (the spec has: %s)", ErrSpec, s.Path, name, strings.Join(names, ", "))
}

// LoadSpec reads and validates a spec file. An unreadable file gives a plain
// error; everything about the content gives [*SpecError]s wrapping [ErrSpec]
// (joined with [errors.Join] when there are several).
func LoadSpec(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("spec %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("spec %s: %w", path, err)
	}
	if len(data) > maxSpecBytes {
		return nil, &SpecError{File: path, Msg: fmt.Sprintf("larger than %d bytes: not a spec file", maxSpecBytes)}
	}
	return ParseSpec(path, data)
}

// ParseSpec validates spec text; name is used in error messages. Every
// problem found is reported, as [*SpecError]s in line order joined with
// [errors.Join] when there are several (errors.As finds the first).
func ParseSpec(name string, data []byte) (*Spec, error) {
	d := &specDecoder{file: name, src: data}
	root := d.document()
	var spec *Spec
	if root != nil {
		spec = d.spec(root)
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	return spec, nil
}

// The fields of each section. A tool has exactly one transport section;
// "mcp" and "container" will join "http" in transports.
var (
	specFields       = []string{"version", "tools"}
	transports       = []string{"http", "mcp"}
	toolFields       = append(append([]string{"name"}, append(slices.Clone(transports), "container", "result_id", "oracle")...), contractFields...)
	httpFields       = []string{"url", "method", "headers", "body", "key_header", "key_format", "timeout", "error_body"}
	oracleFields     = []string{"http", "command", "sql", "redis", "timeout", "settle"}
	oracleHTTPFields = []string{"url", "count", "headers"}
)

// checkOp is the operation templates are rendered with at load time, so
// that execution errors surface before any run.
var checkOp = Operation{ID: "op-check", Key: "key-check", Marker: "marker-check", Seed: 1}

// specDecoder walks a yaml.Node tree, collecting located errors.
type specDecoder struct {
	file string
	src  []byte
	errs []*SpecError
}

func (d *specDecoder) errorf(line int, field, format string, args ...any) {
	d.errs = append(d.errs, &SpecError{File: d.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// err returns the collected errors in line order, without repeats (a node
// reached twice through an alias is reported once).
func (d *specDecoder) err() error {
	if len(d.errs) == 0 {
		return nil
	}
	sort.SliceStable(d.errs, func(i, j int) bool { return d.errs[i].Line < d.errs[j].Line })
	seen := map[SpecError]bool{}
	var errs []error
	for _, e := range d.errs {
		if !seen[*e] {
			seen[*e] = true
			errs = append(errs, e)
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

var (
	yamlLineRE   = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)
	yamlAnchorRE = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
)

// yamlParserProblems are the problems yaml.v3's parser (as opposed to its
// scanner) reports. For these, yaml.v3 prints a 0-based line: the line
// before the construct being parsed, or before the problem.
var yamlParserProblems = []string{
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"did not find expected <document start>",
	"did not find expected <stream-start>",
	"did not find expected key",
	"did not find expected node content",
	"found duplicate %TAG directive",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

// syntax records a YAML syntax error at its line.
func (d *specDecoder) syntax(err error) {
	msg := err.Error()
	line := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if slices.Contains(yamlParserProblems, msg) {
			line++
		}
	} else if m := yamlAnchorRE.FindStringSubmatch(msg); m != nil {
		msg = strings.TrimPrefix(msg, "yaml: ")
		for i, l := range bytes.Split(d.src, []byte("\n")) {
			if bytes.Contains(l, []byte("*"+m[1])) {
				line = i + 1
				break
			}
		}
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
		if slices.Contains(yamlParserProblems, msg) {
			line = 1
		}
	}
	if lines := bytes.Split(d.src, []byte("\n")); line > 0 && line <= len(lines) && bytes.Contains(lines[line-1], []byte("\t")) {
		msg += " (tabs are not allowed in YAML indentation)"
	}
	d.errorf(line, "", "bad YAML: %s", msg)
}

// document parses the single YAML document of the file and returns its root.
func (d *specDecoder) document() *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(d.src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorf(1, "", "empty spec: want version: %d and a list of tools", SpecVersion)
		} else {
			d.syntax(err)
		}
		return nil
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		line := next.Line
		if len(next.Content) > 0 && line == 0 {
			line = next.Content[0].Line
		}
		d.errorf(line, "", "a second YAML document starts here: a spec file holds exactly one")
		return nil
	case !errors.Is(err, io.EOF):
		d.syntax(err)
		return nil
	}
	if len(doc.Content) == 0 {
		d.errorf(1, "", "empty spec: want version: %d and a list of tools", SpecVersion)
		return nil
	}
	return doc.Content[0]
}

// field is one entry of a mapping.
type field struct {
	name string
	path string     // full field path, "tools[0].http.url"
	line int        // line of the key
	col  int        // column of the key
	val  *yaml.Node // the value, aliases resolved
}

// fields is a decoded mapping.
type fields struct {
	path string
	line int
	m    map[string]field
}

func (fs *fields) has(name string) bool { _, ok := fs.m[name]; return ok }

// deref follows aliases.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// describe names a node's kind for error messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!bool":
			return "the boolean " + v
		case "!!int", "!!float":
			return "the number " + v
		case "!!str":
			return fmt.Sprintf("the string %q", v)
		}
		return fmt.Sprintf("the scalar %q", v)
	}
	return "nothing"
}

// joinField appends name (a key, or "[i]") to the field path path.
func joinField(path, name string) string {
	switch {
	case path == "":
		return name
	case strings.HasPrefix(name, "["):
		return path + name
	}
	return path + "." + name
}

var plainKeyRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// fieldKey spells a free-form key (a header name) as a path element:
// ".Content-Type", or `["a.b"]` when it would be ambiguous.
func fieldKey(k string) string {
	if plainKeyRE.MatchString(k) {
		return "." + k
	}
	return fmt.Sprintf("[%q]", k)
}

// mapping decodes the value of f as a mapping whose keys must be among
// allowed (any key when allowed is nil). Duplicate and unknown keys are
// reported and left out; YAML merge keys (<<: *anchor) are honoured. Errors
// about the mapping as a whole (wrong kind, missing fields) are located at
// f.line, the line of its key.
func (d *specDecoder) mapping(f field, allowed []string) (*fields, bool) {
	n := deref(f.val)
	if n.Kind != yaml.MappingNode {
		d.errorf(f.line, f.path, "want a mapping, got %s", describe(n))
		return nil, false
	}
	fs := &fields{path: f.path, line: f.line, m: map[string]field{}}
	d.collect(fs, n, allowed, 0)
	return fs, true
}

// collect adds n's entries to fs; entries already in fs win, as merged
// entries do not override a mapping's own.
func (d *specDecoder) collect(fs *fields, n *yaml.Node, allowed []string, depth int) {
	if depth > 10 {
		d.errorf(n.Line, fs.path, "merge keys nested too deeply")
		return
	}
	own := map[string]int{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.errorf(k.Line, fs.path, "want a plain key, got %s", describe(k))
			continue
		}
		name := k.Value
		var path string
		if allowed == nil {
			path = fs.path + fieldKey(name)
		} else {
			path = joinField(fs.path, name)
		}
		if first, dup := own[name]; dup {
			d.errorf(k.Line, path, "duplicate key (first at line %d)", first)
			continue
		}
		own[name] = k.Line
		if allowed != nil && !slices.Contains(allowed, name) {
			hint := ""
			if near := nearest(name, allowed); near != "" {
				hint = "; did you mean " + near + "?"
			}
			d.errorf(k.Line, path, "unknown field%s (allowed: %s)", hint, strings.Join(allowed, ", "))
			continue
		}
		if depth == 0 || !fs.has(name) {
			fs.m[name] = field{name: name, path: path, line: k.Line, col: k.Column, val: v}
		}
	}
	for _, m := range merges {
		switch m.Kind {
		case yaml.MappingNode:
			d.collect(fs, m, allowed, depth+1)
		case yaml.SequenceNode:
			for _, item := range m.Content {
				if item = deref(item); item.Kind == yaml.MappingNode {
					d.collect(fs, item, allowed, depth+1)
				} else {
					d.errorf(item.Line, fs.path, "merge key: want a mapping, got %s", describe(item))
				}
			}
		default:
			d.errorf(m.Line, fs.path, "merge key: want a mapping or a list of mappings, got %s", describe(m))
		}
	}
}

// nearest returns the allowed name closest to a misspelt one (case, '-'
// for '_', or up to two edits away), or "".
func nearest(name string, allowed []string) string {
	norm := strings.ToLower(strings.ReplaceAll(name, "-", "_"))
	best, bestD := "", 3
	for _, a := range allowed {
		if a == norm {
			return a
		}
		if d := editDistance(norm, a); d < bestD {
			best, bestD = a, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// str decodes a field as a string: any scalar but null.
func (d *specDecoder) str(f field) (string, bool) {
	if f.val.Kind != yaml.ScalarNode || f.val.ShortTag() == "!!null" {
		d.errorf(f.line, f.path, "want a string, got %s", describe(f.val))
		return "", false
	}
	return f.val.Value, true
}

// duration decodes a field as a duration; zero is allowed only if zeroOK.
func (d *specDecoder) duration(f field, zeroOK bool) (time.Duration, bool) {
	s, ok := d.str(f)
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(s)
	switch {
	case err != nil:
		d.errorf(f.line, f.path, "bad duration %q: %v", s, err)
		return 0, false
	case v < 0:
		d.errorf(f.line, f.path, "bad duration %q: must not be negative", s)
		return 0, false
	case v == 0 && !zeroOK:
		d.errorf(f.line, f.path, "bad duration %q: must be positive", s)
		return 0, false
	}
	return v, true
}

// stringMap decodes a mapping of strings (headers).
// It returns the entries that are strings, in file order.
func (d *specDecoder) stringMap(f field) (map[string]string, []field) {
	fs, ok := d.mapping(f, nil)
	if !ok {
		return nil, nil
	}
	m := map[string]string{}
	var entries []field
	for _, e := range fs.m {
		v, ok := d.str(e)
		if !ok {
			continue
		}
		m[e.name] = v
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		return a.line < b.line || a.line == b.line && a.col < b.col
	})
	return m, entries
}

// spec decodes the root mapping.
func (d *specDecoder) spec(root *yaml.Node) *Spec {
	root = deref(root)
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		d.errorf(1, "", "empty spec: want version: %d and a list of tools", SpecVersion)
		return nil
	}
	if root.Kind != yaml.MappingNode {
		d.errorf(root.Line, "", "want a mapping with version: %d and tools, got %s", SpecVersion, describe(root))
		return nil
	}
	fs, _ := d.mapping(field{line: root.Line, val: root}, specFields)
	vf, ok := fs.m["version"]
	if !ok {
		d.errorf(fs.line, "version", "missing: want version: %d", SpecVersion)
		return nil
	}
	// The version decides the schema: nothing else is checked without it.
	if v := vf.val; v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" {
		d.errorf(vf.line, vf.path, "want %d, got %s", SpecVersion, describe(v))
		return nil
	} else if n, err := strconv.ParseInt(v.Value, 0, 64); err != nil || n != SpecVersion {
		d.errorf(vf.line, vf.path, "unsupported version %s: this onceproof reads version %d", v.Value, SpecVersion)
		return nil
	}
	tf, ok := fs.m["tools"]
	if !ok {
		d.errorf(fs.line, "tools", "missing: want a list of tools")
		return nil
	}
	if tf.val.Kind != yaml.SequenceNode {
		d.errorf(tf.line, tf.path, "want a list of tools, got %s", describe(tf.val))
		return nil
	}
	if len(tf.val.Content) == 0 {
		d.errorf(tf.line, tf.path, "empty: want at least one tool")
		return nil
	}
	spec := &Spec{Version: SpecVersion, Path: d.file}
	first := map[string]int{}
	for i, item := range tf.val.Content {
		t, ok := d.tool(item, i)
		if t.Name != "" {
			if line, dup := first[t.Name]; dup {
				d.errorf(t.lines["name"], joinField(t.path, "name"), "duplicate tool name %q (first at line %d)", t.Name, line)
				ok = false
			} else {
				first[t.Name] = t.lines["name"]
			}
		}
		if ok {
			spec.Tools = append(spec.Tools, t)
		}
	}
	return spec
}

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// toolDecoder decodes one tool entry, recording the line of each field.
type toolDecoder struct {
	*specDecoder
	t *ToolSpec
}

// get returns the field name of fs and records its line.
func (d toolDecoder) get(fs *fields, name string) (field, bool) {
	f, ok := fs.m[name]
	if ok {
		d.t.lines[strings.TrimPrefix(f.path, d.t.path+".")] = f.line
	}
	return f, ok
}

// need is get that reports a missing field.
func (d toolDecoder) need(fs *fields, name, want string) (field, bool) {
	f, ok := d.get(fs, name)
	if !ok {
		d.errorf(fs.line, joinField(fs.path, name), "missing: want %s", want)
	}
	return f, ok
}

// tool decodes tools[i]; it reports false if anything is wrong with it.
func (d *specDecoder) tool(item *yaml.Node, i int) (ToolSpec, bool) {
	n := deref(item)
	t := ToolSpec{Line: n.Line, file: d.file, path: fmt.Sprintf("tools[%d]", i), lines: map[string]int{}}
	td := toolDecoder{d, &t}
	before := len(d.errs)
	fs, ok := d.mapping(field{path: t.path, line: n.Line, val: n}, toolFields)
	if !ok {
		return t, false
	}
	if f, ok := td.need(fs, "name", "a tool name (letters, digits, '-', '_', '.')"); ok {
		if s, ok := d.str(f); ok {
			switch {
			case s == "":
				d.errorf(f.line, f.path, "empty: want a tool name (letters, digits, '-', '_', '.')")
			case !toolNameRE.MatchString(s):
				d.errorf(f.line, f.path, "bad tool name %q: want letters, digits, '-', '_', '.'", s)
			default:
				t.Name = s
			}
		}
	}
	var set []field
	for _, tr := range transports {
		if f, ok := td.get(fs, tr); ok {
			set = append(set, f)
		}
	}
	switch {
	case len(set) == 0:
		d.errorf(t.Line, t.path, "no transport section: want exactly one of: %s", strings.Join(transports, ", "))
	case len(set) > 1:
		sort.Slice(set, func(i, j int) bool { return set[i].line < set[j].line })
		d.errorf(set[1].line, set[1].path, "a tool has exactly one transport section, and it already has %s (line %d)", set[0].name, set[0].line)
	}
	if f, ok := td.get(fs, "http"); ok {
		td.http(f)
	}
	if f, ok := td.get(fs, "mcp"); ok {
		td.mcp(f)
	}
	if f, ok := td.get(fs, "container"); ok {
		td.container(f)
		td.checkContainerURL()
	}
	if f, ok := td.get(fs, "result_id"); ok {
		if s, ok := d.str(f); ok {
			if _, err := ParsePointer(s); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			}
			t.HTTP.ResultID = s
		}
	}
	td.contract(fs)
	if f, ok := td.need(fs, "oracle", "an oracle (http or command) that counts the tool's effects"); ok {
		t.HTTP.Oracle = td.oracle(f)
	}
	if len(d.errs) > before {
		return t, false
	}
	t.HTTP.Name = t.Name
	if t.MCP != nil {
		t.MCP.Name, t.MCP.Oracle, t.MCP.ResultID, t.MCP.Contract = t.Name, t.HTTP.Oracle, t.HTTP.ResultID, t.HTTP.Contract
		if _, err := NewMCPTool(*t.MCP); err != nil {
			d.errs = append(d.errs, t.locate(t.file, "mcp", strings.TrimPrefix(err.Error(), "tool "+t.Name+": ")))
			return t, false
		}
		return t, true
	}
	// Build the tool once: NewHTTPTool renders the request and checks that
	// the marker and key reach it.
	if _, err := t.Tool(); err != nil {
		d.errs = append(d.errs, err.(*SpecError))
		return t, false
	}
	return t, true
}

// http decodes a tool's http section into t.HTTP, defaults applied.
func (d toolDecoder) http(f field) {
	c := &d.t.HTTP
	c.Method = http.MethodPost
	key := DefaultKeyHeader
	c.KeyHeader = &key
	c.KeyFormat = KeyUUID
	c.Timeout = defaultToolTimeout
	fs, ok := d.mapping(f, httpFields)
	if !ok {
		return
	}
	if f, ok := d.need(fs, "url", "the tool's endpoint, http://host:port/path"); ok {
		if s, ok := d.str(f); ok {
			if msg := checkToolURL(s); msg != "" {
				d.errorf(f.line, f.path, "%s", msg)
			}
			c.URL = s
		}
	}
	if f, ok := d.get(fs, "method"); ok {
		if s, ok := d.str(f); ok {
			if msg := checkMethod(s); msg != "" {
				d.errorf(f.line, f.path, "%s", msg)
			} else {
				c.Method = s
			}
		}
	}
	keyOK := true
	if f, ok := d.get(fs, "key_header"); ok {
		if f.val.Kind == yaml.ScalarNode && f.val.ShortTag() == "!!null" {
			d.errorf(f.line, f.path, `want a header name, got null (write key_header: "" to send the key only in the body through {{.Key}})`)
			keyOK = false
		} else if s, ok := d.str(f); !ok {
			keyOK = false
		} else if s != "" && !isToken(s) {
			d.errorf(f.line, f.path, "bad header name %q", s)
			keyOK = false
		} else if ck := http.CanonicalHeaderKey(s); slices.Contains(reservedHeaders, ck) {
			d.errorf(f.line, f.path, "%s is set by the harness", ck)
			keyOK = false
		} else {
			key = s
		}
	}
	d.keyFormatAndTimeout(fs, &c.KeyFormat, &c.Timeout)
	contentType := ""
	if f, ok := d.get(fs, "headers"); ok {
		m, entries := d.stringMap(f)
		c.Headers = m
		canon := map[string]field{}
		for _, e := range entries {
			d.t.lines[strings.TrimPrefix(e.path, d.t.path+".")] = e.line
			ck := http.CanonicalHeaderKey(e.name)
			switch {
			case !isToken(e.name):
				d.errorf(e.line, e.path, "bad header name %q", e.name)
				continue
			case slices.Contains(reservedHeaders, ck):
				d.errorf(e.line, e.path, "%s is set by the harness", ck)
				continue
			case keyOK && key != "" && strings.EqualFold(e.name, key):
				d.errorf(e.line, e.path, "duplicates key_header %s, which the harness sets to each operation's key", key)
				continue
			}
			if prev, dup := canon[ck]; dup {
				d.errorf(e.line, e.path, "duplicate header (same as %s at line %d)", prev.name, prev.line)
				continue
			}
			canon[ck] = e
			tpl, err := ParseTemplate("header "+e.name, m[e.name])
			if err != nil {
				d.errorf(e.line, e.path, "%v", err)
				continue
			}
			v, err := tpl.Render(checkOp)
			if err != nil {
				d.errorf(e.line, e.path, "%v", err)
				continue
			}
			if strings.ContainsAny(v, "\r\n") {
				d.errorf(e.line, e.path, "rendered value contains a line break: %q", v)
				continue
			}
			if ck == "Content-Type" {
				contentType = v
			}
		}
	}
	if f, ok := d.get(fs, "body"); ok {
		if s, ok := d.str(f); ok {
			c.Body = s
			if tpl, err := ParseTemplate("body", s); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			} else if body, err := tpl.Render(checkOp); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			} else if strings.Contains(strings.ToLower(contentType), "json") && strings.TrimSpace(body) != "" {
				var v any
				if err := json.Unmarshal([]byte(body), &v); err != nil {
					d.errorf(f.line, f.path, "Content-Type is %s but the rendered body is not JSON (%v): %s", contentType, err, snippet([]byte(body)))
				}
			}
			if keyOK && key == "" && !strings.Contains(s, ".Key") {
				kf := fs.m["key_header"]
				d.errorf(kf.line, kf.path, "empty, but the body never uses {{.Key}}: the key would not be sent")
			}
		}
	} else if keyOK && key == "" {
		kf := fs.m["key_header"]
		d.errorf(kf.line, kf.path, "empty, but there is no body to carry {{.Key}}: the key would not be sent")
	}
}

// keyFormatAndTimeout decodes the key_format and timeout fields every
// transport section has.
func (d toolDecoder) keyFormatAndTimeout(fs *fields, format *KeyFormat, timeout *time.Duration) {
	if f, ok := d.get(fs, "key_format"); ok {
		if s, ok := d.str(f); ok {
			if kf, err := ParseKeyFormat(s); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			} else {
				*format = kf
			}
		}
	}
	if f, ok := d.get(fs, "timeout"); ok {
		if v, ok := d.duration(f, false); ok {
			*timeout = v
		}
	}
}

// reservedHeaders are written by HTTPTool itself.
var reservedHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "User-Agent"}

// checkToolURL returns what is wrong with a tool's endpoint ("" if nothing).
func checkToolURL(s string) string {
	if strings.Contains(s, "{{") {
		return fmt.Sprintf("bad URL %q: the tool url is not a template; put {{.Marker}} in the body or a header", s)
	}
	return checkURL(s)
}

// checkURL returns what is wrong with an http(s) URL ("" if nothing).
func checkURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Sprintf("bad URL %q: %v", s, errors.Unwrap(err))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("bad URL %q: want http://host:port/path (scheme http or https)", s)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Sprintf("bad URL %q: no host; want http://host:port/path", s)
	case u.User != nil:
		return fmt.Sprintf("bad URL %q: credentials in the URL are not sent; use an Authorization header", s)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("bad URL %q: bad port %q", s, p)
		}
	}
	return ""
}

// checkMethod returns what is wrong with an HTTP method ("" if nothing).
func checkMethod(m string) string {
	if !isToken(m) {
		return fmt.Sprintf("bad method %q", m)
	}
	switch up := strings.ToUpper(m); up {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		if up != m {
			return fmt.Sprintf("bad method %q: methods are case-sensitive, want %s", m, up)
		}
	}
	return ""
}

// isToken reports whether s is an HTTP token (RFC 9110), as header names
// and methods are.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

// oracle decodes a tool's oracle section; it returns nil on errors.
func (d toolDecoder) oracle(f field) Oracle {
	if v := deref(f.val); v.Kind == yaml.ScalarNode && v.Value == OraclePlaceholder {
		d.errorf(f.line, f.path, "%s is the placeholder onceproof discover writes: %s", OraclePlaceholder, placeholderHint())
		return nil
	}
	fs, ok := d.mapping(f, oracleFields)
	if !ok {
		return nil
	}
	before := len(d.errs)
	var timeout, settle time.Duration
	if f, ok := d.get(fs, "timeout"); ok {
		timeout, _ = d.duration(f, false)
	}
	if f, ok := d.get(fs, "settle"); ok {
		settle, _ = d.duration(f, true)
	}
	kinds := []string{"http", "command", "sql", "redis"}
	var set []field
	for _, k := range kinds {
		if f, ok := d.get(fs, k); ok {
			set = append(set, f)
		}
	}
	sort.Slice(set, func(i, j int) bool { return set[i].line < set[j].line })
	var o Oracle
	switch {
	case len(set) > 1:
		d.errorf(set[1].line, set[1].path, "an oracle is one of %s; this one is already %s (line %d)", strings.Join(kinds, ", "), set[0].name, set[0].line)
	case len(set) == 0:
		d.errorf(fs.line, f.path, "want exactly one of http (a count endpoint), command (a program printing the count), sql (a PostgreSQL query) or redis (a command with an integer reply)")
	case set[0].name == "http":
		o = d.httpOracle(set[0], timeout)
	case set[0].name == "command":
		o = d.commandOracle(set[0], timeout)
	case set[0].name == "sql":
		o = d.sqlOracle(set[0])
	case set[0].name == "redis":
		o = d.redisOracle(set[0])
	}
	if len(d.errs) > before || o == nil {
		return nil
	}
	return Settled(o, settle)
}

// httpOracle decodes oracle.http.
func (d toolDecoder) httpOracle(f field, timeout time.Duration) Oracle {
	fs, ok := d.mapping(f, oracleHTTPFields)
	if !ok {
		return nil
	}
	before := len(d.errs)
	var rawURL, count string
	if f, ok := d.need(fs, "url", "the count endpoint, a template using {{.Marker}}"); ok {
		if s, ok := d.str(f); ok {
			rawURL = s
			if tpl, err := ParseTemplate("oracle.http.url", s); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			} else if !tpl.UsesMarker() {
				d.errorf(f.line, f.path, "never uses {{.Marker}}: the oracle could not count one operation's effects")
			} else if u, err := tpl.Render(Operation{Marker: checkOp.Marker}); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			} else if msg := checkURL(u); msg != "" {
				d.errorf(f.line, f.path, "rendered %s", msg)
			}
		}
	}
	if f, ok := d.need(fs, "count", `a JSON pointer to the count in the response, e.g. /count ("" for a bare number or array)`); ok {
		if s, ok := d.str(f); ok {
			count = s
			if _, err := ParsePointer(s); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			}
		}
	}
	var headers map[string]string
	if f, ok := d.get(fs, "headers"); ok {
		var entries []field
		headers, entries = d.stringMap(f)
		for _, e := range entries {
			switch {
			case !isToken(e.name):
				d.errorf(e.line, e.path, "bad header name %q", e.name)
			case strings.Contains(headers[e.name], "{{"):
				d.errorf(e.line, e.path, "oracle headers are sent as written, not rendered as templates")
			case strings.ContainsAny(headers[e.name], "\r\n"):
				d.errorf(e.line, e.path, "value contains a line break")
			}
		}
	}
	if len(d.errs) > before {
		return nil
	}
	o, err := NewHTTPOracle(rawURL, count)
	if err != nil {
		d.errorf(f.line, f.path, "%v", err)
		return nil
	}
	if len(headers) > 0 {
		o.Headers = headers
	}
	if timeout > 0 {
		o.Client = &http.Client{Timeout: timeout}
	}
	return o
}

// commandOracle decodes oracle.command, an argv list.
func (d toolDecoder) commandOracle(f field, timeout time.Duration) Oracle {
	const want = `a list of strings (argv), e.g. [sh, -c, "psql -tAc ..."]`
	if f.val.Kind != yaml.SequenceNode {
		d.errorf(f.line, f.path, "want %s, got %s", want, describe(f.val))
		return nil
	}
	if len(f.val.Content) == 0 {
		d.errorf(f.line, f.path, "empty: want %s", want)
		return nil
	}
	argv := make([]string, 0, len(f.val.Content))
	good := true
	for i, item := range f.val.Content {
		item = deref(item)
		e := field{path: fmt.Sprintf("%s[%d]", f.path, i), line: item.Line, val: item}
		s, ok := d.str(e)
		if !ok {
			good = false
			continue
		}
		if i == 0 && s == "" {
			d.errorf(e.line, e.path, "empty program name")
			good = false
		}
		argv = append(argv, s)
	}
	if !good {
		return nil
	}
	return &CommandOracle{Argv: argv, Timeout: timeout}
}
