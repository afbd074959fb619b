package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/onceproof/onceproof/harness/jsonptr"
)

// bodyDiff compares two response bodies: as JSON documents without the
// volatile pointers when both are JSON, byte for byte otherwise. It
// returns the first difference (ok false when there is none).
func bodyDiff(want, got []byte, volatile []string) (Difference, bool) {
	wd, werr := decodeJSON(want)
	gd, gerr := decodeJSON(got)
	if werr != nil || gerr != nil {
		if bytes.Equal(want, got) {
			return Difference{}, false
		}
		return Difference{"body", quoteShort(got), quoteShort(want)}, true
	}
	for _, v := range volatile {
		p, err := jsonptr.Parse(v)
		if err != nil || v == "" {
			continue
		}
		wd, gd = p.Remove(wd), p.Remove(gd)
	}
	if path, g, w, ok := firstDiff(wd, gd, ""); ok {
		field := "body"
		if path != "" {
			field = "body at " + path
		}
		return Difference{field, g, w}, true
	}
	return Difference{}, false
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

// firstDiff walks want and got together and returns the JSON pointer of the
// first place they differ, with both values as short text.
func firstDiff(want, got any, path string) (string, string, string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, jsonShort(got), jsonShort(want), true
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, dup := w[k]; !dup {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			wv, win := w[k]
			gv, gin := g[k]
			sub := path + "/" + escapeToken(k)
			switch {
			case !gin:
				return sub, "absent", jsonShort(wv), true
			case !win:
				return sub, jsonShort(gv), "absent", true
			}
			if p, gs, ws, ok := firstDiff(wv, gv, sub); ok {
				return p, gs, ws, true
			}
		}
		return "", "", "", false
	case []any:
		g, ok := got.([]any)
		if !ok {
			return path, jsonShort(got), jsonShort(want), true
		}
		if len(g) != len(w) {
			return path, fmt.Sprintf("%d elements", len(g)), fmt.Sprintf("%d elements", len(w)), true
		}
		for i := range w {
			if p, gs, ws, ok := firstDiff(w[i], g[i], path+"/"+strconv.Itoa(i)); ok {
				return p, gs, ws, true
			}
		}
		return "", "", "", false
	}
	if jsonShort(want) != jsonShort(got) {
		return path, jsonShort(got), jsonShort(want), true
	}
	return "", "", "", false
}

// escapeToken spells a member name as a JSON pointer token.
func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// jsonShort renders a JSON value compactly, cut at 60 bytes.
func jsonShort(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return cut(string(b), 60)
}

func quoteShort(b []byte) string {
	if len(b) == 0 {
		return "empty"
	}
	return strconv.Quote(cut(string(b), 60))
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
