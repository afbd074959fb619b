package spec

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/harness"
)

// lookupFields are the fields of a tool's lookup section.
var lookupFields = []string{"url", "method", "headers", "found", "not_found", "result_id"}

// lookup decodes a tool's lookup section into t.HTTP.Lookup. It runs after
// the transport section, whose url the lookup's must share.
func (d toolDecoder) lookup(f field) {
	fs, ok := d.mapping(f, lookupFields)
	if !ok {
		return
	}
	if d.unsupported(f) {
		return
	}
	l := &harness.LookupConfig{Method: http.MethodGet}
	if uf, ok := d.need(fs, "url", `the lookup's URL on the tool's own host:port, a template, e.g. "http://127.0.0.1:8080/tickets/by-key/{{.Key}}"`); ok {
		if s, ok := d.str(uf); ok {
			l.URL = s
			d.lookupURL(uf, s)
		}
	}
	if mf, ok := d.get(fs, "method"); ok {
		if s, ok := d.str(mf); ok {
			if msg := checkMethod(s); msg != "" {
				d.errorf(mf.line, mf.path, "%s", msg)
			}
			l.Method = s
		}
	}
	if hf, ok := d.get(fs, "headers"); ok {
		m, entries := d.stringMap(hf)
		l.Headers = m
		for _, e := range entries {
			if _, ok := d.headerName(e); ok {
				d.headerValue(e, "lookup header", m[e.name], true)
			}
		}
	}
	found := map[int]int{}
	l.Found = d.statuses(fs, "found", "a list of the statuses that mean the operation committed, e.g. [200]", nil)
	for _, c := range l.Found {
		found[c] = 1
	}
	l.NotFound = d.statuses(fs, "not_found", "a list of the statuses that mean the operation did not commit, e.g. [404]", found)
	if rf, ok := d.get(fs, "result_id"); ok {
		if s, ok := d.str(rf); ok {
			if _, err := harness.ParsePointer(s); err != nil {
				d.errorf(rf.line, rf.path, "%v", err)
			}
			l.ResultID = s
		}
	}
	d.t.HTTP.Lookup = l
}

// lookupURL checks the lookup's url template: it renders, names the tool's
// own scheme and host:port, and names one operation.
func (d toolDecoder) lookupURL(f field, s string) {
	tpl, err := harness.ParseTemplate("lookup url", s)
	if err != nil {
		d.errorf(f.line, f.path, "%v", err)
		return
	}
	if !strings.Contains(s, ".Key") && !tpl.UsesMarker() && !strings.Contains(s, ".Op") {
		d.errorf(f.line, f.path, "never uses {{.Key}}, {{.Op}} or {{.Marker}}: the lookup could not name one operation")
		return
	}
	v, err := tpl.Render(checkOp)
	if err != nil {
		d.errorf(f.line, f.path, "%v", err)
		return
	}
	if msg := checkURL(v); msg != "" {
		d.errorf(f.line, f.path, "rendered: %s", msg)
		return
	}
	tu, err := url.Parse(d.t.HTTP.URL)
	if err != nil || d.t.HTTP.URL == "" {
		return // the http section reported it
	}
	if u, _ := url.Parse(v); u.Scheme != tu.Scheme || u.Host != tu.Host {
		d.errorf(f.line, f.path, "rendered %q: want the tool's own %s://%s (http.url): the lookup goes through the tool's fault proxy", v, tu.Scheme, tu.Host)
	}
}

// statuses decodes the list of statuses name of fs (nil when absent);
// taken holds the statuses another list claimed (by value, its index + 1).
func (d toolDecoder) statuses(fs *fields, name, want string, taken map[int]int) []int {
	f, ok := d.get(fs, name)
	if !ok {
		return nil
	}
	items := d.list(f, want)
	if f.val.Kind == yaml.SequenceNode && len(items) == 0 {
		d.errorf(f.line, f.path, "empty: want %s (leave it out for the default)", want)
	}
	var out []int
	seen := map[int]int{}
	for _, item := range items {
		n, err := strconv.Atoi(item.val.Value)
		switch {
		case item.val.Kind != yaml.ScalarNode || item.val.ShortTag() != "!!int" || err != nil:
			d.errorf(item.line, item.path, "want a status code, got %s", describe(item.val))
		case n < 100 || n > 599:
			d.errorf(item.line, item.path, "%d: want a status code from 100 to 599", n)
		case seen[n] > 0:
			d.errorf(item.line, item.path, "duplicate status %d (first at line %d)", n, seen[n])
		case taken[n] > 0:
			d.errorf(item.line, item.path, "status %d is also in found: an answer cannot mean both", n)
		default:
			seen[n] = item.line
			out = append(out, n)
		}
	}
	return out
}
