package harness

import (
	"errors"
	"fmt"
	"io"
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
	// Downstream is set when the tool calls an HTTP dependency that
	// onceproof plays (Start starts its endpoint).
	Downstream *DownstreamSpec
	// MCP is set for a tool served by an MCP server (its mcp: section); its
	// Oracle and ResultID are those of the spec entry.
	MCP *MCPConfig

	file  string         // the spec file, for errors
	path  string         // the tool's field path, "tools[3]"
	lines map[string]int // line of each field, keyed relative to the tool ("http.url")
}

// Tool builds the tool. Errors are [*SpecError]s located at the most
// specific field known; a refused address wraps ErrRemoteTarget. The tool
// and its oracle connect only where the guard set by [ToolSpec.WithGuard]
// lets them (loopback only without one).
func (t ToolSpec) Tool() (*HTTPTool, error) {
	tool, err := NewHTTPTool(t.HTTP)
	if err != nil {
		return nil, t.toolError(err)
	}
	return tool, nil
}

// WithGuard returns t with every address its tool and oracle connect to
// checked by g (see [Guard]).
func (t ToolSpec) WithGuard(g *Guard) ToolSpec {
	t.HTTP.Guard = g
	t.HTTP.Oracle = GuardOracle(t.HTTP.Oracle, g)
	if t.MCP != nil {
		m := *t.MCP
		m.Guard, m.Oracle = g, t.HTTP.Oracle
		t.MCP = &m
	}
	return t
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
	e := t.locate(t.file, field, msg)
	if errors.Is(err, ErrRemoteTarget) {
		e.Kind = ErrRemoteTarget
	}
	return e
}

// Locate returns err as a [*SpecError] naming the file, line and field when
// it holds a [*FieldError] (a finding of the preflight call about one field);
// other errors come back unchanged. The SpecError wraps err, so errors.Is
// still finds ErrPreflight, ErrOracleShape and the rest.
func (t ToolSpec) Locate(err error) error {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return err
	}
	msg := fe.Err.Error()
	if errors.Is(err, ErrPreflight) {
		msg = ErrPreflight.Error() + ": " + msg
	}
	e := t.locate(t.file, fe.Field, msg)
	e.Kind = err
	return e
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
	toolFields       = append(append([]string{"name"}, append(slices.Clone(transports), "container", "downstream", "result_id", "oracle")...), contractFields...)
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
	// typos are the allowed names that an unknown key was reported as a
	// misspelling of: a field missing under its right name is then not
	// reported again as missing.
	typos map[string]bool
}

func (fs *fields) has(name string) bool { _, ok := fs.m[name]; return ok }

// misspelt reports whether an unknown key of the mapping was reported as a
// misspelling of one of names.
func (fs *fields) misspelt(names ...string) bool {
	for _, n := range names {
		if fs.typos[n] {
			return true
		}
	}
	return false
}

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
				if fs.typos == nil {
					fs.typos = map[string]bool{}
				}
				fs.typos[near] = true
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

// The longest durations a spec may set; a longer one is refused (it would
// make a run wait for hours on one attempt or one count).
const (
	// MaxToolTimeout bounds http.timeout and mcp.timeout, the caller's
	// deadline for one attempt.
	MaxToolTimeout = time.Hour
	// MaxOracleTimeout bounds oracle.timeout, the deadline of one count.
	MaxOracleTimeout = 10 * time.Minute
	// MaxSettle bounds oracle.settle, the wait between two counts (a count
	// settles within 20 of them).
	MaxSettle = time.Minute
	// MaxStartup bounds container.startup, how long each container may take
	// to become ready.
	MaxStartup = 30 * time.Minute
)

// FormatDuration spells d without zero units: "1h", "10m", "1m30s", "250ms".
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// duration decodes a field as a duration of at most max; zero is allowed
// only if zeroOK.
func (d *specDecoder) duration(f field, zeroOK bool, max time.Duration) (time.Duration, bool) {
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
	case v > max:
		d.errorf(f.line, f.path, "duration %q is too long: at most %s", s, FormatDuration(max))
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
	all := make([]field, 0, len(fs.m))
	for _, e := range fs.m {
		all = append(all, e)
	}
	// File order (then name, for merged entries), so that errors come out
	// the same way on every parse.
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.line != b.line {
			return a.line < b.line
		}
		if a.col != b.col {
			return a.col < b.col
		}
		return a.name < b.name
	})
	m := map[string]string{}
	var entries []field
	for _, e := range all {
		v, ok := d.str(e)
		if !ok {
			continue
		}
		m[e.name] = v
		entries = append(entries, e)
	}
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
		if !fs.misspelt("version") {
			d.errorf(fs.line, "version", "missing: want version: %d", SpecVersion)
		}
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
		if !fs.misspelt("tools") {
			d.errorf(fs.line, "tools", "missing: want a list of tools")
		}
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
	if !ok && !fs.misspelt(name) {
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
	case len(set) == 0 && !fs.misspelt(transports...):
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
	if f, ok := td.get(fs, "downstream"); ok {
		td.downstream(f)
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
	if f, ok := td.need(fs, "oracle", "an oracle (http, command, sql or redis) that counts the tool's effects"); ok {
		t.HTTP.Oracle = td.oracle(f)
	}
	if len(d.errs) > before {
		return t, false
	}
	t.HTTP.Name = t.Name
	// Build the tool once, as if remote targets were allowed (whether they
	// are is the run's to say, see CheckTargets): it renders the request and
	// checks that the marker and key reach it.
	anywhere := &Guard{AllowRemote: true}
	if t.MCP != nil {
		t.MCP.Name, t.MCP.Oracle, t.MCP.ResultID, t.MCP.Contract = t.Name, t.HTTP.Oracle, t.HTTP.ResultID, t.HTTP.Contract
		m := *t.MCP
		m.Guard = anywhere
		if _, err := NewMCPTool(m); err != nil {
			d.errs = append(d.errs, t.locate(t.file, "mcp", strings.TrimPrefix(err.Error(), "tool "+t.Name+": ")))
			return t, false
		}
		return t, true
	}
	c := t.HTTP
	c.Guard = anywhere
	if _, err := NewHTTPTool(c); err != nil {
		d.errs = append(d.errs, t.toolError(err))
		return t, false
	}
	return t, true
}
