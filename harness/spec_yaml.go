package harness

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

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
	reported := line
	lines := bytes.Split(d.src, []byte("\n"))
	if line > 0 && !strings.Contains(msg, "end of stream") {
		if k := firstFailingPrefix(lines, msg); k > line {
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
		if q := openQuote(lines, reported, line); q > 0 {
			line = q
			msg += quoteHint
		}
	}
	d.errorf(line, "", "bad YAML: %s", msg)
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
		for i, l := range bytes.Split(src, []byte("\n")) {
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

// firstFailingPrefix returns the smallest k such that the first k lines
// already fail to parse with msg (0 if none does). Once a prefix holds the
// problem, every longer one fails there too, so a binary search finds it.
func firstFailingPrefix(lines [][]byte, msg string) int {
	fails := func(k int) bool {
		m, _ := yamlSyntax(bytes.Join(lines[:k], []byte("\n")))
		return m == msg
	}
	n := len(lines)
	if !fails(n) {
		return 0
	}
	return sort.Search(n, func(i int) bool { return fails(i + 1) }) + 1
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

// openQuote returns the last line from..upto (1-based) whose value opens a
// quote that does not close on it, or 0. A quoted value may span lines in
// YAML, but in a spec that is nearly always a missing closing quote, which
// makes yaml.v3 complain lines later.
func openQuote(lines [][]byte, from, upto int) int {
	found := 0
	for i := max(from-1, 0); i < upto && i < len(lines); i++ {
		l := bytes.TrimSpace(lines[i])
		if bytes.HasPrefix(l, []byte("#")) {
			continue
		}
		// The value after "key:" or "- ".
		v := l
		if j := bytes.Index(l, []byte(": ")); j >= 0 {
			v = bytes.TrimSpace(l[j+2:])
		} else if bytes.HasPrefix(l, []byte("- ")) {
			v = bytes.TrimSpace(l[2:])
		} else {
			continue
		}
		if len(v) == 0 || (v[0] != '\'' && v[0] != '"') {
			continue
		}
		if !quoteCloses(v) {
			found = i + 1
		}
	}
	return found
}

// quoteCloses reports whether the quoted scalar starting v ends on it.
func quoteCloses(v []byte) bool {
	q := v[0]
	for i := 1; i < len(v); i++ {
		switch {
		case q == '"' && v[i] == '\\':
			i++
		case q == '\'' && v[i] == '\'' && i+1 < len(v) && v[i+1] == '\'':
			i++
		case v[i] == q:
			return true
		}
	}
	return false
}

// document parses the single YAML document of the file and returns its root.
func (d *specDecoder) document() *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(d.src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorf(1, "", "empty spec: want version: %d and a list of tools", SpecVersion)
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
		d.errorf(1, "", "empty spec: want version: %d and a list of tools", SpecVersion)
		return nil
	}
	return doc.Content[0]
}
