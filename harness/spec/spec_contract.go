package spec

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// MaxRetention bounds retention, the promise a spec declares (the retention
// scenario checks up to --max-wait of it): a year.
const MaxRetention = 366 * 24 * time.Hour

// contractFields are the tool-level fields of the idempotency contract.
var contractFields = []string{"profile", "codes", "retention", "volatile", "replay_headers", "replayed_header"}

// codesFields are the fields of a custom profile's codes.
var codesFields = []string{"missing_key", "mismatch", "in_flight", "replay", "replay_4xx", "replay_5xx"}

// contract decodes the tool's contract fields (fs is the tool's mapping)
// and the http section's error_body into d.t.HTTP. Every value is checked
// here, so that building the tool cannot fail on them.
func (d toolDecoder) contract(fs *fields) {
	c := &d.t.Common.Contract
	noHeaders := ""
	if d.t.Kind != nil {
		noHeaders = d.t.Kind.NoHeaders
	}
	profileLine := 0
	if f, ok := d.get(fs, "profile"); ok {
		if s, ok := d.str(f); ok {
			if p, err := report.ParseProfile(s); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			} else {
				c.Profile, profileLine = p, f.line
			}
		}
	}
	cf, hasCodes := d.get(fs, "codes")
	switch {
	case c.Profile == harness.ProfileCustom && !hasCodes:
		pf := fs.m["profile"]
		d.errorf(pf.line, pf.path, "custom: missing codes: want the answers your tool gives, e.g. codes: {missing_key: 400, mismatch: 422, in_flight: 409, replay: exact}")
	case c.Profile == harness.ProfileCustom:
		c.Codes = d.codes(cf)
	case hasCodes:
		p := c.Profile
		if p == "" {
			p = harness.ProfileIETF
		}
		codes, _ := report.ProfileCodes(p)
		where := "the default profile ietf"
		if profileLine > 0 {
			where = fmt.Sprintf("profile %s (line %d)", p, profileLine)
		}
		d.errorf(cf.line, cf.path, "%s fixes the codes (%s): write profile: custom to give your own", where, codes)
	}
	if f, ok := d.get(fs, "retention"); ok {
		if v, ok := d.duration(f, false, MaxRetention); ok {
			c.Retention = v
		}
	}
	if f, ok := d.get(fs, "volatile"); ok {
		seen := map[string]int{}
		for _, item := range d.list(f, "a list of JSON pointers into the response body, e.g. [/created, /request_id]") {
			s, ok := d.str(item)
			if !ok {
				continue
			}
			switch _, err := harness.ParsePointer(s); {
			case s == "":
				d.errorf(item.line, item.path, `"" is the whole body: leave volatile out and list the fields that may differ`)
			case err != nil:
				d.errorf(item.line, item.path, "%v", err)
			case seen[s] > 0:
				d.errorf(item.line, item.path, "duplicate pointer %s (first at line %d)", s, seen[s])
			default:
				seen[s] = item.line
				c.Volatile = append(c.Volatile, s)
			}
		}
	}
	replayHeaders := map[string]int{}
	if f, ok := d.get(fs, "replay_headers"); ok {
		c.ReplayHeaders = []string{}
		if noHeaders != "" {
			d.errorf(f.line, f.path, "%s", noHeaders)
		}
		for _, item := range d.list(f, "a list of response header names, e.g. [Location, Content-Type]") {
			s, ok := d.str(item)
			if !ok {
				continue
			}
			ck := http.CanonicalHeaderKey(s)
			switch {
			case !isToken(s):
				d.errorf(item.line, item.path, "bad header name %q", s)
			case replayHeaders[ck] > 0:
				d.errorf(item.line, item.path, "duplicate header %s (first at line %d)", ck, replayHeaders[ck])
			default:
				replayHeaders[ck] = item.line
				c.ReplayHeaders = append(c.ReplayHeaders, s)
			}
		}
	}
	if f, ok := d.get(fs, "replayed_header"); ok {
		if s, ok := d.str(f); ok {
			ck := http.CanonicalHeaderKey(s)
			_, listed := fs.m["replay_headers"]
			switch {
			case noHeaders != "":
				d.errorf(f.line, f.path, "%s", noHeaders)
			case !isToken(s):
				d.errorf(f.line, f.path, "bad header name %q", s)
			case replayHeaders[ck] > 0 || !listed && (ck == "Location" || ck == "Content-Type"):
				d.errorf(f.line, f.path, "%s is also a replay header (which a replay must repeat): it differs between a first answer and its replays by definition", ck)
			default:
				c.ReplayedHeader = s
			}
		}
	}
	if hf, ok := fs.m["http"]; ok {
		d.errorBody(hf)
	}
}

// codes decodes a custom profile's codes.
func (d toolDecoder) codes(f field) harness.Codes {
	codes := harness.Codes{Replay: harness.ReplayExact, Replay4xx: true}
	fs, ok := d.mapping(f, codesFields)
	if !ok {
		return codes
	}
	status := func(name, want string, lo, hi int, noneOK bool) int {
		g, ok := d.need(fs, name, want)
		if !ok {
			return 0
		}
		if noneOK && g.val.Kind == yaml.ScalarNode && g.val.Value == "none" {
			return 0
		}
		n, err := strconv.Atoi(g.val.Value)
		if g.val.Kind != yaml.ScalarNode || g.val.ShortTag() != "!!int" || err != nil {
			d.errorf(g.line, g.path, "want %s, got %s", want, describe(g.val))
			return 0
		}
		if n < lo || n > hi {
			d.errorf(g.line, g.path, "%d: want %s", n, want)
			return 0
		}
		return n
	}
	codes.MissingKey = status("missing_key", "the status a request without a key is refused with (4xx), or none when keys are optional", 400, 499, true)
	codes.Mismatch = status("mismatch", "the status a reused key with another payload is refused with (4xx)", 400, 499, false)
	codes.InFlight = status("in_flight", "the status for a key whose first request is still running (4xx or 5xx)", 400, 599, false)
	if g, ok := d.get(fs, "replay"); ok {
		if s, ok := d.str(g); ok {
			switch m := harness.ReplayMode(s); m {
			case harness.ReplayExact, harness.ReplayLatest:
				codes.Replay = m
			default:
				d.errorf(g.line, g.path, "%q: want exact (the first answer byte for byte) or latest (the operation's latest status)", s)
			}
		}
	}
	for _, b := range []struct {
		name string
		dst  *bool
	}{{"replay_4xx", &codes.Replay4xx}, {"replay_5xx", &codes.Replay5xx}} {
		if g, ok := d.get(fs, b.name); ok {
			if g.val.Kind != yaml.ScalarNode || g.val.ShortTag() != "!!bool" {
				d.errorf(g.line, g.path, "want true or false, got %s", describe(g.val))
				continue
			}
			*b.dst = strings.EqualFold(g.val.Value, "true")
		}
	}
	return codes
}

// errorBody decodes http.error_body into d.t.HTTP.ErrorBody.
func (d toolDecoder) errorBody(hf field) {
	if deref(hf.val).Kind != yaml.MappingNode {
		return // the http section reported it
	}
	fs, _ := d.mapping(hf, httpFields)
	f, ok := d.get(fs, "error_body")
	if !ok {
		return
	}
	s, ok := d.str(f)
	if !ok {
		return
	}
	tpl, err := harness.ParseTemplate("error_body", s)
	if err != nil {
		d.errorf(f.line, f.path, "%v", err)
		return
	}
	if _, err := tpl.Render(checkOp); err != nil {
		d.errorf(f.line, f.path, "%v", err)
		return
	}
	if !tpl.UsesMarker() {
		d.errorf(f.line, f.path, "never uses {{.Marker}}: an effect the refused request made could not be counted")
		return
	}
	if bf, ok := fs.m["body"]; ok && deref(bf.val).Value == s {
		d.errorf(f.line, f.path, "the same template as body: it must be a request the tool refuses")
		return
	}
	d.t.HTTP.ErrorBody = s
}

// list decodes a sequence, returning its items as fields.
func (d toolDecoder) list(f field, want string) []field {
	n := deref(f.val)
	if n.Kind != yaml.SequenceNode {
		d.errorf(f.line, f.path, "want %s, got %s", want, describe(n))
		return nil
	}
	out := make([]field, 0, len(n.Content))
	for i, item := range n.Content {
		item = deref(item)
		out = append(out, field{path: fmt.Sprintf("%s[%d]", f.path, i), line: item.Line, val: item})
	}
	return out
}
