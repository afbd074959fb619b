package spec

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/harness"
)

// The fields of a tool's long_running section and of its parts.
var (
	longRunningFields = []string{"status", "operation_id", "operation_id_header", "done", "within"}
	statusFields      = []string{"method", "url", "headers"}
	doneFields        = []string{"pointer", "values", "failed"}
)

// MaxFinishWithin bounds long_running.within, how long an operation may
// take to finish.
const MaxFinishWithin = harness.DefaultFinishWithin * 120

// longRunning decodes a tool's long_running section into
// t.HTTP.LongRunning. It runs after the transport section (it needs the
// tool's url).
func (d toolDecoder) longRunning(f field) {
	fs, ok := d.mapping(f, longRunningFields)
	if !ok {
		return
	}
	d.unsupported(f)
	c := &harness.LongRunningConfig{StatusMethod: http.MethodGet}
	var uf field
	hasURL := false
	if sf, ok := d.need(fs, "status", "the status call: {url: http://host:port/operations/{{.OperationID}}}"); ok {
		uf, hasURL = d.statusCall(sf, c)
	}
	if pf, ok := d.get(fs, "operation_id"); ok {
		if s, ok := d.str(pf); ok {
			if _, err := harness.ParsePointer(s); err != nil || s == "" {
				d.errorf(pf.line, pf.path, "want a JSON pointer into the trigger's 2xx answer, e.g. /id")
			}
			c.OperationID = s
		}
	}
	if hf, ok := d.get(fs, "operation_id_header"); ok {
		if s, ok := d.str(hf); ok {
			switch {
			case !isToken(s):
				d.errorf(hf.line, hf.path, "bad header name %q: want the header of the trigger's answer that names the operation, e.g. Location", s)
			case fs.has("operation_id"):
				d.errorf(hf.line, hf.path, "operation_id names the operation too: keep one")
			}
			c.OperationIDHeader = s
		}
	}
	if df, ok := d.need(fs, "done", "what a finished operation's status says: {pointer: /status, values: [succeeded]}"); ok {
		d.done(df, c)
	}
	if hasURL {
		// Checked once the id's source is known: a header's may be a path.
		d.statusURL(uf, c.StatusURL, c.OperationIDHeader != "")
	}
	if wf, ok := d.get(fs, "within"); ok {
		if v, ok := d.duration(wf, false, MaxFinishWithin); ok {
			c.FinishWithin = v
		}
	}
	d.t.HTTP.LongRunning = c
}

// statusCall decodes long_running.status; it returns the url field when
// it is a string, for statusURL to check.
func (d toolDecoder) statusCall(f field, c *harness.LongRunningConfig) (urlField field, hasURL bool) {
	fs, ok := d.mapping(f, statusFields)
	if !ok {
		return field{}, false
	}
	if mf, ok := d.get(fs, "method"); ok {
		if s, ok := d.str(mf); ok {
			if msg := checkMethod(s); msg != "" {
				d.errorf(mf.line, mf.path, "%s", msg)
			}
			c.StatusMethod = s
		}
	}
	if uf, found := d.need(fs, "url", "the status call's URL, naming the operation: http://host:port/operations/{{.OperationID}}"); found {
		if s, isStr := d.str(uf); isStr {
			c.StatusURL, urlField, hasURL = s, uf, true
		}
	}
	if hf, ok := d.get(fs, "headers"); ok {
		m, entries := d.stringMap(hf)
		c.StatusHeaders = m
		for _, e := range entries {
			if _, ok := d.headerName(e); ok {
				// Rendered per operation id when polled: parsed only.
				d.headerValue(e, "header", m[e.name], false)
			}
		}
	}
	return urlField, hasURL
}

// statusURL checks the status URL template s: it parses, names the
// operation, and (rendered, resolved against the tool's url) is on the
// tool's scheme, host and port. byHeader says the operation's id comes
// from a header (it may be a path: "{{.OperationID}}" alone follows it).
func (d toolDecoder) statusURL(f field, s string, byHeader bool) {
	tpl, err := harness.ParseTemplate("status url", s)
	if err != nil {
		d.errorf(f.line, f.path, "%v", err)
		return
	}
	if !strings.Contains(s, ".OperationID") && !strings.Contains(s, ".Key") {
		d.errorf(f.line, f.path, "names no operation: use {{.OperationID}} (the id the trigger's answer gave) or {{.Key}}")
		return
	}
	id := "operation-check"
	if byHeader {
		id = "/operation-check"
	}
	rendered, err := tpl.RenderOperation(checkOp, id)
	if err != nil {
		d.errorf(f.line, f.path, "%v", err)
		return
	}
	tool, err := url.Parse(d.t.HTTP.URL)
	if d.t.HTTP.URL == "" || err != nil || checkURL(d.t.HTTP.URL) != "" {
		return // the tool's url has its own error
	}
	ref, err := url.Parse(rendered)
	if err != nil {
		d.errorf(f.line, f.path, "bad URL %q: %v", rendered, errors.Unwrap(err))
		return
	}
	resolved := tool.ResolveReference(ref)
	if msg := checkURL(resolved.String()); msg != "" {
		d.errorf(f.line, f.path, "%s", msg)
		return
	}
	if resolved.Scheme != tool.Scheme || resolved.Host != tool.Host {
		d.errorf(f.line, f.path, "not on the tool's %s://%s: status calls go through the tool's fault proxy", tool.Scheme, tool.Host)
	}
}

// done decodes long_running.done.
func (d toolDecoder) done(f field, c *harness.LongRunningConfig) {
	fs, ok := d.mapping(f, doneFields)
	if !ok {
		return
	}
	if pf, ok := d.need(fs, "pointer", "a JSON pointer to the operation's state in a status answer, e.g. /status"); ok {
		if s, ok := d.str(pf); ok {
			if _, err := harness.ParsePointer(s); err != nil || s == "" {
				d.errorf(pf.line, pf.path, "want a JSON pointer to the operation's state in a status answer, e.g. /status")
			}
			c.State = s
		}
	}
	if vf, ok := d.need(fs, "values", "the states of a finished operation, e.g. [succeeded]"); ok {
		c.Done = d.values(vf)
		if len(c.Done) == 0 && vf.val.Kind == yaml.SequenceNode {
			d.errorf(vf.line, vf.path, "empty: a status poll could never see the operation finish")
		}
	}
	if ff, ok := d.get(fs, "failed"); ok {
		for _, v := range d.values(ff) {
			if slices.Contains(c.Done, v) {
				d.errorf(ff.line, ff.path, "%q is in values too: a state is done or failed, not both", v)
				continue
			}
			c.Failed = append(c.Failed, v)
		}
	}
}

// values decodes a list of state values (a single string is one value).
func (d toolDecoder) values(f field) []string {
	if f.val.Kind == yaml.ScalarNode {
		if s, ok := d.str(f); ok {
			return []string{s}
		}
		return nil
	}
	return d.strings(f, "a list of state values")
}
