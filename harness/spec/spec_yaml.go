package spec

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

var (
	yamlLineRE   = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)
	yamlAnchorRE = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
)

// yamlParserProblems are the problems yaml.v3's parser (as opposed to its
// scanner) reports. For these, yaml.v3 prints a 0-based line: the line
// before the construct being parsed, or before the problem.
var yamlParserProblems = []string{
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"did not find expected <document start>",
	"did not find expected <stream-start>",
	"did not find expected key",
	"did not find expected node content",
	"found duplicate %TAG directive",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

// tabHint ends the message of a YAML error on a line indented with a tab.
const tabHint = " (tabs are not allowed in YAML indentation: indent with spaces)"

// quoteHint ends the message of a YAML error caused by a quoted value that
// does not end on its line.
const quoteHint = " (the quoted value on this line does not end on it: is its closing quote missing?)"

// syntax records a YAML syntax error at the line of the problem.
//
// yaml.v3 names the line of the construct it was reading (the mapping that
// holds a badly indented key, the plain scalar a tab interrupts), not the
// line of the problem itself. The problem's line is found as the shortest
// prefix of the file that already fails with the same message; then a
// quoted value that swallowed the lines up to there, or a tab in the
// indentation, is named as the cause.
func (d *specDecoder) syntax(err error) {
	msg, line := yamlProblem(err, d.src)
	lines := splitLines(d.src)
	if line == 0 {
		line = firstBadByteLine(lines, msg)
	}
	if line > 0 && !strings.Contains(msg, "end of stream") {
		if k := firstFailingPrefix(lines, line, msg); k > line {
			line = k
		}
	}
	switch {
	case strings.Contains(msg, "tab character"):
		// The tab is at the problem's line or just after the construct.
		for i := max(line-1, 0); i < len(lines); i++ {
			if tabIndented(lines[i]) {
				line = i + 1
				break
			}
		}
		msg += tabHint
	case line > 0 && line <= len(lines) && tabIndented(lines[line-1]):
		msg += tabHint
	default:
		if q := openQuote(lines, line); q > 0 {
			line = q
			msg += quoteHint
		}
	}
	// yaml.v3 may name the line after the last one (a construct left open
	// at the end of the file): that is the last line.
	if n := lineCount(d.src); line > n {
		line = n
	}
	d.errorf(line, "", "bad YAML: %s", msg)
}

// lineCount is the number of lines of src as YAML counts them, a final
// line break ending the last line rather than starting another (at least 1).
func lineCount(src []byte) int {
	lines := splitLines(src)
	if n := len(lines); n > 1 && len(lines[n-1]) == 0 {
		return n - 1
	}
	return len(lines)
}

// splitLines splits src at YAML's line breaks: "\r\n", "\r", "\n", and
// NEL, LS and PS.
func splitLines(src []byte) [][]byte {
	var lines [][]byte
	start := 0
	for i := 0; i < len(src); {
		width := 0
		switch {
		case src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n':
			width = 2
		case src[i] == '\r', src[i] == '\n':
			width = 1
		case bytes.HasPrefix(src[i:], []byte("\u0085")), bytes.HasPrefix(src[i:], []byte("\u2028")), bytes.HasPrefix(src[i:], []byte("\u2029")):
			_, width = utf8.DecodeRune(src[i:])
		}
		if width == 0 {
			i++
			continue
		}
		lines = append(lines, src[start:i])
		i += width
		start = i
	}
	return append(lines, src[start:])
}

// yamlProblem splits a yaml.v3 error into its message and 1-based line (0
// when unknown).
func yamlProblem(err error, src []byte) (msg string, line int) {
	msg = err.Error()
	switch m := yamlLineRE.FindStringSubmatch(msg); {
	case m != nil:
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if slices.Contains(yamlParserProblems, msg) {
			line++
		}
	case yamlAnchorRE.MatchString(msg):
		name := yamlAnchorRE.FindStringSubmatch(msg)[1]
		msg = strings.TrimPrefix(msg, "yaml: ")
		for i, l := range splitLines(src) {
			if bytes.Contains(l, []byte("*"+name)) {
				line = i + 1
				break
			}
		}
	default:
		msg = strings.TrimPrefix(msg, "yaml: ")
		if slices.Contains(yamlParserProblems, msg) {
			line = 1
		}
	}
	return msg, line
}

// firstFailingPrefix returns the smallest k >= from such that the first k
// lines already fail to parse with msg (0 if none does). Once a prefix holds
// the problem, every longer one fails there too; the problem lies at or after
// the line yaml.v3 named (from), usually close to it, so the search gallops
// from there and then bisects: its parses stay about as long as the prefix
// that holds the problem.
func firstFailingPrefix(lines [][]byte, from int, msg string) int {
	n := len(lines)
	fails := func(k int) bool {
		m, _ := yamlSyntax(bytes.Join(lines[:k], []byte("\n")))
		return m == msg
	}
	from = min(max(from, 1), n)
	lo, hi := from-1, from // fails(lo) is false (or lo is before from); find the first hi that fails
	for step := 1; !fails(hi); step *= 2 {
		if hi == n {
			return 0
		}
		lo, hi = hi, min(hi+step, n)
	}
	return lo + 1 + sort.Search(hi-lo-1, func(i int) bool { return fails(lo + 1 + i) })
}

// yamlSyntax parses src as the spec loader does (one document, and a look
// at whether a second one follows) and returns its syntax error's message
// and line, or "".
func yamlSyntax(src []byte) (string, int) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for range 2 {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return "", 0
			}
			return yamlProblem(err, src)
		}
	}
	return "", 0
}

// tabIndented reports whether line's indentation holds a tab.
func tabIndented(line []byte) bool {
	indent := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
	return bytes.IndexByte(indent, '\t') >= 0
}

// openQuote returns the first line whose value opens a quote that runs,
// unclosed on its own line, up to the problem's line (upto, 1-based) or
// beyond, or 0. A quoted value may span lines in YAML, but in a spec that is
// nearly always a missing closing quote, which makes yaml.v3 complain lines
// later, wherever the next quote character happens to be.
func openQuote(lines [][]byte, upto int) int {
	for i := 0; i < upto && i < len(lines); i++ {
		l := lines[i]
		t := bytes.TrimSpace(l)
		if bytes.HasPrefix(t, []byte("#")) {
			continue
		}
		// Where the value after "key:" or "- " starts.
		start := -1
		if j := bytes.Index(l, []byte(": ")); j >= 0 {
			start = j + 2
		} else if k := bytes.Index(l, []byte("- ")); k >= 0 && len(bytes.TrimSpace(l[:k])) == 0 {
			start = k + 2
		}
		if start < 0 {
			continue
		}
		for start < len(l) && l[start] == ' ' {
			start++
		}
		if start >= len(l) || (l[start] != '\'' && l[start] != '"') {
			continue
		}
		end := quoteEnd(lines, i, start)
		switch {
		case end < 0 || end+1 >= upto-1 && end != i:
			return i + 1
		case end > i:
			i = end // the lines inside the quoted value start no values
		}
	}
	return 0
}

// quoteEnd returns the index of the line where the quoted scalar opening at
// lines[i][start] closes (-1 if it never does).
func quoteEnd(lines [][]byte, i, start int) int {
	q := lines[i][start]
	pos := start + 1
	for ; i < len(lines); i, pos = i+1, 0 {
		l := lines[i]
		for ; pos < len(l); pos++ {
			switch {
			case q == '"' && l[pos] == '\\':
				pos++
			case q == '\'' && l[pos] == '\'' && pos+1 < len(l) && l[pos+1] == '\'':
				pos++
			case l[pos] == q:
				return i
			}
		}
	}
	return -1
}

// firstBadByteLine locates an error yaml.v3 reports without a line: the
// first line holding a control character, or bytes that are not UTF-8 (0 if
// the message is about neither).
func firstBadByteLine(lines [][]byte, msg string) int {
	control := strings.Contains(msg, "control characters")
	encoding := strings.Contains(msg, "UTF-8") || strings.Contains(msg, "utf-8")
	if !control && !encoding {
		return 0
	}
	for i, l := range lines {
		if encoding && !utf8.Valid(l) {
			return i + 1
		}
		if control && bytes.ContainsFunc(l, func(r rune) bool { return r < 0x20 && r != '\t' && r != '\r' || r == 0x7f }) {
			return i + 1
		}
	}
	return 0
}

// document parses the single YAML document of the file and returns its root.
func (d *specDecoder) document() *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(d.src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorf(1, "", "empty spec: want version: %d and a list of tools", Version)
		} else {
			d.syntax(err)
		}
		return nil
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		line := next.Line
		if len(next.Content) > 0 && line == 0 {
			line = next.Content[0].Line
		}
		d.errorf(line, "", "a second YAML document starts here: a spec file holds exactly one")
		return nil
	case !errors.Is(err, io.EOF):
		d.syntax(err)
		return nil
	}
	if len(doc.Content) == 0 {
		d.errorf(1, "", "empty spec: want version: %d and a list of tools", Version)
		return nil
	}
	return doc.Content[0]
}
