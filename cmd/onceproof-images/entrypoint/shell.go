package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// The PostgreSQL image has no shell, but initdb and pg_ctl start their
// children with popen(3) and system(3), which always run `/bin/sh -c CMD`.
// The commands they build are single simple commands: double-quoted paths,
// plain words, an optional leading `exec` and redirections such as
// `< "/dev/null" > "/dev/null" 2>&1` or `>/dev/null`. (initdb 15 runs, for
// example, `"/usr/lib/postgresql/15/bin/postgres" --boot -X 16777216 -F` and
// `locale -a`.) So /bin/sh in the image is this binary, which runs exactly
// that subset: words with '…', "…" and \ quoting, and redirections of file
// descriptors 0, 1 and 2 (<, >, >>, N>&M). Anything else — pipes, lists,
// variables, globs, subshells, scripts — is refused with exit status 127, the
// status of a missing shell, so tools that probe for a shell (testcontainers'
// port check, for one) treat it as absent, which it is.

// exitNoShell is the exit status for anything this shell does not run.
const exitNoShell = 127

// redirect is one redirection of a simple command.
type redirect struct {
	fd     int    // the descriptor redirected: 0, 1 or 2
	op     string // "<", ">", ">>" or ">&"
	target string // a file name, or for ">&" the descriptor copied ("1")
}

// simpleCommand is a parsed command line: its words (without a leading
// `exec`) and its redirections in order.
type simpleCommand struct {
	words     []string
	redirects []redirect
}

// errUnsupported marks shell syntax this shell does not run.
var errUnsupported = errors.New("unsupported shell syntax")

// runShell is /bin/sh: it accepts only `sh -c COMMAND [NAME [ARG...]]`.
func runShell(args []string) int {
	if len(args) < 2 || args[0] != "-c" {
		fmt.Fprintf(os.Stderr, "sh: this image has no shell; /bin/sh runs only `sh -c` with one simple command (as initdb and pg_ctl issue)\n")
		return exitNoShell
	}
	cmd, err := parseCommand(args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "sh: %v: this image has no shell; /bin/sh runs only one simple command with redirections\n", err)
		return exitNoShell
	}
	if len(cmd.words) == 0 {
		// Redirections alone: open the files for their side effects.
		if err := applyRedirects(cmd.redirects); err != nil {
			fmt.Fprintf(os.Stderr, "sh: %v\n", err)
			return 1
		}
		return 0
	}
	path, err := lookPath(cmd.words[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "sh: %s: not found\n", cmd.words[0])
		return 127
	}
	if err := applyRedirects(cmd.redirects); err != nil {
		fmt.Fprintf(os.Stderr, "sh: %v\n", err)
		return 1
	}
	err = syscall.Exec(path, cmd.words, os.Environ())
	fmt.Fprintf(os.Stderr, "sh: %s: %v\n", path, err)
	return 126
}

// applyRedirects applies the redirections to this process's descriptors, in
// order, as a shell does just before it execs the command.
func applyRedirects(rs []redirect) error {
	for _, r := range rs {
		if r.op == ">&" {
			src := int(r.target[0] - '0')
			if err := syscall.Dup3(src, r.fd, 0); err != nil {
				return fmt.Errorf("%d>&%d: %w", r.fd, src, err)
			}
			continue
		}
		var flag int
		switch r.op {
		case "<":
			flag = os.O_RDONLY
		case ">":
			flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		case ">>":
			flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
		}
		f, err := os.OpenFile(r.target, flag, 0o666)
		if err != nil {
			return err
		}
		err = syscall.Dup3(int(f.Fd()), r.fd, 0)
		f.Close()
		if err != nil {
			return fmt.Errorf("redirect %d to %s: %w", r.fd, r.target, err)
		}
	}
	return nil
}

// parseCommand parses one simple command line in the subset described above.
func parseCommand(line string) (simpleCommand, error) {
	var cmd simpleCommand
	p := &shellParser{s: line}
	for {
		p.skipBlanks()
		if p.done() {
			break
		}
		if r, ok, err := p.redirection(); err != nil {
			return cmd, err
		} else if ok {
			cmd.redirects = append(cmd.redirects, r)
			continue
		}
		w, err := p.word()
		if err != nil {
			return cmd, err
		}
		cmd.words = append(cmd.words, w)
	}
	if len(cmd.words) > 0 && cmd.words[0] == "exec" {
		cmd.words = cmd.words[1:]
	}
	if len(cmd.words) > 0 && strings.Contains(cmd.words[0], "=") {
		return cmd, fmt.Errorf("%w: variable assignment %q", errUnsupported, cmd.words[0])
	}
	return cmd, nil
}

// shellParser scans a command line.
type shellParser struct {
	s string
	i int
}

func (p *shellParser) done() bool { return p.i >= len(p.s) }

func (p *shellParser) skipBlanks() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// redirection parses [N]<, [N]>, [N]>>, [N]>&M and their file name, if one
// starts here.
func (p *shellParser) redirection() (redirect, bool, error) {
	j := p.i
	fd := -1
	if j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
		fd = int(p.s[j] - '0')
		j++
	}
	if j >= len(p.s) || (p.s[j] != '<' && p.s[j] != '>') {
		return redirect{}, false, nil
	}
	r := redirect{op: string(p.s[j])}
	j++
	if r.op == ">" && j < len(p.s) && p.s[j] == '>' {
		r.op = ">>"
		j++
	}
	if fd < 0 {
		fd = 1
		if r.op == "<" {
			fd = 0
		}
	}
	if fd > 2 {
		return r, false, fmt.Errorf("%w: redirection of descriptor %d", errUnsupported, fd)
	}
	r.fd = fd
	if j < len(p.s) && p.s[j] == '&' {
		if r.op != ">" || j+1 >= len(p.s) || p.s[j+1] < '0' || p.s[j+1] > '2' ||
			(j+2 < len(p.s) && p.s[j+2] != ' ' && p.s[j+2] != '\t') {
			return r, false, fmt.Errorf("%w: %q", errUnsupported, p.s[p.i:])
		}
		r.op, r.target = ">&", p.s[j+1:j+2]
		p.i = j + 2
		return r, true, nil
	}
	p.i = j
	p.skipBlanks()
	if p.done() {
		return r, false, fmt.Errorf("%w: redirection without a file name", errUnsupported)
	}
	w, err := p.word()
	if err != nil {
		return r, false, err
	}
	r.target = w
	return r, true, nil
}

// word parses one word: unquoted characters, '…', "…" and backslash escapes,
// up to a blank or a redirection operator.
func (p *shellParser) word() (string, error) {
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		switch {
		case c == ' ' || c == '\t' || c == '<' || c == '>':
			return b.String(), nil
		case c == '\'':
			end := strings.IndexByte(p.s[p.i+1:], '\'')
			if end < 0 {
				return "", fmt.Errorf("%w: unterminated '", errUnsupported)
			}
			b.WriteString(p.s[p.i+1 : p.i+1+end])
			p.i += end + 2
		case c == '"':
			p.i++
			for {
				if p.done() {
					return "", fmt.Errorf("%w: unterminated \"", errUnsupported)
				}
				c := p.s[p.i]
				if c == '"' {
					p.i++
					break
				}
				if c == '$' || c == '`' {
					return "", fmt.Errorf("%w: %q inside double quotes", errUnsupported, c)
				}
				if c == '\\' && p.i+1 < len(p.s) && strings.IndexByte("\"\\$`\n", p.s[p.i+1]) >= 0 {
					p.i++
					c = p.s[p.i]
				}
				b.WriteByte(c)
				p.i++
			}
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", fmt.Errorf("%w: trailing backslash", errUnsupported)
			}
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		case strings.IndexByte("|&;()$`*?[\n\r", c) >= 0,
			(c == '#' || c == '~') && b.Len() == 0:
			return "", fmt.Errorf("%w: %q", errUnsupported, c)
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return b.String(), nil
}
