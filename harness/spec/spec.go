package spec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/container"
	"github.com/onceproof/onceproof/harness/transport"
)

// Version is the spec file format this package reads.
const Version = 1

// maxSpecBytes bounds the size of a spec file.
const maxSpecBytes = 4 << 20

// defaultToolTimeout is a tool's per-attempt timeout when its spec sets none
// (the same default as [NewHTTPTool]).
const defaultToolTimeout = 2 * time.Second

// ErrSpec marks every error about the spec's content (callers map it to exit
// code 2).
var ErrSpec = errors.New("spec error")

// Error is an error located in a spec file.
type Error struct {
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
func (e *Error) Error() string {
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
func (e *Error) Unwrap() error {
	if e.Kind != nil {
		return e.Kind
	}
	return ErrSpec
}

// Spec is a loaded spec file.
type Spec struct {
	Version int
	// Path is the file the spec was read from (the name given to
	// [Parse]).
	Path  string
	Tools []Tool
	// Env are the environment variables the spec's templates read with
	// {{.Env "NAME"}}, sorted: their values are secrets (see [Spec.Secrets]).
	Env []string
}

// envUseRE finds the variables a spec reads with {{.Env "NAME"}} anywhere
// in its text (a template checks the form of each call).
var envUseRE = regexp.MustCompile("\\.Env\\s+[\"`]([A-Za-z_][A-Za-z0-9_]*)[\"`]")

// Secrets are the values of the spec's {{.Env}} variables by name (those
// set): whatever onceproof writes leaves them out (see report.Redactor).
func (s *Spec) Secrets() map[string]string {
	out := map[string]string{}
	for _, name := range s.Env {
		if v, ok := os.LookupEnv(name); ok {
			out[name] = v
		}
	}
	return out
}

// Tool is one tool of a spec, validated and ready to build.
type Tool struct {
	Name string
	// Line is the line of the tool's entry in the file.
	Line int
	// Common is what every tool shares whatever its transport: its name,
	// oracle (already built, Settled applied), result id, contract and
	// guard.
	Common transport.Common
	// Kind is the tool's transport (its row in [Transports]) and Config
	// its decoded section.
	Kind   *transport.Kind
	Config transport.Config
	// HTTP is an http tool's configuration with every default applied
	// (Method, KeyHeader, KeyFormat, Timeout) and the Common fields.
	HTTP harness.HTTPConfig
	// Container is set when the tool runs as a container (Start starts it).
	Container *container.ContainerSpec
	// Downstream is set when the tool calls an HTTP dependency that
	// onceproof plays (Start starts its endpoint).
	Downstream *harness.DownstreamSpec

	file  string         // the spec file, for errors
	path  string         // the tool's field path, "tools[3]"
	lines map[string]int // line of each field, keyed relative to the tool ("http.url")
}

// Check builds the tool without starting anything, to find what the run's
// guard refuses before any container starts: an HTTP or MCP tool is built
// (and dropped), a container tool is left to [Tool.Start]. Errors are
// [*Error]s located at the most specific field known; a refused address
// wraps ErrRemoteTarget.
func (t Tool) Check() error {
	t = t.resolved()
	if t.Container != nil {
		return nil
	}
	tool, err := t.build()
	if err != nil {
		return err
	}
	closeTool(tool)
	return nil
}

// build builds the tool its transport section describes (no container,
// no downstream endpoint), locating an error in the spec.
func (t Tool) build() (harness.Tool, error) {
	t = t.resolved()
	tool, err := t.Config.Build(t.Common)
	if err != nil {
		return nil, t.toolError(err)
	}
	return tool, nil
}

// closeTool releases what a tool built by build holds (listeners).
func closeTool(tool harness.Tool) {
	if c, ok := tool.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

// httpTool builds the HTTP tool c describes (t's, or t's with its
// downstream endpoint), locating an error in the spec.
func (t Tool) httpTool(c harness.HTTPConfig) (*harness.HTTPTool, error) {
	tool, err := harness.NewHTTPTool(c)
	if err != nil {
		return nil, t.toolError(err)
	}
	return tool, nil
}

// WithGuard returns t with every address its tool and oracle connect to
// checked by g (see [Guard]).
func (t Tool) WithGuard(g *harness.Guard) Tool {
	t.Common.Guard = g
	t.Common.Oracle = harness.GuardOracle(t.Common.Oracle, g)
	t.HTTP.Guard, t.HTTP.Oracle = g, t.Common.Oracle
	return t
}

// toolError locates an error from a tool constructor: a [*harness.FieldError]
// names the field at fault (relative to the tool); any other error is
// about the tool's transport section as a whole.
func (t Tool) toolError(err error) *Error {
	field, msg := "http", err.Error()
	if t.Kind != nil {
		field = t.Kind.Section
	}
	var fe *harness.FieldError
	if errors.As(err, &fe) {
		field, msg = fe.Field, fe.Err.Error()
		if name, ok := strings.CutPrefix(field, "http.headers."); ok {
			field = "http.headers" + fieldKey(name)
		}
	}
	e := t.locate(t.file, field, msg)
	if errors.Is(err, harness.ErrRemoteTarget) {
		e.Kind = harness.ErrRemoteTarget
	}
	return e
}

// Locate returns err as a [*Error] naming the file, line and field when
// it holds a [*FieldError] (a finding of the preflight call about one field);
// other errors come back unchanged. The Error wraps err, so errors.Is
// still finds ErrPreflight, ErrOracleShape and the rest.
func (t Tool) Locate(err error) error {
	var fe *harness.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	msg := fe.Err.Error()
	if errors.Is(err, harness.ErrPreflight) {
		msg = harness.ErrPreflight.Error() + ": " + msg
	}
	e := t.locate(t.file, fe.Field, msg)
	e.Kind = err
	return e
}

// locate returns a Error for field (relative to the tool) at the line of
// that field or, failing that, of its closest enclosing field.
func (t Tool) locate(file, field, msg string) *Error {
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
	return &Error{File: file, Line: line, Field: full, Msg: msg}
}

// Find returns the tool named name, or an error (wrapping ErrSpec) listing
// the names.
func (s *Spec) Find(name string) (Tool, error) {
	names := make([]string, 0, len(s.Tools))
	for _, t := range s.Tools {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return Tool{}, fmt.Errorf("%w: %s: no tool named %q (the spec has: %s)", ErrSpec, s.Path, name, strings.Join(names, ", "))
}

// Load reads and validates a spec file. An unreadable file gives a plain
// error; everything about the content gives [*Error]s wrapping [ErrSpec]
// (joined with [errors.Join] when there are several).
func Load(path string) (*Spec, error) {
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
		return nil, &Error{File: path, Msg: fmt.Sprintf("larger than %d bytes: not a spec file", maxSpecBytes)}
	}
	return Parse(path, data)
}

// Parse validates spec text; name is used in error messages. Every
// problem found is reported, as [*Error]s in line order joined with
// [errors.Join] when there are several (errors.As finds the first).
func Parse(name string, data []byte) (*Spec, error) {
	d := &specDecoder{file: name, src: data}
	root := d.document()
	var spec *Spec
	if root != nil {
		spec = d.spec(root)
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	spec.Env = EnvNames(data)
	return spec, nil
}

// EnvNames are the environment variables spec text reads with {{.Env
// "NAME"}}, sorted (a spec that does not load included: its errors may
// quote a rendered secret).
func EnvNames(data []byte) []string {
	var names []string
	for _, m := range envUseRE.FindAllSubmatch(data, -1) {
		if name := string(m[1]); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// spec decodes the root mapping.
func (d *specDecoder) spec(root *yaml.Node) *Spec {
	root = deref(root)
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		d.errorf(1, "", "empty spec: want version: %d and a list of tools", Version)
		return nil
	}
	if root.Kind != yaml.MappingNode {
		d.errorf(root.Line, "", "want a mapping with version: %d and tools, got %s", Version, describe(root))
		return nil
	}
	fs, _ := d.mapping(field{line: root.Line, val: root}, specFields)
	vf, ok := fs.m["version"]
	if !ok {
		if !fs.misspelt("version") {
			d.errorf(fs.line, "version", "missing: want version: %d", Version)
		}
		return nil
	}
	// The version decides the schema: nothing else is checked without it.
	if v := vf.val; v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" {
		d.errorf(vf.line, vf.path, "want %d, got %s", Version, describe(v))
		return nil
	} else if n, err := strconv.ParseInt(v.Value, 0, 64); err != nil || n != Version {
		d.errorf(vf.line, vf.path, "unsupported version %s: this onceproof reads version %d", v.Value, Version)
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
	spec := &Spec{Version: Version, Path: d.file}
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
	t *Tool
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
func (d *specDecoder) tool(item *yaml.Node, i int) (Tool, bool) {
	n := deref(item)
	t := Tool{Line: n.Line, file: d.file, path: fmt.Sprintf("tools[%d]", i), lines: map[string]int{}}
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
	transports := sections()
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
	if len(set) > 0 {
		td.transportSection(set[0])
	}
	if f, ok := td.get(fs, "container"); ok {
		td.container(f)
		td.checkContainerURL()
	}
	if f, ok := td.get(fs, "downstream"); ok {
		td.downstream(f)
	}
	if f, ok := td.get(fs, "lookup"); ok {
		td.lookup(f)
	}
	if f, ok := td.get(fs, "long_running"); ok {
		td.longRunning(f)
	}
	if f, ok := td.get(fs, "result_id"); ok {
		if s, ok := d.str(f); ok {
			if _, err := harness.ParsePointer(s); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			}
			t.Common.ResultID = s
		}
	}
	td.contract(fs)
	if f, ok := td.need(fs, "oracle", "an oracle (http, command, sql or redis) that counts the tool's effects"); ok {
		t.Common.Oracle = td.oracle(f)
	}
	if len(d.errs) > before || t.Config == nil {
		return t, false
	}
	t.Common.Name, t.Common.Dir = t.Name, filepath.Dir(d.file)
	if h, ok := t.Config.(httpConfig); ok {
		// The http section and the sections decoded after it (lookup,
		// long_running, error_body) are the HTTP tool's configuration.
		t.HTTP = withCommon(t.HTTP, t.Common)
		h.c = t.HTTP
		t.Config = h
	}
	// Build the tool once, as if remote targets were allowed (whether they
	// are is the run's to say, see CheckTargets): it renders the request and
	// checks that the marker and key reach it.
	c := t.Common
	c.Guard = &harness.Guard{AllowRemote: true}
	tool, err := t.Config.Build(c)
	if err != nil {
		d.errs = append(d.errs, t.toolError(err))
		return t, false
	}
	closeTool(tool)
	return t, true
}
