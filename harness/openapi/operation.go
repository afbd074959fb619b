package openapi

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode"

	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/onceproof/onceproof/harness"
)

// Class is what an operation does, as far as certification goes.
type Class string

// The classes; see the package documentation for the rules.
const (
	Read        Class = "read"
	Write       Class = "write"
	LongRunning Class = "long-running"
	Unknown     Class = "unknown"
)

// Operation is one operation of a document.
type Operation struct {
	// ID is the operationId ("" when the document gives none).
	ID string
	// Name is the tool name the spec uses: the operationId, or the method
	// and path, made of letters, digits, '-', '_' and '.'; unique in the
	// document.
	Name string
	// Method is upper-case; Path is as written in the document.
	Method, Path string
	// Line is the operation's line in the document.
	Line int
	// Class and Why: what the operation does, and what showed it.
	Class Class
	Why   string
	// Key is the idempotency key the document declares, nil if none.
	Key *Key

	op   *v3.Operation
	item *v3.PathItem
	// status is where a long-running operation's answer names its status
	// (zero when it declares nothing, or is not long-running).
	status statusSource
}

// statusSource is where a long-running operation's 202 answer names its
// status: a header (Location), or a JSON pointer into its body.
type statusSource struct{ header, pointer string }

// Key is an idempotency key an operation declares.
type Key struct {
	// Name is the header's name, or the body property's.
	Name string
	// InBody is set for a body property (the key travels in the body).
	InBody bool
	// Required is the parameter's (or property's) required flag.
	Required bool
	// Where says where it is declared: "operation", "path item", or
	// "components/parameters/NAME" when referenced from there.
	Where string
	// Format is the key format that fits the declared schema.
	Format harness.KeyFormat
	// FormatNote says why Format was chosen, or that no format fits.
	FormatNote string
}

// Matches reports whether s names op: its operationId, its tool name, or
// "METHOD /path".
func (op *Operation) Matches(s string) bool {
	if s == "" {
		return false
	}
	return s == op.ID || s == op.Name || strings.EqualFold(s, op.Method+" "+op.Path)
}

// operations lists the document's operations and classifies them.
func (d *Document) operations() []*Operation {
	var ops []*Operation
	if d.model.Paths == nil || d.model.Paths.PathItems == nil {
		return nil
	}
	used := map[string]int{}
	for path, item := range d.model.Paths.PathItems.FromOldest() {
		if item == nil {
			continue
		}
		for method, op := range item.GetOperations().FromOldest() {
			o := &Operation{ID: op.OperationId, Method: strings.ToUpper(method), Path: path, op: op, item: item}
			if low := op.GoLow(); low != nil && low.KeyNode != nil {
				o.Line = low.KeyNode.Line
			}
			o.Name = toolName(o, used)
			o.Key = findKey(op, item)
			o.Class, o.Why = classify(o)
			ops = append(ops, o)
		}
	}
	return ops
}

// toolName is op's spec name, made unique with a -2, -3... suffix.
func toolName(op *Operation, used map[string]int) string {
	base := op.ID
	if base == "" {
		base = strings.ToLower(op.Method) + "-" + strings.Trim(op.Path, "/{}")
	}
	name := strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, base)
	name = strings.Trim(dashesRE.ReplaceAllString(name, "-"), "-")
	if name == "" {
		name = "operation"
	}
	used[name]++
	if n := used[name]; n > 1 {
		name = fmt.Sprintf("%s-%d", name, n)
	}
	return name
}

var dashesRE = regexp.MustCompile(`-{2,}`)

// searchWords are the first words of POST operations that only read.
var searchWords = []string{"search", "query", "lookup", "find", "list", "filter", "validate", "preview", "estimate", "count"}

// classify applies the rules of the package documentation.
func classify(op *Operation) (Class, string) {
	switch op.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, "QUERY":
		return Read, op.Method + " is safe"
	}
	if why, src, ok := longRunning(op.op); ok {
		op.status = src
		return LongRunning, why
	}
	switch op.Method {
	case http.MethodPost:
		if w := searchWord(op); w != "" {
			return Read, fmt.Sprintf("guessed: a POST named like a search (%q)", w)
		}
		return Write, "POST creates"
	case http.MethodPut, http.MethodPatch, http.MethodDelete:
		if op.Key != nil {
			return Write, fmt.Sprintf("%s declares the idempotency key %s", op.Method, op.Key.Name)
		}
		if op.Method == http.MethodPatch {
			return Unknown, "PATCH without an idempotency key: may or may not repeat its effect; select it with --operation"
		}
		return Unknown, op.Method + " is idempotent by definition and declares no key; select it with --operation"
	}
	return Unknown, "method " + op.Method
}

// searchWord returns the search word op's operationId starts with, or its
// last literal path segment is, or "".
func searchWord(op *Operation) string {
	words := splitWords(op.ID)
	segs := strings.FieldsFunc(op.Path, func(r rune) bool { return r == '/' || r == ':' })
	if len(segs) > 0 && !strings.HasPrefix(segs[len(segs)-1], "{") {
		words = append(words[:min(len(words), 1)], strings.ToLower(segs[len(segs)-1]))
	}
	for _, w := range words {
		for _, s := range searchWords {
			if w == s {
				return s
			}
		}
	}
	return ""
}

// splitWords splits an identifier (camelCase, snake_case, kebab-case) into
// lower-case words.
func splitWords(id string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range id {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && len(cur) > 0 && !unicode.IsUpper(cur[len(cur)-1]):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}

// statusHeaders are the response headers that point at a long-running
// operation's status.
var statusHeaders = []string{"Location", "Operation-Location", "Azure-AsyncOperation", "Content-Location"}

// longRunning reports whether op may answer 202 Accepted (or is marked
// x-ms-long-running-operation), and what shows where its status is.
func longRunning(op *v3.Operation) (string, statusSource, bool) {
	marked := false
	if op.Extensions != nil {
		if n, ok := op.Extensions.Get("x-ms-long-running-operation"); ok && n != nil && n.Value == "true" {
			marked = true
		}
	}
	var resp *v3.Response
	if op.Responses != nil && op.Responses.Codes != nil {
		resp, _ = op.Responses.Codes.Get("202")
	}
	if resp == nil {
		if marked {
			return "marked x-ms-long-running-operation", statusSource{}, true
		}
		return "", statusSource{}, false
	}
	if resp.Headers != nil {
		for name := range resp.Headers.KeysFromOldest() {
			for _, h := range statusHeaders {
				if strings.EqualFold(name, h) {
					return "202 Accepted with a " + name + " header", statusSource{header: name}, true
				}
			}
		}
	}
	if resp.Links != nil && resp.Links.Len() > 0 {
		for name := range resp.Links.KeysFromOldest() {
			return "202 Accepted with the response link " + name, statusSource{}, true
		}
	}
	if resp.Content != nil {
		for _, mt := range resp.Content.FromOldest() {
			if mt == nil || mt.Schema == nil {
				continue
			}
			if p := statusLink(flatten(mt.Schema, 0)); p != "" {
				return "202 Accepted with a status link in the body (" + p + ")", statusSource{pointer: p}, true
			}
		}
	}
	return "202 Accepted (no status link declared)", statusSource{}, true
}

// statusLink finds a status URL among a response schema's properties, at
// the top or one level down (HAL _links, links), and returns its pointer.
func statusLink(s *flat) string {
	if s == nil {
		return ""
	}
	for _, p := range s.props {
		n := normalize(p.name)
		if isStatusName(n) {
			return "/" + p.name
		}
		if n == "links" || n == "link" {
			sub := flatten(p.schema, 1)
			if sub == nil {
				continue
			}
			for _, names := range [][]string{{"status", "monitor"}, {"self"}} {
				for _, q := range sub.props {
					if m := normalize(q.name); isStatusName(m) || slices.Contains(names, m) {
						return "/" + p.name + "/" + q.name
					}
				}
			}
		}
	}
	return ""
}

func isStatusName(n string) bool {
	if n == "location" || n == "operationlocation" || n == "monitor" {
		return true
	}
	for _, what := range []string{"status", "operation", "poll", "monitor", "job", "task"} {
		if strings.Contains(n, what) {
			for _, link := range []string{"url", "uri", "href", "link", "location"} {
				if strings.HasSuffix(n, link) {
					return true
				}
			}
		}
	}
	return false
}

// normalize lower-cases a name and drops '-' and '_'.
func normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// isKeyName reports whether a header or property name is an idempotency
// key's: Idempotency-Key, X-Idempotency-Key, Idempotency-Token,
// idempotency_key... (case and separators ignored).
func isKeyName(name string) bool {
	return strings.Contains(normalize(name), "idempoten")
}

// findKey finds the idempotency key op declares: a header parameter of the
// operation or its path item (the operation's wins), or else a property of
// the JSON or form request body.
func findKey(op *v3.Operation, item *v3.PathItem) *Key {
	for _, src := range []struct {
		params []*v3.Parameter
		where  string
	}{{op.Parameters, "operation"}, {item.Parameters, "path item"}} {
		for _, p := range src.params {
			if p == nil || !strings.EqualFold(p.In, "header") || !isKeyName(p.Name) {
				continue
			}
			k := &Key{Name: p.Name, Required: p.Required != nil && *p.Required, Where: src.where}
			if low := p.GoLow(); low != nil && low.Reference != nil && low.IsReference() {
				k.Where = strings.TrimPrefix(low.GetReference(), "#/")
			}
			k.Format, k.FormatNote = keyFormat(flatten(p.Schema, 0))
			return k
		}
	}
	if op.RequestBody == nil || op.RequestBody.Content == nil {
		return nil
	}
	_, mt := pickMedia(op.RequestBody)
	if mt == nil || mt.Schema == nil {
		return nil
	}
	s := flatten(mt.Schema, 0)
	if s == nil {
		return nil
	}
	for _, p := range s.props {
		if isKeyName(p.name) {
			k := &Key{Name: p.name, InBody: true, Required: s.required[p.name], Where: "request body"}
			k.Format, k.FormatNote = keyFormat(flatten(p.schema, 1))
			return k
		}
	}
	return nil
}

// keyFormat picks the key format that fits a key's schema: uuid unless the
// schema rules it out and a hex key fits.
func keyFormat(s *flat) (harness.KeyFormat, string) {
	if s == nil {
		return harness.KeyUUID, ""
	}
	fits := func(f harness.KeyFormat) bool { return s.accepts(f.Key("onceproof-check")) }
	switch {
	case s.format == "uuid":
		return harness.KeyUUID, "the key's schema has format uuid"
	case fits(harness.KeyUUID):
		return harness.KeyUUID, ""
	case fits(harness.KeyHex):
		return harness.KeyHex, "a UUID does not fit the key's schema; 32 hex digits do"
	}
	return harness.KeyUUID, "TODO: neither a UUID nor 32 hex digits fit the key's schema"
}
