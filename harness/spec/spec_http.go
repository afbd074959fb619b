package spec

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/harness"
)

// http decodes a tool's http section into t.HTTP, defaults applied.
func (d toolDecoder) http(f field) {
	c := &d.t.HTTP
	c.Method = http.MethodPost
	key := harness.DefaultKeyHeader
	c.KeyHeader = &key
	c.KeyFormat = harness.KeyUUID
	c.Timeout = defaultToolTimeout
	fs, ok := d.mapping(f, httpFields)
	if !ok {
		return
	}
	if f, ok := d.need(fs, "url", "the tool's endpoint, http://host:port/path"); ok {
		if s, ok := d.str(f); ok {
			if msg := checkToolURL(s); msg != "" {
				d.errorf(f.line, f.path, "%s", msg)
			}
			c.URL = s
		}
	}
	if f, ok := d.get(fs, "method"); ok {
		if s, ok := d.str(f); ok {
			if msg := checkMethod(s); msg != "" {
				d.errorf(f.line, f.path, "%s", msg)
			} else {
				c.Method = s
			}
		}
	}
	keyOK := true
	if f, ok := d.get(fs, "key_header"); ok {
		if f.val.Kind == yaml.ScalarNode && f.val.ShortTag() == "!!null" {
			d.errorf(f.line, f.path, `want a header name, got null (write key_header: "" to send the key only in the body through {{.Key}})`)
			keyOK = false
		} else if s, ok := d.str(f); !ok {
			keyOK = false
		} else if s != "" && !isToken(s) {
			d.errorf(f.line, f.path, "bad header name %q", s)
			keyOK = false
		} else if ck := http.CanonicalHeaderKey(s); slices.Contains(reservedHeaders, ck) {
			d.errorf(f.line, f.path, "%s is set by the harness", ck)
			keyOK = false
		} else {
			key = s
		}
	}
	d.keyFormatAndTimeout(fs, &c.KeyFormat, &c.Timeout)
	contentType := ""
	if f, ok := d.get(fs, "headers"); ok {
		m, entries := d.stringMap(f)
		c.Headers = m
		canon := map[string]field{}
		for _, e := range entries {
			ck, ok := d.headerName(e)
			if !ok {
				continue
			}
			switch {
			case keyOK && key != "" && strings.EqualFold(e.name, key):
				d.errorf(e.line, e.path, "duplicates key_header %s, which the harness sets to each operation's key", key)
				continue
			}
			if prev, dup := canon[ck]; dup {
				d.errorf(e.line, e.path, "duplicate header (same as %s at line %d)", prev.name, prev.line)
				continue
			}
			canon[ck] = e
			v, ok := d.headerValue(e, "header", m[e.name], true)
			if !ok {
				continue
			}
			if ck == "Content-Type" {
				contentType = v
			}
		}
	}
	if f, ok := d.get(fs, "body"); ok {
		if s, ok := d.str(f); ok {
			c.Body = s
			if tpl, err := harness.ParseTemplate("body", s); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			} else if body, err := tpl.Render(checkOp); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			} else if strings.Contains(strings.ToLower(contentType), "json") && strings.TrimSpace(body) != "" {
				var v any
				if err := json.Unmarshal([]byte(body), &v); err != nil {
					d.errorf(f.line, f.path, "Content-Type is %s but the rendered body is not JSON (%v): %s", contentType, err, harness.Snippet([]byte(body)))
				}
			}
			if keyOK && key == "" && !strings.Contains(s, ".Key") {
				kf := fs.m["key_header"]
				d.errorf(kf.line, kf.path, "empty, but the body never uses {{.Key}}: the key would not be sent")
			}
		}
	} else if keyOK && key == "" {
		kf := fs.m["key_header"]
		d.errorf(kf.line, kf.path, "empty, but there is no body to carry {{.Key}}: the key would not be sent")
	}
}

// keyFormatAndTimeout decodes the key_format and timeout fields every
// transport section has.
func (d toolDecoder) keyFormatAndTimeout(fs *fields, format *harness.KeyFormat, timeout *time.Duration) {
	if f, ok := d.get(fs, "key_format"); ok {
		if s, ok := d.str(f); ok {
			if kf, err := harness.ParseKeyFormat(s); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			} else {
				*format = kf
			}
		}
	}
	if f, ok := d.get(fs, "timeout"); ok {
		if v, ok := d.duration(f, false, MaxToolTimeout); ok {
			*timeout = v
		}
	}
}

// reservedHeaders are written by HTTPTool itself.
var reservedHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "User-Agent"}

// checkToolURL returns what is wrong with a tool's endpoint ("" if nothing).
func checkToolURL(s string) string {
	if strings.Contains(s, "{{") {
		return fmt.Sprintf("bad URL %q: the tool url is not a template; put {{.Marker}} in the body or a header", s)
	}
	return checkURL(s)
}

// checkURL returns what is wrong with an http(s) URL ("" if nothing).
func checkURL(s string) string { return harness.CheckHTTPURL(s) }

// checkMethod returns what is wrong with an HTTP method ("" if nothing).
func checkMethod(m string) string {
	if !isToken(m) {
		return fmt.Sprintf("bad method %q", m)
	}
	switch up := strings.ToUpper(m); up {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		if up != m {
			return fmt.Sprintf("bad method %q: methods are case-sensitive, want %s", m, up)
		}
	}
	return ""
}

// isToken reports whether s is an HTTP token (RFC 9110), as header names
// and methods are.
// headerName records where header entry e is and checks its name: a
// token, and not one the harness sets. It returns the canonical name.
func (d toolDecoder) headerName(e field) (string, bool) {
	d.t.lines[strings.TrimPrefix(e.path, d.t.path+".")] = e.line
	ck := http.CanonicalHeaderKey(e.name)
	switch {
	case !isToken(e.name):
		d.errorf(e.line, e.path, "bad header name %q", e.name)
		return ck, false
	case slices.Contains(reservedHeaders, ck):
		d.errorf(e.line, e.path, "%s is set by the harness", ck)
		return ck, false
	}
	return ck, true
}

// headerValue checks header entry e's value, a template (named what plus
// the header's name): it parses and, with render, renders at load time to
// a value without line breaks, which it returns.
func (d toolDecoder) headerValue(e field, what, value string, render bool) (string, bool) {
	tpl, err := harness.ParseTemplate(what+" "+e.name, value)
	if err != nil {
		d.errorf(e.line, e.path, "%v", err)
		return "", false
	}
	if !render {
		return value, true
	}
	v, err := tpl.Render(checkOp)
	if err != nil {
		d.errorf(e.line, e.path, "%v", err)
		return "", false
	}
	if strings.ContainsAny(v, "\r\n") {
		d.errorf(e.line, e.path, "rendered value contains a line break: %q", v)
		return "", false
	}
	return v, true
}

func isToken(s string) bool { return harness.IsToken(s) }
