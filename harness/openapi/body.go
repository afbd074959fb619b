package openapi

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi/datamodel/high/base"
)

// Limits of a body template.
const (
	// maxDepth bounds how deep required fields are followed.
	maxDepth = 8
	// optionalDepth: optional fields are considered (to carry the marker)
	// only in objects less deep than this (the body itself is depth 0).
	optionalDepth = 2
	// maxItems bounds the items an array gets (its minItems, at least 1).
	maxItems = 5
)

// markerKey is the key a free-form map (metadata) gets for the marker.
const markerKey = "onceproof_marker"

// descriptive are the names of the string fields that best carry the
// marker, best first.
var descriptive = []string{"description", "subject", "title", "name", "memo", "note", "notes", "comment", "summary", "message", "text", "label", "reference", "statement_descriptor"}

// A val is a value of a body template.
type val interface{ isVal() }

// objVal is an object; only included fields are rendered.
type objVal struct{ fields []*fieldVal }

type fieldVal struct {
	name    string
	v       val
	include bool
}

type arrVal struct{ items []val }

// strVal is a string of literal text and template actions.
type strVal struct{ parts []part }

type part struct{ lit, tpl string }

// rawVal is a JSON literal (a number, true, null) or a template action
// that renders one.
type rawVal struct{ lit, tpl string }

func (*objVal) isVal() {}
func (*arrVal) isVal() {}
func (*strVal) isVal() {}
func (*rawVal) isVal() {}

// builder builds a value from a schema, remembering what it invented and
// where the marker could go.
type builder struct {
	// literal builds values without template actions (for the URL).
	literal bool
	// stack holds the references being expanded, to stop at cycles.
	stack []string
	// records are notes tied to the fields that lead to them: they are
	// reported only if those fields end up in the body.
	records []record
	cands   []candidate
}

type record struct {
	chain []*fieldVal
	// made marks a value made up: what, at path; otherwise note.
	made       bool
	path, what string
	note       string
}

// candidate is a place for the marker: a string (str set) or a free-form
// map that gets a markerKey entry (obj set).
type candidate struct {
	path  string
	score int
	chain []*fieldVal
	str   *strVal
	parts []part
	obj   *objVal
}

func (b *builder) note(chain []*fieldVal, path, format string, args ...any) {
	if path == "" {
		path = "the body"
	}
	b.records = append(b.records, record{chain: slices.Clone(chain), note: path + ": " + fmt.Sprintf(format, args...)})
}

func (b *builder) invent(chain []*fieldVal, path, what string) {
	b.records = append(b.records, record{chain: slices.Clone(chain), made: true, path: path, what: what})
}

// included reports whether every field of chain is rendered.
func included(chain []*fieldVal) bool {
	for _, f := range chain {
		if !f.include {
			return false
		}
	}
	return true
}

// value builds the value of schema s at path. ex is an example for it from
// an enclosing example (nil if none).
func (b *builder) value(p *base.SchemaProxy, path string, depth int, chain []*fieldVal, ex *yaml.Node) val {
	s := flatten(p, 0)
	if s == nil {
		if ex != nil {
			return literal(ex)
		}
		b.invent(chain, path, "null: no schema")
		return &rawVal{lit: "null"}
	}
	if s.ref != "" {
		if slices.Contains(b.stack, s.ref) || depth > maxDepth {
			b.note(chain, path, "stopped at a recursive or too deep schema (%s)", s.ref)
			if ex != nil {
				return literal(ex)
			}
			if s.kind() == "array" {
				return &arrVal{}
			}
			return &objVal{}
		}
		b.stack = append(b.stack, s.ref)
		defer func() { b.stack = b.stack[:len(b.stack)-1] }()
	}
	for _, n := range s.notes {
		b.note(chain, path, "%s", n)
	}
	if ex == nil {
		ex = firstNode(s.cnst, s.example, s.def)
		if ex == nil && len(s.enum) > 0 {
			ex = s.enum[0]
		}
	}
	kind := s.kind()
	switch {
	case kind == "object" || ex != nil && ex.Kind == yaml.MappingNode:
		return b.object(s, path, depth, chain, ex)
	case kind == "array":
		return b.array(s, path, depth, chain, ex)
	case ex != nil && kind == "string" && ex.Kind == yaml.ScalarNode:
		v := &strVal{parts: []part{{lit: ex.Value}}}
		if s.cnst == nil && len(s.enum) == 0 {
			b.candidate(s, path, depth, chain, v, ex.Value)
		}
		return v
	case ex != nil:
		return literal(ex)
	case kind == "string":
		v := &strVal{parts: []part{{lit: inventString(s)}}}
		b.invent(chain, path, strconv.Quote(v.parts[0].lit))
		b.candidate(s, path, depth, chain, v, "")
		return v
	case kind == "integer" || kind == "number":
		v := b.number(s)
		b.invent(chain, path, v.lit+v.tpl)
		return v
	case kind == "boolean":
		b.invent(chain, path, "false")
		return &rawVal{lit: "false"}
	}
	b.invent(chain, path, "null: the schema gives no type")
	return &rawVal{lit: "null"}
}

func firstNode(ns ...*yaml.Node) *yaml.Node {
	for _, n := range ns {
		if n != nil {
			return n
		}
	}
	return nil
}

// object builds an object: its required fields and those in the example,
// and (near the top) its optional fields, left out unless one is chosen to
// carry the marker.
func (b *builder) object(s *flat, path string, depth int, chain []*fieldVal, ex *yaml.Node) val {
	o := &objVal{}
	exFields := mappingFields(ex)
	for _, p := range s.props {
		sub, inEx := exFields[p.name]
		include := s.required[p.name] || inEx
		if !include && (depth >= optionalDepth || b.literal) {
			continue
		}
		f := &fieldVal{name: p.name, include: include}
		o.fields = append(o.fields, f)
		f.v = b.value(p.schema, path+"/"+p.name, depth+1, append(chain, f), sub)
	}
	if ex != nil && ex.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(ex.Content); i += 2 {
			name := ex.Content[i].Value
			if !slices.ContainsFunc(s.props, func(p prop) bool { return p.name == name }) {
				o.fields = append(o.fields, &fieldVal{name: name, v: literal(ex.Content[i+1]), include: true})
			}
		}
	}
	if !b.literal && depth < optionalDepth && (s.anyValue || s.additional != nil && flatten(s.additional, 0).acceptsMarker()) {
		b.cands = append(b.cands, candidate{path: path + "/" + markerKey, score: 500 + depth*100, chain: slices.Clone(chain), obj: o})
	}
	return o
}

// acceptsMarker reports whether a free-form map's values may be strings.
func (f *flat) acceptsMarker() bool {
	return f == nil || f.kind() == "" || f.kind() == "string" && f.accepts("onceproof-00000000-m00000000")
}

// mappingFields indexes a mapping node's values by key.
func mappingFields(n *yaml.Node) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	if n == nil || n.Kind != yaml.MappingNode {
		return m
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = n.Content[i+1]
	}
	return m
}

// array builds an array: the example's items, or minItems (at least one)
// items built from the item schema.
func (b *builder) array(s *flat, path string, depth int, chain []*fieldVal, ex *yaml.Node) val {
	a := &arrVal{}
	if ex != nil && ex.Kind == yaml.SequenceNode {
		for i, item := range ex.Content {
			if s.items != nil {
				a.items = append(a.items, b.value(s.items, fmt.Sprintf("%s/%d", path, i), depth+1, chain, item))
			} else {
				a.items = append(a.items, literal(item))
			}
		}
		return a
	}
	if s.items == nil {
		return a
	}
	n := 1
	if s.minItems != nil {
		n = int(min(max(*s.minItems, 1), maxItems))
	}
	for i := range n {
		a.items = append(a.items, b.value(s.items, fmt.Sprintf("%s/%d", path, i), depth+1, chain, nil))
	}
	return a
}

// inventString makes up a string that fits the schema's format and
// minimum length.
func inventString(s *flat) string {
	v := "onceproof"
	switch s.format {
	case "date":
		v = "2024-01-02"
	case "date-time":
		v = "2024-01-02T03:04:05Z"
	case "time":
		v = "03:04:05"
	case "uuid":
		v = "00000000-0000-4000-8000-000000000000"
	case "email":
		v = "onceproof@example.com"
	case "uri", "url", "iri":
		v = "https://example.com/onceproof"
	case "hostname":
		v = "example.com"
	case "ipv4":
		v = "192.0.2.1"
	case "ipv6":
		v = "2001:db8::1"
	}
	if s.minLen != nil && int64(len(v)) < *s.minLen {
		v += strings.Repeat("x", int(*s.minLen)-len(v))
	}
	return v
}

// number draws an integer from the schema's range with {{.Int lo hi}} (or
// {{.Pick}} among multiples of multipleOf); a literal builder takes the
// lowest value.
func (b *builder) number(s *flat) *rawVal {
	lo, hi := 1.0, 100.0
	switch {
	case s.minimum != nil && s.maximum != nil:
		lo, hi = *s.minimum, *s.maximum
	case s.minimum != nil:
		lo, hi = *s.minimum, *s.minimum+99
	case s.maximum != nil:
		lo, hi = math.Min(1, *s.maximum-99), *s.maximum
	}
	ilo, ihi := int64(math.Ceil(lo)), int64(math.Floor(hi))
	if s.exclMin && float64(ilo) == lo {
		ilo++
	}
	if s.exclMax && float64(ihi) == hi {
		ihi--
	}
	if ihi < ilo { // a range without an integer: take its middle
		return &rawVal{lit: strconv.FormatFloat((lo+hi)/2, 'f', -1, 64)}
	}
	if m := s.multipleOf; m != nil && *m > 0 {
		var picks []string
		for k := math.Ceil(float64(ilo) / *m); k**m <= float64(ihi) && len(picks) < 5; k++ {
			picks = append(picks, strconv.FormatFloat(k**m, 'f', -1, 64))
		}
		switch {
		case len(picks) == 0:
		case b.literal || len(picks) == 1:
			return &rawVal{lit: picks[0]}
		default:
			return &rawVal{tpl: `{{.Pick "` + strings.Join(picks, `" "`) + `"}}`}
		}
	}
	if b.literal || ilo == ihi {
		return &rawVal{lit: strconv.FormatInt(ilo, 10)}
	}
	return &rawVal{tpl: fmt.Sprintf("{{.Int %d %d}}", ilo, ihi)}
}

// literal turns an example node into a value, as written.
func literal(n *yaml.Node) val {
	switch n.Kind {
	case yaml.MappingNode:
		o := &objVal{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			o.fields = append(o.fields, &fieldVal{name: n.Content[i].Value, v: literal(n.Content[i+1]), include: true})
		}
		return o
	case yaml.SequenceNode:
		a := &arrVal{}
		for _, item := range n.Content {
			a.items = append(a.items, literal(item))
		}
		return a
	case yaml.AliasNode:
		if n.Alias != nil {
			return literal(n.Alias)
		}
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int", "!!float", "!!bool", "!!null":
		default: // strings, and timestamps and the like as written
			return &strVal{parts: []part{{lit: n.Value}}}
		}
		var v any
		if err := n.Decode(&v); err == nil {
			if s, ok := v.(string); ok {
				return &strVal{parts: []part{{lit: s}}}
			}
			if data, err := json.Marshal(v); err == nil {
				return &rawVal{lit: string(data)}
			}
		}
		return &strVal{parts: []part{{lit: n.Value}}}
	}
	return &rawVal{lit: "null"}
}

// candidate offers the string v at path as the marker's place. prefix is
// the text kept before the marker (an example), "" for "onceproof".
func (b *builder) candidate(s *flat, path string, depth int, chain []*fieldVal, v *strVal, prefix string) {
	if b.literal {
		return
	}
	const marker = "{{.Marker}}"
	const markerLen = len("onceproof-00000000-m00000000")
	name := strings.ToLower(path[strings.LastIndex(path, "/")+1:])
	var parts []part
	score := 1000
	switch s.format {
	case "":
		if prefix == "" || len(prefix) > 40 {
			prefix = "onceproof"
		}
		parts = []part{{lit: prefix + " "}, {tpl: marker}}
		if s.maxLen != nil && int64(len(prefix)+1+markerLen) > *s.maxLen {
			parts = parts[1:]
		}
		if i := slices.Index(descriptive, name); i >= 0 {
			score = i * 2
		}
	case "email":
		parts, score = []part{{tpl: marker}, {lit: "@example.com"}}, 1300
	case "uri", "url":
		parts, score = []part{{lit: "https://example.com/"}, {tpl: marker}}, 1300
	default:
		return // a date, a uuid...: no room for a marker
	}
	if s.pattern != "" {
		re, err := regexp.Compile(s.pattern)
		sample := func(ps []part) string {
			var sb strings.Builder
			for _, p := range ps {
				sb.WriteString(p.lit)
				if p.tpl != "" {
					sb.WriteString("onceproof-00000000-m00000000")
				}
			}
			return sb.String()
		}
		switch {
		case err != nil:
			score += 400 // Go cannot check it: the marker may not match it
		case re.MatchString(sample(parts)):
		case len(parts) == 2 && parts[1].tpl != "" && re.MatchString(sample(parts[1:])):
			parts = parts[1:]
		default:
			return // the marker cannot match it
		}
	}
	n := 0
	for _, p := range parts {
		n += len(p.lit)
	}
	if s.maxLen != nil && int64(n+markerLen) > *s.maxLen {
		return
	}
	score += depth * 100
	if !included(chain) {
		score++
	}
	b.cands = append(b.cands, candidate{path: path, score: score, chain: slices.Clone(chain), str: v, parts: parts})
}

// placeMarker puts the marker in the best candidate, including the fields
// that lead to it. It returns the path it chose ("" if none) and whether
// that field was optional.
func (b *builder) placeMarker() (string, bool) {
	if len(b.cands) == 0 {
		return "", false
	}
	best := b.cands[0]
	for _, c := range b.cands[1:] {
		if c.score < best.score {
			best = c
		}
	}
	optional := !included(best.chain)
	for _, f := range best.chain {
		f.include = true
	}
	if best.obj != nil {
		best.obj.fields = append(best.obj.fields, &fieldVal{name: markerKey, v: &strVal{parts: []part{{tpl: "{{.Marker}}"}}}, include: true})
	} else {
		best.str.parts = best.parts
	}
	return best.path, optional
}

// report lists what was invented (but for the values at skip, which the
// marker or the key replaced) and the notes, for the fields rendered.
func (b *builder) report(skip ...string) (invented, notes []string) {
	for _, r := range b.records {
		if !included(r.chain) || r.made && slices.Contains(skip, r.path) {
			continue
		}
		if r.made {
			invented = append(invented, fmt.Sprintf("%s (%s)", r.path, r.what))
		} else if !slices.Contains(notes, r.note) {
			notes = append(notes, r.note)
		}
	}
	return invented, notes
}

// leftOut lists the optional top-level fields of a rendered object that are
// not rendered.
func leftOut(v val) []string {
	o, ok := v.(*objVal)
	if !ok {
		return nil
	}
	var out []string
	for _, f := range o.fields {
		if !f.include {
			out = append(out, f.name)
		}
	}
	return out
}

// escapeTemplate makes literal text safe in a text/template.
func escapeTemplate(s string) string {
	return strings.ReplaceAll(s, "{{", `{{"{{"}}`)
}

// renderJSON writes v as a JSON template.
func renderJSON(sb *strings.Builder, v val) {
	switch x := v.(type) {
	case *objVal:
		sb.WriteByte('{')
		first := true
		for _, f := range x.fields {
			if !f.include {
				continue
			}
			if !first {
				sb.WriteByte(',')
			}
			first = false
			sb.WriteString(escapeTemplate(jsonString(f.name)))
			sb.WriteByte(':')
			renderJSON(sb, f.v)
		}
		sb.WriteByte('}')
	case *arrVal:
		sb.WriteByte('[')
		for i, item := range x.items {
			if i > 0 {
				sb.WriteByte(',')
			}
			renderJSON(sb, item)
		}
		sb.WriteByte(']')
	case *strVal:
		sb.WriteByte('"')
		for _, p := range x.parts {
			if p.tpl != "" {
				sb.WriteString(p.tpl)
			} else {
				s := jsonString(p.lit)
				sb.WriteString(escapeTemplate(s[1 : len(s)-1]))
			}
		}
		sb.WriteByte('"')
	case *rawVal:
		sb.WriteString(x.lit + x.tpl)
	}
}

func jsonString(s string) string {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(sb.String(), "\n")
}

// renderForm writes v, an object, as an application/x-www-form-urlencoded
// template with nested fields spelt the Stripe way: a[b]=1&c[0]=x.
func renderForm(v val) string {
	var pairs []string
	var walk func(key string, v val)
	walk = func(key string, v val) {
		switch x := v.(type) {
		case *objVal:
			for _, f := range x.fields {
				if !f.include {
					continue
				}
				k := url.QueryEscape(f.name)
				if key != "" {
					k = key + "[" + k + "]"
				}
				walk(k, f.v)
			}
		case *arrVal:
			for i, item := range x.items {
				walk(fmt.Sprintf("%s[%d]", key, i), item)
			}
		case *strVal:
			var sb strings.Builder
			for _, p := range x.parts {
				if p.tpl != "" {
					sb.WriteString(p.tpl)
				} else {
					sb.WriteString(url.QueryEscape(p.lit))
				}
			}
			pairs = append(pairs, escapeTemplate(key)+"="+sb.String())
		case *rawVal:
			value := x.tpl
			if x.lit != "" && x.lit != "null" {
				value = url.QueryEscape(strings.Trim(x.lit, `"`))
			}
			pairs = append(pairs, escapeTemplate(key)+"="+value)
		}
	}
	walk("", v)
	return strings.Join(pairs, "&")
}

// plain renders a value built by a literal builder as parameter text.
func plain(v val) string {
	switch x := v.(type) {
	case *strVal:
		var sb strings.Builder
		for _, p := range x.parts {
			sb.WriteString(p.lit)
		}
		return sb.String()
	case *rawVal:
		if x.lit == "null" {
			return ""
		}
		return strings.Trim(x.lit, `"`)
	case *arrVal:
		items := make([]string, len(x.items))
		for i, item := range x.items {
			items[i] = plain(item)
		}
		return strings.Join(items, ",")
	}
	var sb strings.Builder
	renderJSON(&sb, v)
	return sb.String()
}
