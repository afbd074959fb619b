package openapi

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi/datamodel/high/base"
)

// maxFlattenDepth bounds nested allOf/oneOf chains.
const maxFlattenDepth = 16

// flat is a schema with allOf merged and the first oneOf/anyOf branch
// folded in: what a body template is built from.
type flat struct {
	// ref is the reference the schema was reached through ("" if inline).
	ref string
	// types are the schema's types without "null".
	types    []string
	props    []prop
	required map[string]bool

	// The values the document states, in the order they are preferred.
	cnst, example, def *yaml.Node
	enum               []*yaml.Node

	format, pattern  string
	minLen, maxLen   *int64
	minimum, maximum *float64
	exclMin, exclMax bool
	multipleOf       *float64
	items            *base.SchemaProxy
	minItems         *int64
	// additional is additionalProperties as a schema; anyValue is set for
	// additionalProperties: true.
	additional *base.SchemaProxy
	anyValue   bool

	// notes say which oneOf/anyOf branch was taken.
	notes []string
}

type prop struct {
	name   string
	schema *base.SchemaProxy
}

// flatten resolves p (following $ref) into a flat schema; nil when p is nil
// or its schema cannot be built.
func flatten(p *base.SchemaProxy, depth int) *flat {
	if p == nil || depth > maxFlattenDepth {
		return nil
	}
	s := p.Schema()
	if s == nil {
		return nil
	}
	f := &flat{ref: p.GetReference(), required: map[string]bool{}}
	f.add(s, depth)
	return f
}

// has reports whether the schema is of type t.
func (f *flat) has(t string) bool { return slices.Contains(f.types, t) }

// kind is the type a value is built for: the first type, or what the
// keywords imply.
func (f *flat) kind() string {
	switch {
	case len(f.types) > 0:
		return f.types[0]
	case len(f.props) > 0 || f.additional != nil || f.anyValue:
		return "object"
	case f.items != nil:
		return "array"
	case f.minimum != nil || f.maximum != nil:
		return "number"
	case f.format != "" || f.pattern != "" || f.minLen != nil || f.maxLen != nil:
		return "string"
	}
	return ""
}

// add merges s (and its allOf branches, and the first usable oneOf/anyOf
// branch) into f. What f already has wins.
func (f *flat) add(s *base.Schema, depth int) {
	for _, t := range s.Type {
		if t != "null" && !f.has(t) {
			f.types = append(f.types, t)
		}
	}
	if s.Properties != nil {
		for name, p := range s.Properties.FromOldest() {
			if !slices.ContainsFunc(f.props, func(q prop) bool { return q.name == name }) {
				f.props = append(f.props, prop{name, p})
			}
		}
	}
	for _, r := range s.Required {
		f.required[r] = true
	}
	first := func(dst **yaml.Node, n *yaml.Node) {
		if *dst == nil && n != nil {
			*dst = n
		}
	}
	first(&f.cnst, s.Const)
	first(&f.example, s.Example)
	if len(s.Examples) > 0 {
		first(&f.example, s.Examples[0])
	}
	first(&f.def, s.Default)
	if f.enum == nil && len(s.Enum) > 0 {
		f.enum = s.Enum
	}
	setStr := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	setStr(&f.format, s.Format)
	setStr(&f.pattern, s.Pattern)
	f.minLen = firstPtr(f.minLen, s.MinLength)
	f.maxLen = firstPtr(f.maxLen, s.MaxLength)
	f.minItems = firstPtr(f.minItems, s.MinItems)
	f.multipleOf = firstPtr(f.multipleOf, s.MultipleOf)
	if f.minimum == nil {
		f.minimum = s.Minimum
		if e := s.ExclusiveMinimum; e != nil {
			if e.IsB() { // 3.1: a number
				v := e.B
				f.minimum, f.exclMin = &v, true
			} else if e.A && f.minimum != nil {
				f.exclMin = true
			}
		}
	}
	if f.maximum == nil {
		f.maximum = s.Maximum
		if e := s.ExclusiveMaximum; e != nil {
			if e.IsB() {
				v := e.B
				f.maximum, f.exclMax = &v, true
			} else if e.A && f.maximum != nil {
				f.exclMax = true
			}
		}
	}
	if f.items == nil && s.Items != nil && s.Items.IsA() {
		f.items = s.Items.A
	}
	if a := s.AdditionalProperties; a != nil && f.additional == nil && !f.anyValue {
		if a.IsA() {
			f.additional = a.A
		} else {
			f.anyValue = a.B
		}
	}
	for _, b := range s.AllOf {
		if sub := b.Schema(); sub != nil && depth < maxFlattenDepth {
			f.add(sub, depth+1)
		}
	}
	for _, alt := range []struct {
		kw       string
		branches []*base.SchemaProxy
	}{{"oneOf", s.OneOf}, {"anyOf", s.AnyOf}} {
		if len(alt.branches) == 0 || depth >= maxFlattenDepth {
			continue
		}
		i, sub := firstBranch(alt.branches)
		if sub == nil {
			continue
		}
		name := branchName(alt.branches[i], i)
		if len(alt.branches) > 1 {
			f.notes = append(f.notes, fmt.Sprintf("%s: took %s, branch %d of %d", alt.kw, name, i+1, len(alt.branches)))
		}
		f.add(sub, depth+1)
		if d := s.Discriminator; d != nil && d.PropertyName != "" && f.cnst == nil {
			f.discriminate(d, alt.branches[i], name)
		}
	}
}

// discriminate fixes the discriminator property of the branch taken to the
// value that selects it, unless the branch already pins it.
func (f *flat) discriminate(d *base.Discriminator, branch *base.SchemaProxy, name string) {
	value := name
	if ref := branch.GetReference(); ref != "" && d.Mapping != nil {
		for k, v := range d.Mapping.FromOldest() {
			if v == ref || strings.HasSuffix(ref, "/"+v) || v == name {
				value = k
				break
			}
		}
	}
	for i, p := range f.props {
		if p.name != d.PropertyName {
			continue
		}
		if sub := flatten(p.schema, 1); sub != nil && (sub.cnst != nil || len(sub.enum) == 1) {
			return
		}
		f.props[i].schema = base.CreateSchemaProxy(&base.Schema{Type: []string{"string"}, Const: &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}})
		f.required[d.PropertyName] = true
		return
	}
	f.props = append(f.props, prop{d.PropertyName, base.CreateSchemaProxy(&base.Schema{Type: []string{"string"}, Const: &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}})})
	f.required[d.PropertyName] = true
}

// firstBranch returns the first branch that is not just null.
func firstBranch(branches []*base.SchemaProxy) (int, *base.Schema) {
	for i, b := range branches {
		s := b.Schema()
		if s == nil {
			continue
		}
		if len(s.Type) == 1 && s.Type[0] == "null" {
			continue
		}
		return i, s
	}
	return 0, nil
}

// branchName names a oneOf branch by its reference, title or position.
func branchName(b *base.SchemaProxy, i int) string {
	if ref := b.GetReference(); ref != "" {
		return ref[strings.LastIndex(ref, "/")+1:]
	}
	if s := b.Schema(); s != nil && s.Title != "" {
		return s.Title
	}
	return fmt.Sprintf("branch %d", i+1)
}

func firstPtr[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

// accepts reports whether the string v satisfies the schema's string
// keywords (a pattern Go cannot compile is not held against it).
func (f *flat) accepts(v string) bool {
	if len(f.types) > 0 && !f.has("string") || f.cnst != nil || len(f.enum) > 0 {
		return false
	}
	n := int64(len([]rune(v)))
	if f.maxLen != nil && n > *f.maxLen || f.minLen != nil && n < *f.minLen {
		return false
	}
	if f.format == "uuid" && !uuidRE.MatchString(v) {
		return false
	}
	if f.pattern != "" {
		if re, err := regexp.Compile(f.pattern); err == nil && !re.MatchString(v) {
			return false
		}
	}
	return true
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
