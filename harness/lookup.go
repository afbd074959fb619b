package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/onceproof/onceproof/harness/report"
)

// LookupAnswer is what a lookup of an operation by its identity said.
type LookupAnswer = report.LookupAnswer

// The lookup answers: the operation committed, it did not, or the lookup
// cannot say (no answer, or a status that is neither).
const (
	LookupFound    = report.LookupFound
	LookupNotFound = report.LookupNotFound
	LookupUnknown  = report.LookupUnknown
)

// ErrNoLookup marks a lookup asked of a tool that declares none.
var ErrNoLookup = errors.New("the tool declares no lookup")

// LookupConfig describes how a caller looks an operation of an HTTP tool up
// by its identity (its key, or what the payload names it by) after an
// ambiguous attempt, before deciding to retry.
type LookupConfig struct {
	// Method defaults to GET.
	Method string
	// URL is a template rendered for each operation ({{.Key}}, {{.Marker}},
	// ...); it must name the tool's own host:port: the lookup goes through
	// the tool's fault proxy, with no fault armed.
	URL string
	// Headers are sent with every lookup; values are templates.
	Headers map[string]string
	// Found are the statuses that mean "the operation committed" (default
	// 200), NotFound those that mean "it did not" (default 404). Any other
	// status, and no answer at all, means the lookup cannot say.
	Found, NotFound []int
	// ResultID is an optional JSON pointer into a found answer naming the
	// operation's result, compared with the result id of the tool's
	// answers.
	ResultID string
}

// Lookup is a tool's lookup, built from a [LookupConfig].
type Lookup struct {
	tool     string
	method   string
	url      *Template
	host     string
	scheme   string
	headers  map[string]*Template
	found    []int
	notFound []int
	resultID *Pointer
}

// Lookuper is a tool that may declare a lookup: Lookup returns it, nil
// when the tool declares none.
type Lookuper interface {
	Lookup() *Lookup
}

// LookupOf returns tool's lookup, nil when it has none.
func LookupOf(tool Tool) *Lookup {
	if l, ok := tool.(Lookuper); ok {
		return l.Lookup()
	}
	return nil
}

// newLookup builds the lookup c describes for tool t (whose endpoint it
// must share). Its errors are [ConfigError]s naming the field at fault.
func newLookup(t *HTTPTool, c LookupConfig) (*Lookup, error) {
	l := &Lookup{tool: t.name, method: c.Method, host: t.url.Host, scheme: t.url.Scheme, headers: map[string]*Template{},
		found: slices.Clone(c.Found), notFound: slices.Clone(c.NotFound)}
	if l.method == "" {
		l.method = http.MethodGet
	}
	if len(l.found) == 0 {
		l.found = []int{http.StatusOK}
	}
	if len(l.notFound) == 0 {
		l.notFound = []int{http.StatusNotFound}
	}
	for _, code := range append(slices.Clone(l.found), l.notFound...) {
		if code < 100 || code > 599 {
			return nil, ConfigError(t.name, "lookup", fmt.Errorf("status %d: want 100-599", code))
		}
	}
	for _, code := range l.found {
		if slices.Contains(l.notFound, code) {
			return nil, ConfigError(t.name, "lookup.not_found", fmt.Errorf("status %d is also in found: an answer cannot mean both", code))
		}
	}
	var err error
	if l.url, err = ParseTemplate("lookup url", c.URL); err != nil {
		return nil, ConfigError(t.name, "lookup.url", err)
	}
	for k, v := range c.Headers {
		tpl, err := ParseTemplate("lookup header "+k, v)
		if err != nil {
			return nil, ConfigError(t.name, "lookup.headers."+k, err)
		}
		l.headers[k] = tpl
	}
	if c.ResultID != "" {
		p, err := ParsePointer(c.ResultID)
		if err != nil {
			return nil, ConfigError(t.name, "lookup.result_id", err)
		}
		l.resultID = &p
	}
	check := func(key, marker string) ([]byte, error) {
		call, err := l.Prepare(Operation{ID: "op-check", Key: key, Marker: marker, Seed: 1})
		if err != nil {
			return nil, err
		}
		return call.Wire, nil
	}
	a, err := check("key-check-a", "marker-check-a")
	if err != nil {
		return nil, err
	}
	b, err := check("key-check-b", "marker-check-b")
	if err != nil {
		return nil, err
	}
	if bytes.Equal(a, b) {
		return nil, ConfigError(t.name, "lookup.url", errors.New("the lookup never uses {{.Key}} or {{.Marker}}: it could not name one operation"))
	}
	return l, nil
}

// Prepare renders the lookup of op: a request to the tool's own address.
// Its errors are [ConfigError]s naming the field at fault.
func (l *Lookup) Prepare(op Operation) (*Call, error) {
	raw, err := l.url.Render(op)
	if err != nil {
		return nil, ConfigError(l.tool, "lookup.url", err)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, ConfigError(l.tool, "lookup.url", fmt.Errorf("rendered url %q: %w", raw, errors.Unwrap(err)))
	case u.Scheme != l.scheme || u.Host != l.host:
		return nil, ConfigError(l.tool, "lookup.url", fmt.Errorf("rendered url %q: want the tool's own %s://%s (the lookup goes through the tool's proxy)", raw, l.scheme, l.host))
	}
	var b bytes.Buffer
	if k, err := writeHead(&b, l.method, u, l.headers, op, ""); err != nil {
		return nil, ConfigError(l.tool, "lookup.headers."+k, err)
	}
	return bodylessCall(op, l.method, u, &b), nil
}

// Classify says what an answer to a lookup means: found (with the result
// id its pointer reads, when it has one), not found, or unknown (no
// answer, or a status that is neither).
func (l *Lookup) Classify(outcome Outcome, status int, body []byte) (LookupAnswer, string) {
	switch {
	case outcome != OK:
		return LookupUnknown, ""
	case slices.Contains(l.found, status):
		if l.resultID != nil {
			return LookupFound, ReadResultID(*l.resultID, body)
		}
		return LookupFound, ""
	case slices.Contains(l.notFound, status):
		return LookupNotFound, ""
	}
	return LookupUnknown, ""
}

// ResultIDPointer is the lookup's result_id pointer ("" for none).
func (l *Lookup) ResultIDPointer() string {
	if l.resultID == nil {
		return ""
	}
	return l.resultID.String()
}

// Lookup asks the tool's lookup about op, on a connection of the
// session's (through its proxy, nothing armed), and records it as an
// attempt whose Lookup is the answer: Before is the oracle's count before
// the lookup was sent, After its count once the answer arrived, and
// ResultID what the lookup's result_id read in a found answer. The
// caller waits the tool's timeout for an answer.
func (s *Session) Lookup(ctx context.Context, op Operation, origin time.Time) (Attempt, error) {
	l := LookupOf(s.tool)
	if l == nil {
		return Attempt{}, fmt.Errorf("tool %s: %w", s.tool.Name(), ErrNoLookup)
	}
	call, err := l.Prepare(op)
	if err != nil {
		return Attempt{}, err
	}
	before, err := s.Count(ctx, op.Marker)
	if err != nil {
		return Attempt{}, err
	}
	a := s.sendTo(ctx, s.pickReplica(), call, origin, GiveUp{}, nil)
	a.Lookup, a.ResultID = l.Classify(a.Outcome, a.Status, a.Response)
	a.Before = before
	if a.After, err = s.Count(ctx, op.Marker); err != nil {
		return a, err
	}
	return a, nil
}
