package spec

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// The fields of each section. A tool has exactly one transport section
// (see [Transports]).
var (
	specFields       = []string{"version", "tools"}
	toolFields       = append(append([]string{"name"}, append(sections(), "container", "downstream", "result_id", "oracle")...), append(slices.Clone(contractFields), "lookup", "long_running")...)
	httpFields       = []string{"url", "method", "headers", "body", "key_header", "key_format", "timeout", "error_body"}
	oracleFields     = []string{"http", "command", "sql", "redis", "timeout", "settle"}
	oracleHTTPFields = []string{"url", "count", "headers"}
)

// checkOp is the operation templates are rendered with at load time, so
// that execution errors surface before any run.
var checkOp = harness.Operation{ID: "op-check", Key: "key-check", Marker: "marker-check", Seed: 1}

// specDecoder walks a yaml.Node tree, collecting located errors.
type specDecoder struct {
	file string
	src  []byte
	errs []*Error
}

func (d *specDecoder) errorf(line int, field, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// err returns the collected errors in line order, without repeats (a node
// reached twice through an alias is reported once).
func (d *specDecoder) err() error {
	if len(d.errs) == 0 {
		return nil
	}
	sort.SliceStable(d.errs, func(i, j int) bool { return d.errs[i].Line < d.errs[j].Line })
	seen := map[Error]bool{}
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
		d.errorf(f.line, f.path, "duration %q is too long: at most %s", s, report.FormatDuration(max))
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
