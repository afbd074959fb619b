package spec

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/mcp"
	"github.com/onceproof/onceproof/harness/stdio"
	"github.com/onceproof/onceproof/harness/transport"
)

// Transports is the transport table: every way a spec reaches a tool, in
// the order the loader lists them. Adding a transport is one package and
// one row here (see package transport).
func Transports() []*transport.Kind {
	return []*transport.Kind{httpKind, mcp.Kind, stdio.Kind}
}

// httpKind is the HTTP transport: the tool is [harness.HTTPTool], its
// section decoded by spec_http.go (the lookup, long_running, downstream and
// container sections are its own).
var httpKind = &transport.Kind{
	Name:    "http",
	Section: "http",
	Fields:  httpFields,
	Records: []string{"http", "https"},
	Decode: func(s transport.Section) transport.Config {
		sd := s.(*section)
		sd.d.http(sd.f)
		return httpConfig{c: sd.d.t.HTTP}
	},
}

// httpConfig is the decoded http section.
type httpConfig struct{ c harness.HTTPConfig }

// Build implements transport.Config.
func (h httpConfig) Build(c transport.Common) (harness.Tool, error) {
	return harness.NewHTTPTool(withCommon(h.c, c))
}

// Targets implements transport.Config.
func (h httpConfig) Targets() []harness.Target {
	return []harness.Target{{Field: "http.url", URL: h.c.URL}}
}

// resolved is t, with a Tool built by hand in Go (only its HTTP set) read
// as the http tool it describes.
func (t Tool) resolved() Tool {
	if t.Config != nil {
		return t
	}
	t.Kind, t.Config = httpKind, httpConfig{c: t.HTTP}
	if t.Common.Oracle == nil {
		h := t.HTTP
		t.Common = transport.Common{Name: h.Name, Oracle: h.Oracle, ResultID: h.ResultID, Contract: h.Contract, Guard: h.Guard}
	}
	if t.Common.Name == "" {
		t.Common.Name = t.Name
	}
	return t
}

// withCommon is the HTTP configuration c with the fields every tool shares.
func withCommon(h harness.HTTPConfig, c transport.Common) harness.HTTPConfig {
	h.Name, h.Oracle, h.ResultID, h.Contract, h.Guard = c.Name, c.Oracle, c.ResultID, c.Contract, c.Guard
	return h
}

// sections are the spec sections of the transport table, in table order.
func sections() []string {
	var out []string
	for _, k := range Transports() {
		if !slices.Contains(out, k.Section) {
			out = append(out, k.Section)
		}
	}
	return out
}

// sectionFields are the fields a section allows: those of every row that
// reads it.
func sectionFields(name string) []string {
	var out []string
	for _, k := range Transports() {
		if k.Section != name {
			continue
		}
		for _, f := range k.Fields {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// RecordedTransports are the Request.Transport values of every row (the
// report schema's enum).
func RecordedTransports() []string {
	var out []string
	for _, k := range Transports() {
		out = append(out, k.Records...)
	}
	return out
}

// KindOf returns the row whose attempts record transport as
// Request.Transport (nil for none).
func KindOf(transport string) *transport.Kind {
	for _, k := range Transports() {
		if k.Recorded(transport) {
			return k
		}
	}
	return nil
}

// transportSection decodes the tool's transport section f: it picks the
// row (by the section's selector when rows share it) and decodes it.
func (d toolDecoder) transportSection(f field) {
	var rows []*transport.Kind
	for _, k := range Transports() {
		if k.Section == f.name {
			rows = append(rows, k)
		}
	}
	fs, ok := d.mapping(f, sectionFields(f.name))
	if !ok {
		return
	}
	kind := rows[0]
	if len(rows) > 1 {
		var set []field
		var names []string
		for _, k := range rows {
			names = append(names, k.Selector)
			if sf, ok := fs.m[k.Selector]; ok {
				set = append(set, sf)
				kind = k
			}
		}
		switch {
		case len(set) == 0:
			if !fs.misspelt(names...) {
				d.errorf(fs.line, joinField(f.path, names[0]), "missing: want %s", selectorWants(rows))
			}
			return
		case len(set) > 1:
			sort.Slice(set, func(i, j int) bool { return set[i].line < set[j].line })
			d.errorf(set[1].line, set[1].path, "the section has %s already (line %d): want one of %s", set[0].name, set[0].line, strings.Join(names, ", "))
			return
		}
		// A field of another row that shares the section is refused.
		for _, e := range fs.m {
			if !slices.Contains(kind.Fields, e.name) {
				d.errorf(e.line, e.path, "is not a field of %s with %s (its fields: %s)", f.name, kind.Selector, strings.Join(kind.Fields, ", "))
				delete(fs.m, e.name)
			}
		}
	}
	d.t.Kind = kind
	d.t.Config = kind.Decode(&section{d: d, f: f, fs: fs})
}

// selectorWants says what a shared section needs: "url (mcp) or command
// (mcp-stdio)".
func selectorWants(rows []*transport.Kind) string {
	var parts []string
	for _, k := range rows {
		parts = append(parts, fmt.Sprintf("%s (%s)", k.Selector, k.Name))
	}
	return strings.Join(parts, " or ")
}

// unsupported reports a tool-level section the tool's transport cannot
// have (f is that section); it reports whether it did.
func (d toolDecoder) unsupported(f field) bool {
	if d.t.Kind == nil {
		return false
	}
	msg, ok := d.t.Kind.Unsupported[f.name]
	if ok {
		d.errorf(f.line, f.path, "%s", msg)
	}
	return ok
}

// section implements transport.Section over a decoded mapping.
type section struct {
	d  toolDecoder
	f  field
	fs *fields
}

func (s *section) Has(name string) bool { return s.fs.has(name) }

func (s *section) get(name, want string) (field, bool) {
	if want != "" {
		return s.d.need(s.fs, name, want)
	}
	return s.d.get(s.fs, name)
}

func (s *section) String(name, want string) (string, bool) {
	f, ok := s.get(name, want)
	if !ok {
		return "", false
	}
	return s.d.str(f)
}

func (s *section) Strings(name, want string) ([]string, bool) {
	f, ok := s.get(name, "")
	if !ok {
		if want != "" && !s.fs.misspelt(name) {
			s.d.errorf(s.fs.line, joinField(s.fs.path, name), "missing: want %s", want)
		}
		return nil, false
	}
	before := len(s.d.errs)
	out := s.d.strings(f, want)
	return out, len(s.d.errs) == before
}

func (s *section) StringMap(name string) (map[string]string, bool) {
	f, ok := s.get(name, "")
	if !ok {
		return nil, false
	}
	before := len(s.d.errs)
	m, entries := s.d.stringMap(f)
	for _, e := range entries {
		s.d.t.lines[strings.TrimPrefix(e.path, s.d.t.path+".")] = e.line
	}
	return m, len(s.d.errs) == before
}

func (s *section) Template(name, what, want string) (string, bool) {
	f, ok := s.get(name, want)
	if !ok {
		return "", false
	}
	v, ok := s.d.str(f)
	if !ok {
		return "", false
	}
	if tpl, err := harness.ParseTemplate(what, v); err != nil {
		s.d.errorf(f.line, f.path, "%v", err)
		return v, false
	} else if _, err := tpl.Render(checkOp); err != nil {
		s.d.errorf(f.line, f.path, "%v", err)
		return v, false
	}
	return v, true
}

func (s *section) Int(name string, lo, hi int) (int, bool) {
	f, ok := s.get(name, "")
	if !ok {
		return 0, false
	}
	if f.val.Kind != yaml.ScalarNode || f.val.ShortTag() != "!!int" {
		s.d.errorf(f.line, f.path, "want a number from %d to %d, got %s", lo, hi, describe(f.val))
		return 0, false
	}
	n, err := strconv.Atoi(f.val.Value)
	if err != nil || n < lo || n > hi {
		s.d.errorf(f.line, f.path, "want a number from %d to %d, got %s", lo, hi, f.val.Value)
		return 0, false
	}
	return n, true
}

func (s *section) Duration(name string, max time.Duration) (time.Duration, bool) {
	f, ok := s.get(name, "")
	if !ok {
		return 0, false
	}
	return s.d.duration(f, false, max)
}

func (s *section) KeyFormat() harness.KeyFormat {
	format := harness.KeyUUID
	if v, ok := s.String("key_format", ""); ok {
		if kf, err := harness.ParseKeyFormat(v); err != nil {
			s.Errorf("key_format", "%v", err)
		} else {
			format = kf
		}
	}
	return format
}

func (s *section) Timeout() time.Duration {
	timeout := defaultToolTimeout
	if v, ok := s.Duration("timeout", MaxToolTimeout); ok {
		timeout = v
	}
	return timeout
}

func (s *section) Errorf(name, format string, args ...any) {
	if name == "" {
		s.d.errorf(s.f.line, s.f.path, format, args...)
		return
	}
	line := s.fs.line
	path := joinField(s.fs.path, name)
	if f, ok := s.fs.m[name]; ok {
		line = f.line
	} else if k, entry, ok := strings.Cut(name, "."); ok {
		// An entry of a mapping field (headers.NAME, env.NAME).
		path = joinField(s.fs.path, k) + fieldKey(entry)
		if f, ok := s.fs.m[k]; ok {
			line = f.line
		}
		if l, ok := s.d.t.lines[strings.TrimPrefix(path, s.d.t.path+".")]; ok {
			line = l
		}
	}
	s.d.errorf(line, path, format, args...)
}
