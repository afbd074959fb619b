package openapi

import (
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/spec"
)

// ErrNoWrites is returned by [Document.Draft] when there is nothing to
// certify: no operation given and none in the document is a write.
var ErrNoWrites = errors.New("no write operations")

// ErrOption marks a bad [Options] value, e.g. a server variable no server
// has.
var ErrOption = errors.New("bad option")

// guessedServer is the base URL of a document whose servers are relative
// and that was not read from a URL.
const guessedServer = "http://127.0.0.1:8080"

// Draft returns a spec draft with one tool per operation in ops; nil ops
// means every write and long-running operation. It fails with [ErrNoWrites]
// when there is none, and with [ErrOption] when Options.Vars names a
// variable that no server of these operations has.
func (d *Document) Draft(ops []*Operation) (spec.Draft, error) {
	if ops == nil {
		for _, op := range d.Operations {
			if op.Class == Write || op.Class == LongRunning {
				ops = append(ops, op)
			}
		}
	}
	if len(ops) == 0 {
		return spec.Draft{}, fmt.Errorf("%s: %w", d.Source, ErrNoWrites)
	}
	title := d.Title
	if title == "" {
		title = "untitled"
	}
	draft := spec.Draft{Comment: []string{
		"Starter spec written by onceproof discover --openapi " + d.Source,
		fmt.Sprintf("from %q (OpenAPI %s). Lines marked guessed hold values the document", title, d.Version),
		"does not state: check them. Replace each oracle: " + spec.OraclePlaceholder + " with something that counts",
		"the operation's effects for one marker, then run onceproof certify --spec FILE.",
	}}
	if d.opts.Oracle.HTTP != nil || d.opts.Oracle.Command != nil {
		draft.Comment[2] = "does not state: check them, and that each oracle counts the operation's"
		draft.Comment[3] = "effects for one marker; then run onceproof certify --spec FILE."
	}
	used := map[string]bool{}
	for _, op := range ops {
		draft.Tools = append(draft.Tools, d.tool(op, used))
	}
	for name := range d.opts.Vars {
		if !used[name] {
			return spec.Draft{}, fmt.Errorf("%w: server variable %q: no server of the selected operations has it", ErrOption, name)
		}
	}
	return draft, nil
}

// tool drafts the spec entry of one operation; used collects the server
// variables it substituted.
func (d *Document) tool(op *Operation, used map[string]bool) spec.ToolDraft {
	t := spec.ToolDraft{
		Name:    op.Name,
		Comment: []string{fmt.Sprintf("%s — %s %s (line %d): %s: %s", firstOf(op.ID, op.Name), op.Method, op.Path, op.Line, op.Class, op.Why)},
		HTTP:    &spec.HTTPDraft{Method: op.Method},
		Notes:   map[string]spec.Note{},
	}
	switch op.Class {
	case LongRunning:
		t.Comment = append(t.Comment,
			"LONG-RUNNING: its effect may land after the response. certify counts right after",
			"each call: give the oracle a settle time longer than the job takes (oracle.settle),",
			"and describe its status call (long_running) so the long-running scenario follows it.")
		t.Optional = append(t.Optional, spec.OptionalField{Path: "oracle.settle", Value: "5s", Note: "count once the figure is stable"})
	case Unknown, Read:
		t.Comment = append(t.Comment, "Selected by name: check what its oracle should count.")
	}
	h := t.HTTP
	rawURL, urlNote := d.url(op, used)
	h.URL = rawURL
	t.Notes["http.url"] = urlNote
	headers, headerNotes := d.parameterHeaders(op)
	body, contentType, bodyNote, markerAt := d.body(op)
	if contentType != "" {
		h.Headers = append(h.Headers, spec.Header{Name: "Content-Type", Value: contentType})
	}
	h.Headers = append(h.Headers, headers...)
	for k, n := range headerNotes {
		t.Notes["http.headers."+k] = n
	}
	h.Body = body
	t.Notes["http.body"] = bodyNote
	switch k := op.Key; {
	case k == nil:
		name := harness.DefaultKeyHeader
		h.KeyHeader = &name
		t.Notes["http.key_header"] = spec.Note{Guessed: true, Text: "the document declares no idempotency key; Idempotency-Key is the IETF draft's\nheader (a tool that ignores it fails lost-response)"}
	case k.InBody:
		empty := ""
		h.KeyHeader = &empty
		t.Notes["http.key_header"] = spec.Note{Text: fmt.Sprintf("the key travels in the body property %q ({{.Key}}), %s", k.Name, requiredWord(k.Required))}
	default:
		name := k.Name
		h.KeyHeader = &name
		t.Notes["http.key_header"] = spec.Note{Text: fmt.Sprintf("declared by the document (%s), %s", k.Where, requiredWord(k.Required))}
	}
	if k := op.Key; k != nil && (k.Format != harness.KeyUUID || k.FormatNote != "") {
		// Written when the schema decided it; uuid is the default.
		h.KeyFormat = k.Format
		t.Notes["http.key_format"] = spec.Note{Text: k.FormatNote}
	}
	t.Optional = append(t.Optional, spec.OptionalField{Path: "http.timeout", Value: "2s", Note: "the caller's deadline per attempt"})
	if ptr, note := d.ResultID(op); ptr != "" {
		t.ResultID = ptr
		t.Notes["result_id"] = spec.Note{Guessed: true, Text: note}
	} else {
		t.Optional = append(t.Optional, spec.OptionalField{Path: "result_id", Value: "/id", Note: note})
	}
	profile := harness.ProfileIETF
	if k := op.Key; k != nil && !k.InBody && strings.EqualFold(k.Name, "PayPal-Request-Id") {
		profile = harness.ProfilePayPal
	}
	volatile, volNote := volatileFields(op)
	t.Optional = append(t.Optional, spec.ContractOptionals(true, profile, volatile, volNote, replayedHeader(op))...)
	t.Optional = append(t.Optional, spec.LookupOptional(h.URL))
	if op.Class == LongRunning {
		// The status call the long-running scenario polls: the link the
		// answer declares, or example values.
		t.Optional = append(t.Optional, spec.LongRunningOptional(h.URL, op.status.header, op.status.pointer))
	}
	where := "the request"
	if markerAt != "" {
		where = markerAt
	}
	if o := d.opts.Oracle; o.HTTP != nil || o.Command != nil {
		t.Oracle = o
		t.Notes["oracle"] = spec.Note{Text: fmt.Sprintf("given with the draft (discover --oracle-url): check that it counts this operation's\neffects for one marker (the marker travels in %s)", where)}
		return t
	}
	t.Notes["oracle"] = spec.Note{Text: fmt.Sprintf(
		"TODO: replace %s with an oracle that counts this operation's effects for one marker\n"+
			"(the marker travels in %s), e.g.\n"+
			"  oracle:\n"+
			"    http: {url: \"http://127.0.0.1:8080/count?marker={{.Marker}}\", count: /count}\n"+
			"or command: [sh, -c, 'psql -tAc \"select count(*) from t where note like ''%%$ONCEPROOF_MARKER%%''\"']",
		spec.OraclePlaceholder, where)}
	return t
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func requiredWord(required bool) string {
	if required {
		return "required"
	}
	return "optional (a caller may leave it out)"
}

// serverVarRE matches a server variable in a server URL.
var serverVarRE = regexp.MustCompile(`\{([^{}]+)\}`)

// url is the operation's URL: the server (Options.Server, or the first
// server of the operation, its path item or the document, variables
// substituted) followed by the path with its parameters filled in, and the
// required query parameters.
func (d *Document) url(op *Operation, used map[string]bool) (string, spec.Note) {
	var notes []string
	guessed := false
	base := d.opts.Server
	if base != "" {
		notes = append(notes, "the server given to discover")
	} else {
		servers := op.op.Servers
		if len(servers) == 0 {
			servers = op.item.Servers
		}
		if len(servers) == 0 {
			servers = d.model.Servers
		}
		if len(servers) == 0 {
			servers = []*v3.Server{{URL: "/"}}
			notes = append(notes, "the document lists no server")
		}
		s := servers[0]
		base = s.URL
		if len(servers) > 1 {
			guessed = true
			desc := ""
			if s.Description != "" {
				desc = fmt.Sprintf(" (%s)", s.Description)
			}
			notes = append(notes, fmt.Sprintf("the first of %d servers%s", len(servers), desc))
		}
		var vars []string
		base = serverVarRE.ReplaceAllStringFunc(base, func(m string) string {
			name := m[1 : len(m)-1]
			if v, ok := d.opts.Vars[name]; ok {
				used[name] = true
				vars = append(vars, fmt.Sprintf("%s=%s (given)", name, v))
				return v
			}
			if s.Variables != nil {
				if v, ok := s.Variables.Get(name); ok && v != nil {
					guessed = true
					vars = append(vars, fmt.Sprintf("%s=%s (its default)", name, v.Default))
					return v.Default
				}
			}
			vars = append(vars, fmt.Sprintf("TODO: %s has no value", name))
			return m
		})
		if len(vars) > 0 {
			notes = append(notes, "server variables "+strings.Join(vars, ", "))
		}
	}
	if u, err := url.Parse(base); err == nil && !u.IsAbs() {
		if d.base != nil {
			base = d.base.ResolveReference(u).String()
			notes = append(notes, "relative to the document's URL")
		} else {
			base = strings.TrimRight(guessedServer, "/") + "/" + strings.TrimLeft(base, "/")
			guessed = true
			notes = append(notes, "a relative server on "+guessedServer)
		}
	}
	path, query, paramNotes := d.pathAndQuery(op)
	notes = append(notes, paramNotes...)
	full := strings.TrimRight(base, "/") + path
	if query != "" {
		full += "?" + query
	}
	if len(paramNotes) > 0 {
		guessed = true
	}
	if !loopback(full) {
		notes = append(notes, "TODO: certify only targets loopback: rerun discover with --server http://127.0.0.1:PORT,\nor certify a test environment with --allow-remote")
	}
	return full, spec.Note{Guessed: guessed, Text: strings.Join(notes, "\n")}
}

// loopback reports whether raw's host is syntactically loopback (names
// other than localhost are not resolved here).
func loopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Unmap().IsLoopback()
}

// parameters are the operation's parameters with its path item's, the
// operation's winning (same name and location).
func parameters(op *Operation) []*v3.Parameter {
	out := slices.Clone(op.op.Parameters)
	for _, p := range op.item.Parameters {
		if p != nil && !slices.ContainsFunc(out, func(q *v3.Parameter) bool { return q != nil && q.Name == p.Name && q.In == p.In }) {
			out = append(out, p)
		}
	}
	return slices.DeleteFunc(out, func(p *v3.Parameter) bool { return p == nil })
}

// paramValue is a parameter's value: its example, or one built from its
// schema; made tells whether it was made up.
func paramValue(p *v3.Parameter) (string, bool) {
	ex := p.Example
	if ex == nil && p.Examples != nil {
		for _, e := range p.Examples.FromOldest() {
			if e != nil && e.Value != nil {
				ex = e.Value
				break
			}
		}
	}
	b := &builder{literal: true}
	v := plain(b.value(p.Schema, "", 0, nil, ex))
	invented, _ := b.report()
	return v, len(invented) > 0
}

// pathAndQuery fills in the path parameters and appends the required query
// parameters (and an API key that goes in the query).
func (d *Document) pathAndQuery(op *Operation) (string, string, []string) {
	path := op.Path
	var query url.Values = url.Values{}
	var notes []string
	for _, p := range parameters(op) {
		switch {
		case p.In == "path":
			v, made := paramValue(p)
			path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(v))
			notes = append(notes, fmt.Sprintf("path parameter %s=%s (%s)", p.Name, v, madeWord(made)))
		case p.In == "query" && p.Required != nil && *p.Required:
			v, made := paramValue(p)
			query.Add(p.Name, v)
			notes = append(notes, fmt.Sprintf("query parameter %s=%s (%s)", p.Name, v, madeWord(made)))
		}
	}
	for _, s := range d.security(op) {
		if s.Type == "apiKey" && s.In == "query" {
			query.Add(s.Name, spec.OraclePlaceholder)
			notes = append(notes, fmt.Sprintf("TODO: the API key %s goes in the query: put a test key there", s.Name))
		}
	}
	return path, query.Encode(), notes
}

func madeWord(made bool) string {
	if made {
		return "made up"
	}
	return "the document's example"
}

// reservedHeaders are written by the harness; a parameter cannot set them.
var reservedHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "User-Agent", "Content-Type", "Accept"}

// parameterHeaders are the required header and cookie parameters (other
// than the key) and the credentials the security requirement asks for.
func (d *Document) parameterHeaders(op *Operation) ([]spec.Header, map[string]spec.Note) {
	var hs []spec.Header
	notes := map[string]spec.Note{}
	var cookies []string
	for _, p := range parameters(op) {
		if p.Required == nil || !*p.Required || op.Key != nil && !op.Key.InBody && strings.EqualFold(p.Name, op.Key.Name) {
			continue
		}
		switch {
		case p.In == "header" && !slices.Contains(reservedHeaders, http.CanonicalHeaderKey(p.Name)):
			v, made := paramValue(p)
			hs = append(hs, spec.Header{Name: p.Name, Value: escapeTemplate(v)})
			notes[p.Name] = spec.Note{Guessed: made, Text: "a required header parameter, " + madeWord(made)}
		case p.In == "cookie":
			v, _ := paramValue(p)
			cookies = append(cookies, p.Name+"="+v)
		}
	}
	for _, s := range d.security(op) {
		name, value := "", ""
		switch {
		case s.Type == "http" && strings.EqualFold(s.Scheme, "basic"):
			name, value = "Authorization", "Basic "+spec.OraclePlaceholder
		case s.Type == "http" || s.Type == "oauth2" || s.Type == "openIdConnect":
			name, value = "Authorization", "Bearer "+spec.OraclePlaceholder
		case s.Type == "apiKey" && s.In == "header":
			name, value = s.Name, spec.OraclePlaceholder
		case s.Type == "apiKey" && s.In == "cookie":
			cookies = append(cookies, s.Name+"="+spec.OraclePlaceholder)
		}
		if name != "" && !slices.ContainsFunc(hs, func(h spec.Header) bool { return strings.EqualFold(h.Name, name) }) {
			hs = append(hs, spec.Header{Name: name, Value: value})
			notes[name] = spec.Note{Text: fmt.Sprintf("TODO: the document requires %s credentials (%s): put a test credential here", s.Type, s.key)}
		}
	}
	if len(cookies) > 0 {
		hs = append(hs, spec.Header{Name: "Cookie", Value: escapeTemplate(strings.Join(cookies, "; "))})
		notes["Cookie"] = spec.Note{Guessed: true, Text: "required cookies: check their values"}
	}
	return hs, notes
}

// scheme is a security scheme with the name it has in components.
type scheme struct {
	*v3.SecurityScheme
	key string
}

// security returns the schemes of the first security requirement that
// applies to op (none when the requirement may be empty).
func (d *Document) security(op *Operation) []scheme {
	reqs := d.model.Security
	if op.op.Security != nil {
		reqs = op.op.Security
	}
	if len(reqs) == 0 || reqs[0] == nil || reqs[0].Requirements == nil || d.model.Components == nil || d.model.Components.SecuritySchemes == nil {
		return nil
	}
	for _, r := range reqs {
		if r == nil || r.ContainsEmptyRequirement || r.Requirements.Len() == 0 {
			return nil
		}
	}
	var out []scheme
	for name := range reqs[0].Requirements.KeysFromOldest() {
		if s, ok := d.model.Components.SecuritySchemes.Get(name); ok && s != nil {
			out = append(out, scheme{s, name})
		}
	}
	return out
}

// pickMedia chooses the request body's media type: JSON first, then form
// encoding, then text, then the first.
func pickMedia(rb *v3.RequestBody) (string, *v3.MediaType) {
	if rb == nil || rb.Content == nil || rb.Content.Len() == 0 {
		return "", nil
	}
	rank := func(ct string) int {
		mt, _, _ := strings.Cut(strings.ToLower(ct), ";")
		mt = strings.TrimSpace(mt)
		switch {
		case mt == "application/json":
			return 0
		case strings.HasSuffix(mt, "+json") || strings.Contains(mt, "json"):
			return 1
		case mt == "application/x-www-form-urlencoded":
			return 2
		case strings.HasPrefix(mt, "text/"):
			return 3
		}
		return 4
	}
	best, bestRank := "", 5
	var bestMT *v3.MediaType
	for ct, mt := range rb.Content.FromOldest() {
		if r := rank(ct); r < bestRank {
			best, bestRank, bestMT = ct, r, mt
		}
	}
	return best, bestMT
}

// body builds the request body template. It returns the body, its content
// type, a note on how it was built, and the pointer of the field carrying
// the marker ("" if none).
func (d *Document) body(op *Operation) (body, contentType string, note spec.Note, markerAt string) {
	ct, mt := pickMedia(op.op.RequestBody)
	if mt == nil {
		return "", "", spec.Note{Text: "TODO: the operation takes no request body: put {{.Marker}} where the tool stores it\n(the spec is refused until the request carries the marker)"}, ""
	}
	lower := strings.ToLower(ct)
	isJSON := strings.Contains(lower, "json")
	isForm := strings.HasPrefix(lower, "application/x-www-form-urlencoded")
	if !isJSON && !isForm {
		if strings.HasPrefix(lower, "text/") {
			return "onceproof {{.Marker}}", ct, spec.Note{Guessed: true, Text: "a text body carrying the marker"}, "the body"
		}
		return "", ct, spec.Note{Text: fmt.Sprintf("TODO: onceproof does not build %s bodies: write one that carries {{.Marker}}", ct)}, ""
	}
	ex := mt.Example
	if ex == nil && mt.Examples != nil {
		for _, e := range mt.Examples.FromOldest() {
			if e != nil && e.Value != nil {
				ex = e.Value
				break
			}
		}
	}
	b := &builder{}
	root := &fieldVal{name: "", include: true}
	v := b.value(mt.Schema, "", 0, []*fieldVal{root}, ex)
	if k := op.Key; k != nil && k.InBody {
		setKey(v, k.Name)
		b.cands = slices.DeleteFunc(b.cands, func(c candidate) bool { return c.path == "/"+k.Name })
	}
	markerAt, optional := b.placeMarker()
	var sb strings.Builder
	if isForm {
		if _, ok := v.(*objVal); !ok {
			return "", ct, spec.Note{Text: "TODO: a form-encoded body whose schema is not an object: write the body by hand"}, ""
		}
		sb.WriteString(renderForm(v))
	} else {
		renderJSON(&sb, v)
	}
	skip := []string{markerAt}
	if k := op.Key; k != nil && k.InBody {
		skip = append(skip, "/"+k.Name)
	}
	invented, notes := b.report(skip...)
	lines := []string{fmt.Sprintf("built from the %s request schema: its required fields and examples", ct)}
	switch {
	case markerAt == "":
		lines = append(lines, "TODO: no string field can carry {{.Marker}}; the spec is refused until one does")
	case optional:
		lines = append(lines, fmt.Sprintf("the marker in %s (an optional field, added to carry it)", markerAt))
	default:
		lines = append(lines, "the marker in "+markerAt)
	}
	if len(invented) > 0 {
		lines = append(lines, "made up: "+strings.Join(invented, ", "))
	}
	if out := leftOut(v); len(out) > 0 {
		lines = append(lines, "left out optional fields: "+strings.Join(out, ", "))
	}
	lines = append(lines, notes...)
	return sb.String(), ct, spec.Note{Guessed: true, Text: strings.Join(lines, "\n")}, markerAt
}

// setKey makes the body property name carry {{.Key}}.
func setKey(v val, name string) {
	o, ok := v.(*objVal)
	if !ok {
		return
	}
	for _, f := range o.fields {
		if f.name == name {
			f.v, f.include = &strVal{parts: []part{{tpl: "{{.Key}}"}}}, true
			return
		}
	}
	o.fields = append(o.fields, &fieldVal{name: name, v: &strVal{parts: []part{{tpl: "{{.Key}}"}}}, include: true})
}

// resultCodes are the responses result_id is looked for in, in order.
var resultCodes = []string{"201", "200", "202", "203", "2XX", "2xx"}

// jsonResults yields the schemas of the operation's 2xx JSON responses,
// with their codes, in resultCodes order.
func jsonResults(op *Operation) iter.Seq2[string, *base.SchemaProxy] {
	return func(yield func(string, *base.SchemaProxy) bool) {
		if op.op.Responses == nil || op.op.Responses.Codes == nil {
			return
		}
		for _, code := range resultCodes {
			resp, ok := op.op.Responses.Codes.Get(code)
			if !ok || resp == nil || resp.Content == nil {
				continue
			}
			for ct, mt := range resp.Content.FromOldest() {
				if !strings.Contains(strings.ToLower(ct), "json") || mt == nil {
					continue
				}
				if !yield(code, mt.Schema) {
					return
				}
			}
		}
	}
}

// volatileFields guesses the fields of the operation's 2xx JSON response
// that a replay may change (timestamps, request and trace ids), as JSON
// pointers, with a note saying where they come from (nil: none found).
func volatileFields(op *Operation) ([]string, string) {
	for code, schema := range jsonResults(op) {
		var out []string
		if s := flatten(schema, 0); s != nil {
			for _, p := range s.props {
				if looksVolatile(p.name) {
					out = append(out, "/"+escapePointer(p.name))
				}
			}
		}
		if len(out) > 0 {
			return out, fmt.Sprintf("guessed: fields of the %s response named like a time or a request id, which a replay may change", code)
		}
	}
	return nil, ""
}

// replayedHeader is a header of the operation's 2xx responses named like a
// replay marker (Idempotent-Replayed, X-Idempotent-Replay), "" for none.
func replayedHeader(op *Operation) string {
	if op.op.Responses == nil || op.op.Responses.Codes == nil {
		return ""
	}
	for _, code := range resultCodes {
		resp, ok := op.op.Responses.Codes.Get(code)
		if !ok || resp == nil || resp.Headers == nil {
			continue
		}
		for name := range resp.Headers.KeysFromOldest() {
			if strings.Contains(strings.ToLower(name), "replay") {
				return name
			}
		}
	}
	return ""
}

// looksVolatile reports whether a response field's name says it differs
// per request or per moment.
func looksVolatile(name string) bool {
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(name))
	for _, w := range []string{"created", "updated", "modified", "timestamp", "requestid", "traceid", "servedat", "generatedat"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// propsNamed returns the properties named name (case-insensitively).
func (f *flat) propsNamed(name string) []prop {
	if f == nil {
		return nil
	}
	var out []prop
	for _, p := range f.props {
		if strings.EqualFold(p.name, name) {
			out = append(out, p)
		}
	}
	return out
}

// escapePointer escapes a JSON pointer token.
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
