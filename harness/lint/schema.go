package lint

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// param is one property of an input schema.
type param struct {
	name string // the property's name
	path string // dotted from the top: "options.idempotency_key"
	// field is the finding field: "inputSchema.properties.options.properties.idempotency_key".
	field       string
	schema      map[string]any
	required    bool // required here and every object above it is required
	description string
}

// maxDepth bounds how deep walk looks into nested objects.
const maxDepth = 4

// walk lists the properties of an object schema, nested objects' included,
// in name order.
func walk(schema map[string]any) []param {
	var out []param
	var rec func(s map[string]any, path, field string, required bool, depth int)
	rec = func(s map[string]any, path, field string, required bool, depth int) {
		props, _ := s["properties"].(map[string]any)
		req := map[string]bool{}
		if list, ok := s["required"].([]any); ok {
			for _, v := range list {
				if n, ok := v.(string); ok {
					req[n] = true
				}
			}
		}
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			ps, ok := props[n].(map[string]any)
			if !ok {
				continue // a boolean schema: nothing to read
			}
			p := param{name: n, path: n, field: field + ".properties." + n, schema: ps, required: required && req[n]}
			if path != "" {
				p.path = path + "." + n
			}
			p.description, _ = ps["description"].(string)
			out = append(out, p)
			if depth < maxDepth && slices.Contains(types(ps), "object") {
				rec(ps, p.path, p.field, p.required, depth+1)
			}
		}
	}
	if schema != nil {
		rec(schema, "", "inputSchema", true, 1)
	}
	return out
}

// normalize lower-cases s and drops everything but letters and digits:
// "Idempotency-Key" → "idempotencykey".
func normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

// isKeyName reports whether a property named name, described by desc, is an
// idempotency key (see the package documentation).
func isKeyName(name, desc string) bool {
	n := normalize(name)
	if strings.Contains(n, "idempot") {
		return true
	}
	switch n {
	case "clienttoken", "clientrequesttoken", "dedupkey", "dedupekey", "dedupid", "deduplicationkey", "deduplicationid", "messagededuplicationid":
		return true
	case "requestid", "clientrequestid", "operationid", "requestkey", "requesttoken", "nonce", "uniquekey", "key":
		return keyPurposeRE.MatchString(strings.ToLower(desc))
	}
	return false
}

// keyPurposeRE finds a description that says a generic parameter is there to
// make retries safe.
var keyPurposeRE = regexp.MustCompile(`idempot|dedup|de-dup|duplicat|\bretr(?:y|ies|ied|ying)\b|\breplay|same (?:key|id|token|value)`)

// types returns the JSON types a schema allows ("type" as a string or a list,
// or the types of its anyOf/oneOf members); nil when it declares none.
func types(s map[string]any) []string {
	var out []string
	add := func(v any) {
		switch t := v.(type) {
		case string:
			out = append(out, t)
		case []any:
			for _, x := range t {
				if s, ok := x.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	add(s["type"])
	for _, k := range []string{"anyOf", "oneOf"} {
		if list, ok := s[k].([]any); ok {
			for _, m := range list {
				if ms, ok := m.(map[string]any); ok {
					add(ms["type"])
				}
			}
		}
	}
	if n, _ := s["nullable"].(bool); n { // OpenAPI 3.0 style
		out = append(out, "null")
	}
	return out
}

// enumValues returns the values a schema's enum or const allows, and
// whether it has either.
func enumValues(s map[string]any) ([]any, bool) {
	if c, ok := s["const"]; ok {
		return []any{c}, true
	}
	if e, ok := s["enum"].([]any); ok {
		return e, true
	}
	return nil, false
}

// emptyAllowed reports whether a string schema admits "": no minLength of 1
// or more, no format uuid, no pattern that rejects it, no enum or const
// without it.
func emptyAllowed(s map[string]any) bool {
	if n, ok := s["minLength"].(float64); ok && n >= 1 {
		return false
	}
	if n, ok := s["minLength"].(int); ok && n >= 1 {
		return false
	}
	if f, _ := s["format"].(string); strings.EqualFold(f, "uuid") {
		return false
	}
	if pat, ok := s["pattern"].(string); ok {
		re, err := regexp.Compile(pat)
		if err != nil || !re.MatchString("") {
			return false // a pattern Go cannot read is taken to constrain
		}
	}
	if vals, ok := enumValues(s); ok {
		return slices.Contains(vals, any(""))
	}
	return true
}
