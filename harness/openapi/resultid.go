package openapi

import (
	"fmt"
	"strings"

	"github.com/pb33f/go-yaml"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// ResultID picks the JSON pointer naming the result in op's 2xx JSON
// response, with a note saying what showed it ("" and why when nothing
// does). The document's structure comes before names:
//
//  1. a link of the response to another operation whose parameter is
//     $response.body#/POINTER (the document says which field names it);
//  2. the resource's own GET — the collection's path and /{param}, the
//     operation's own path for a PUT to a resource: the response field the
//     parameter names ({Sid} is sid, {issue_number} is number, {customer}
//     and {ticket_id} are id), in the body or in an envelope named like
//     the resource ({"payment": {...}});
//  3. a Location header whose example ends in a value a body example
//     holds;
//  4. names: id, a *_id or *Id field, the id of an envelope (data, result,
//     item...).
func (d *Document) ResultID(op *Operation) (string, string) {
	if op.op.Responses == nil || op.op.Responses.Codes == nil {
		return "", "the operation declares no responses"
	}
	if p, how := d.linkedID(op); p != "" {
		return p, how
	}
	if p, how := d.resourceID(op); p != "" {
		return p, how
	}
	if p, how := locationID(op); p != "" {
		return p, how
	}
	return namedResultID(op)
}

// namedResultID picks the result's id by its name alone.
func namedResultID(op *Operation) (string, string) {
	for code, schema := range jsonResults(op) {
		s := flatten(schema, 0)
		if p, how := idField(s); p != "" {
			return p, fmt.Sprintf("%s of the %s response", how, code)
		}
		for _, env := range []string{"data", "result", "item", "resource", "object"} {
			for _, pr := range s.propsNamed(env) {
				if p, how := idField(flatten(pr.schema, 1)); p != "" {
					return "/" + escapePointer(pr.name) + p, fmt.Sprintf("%s inside %q of the %s response", how, pr.name, code)
				}
			}
		}
	}
	return "", "the 2xx response declares no id field: set result_id if it has one"
}

// successResponses yields op's 2xx responses with their codes, in
// resultCodes order.
func successResponses(op *Operation) func(yield func(string, *v3.Response) bool) {
	return func(yield func(string, *v3.Response) bool) {
		for _, code := range resultCodes {
			if resp, ok := op.op.Responses.Codes.Get(code); ok && resp != nil && !yield(code, resp) {
				return
			}
		}
	}
}

// linkedID reads the pointer a response link passes to another operation
// ($response.body#/id), preferring a link to a GET.
func (d *Document) linkedID(op *Operation) (string, string) {
	type found struct{ ptr, how string }
	var any *found
	for code, resp := range successResponses(op) {
		if resp.Links == nil {
			continue
		}
		for name, l := range resp.Links.FromOldest() {
			if l == nil || l.Parameters == nil {
				continue
			}
			for param, expr := range l.Parameters.FromOldest() {
				ptr, ok := strings.CutPrefix(strings.TrimSpace(expr), "$response.body#")
				if !ok || !strings.HasPrefix(ptr, "/") || !d.bodyHas(op, ptr) {
					continue
				}
				f := found{ptr, fmt.Sprintf("the %s response's link %q passes it as %s", code, name, param)}
				if target := d.operationByID(l.OperationId); target != nil && target.Method == "GET" {
					f.how += " to " + target.Method + " " + target.Path
					return f.ptr, f.how
				}
				if any == nil {
					any = &f
				}
			}
		}
	}
	if any != nil {
		return any.ptr, any.how
	}
	return "", ""
}

func (d *Document) operationByID(id string) *Operation {
	for _, o := range d.Operations {
		if id != "" && o.ID == id {
			return o
		}
	}
	return nil
}

// bodyHas reports whether pointer names a property of one of op's 2xx JSON
// response schemas.
func (d *Document) bodyHas(op *Operation, pointer string) bool {
	for _, schema := range jsonResults(op) {
		s := flatten(schema, 0)
		tokens := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
		for i, t := range tokens {
			t = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
			ps := s.propsNamed(t)
			if len(ps) == 0 || ps[0].name != t {
				break
			}
			if i == len(tokens)-1 {
				return true
			}
			s = flatten(ps[0].schema, 1)
		}
	}
	return false
}

// resourceID finds the field of op's response that the resource's own GET
// takes as its path parameter.
func (d *Document) resourceID(op *Operation) (string, string) {
	for _, g := range d.Operations {
		if g.Method != "GET" {
			continue
		}
		param, noun, ok := itemOf(g.Path, op.Path)
		if !ok && (op.Method == "PUT" || op.Method == "PATCH") && g.Path == op.Path {
			param, noun, ok = ownItem(op.Path)
		}
		if !ok {
			continue
		}
		for code, schema := range jsonResults(op) {
			if p := fieldFor(flatten(schema, 0), param, noun); p != "" {
				return p, fmt.Sprintf("the %s response's field that GET %s takes as {%s}", code, g.Path, param)
			}
		}
	}
	return "", ""
}

// itemOf reports whether item is the path of one member of the collection
// at coll (coll plus /{param}, the same extension on both, the collection's
// own parameters under any name), and returns the member's parameter and
// the collection's noun, singular.
func itemOf(item, coll string) (param, noun string, ok bool) {
	item, ext := cutExtension(item)
	coll, ext2 := cutExtension(coll)
	if ext != ext2 {
		return "", "", false
	}
	is, cs := strings.Split(strings.Trim(item, "/"), "/"), strings.Split(strings.Trim(coll, "/"), "/")
	if len(is) != len(cs)+1 || !isParam(is[len(is)-1]) {
		return "", "", false
	}
	for i, c := range cs {
		if isParam(c) != isParam(is[i]) || !isParam(c) && c != is[i] {
			return "", "", false
		}
	}
	return strings.Trim(is[len(is)-1], "{}"), nounOf(cs), true
}

// ownItem is the last parameter of a resource's own path (PUT
// /things/{id}) and the noun of its collection.
func ownItem(path string) (param, noun string, ok bool) {
	path, _ = cutExtension(path)
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) < 2 || !isParam(segs[len(segs)-1]) {
		return "", "", false
	}
	return strings.Trim(segs[len(segs)-1], "{}"), nounOf(segs[:len(segs)-1]), true
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// cutExtension splits a trailing .json or .xml off a path.
func cutExtension(path string) (string, string) {
	for _, ext := range []string{".json", ".xml"} {
		if p, ok := strings.CutSuffix(path, ext); ok {
			return p, ext
		}
	}
	return path, ""
}

// nounOf is the singular of a collection path's last static segment
// (Messages → message, addresses → address, categories → category).
func nounOf(segs []string) string {
	for i := len(segs) - 1; i >= 0; i-- {
		if s := segs[i]; !isParam(s) {
			s = norm(s)
			switch {
			case strings.HasSuffix(s, "ies"):
				return strings.TrimSuffix(s, "ies") + "y"
			case strings.HasSuffix(s, "sses"), strings.HasSuffix(s, "xes"), strings.HasSuffix(s, "ches"), strings.HasSuffix(s, "shes"):
				return strings.TrimSuffix(s, "es")
			case strings.HasSuffix(s, "s"):
				return strings.TrimSuffix(s, "s")
			}
			return s
		}
	}
	return ""
}

// norm spells a name for comparison: lower case, without _ and -.
func norm(s string) string {
	return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
}

// fieldFor finds the field of s that path parameter param names: a field
// spelt like it (Sid, sid); the parameter without the resource's noun
// ({issue_number} is number, {ticket_id} and {customer} are id); inside an
// envelope named like the resource when the body has one.
func fieldFor(s *flat, param, noun string) string {
	if s == nil {
		return ""
	}
	want := []string{norm(param)}
	if rest, ok := strings.CutPrefix(norm(param), noun); ok && noun != "" {
		if rest == "" {
			rest = "id"
		}
		want = append(want, rest)
	} else if strings.HasSuffix(norm(param), "id") {
		want = append(want, "id")
	}
	for _, w := range want {
		for _, p := range s.props {
			if norm(p.name) == w {
				return "/" + escapePointer(p.name)
			}
		}
	}
	for _, p := range s.props {
		if norm(p.name) == noun {
			if sub := fieldFor(flatten(p.schema, 1), param, noun); sub != "" {
				return "/" + escapePointer(p.name) + sub
			}
		}
	}
	return ""
}

// locationID matches the last segment of a Location header's example with
// a value the 2xx body's examples hold.
func locationID(op *Operation) (string, string) {
	for code, resp := range successResponses(op) {
		if resp.Headers == nil {
			continue
		}
		for name, h := range resp.Headers.FromOldest() {
			if !strings.EqualFold(name, "Location") || h == nil {
				continue
			}
			loc := scalarOf(h.Example)
			if loc == "" && h.Schema != nil {
				if s := flatten(h.Schema, 0); s != nil {
					loc = scalarOf(s.example)
				}
			}
			loc, _ = cutExtension(strings.TrimRight(loc, "/"))
			last := loc[strings.LastIndexByte(loc, '/')+1:]
			if last == "" {
				continue
			}
			if resp.Content == nil {
				continue
			}
			for ct, mt := range resp.Content.FromOldest() {
				if mt == nil || !strings.Contains(strings.ToLower(ct), "json") {
					continue
				}
				if p := exampleHolding(mt.Example, last, 0); p != "" {
					return p, fmt.Sprintf("the %s response's example holds the id its Location ends in", code)
				}
				if p := schemaExampleHolding(flatten(mt.Schema, 0), last, 0); p != "" {
					return p, fmt.Sprintf("the %s response's field whose example is the id its Location ends in", code)
				}
			}
		}
	}
	return "", ""
}

func scalarOf(n *yaml.Node) string {
	if n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// exampleHolding finds the pointer to value in an example document.
func exampleHolding(n *yaml.Node, value string, depth int) string {
	if n == nil || depth > 3 || n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		if v.Kind == yaml.ScalarNode && v.Value == value {
			return "/" + escapePointer(k)
		}
		if sub := exampleHolding(v, value, depth+1); sub != "" {
			return "/" + escapePointer(k) + sub
		}
	}
	return ""
}

// schemaExampleHolding finds the property whose example is value.
func schemaExampleHolding(s *flat, value string, depth int) string {
	if s == nil || depth > 3 {
		return ""
	}
	for _, p := range s.props {
		ps := flatten(p.schema, depth+1)
		if ps == nil {
			continue
		}
		if scalarOf(ps.example) == value {
			return "/" + escapePointer(p.name)
		}
		if sub := schemaExampleHolding(ps, value, depth+1); sub != "" {
			return "/" + escapePointer(p.name) + sub
		}
	}
	return ""
}

// idField finds the id among a schema's properties.
func idField(s *flat) (string, string) {
	if s == nil {
		return "", ""
	}
	for _, p := range s.props {
		if strings.EqualFold(p.name, "id") {
			return "/" + escapePointer(p.name), fmt.Sprintf("%q", p.name)
		}
	}
	var others []string
	for _, p := range s.props {
		n := p.name
		if strings.HasSuffix(strings.ToLower(n), "_id") || strings.HasSuffix(n, "Id") || strings.HasSuffix(n, "ID") || strings.EqualFold(n, "uuid") {
			others = append(others, n)
		}
	}
	if len(others) == 0 {
		return "", ""
	}
	how := fmt.Sprintf("%q", others[0])
	if len(others) > 1 {
		how += fmt.Sprintf(" (first of %s)", strings.Join(others, ", "))
	}
	return "/" + escapePointer(others[0]), how
}
