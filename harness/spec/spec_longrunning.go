package spec

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/harness"
)

// The fields of a tool's long_running section and of its parts.
var (
	longRunningFields = []string{"status", "operation_id", "done", "within"}
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
	if d.t.MCP != nil {
		d.errorf(f.line, f.path, "long-running operations are followed for http tools (an MCP tool has no status call)")
	}
	c := &harness.LongRunningConfig{StatusMethod: http.MethodGet}
	if sf, ok := d.need(fs, "status", "the status call: {url: http://host:port/operations/{{.OperationID}}}"); ok {
		d.statusCall(sf, c)
	}
	if pf, ok := d.get(fs, "operation_id"); ok {
		if s, ok := d.str(pf); ok {
			if _, err := harness.ParsePointer(s); err != nil || s == "" {
				d.errorf(pf.line, pf.path, "want a JSON pointer into the trigger's 2xx answer, e.g. /id")
			}
			c.OperationID = s
		}
	}
	if df, ok := d.need(fs, "done", "what a finished operation's status says: {pointer: /status, values: [succeeded]}"); ok {
		d.done(df, c)
	}
	if wf, ok := d.get(fs, "within"); ok {
		if v, ok := d.duration(wf, false, MaxFinishWithin); ok {
			c.FinishWithin = v
		}
	}
	d.t.HTTP.LongRunning = c
}

// statusCall decodes long_running.status.
func (d toolDecoder) statusCall(f field, c *harness.LongRunningConfig) {
	fs, ok := d.mapping(f, statusFields)
	if !ok {
		return
	}
	if mf, ok := d.get(fs, "method"); ok {
		if s, ok := d.str(mf); ok {
			if msg := checkMethod(s); msg != "" {
				d.errorf(mf.line, mf.path, "%s", msg)
			}
			c.StatusMethod = s
		}
	}
	if uf, ok := d.need(fs, "url", "the status call's URL, naming the operation: http://host:port/operations/{{.OperationID}}"); ok {
		if s, ok := d.str(uf); ok {
			c.StatusURL = s
			d.statusURL(uf, s)
		}
	}
	if hf, ok := d.get(fs, "headers"); ok {
		m, entries := d.stringMap(hf)
		c.StatusHeaders = m
		for _, e := range entries {
			d.t.lines[strings.TrimPrefix(e.path, d.t.path+".")] = e.line
			switch ck := http.CanonicalHeaderKey(e.name); {
			case !isToken(e.name):
				d.errorf(e.line, e.path, "bad header name %q", e.name)
			case slices.Contains(reservedHeaders, ck):
				d.errorf(e.line, e.path, "%s is set by the harness", ck)
			default:
				if _, err := harness.ParseTemplate("header "+e.name, m[e.name]); err != nil {
					d.errorf(e.line, e.path, "%v", err)
				}
			}
		}
	}
}

// statusURL checks the status URL template s: it parses, names the
// operation, and (rendered) is on the tool's scheme, host and port.
func (d toolDecoder) statusURL(f field, s string) {
	tpl, err := harness.ParseTemplate("status url", s)
	if err != nil {
		d.errorf(f.line, f.path, "%v", err)
		return
	}
	if !strings.Contains(s, ".OperationID") && !strings.Contains(s, ".Key") {
		d.errorf(f.line, f.path, "names no operation: use {{.OperationID}} (the id the trigger's answer gave) or {{.Key}}")
		return
	}
	rendered, err := tpl.RenderOperation(checkOp, "operation-check")
	if err != nil {
		d.errorf(f.line, f.path, "%v", err)
		return
	}
	if msg := checkURL(rendered); msg != "" {
		d.errorf(f.line, f.path, "%s", msg)
		return
	}
	tool, err := url.Parse(d.t.HTTP.URL)
	if d.t.HTTP.URL == "" || err != nil {
		return // the tool's url has its own error
	}
	if u, _ := url.Parse(rendered); u.Scheme != tool.Scheme || u.Host != tool.Host {
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
