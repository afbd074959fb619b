package main

import (
	"fmt"
	"regexp"
	"strings"
)

// The official PostgreSQL image runs /docker-entrypoint-initdb.d/*.sql with
// `psql -v ON_ERROR_STOP=1 -f FILE`. There is no psql process here (the
// entrypoint talks to the server with pgx), so splitSQL does the part of
// psql's work that scripts rely on: it cuts a script into the statements
// psql would send one at a time (so CREATE DATABASE, which may not run in a
// multi-statement query string, works as it does under psql), keeps the data
// of COPY … FROM stdin, and recognises the \connect meta-command. Other
// meta-commands are refused with a clear error.

// stepKind says what a script step is.
type stepKind int

const (
	stepSQL     stepKind = iota // one SQL statement
	stepCopy                    // COPY … FROM stdin with its data
	stepConnect                 // \connect DBNAME
)

// step is one unit of a script, run in order.
type step struct {
	kind stepKind
	sql  string // the statement (stepSQL, stepCopy) or database (stepConnect)
	data string // stepCopy: the data lines, without the terminating \.
	line int    // the 1-based line the step starts on, for errors
}

// copyFromStdin matches a COPY statement that reads its data from the script.
var copyFromStdin = regexp.MustCompile(`(?is)^\s*copy\b.*\bfrom\s+stdin\b`)

// splitSQL cuts a psql script into steps.
func splitSQL(src string) ([]step, error) {
	var steps []step
	var cur strings.Builder
	line, startLine := 1, 1
	started := false // whether cur holds a non-blank character
	depth := 0       // parenthesis depth: psql does not end a statement inside ( )
	flush := func() {
		s := strings.TrimSpace(cur.String())
		cur.Reset()
		started, depth = false, 0
		if s != "" && !onlyComments(s) {
			steps = append(steps, step{kind: stepSQL, sql: s, line: startLine})
		}
	}
	i := 0
	for i < len(src) {
		c := src[i]
		// A meta-command: a backslash where a statement may start.
		if c == '\\' && (!started || onlyComments(cur.String())) {
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			st, err := metaCommand(strings.TrimSpace(src[i:i+end]), line)
			if err != nil {
				return nil, err
			}
			if st != nil {
				steps = append(steps, *st)
			}
			cur.Reset()
			started = false
			i += end
			continue
		}
		if !started && c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			started, startLine = true, line
		}
		switch {
		case c == '\n':
			line++
			cur.WriteByte(c)
			i++
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			cur.WriteString(src[i : i+end])
			i += end
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			n, err := blockComment(src[i:])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			line += strings.Count(src[i:i+n], "\n")
			cur.WriteString(src[i : i+n])
			i += n
		case c == '\'':
			escapes := i > 0 && (src[i-1] == 'E' || src[i-1] == 'e') && (i < 2 || !isIdentChar(src[i-2]))
			n, err := quoted(src[i:], '\'', escapes)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			line += strings.Count(src[i:i+n], "\n")
			cur.WriteString(src[i : i+n])
			i += n
		case c == '"':
			n, err := quoted(src[i:], '"', false)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			line += strings.Count(src[i:i+n], "\n")
			cur.WriteString(src[i : i+n])
			i += n
		case c == '$' && (i == 0 || !isIdentChar(src[i-1])):
			n, err := dollarQuoted(src[i:])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			if n == 0 { // a lone $ or a parameter like $1
				cur.WriteByte(c)
				i++
				continue
			}
			line += strings.Count(src[i:i+n], "\n")
			cur.WriteString(src[i : i+n])
			i += n
		case c == '(':
			depth++
			cur.WriteByte(c)
			i++
		case c == ')':
			if depth > 0 {
				depth--
			}
			cur.WriteByte(c)
			i++
		case c == ';' && depth == 0:
			stmt := strings.TrimSpace(cur.String())
			i++
			if copyFromStdin.MatchString(stripComments(stmt)) {
				// The data starts on the next line and ends at a line "\." or
				// at the end of the script.
				if nl := strings.IndexByte(src[i:], '\n'); nl >= 0 {
					i += nl + 1
				} else {
					i = len(src)
				}
				line++
				data, n, lines := copyData(src[i:])
				steps = append(steps, step{kind: stepCopy, sql: stmt, data: data, line: startLine})
				cur.Reset()
				started, depth = false, 0
				i += n
				line += lines
				continue
			}
			flush()
		case c == '\\':
			return nil, fmt.Errorf("line %d: psql meta-commands inside a statement are not supported", line)
		default:
			cur.WriteByte(c)
			i++
		}
	}
	flush()
	return steps, nil
}

// metaCommand parses a psql meta-command line. It supports \connect (\c)
// DBNAME and ignores \set and \echo-free settings psql scripts commonly carry
// (\set ON_ERROR_STOP, which is always on here); anything else is an error.
func metaCommand(cmdLine string, line int) (*step, error) {
	fields := strings.Fields(cmdLine)
	switch fields[0] {
	case `\c`, `\connect`:
		if len(fields) != 2 {
			return nil, fmt.Errorf("line %d: %s: only \\connect DBNAME is supported", line, fields[0])
		}
		db := fields[1]
		if len(db) >= 2 && (db[0] == '"' || db[0] == '\'') && db[len(db)-1] == db[0] {
			db = db[1 : len(db)-1]
		}
		return &step{kind: stepConnect, sql: db, line: line}, nil
	case `\set`, `\unset`, `\timing`, `\pset`, `\encoding`:
		return nil, nil
	default:
		return nil, fmt.Errorf("line %d: psql meta-command %s is not supported (scripts run through pgx, not psql)", line, fields[0])
	}
}

// copyData returns the COPY data at the start of s, the bytes it and its
// terminator take, and the number of lines they span.
func copyData(s string) (data string, n, lines int) {
	pos := 0
	for pos < len(s) {
		end := strings.IndexByte(s[pos:], '\n')
		var l string
		next := len(s)
		if end >= 0 {
			l = s[pos : pos+end]
			next = pos + end + 1
		} else {
			l = s[pos:]
		}
		if strings.TrimRight(l, "\r") == `\.` {
			return s[:pos], next, lines + 1
		}
		pos = next
		lines++
	}
	return s, len(s), lines
}

// blockComment returns the length of the (nestable) /* */ comment at s.
func blockComment(s string) (int, error) {
	depth := 0
	for i := 0; i < len(s)-1; i++ {
		switch {
		case s[i] == '/' && s[i+1] == '*':
			depth++
			i++
		case s[i] == '*' && s[i+1] == '/':
			depth--
			i++
			if depth == 0 {
				return i + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("unterminated /* comment")
}

// quoted returns the length of the quoted literal or identifier at s, which
// starts with q; a doubled q stands for itself, and with escapes (E'…') so
// does a backslash-escaped character.
func quoted(s string, q byte, escapes bool) (int, error) {
	for i := 1; i < len(s); i++ {
		switch {
		case escapes && s[i] == '\\':
			i++
		case s[i] == q:
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated %c quote", q)
}

// dollarQuoted returns the length of the $tag$…$tag$ string at s, or 0 if s
// does not start a dollar quote.
func dollarQuoted(s string) (int, error) {
	j := 1
	for j < len(s) && s[j] != '$' {
		c := s[j]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || j > 1 && c >= '0' && c <= '9') {
			return 0, nil
		}
		j++
	}
	if j >= len(s) {
		return 0, nil
	}
	tag := s[:j+1]
	end := strings.Index(s[j+1:], tag)
	if end < 0 {
		return 0, fmt.Errorf("unterminated dollar quote %s", tag)
	}
	return j + 1 + end + len(tag), nil
}

func isIdentChar(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// stripComments removes -- and /* */ comments outside quotes, roughly: it is
// used only to recognise COPY … FROM stdin.
func stripComments(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "--"):
			end := strings.IndexByte(s[i:], '\n')
			if end < 0 {
				return b.String()
			}
			i += end
			b.WriteByte('\n')
		case strings.HasPrefix(s[i:], "/*"):
			n, err := blockComment(s[i:])
			if err != nil {
				return b.String()
			}
			i += n - 1
			b.WriteByte(' ')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// onlyComments reports whether s holds nothing but comments and blanks.
func onlyComments(s string) bool {
	return strings.TrimSpace(stripComments(s)) == ""
}
