package jsonptr

import (
	"fmt"
	"strconv"
	"strings"
)

// Pointer is a parsed JSON pointer (RFC 6901).
type Pointer struct {
	src    string
	tokens []string
}

// Parse parses s ("" is the whole document, otherwise it starts with
// "/").
func Parse(s string) (Pointer, error) {
	if s == "" {
		return Pointer{}, nil
	}
	if !strings.HasPrefix(s, "/") {
		return Pointer{}, fmt.Errorf("JSON pointer %q must start with \"/\"", s)
	}
	parts := strings.Split(s[1:], "/")
	for i, p := range parts {
		if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(p, "~0", ""), "~1", ""), "~") {
			return Pointer{}, fmt.Errorf("JSON pointer %q: bad escape in %q", s, p)
		}
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return Pointer{src: s, tokens: parts}, nil
}

// Must is Parse that panics on error.
func Must(s string) Pointer {
	p, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return p
}

// String returns the pointer as written.
func (p Pointer) String() string { return p.src }

// Lookup finds the value p points at in a decoded JSON document.
func (p Pointer) Lookup(doc any) (any, error) {
	cur := doc
	for _, tok := range p.tokens {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, fmt.Errorf("JSON pointer %s: no member %q", p.src, tok)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, fmt.Errorf("JSON pointer %s: no element %q in an array of %d", p.src, tok, len(v))
			}
			cur = v[i]
		default:
			return nil, fmt.Errorf("JSON pointer %s: %q is inside a %T, not an object or array", p.src, tok, cur)
		}
	}
	return cur, nil
}

// Remove returns doc without the value p points at (doc itself when p
// points nowhere). Maps are copied along the path; array elements are
// replaced by null, so indexes do not shift.
func (p Pointer) Remove(doc any) any {
	if len(p.tokens) == 0 {
		return nil
	}
	return removeAt(doc, p.tokens)
}

func removeAt(doc any, tokens []string) any {
	tok, rest := tokens[0], tokens[1:]
	switch v := doc.(type) {
	case map[string]any:
		child, ok := v[tok]
		if !ok {
			return doc
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = x
		}
		if len(rest) == 0 {
			delete(out, tok)
		} else {
			out[tok] = removeAt(child, rest)
		}
		return out
	case []any:
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(v) {
			return doc
		}
		out := append([]any(nil), v...)
		if len(rest) == 0 {
			out[i] = nil
		} else {
			out[i] = removeAt(v[i], rest)
		}
		return out
	}
	return doc
}
