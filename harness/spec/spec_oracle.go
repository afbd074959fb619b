package spec

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/harness"
)

// oracle decodes a tool's oracle section; it returns nil on errors.
func (d toolDecoder) oracle(f field) harness.Oracle {
	if v := deref(f.val); v.Kind == yaml.ScalarNode && v.Value == OraclePlaceholder {
		d.errorf(f.line, f.path, "%s is the placeholder onceproof discover writes: %s", OraclePlaceholder, placeholderHint())
		return nil
	}
	fs, ok := d.mapping(f, oracleFields)
	if !ok {
		return nil
	}
	before := len(d.errs)
	var timeout, settle time.Duration
	if f, ok := d.get(fs, "timeout"); ok {
		timeout, _ = d.duration(f, false, MaxOracleTimeout)
	}
	if f, ok := d.get(fs, "settle"); ok {
		settle, _ = d.duration(f, true, MaxSettle)
	}
	kinds := []string{"http", "command", "sql", "redis"}
	var set []field
	for _, k := range kinds {
		if f, ok := d.get(fs, k); ok {
			set = append(set, f)
		}
	}
	sort.Slice(set, func(i, j int) bool { return set[i].line < set[j].line })
	var o harness.Oracle
	switch {
	case len(set) > 1:
		d.errorf(set[1].line, set[1].path, "an oracle is one of %s; this one is already %s (line %d)", strings.Join(kinds, ", "), set[0].name, set[0].line)
	case len(set) == 0 && fs.misspelt(kinds...):
	case len(set) == 0:
		d.errorf(fs.line, f.path, "want exactly one of http (a count endpoint), command (a program printing the count), sql (a PostgreSQL query) or redis (a command with an integer reply)")
	case set[0].name == "http":
		o = d.httpOracle(set[0], timeout)
	case set[0].name == "command":
		o = d.commandOracle(set[0], timeout)
	case set[0].name == "sql":
		o = d.sqlOracle(set[0], timeout)
	case set[0].name == "redis":
		o = d.redisOracle(set[0], timeout)
	}
	if len(d.errs) > before || o == nil {
		return nil
	}
	return harness.Settled(o, settle)
}

// httpOracle decodes oracle.http.
func (d toolDecoder) httpOracle(f field, timeout time.Duration) harness.Oracle {
	fs, ok := d.mapping(f, oracleHTTPFields)
	if !ok {
		return nil
	}
	before := len(d.errs)
	var rawURL, count string
	if f, ok := d.need(fs, "url", "the count endpoint, a template using {{.Marker}}"); ok {
		if s, ok := d.str(f); ok {
			rawURL = s
			if tpl, err := harness.ParseTemplate("oracle.http.url", s); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			} else if !tpl.UsesMarker() {
				d.errorf(f.line, f.path, "never uses {{.Marker}}: the oracle could not count one operation's effects")
			} else if u, err := tpl.Render(harness.Operation{Marker: checkOp.Marker}); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			} else if msg := checkURL(u); msg != "" {
				d.errorf(f.line, f.path, "rendered %s", msg)
			}
		}
	}
	if f, ok := d.need(fs, "count", `a JSON pointer to the count in the response, e.g. /count ("" for a bare number or array)`); ok {
		if s, ok := d.str(f); ok {
			count = s
			if _, err := harness.ParsePointer(s); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			}
		}
	}
	var headers map[string]string
	if f, ok := d.get(fs, "headers"); ok {
		var entries []field
		headers, entries = d.stringMap(f)
		for _, e := range entries {
			switch {
			case !isToken(e.name):
				d.errorf(e.line, e.path, "bad header name %q", e.name)
			case strings.Contains(headers[e.name], "{{"):
				d.errorf(e.line, e.path, "oracle headers are sent as written, not rendered as templates")
			case strings.ContainsAny(headers[e.name], "\r\n"):
				d.errorf(e.line, e.path, "value contains a line break")
			}
		}
	}
	if len(d.errs) > before {
		return nil
	}
	o, err := harness.NewHTTPOracle(rawURL, count)
	if err != nil {
		d.errorf(f.line, f.path, "%v", err)
		return nil
	}
	if len(headers) > 0 {
		o.Headers = headers
	}
	o.Timeout = timeout
	return o
}

// commandOracle decodes oracle.command, an argv list.
func (d toolDecoder) commandOracle(f field, timeout time.Duration) harness.Oracle {
	const want = `a list of strings (argv), e.g. [sh, -c, "psql -tAc ..."]`
	if f.val.Kind != yaml.SequenceNode {
		d.errorf(f.line, f.path, "want %s, got %s", want, describe(f.val))
		return nil
	}
	if len(f.val.Content) == 0 {
		d.errorf(f.line, f.path, "empty: want %s", want)
		return nil
	}
	argv := make([]string, 0, len(f.val.Content))
	good := true
	for i, item := range f.val.Content {
		item = deref(item)
		e := field{path: fmt.Sprintf("%s[%d]", f.path, i), line: item.Line, val: item}
		s, ok := d.str(e)
		if !ok {
			good = false
			continue
		}
		if i == 0 && s == "" {
			d.errorf(e.line, e.path, "empty program name")
			good = false
		}
		argv = append(argv, s)
	}
	if !good {
		return nil
	}
	return &harness.CommandOracle{Argv: argv, Timeout: timeout}
}
