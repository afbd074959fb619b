package stdio

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"sync"
)

// maxLog bounds the standard error kept for the report.
const maxLog = 64 << 10

// tail keeps the last maxLog bytes of what the server processes wrote on
// standard error, each line marked with its process.
type tail struct {
	mu    sync.Mutex
	lines []string
	size  int
	cut   bool // lines were dropped from the front
}

// copy reads process n's stderr into the tail until it closes.
func (t *tail) copy(n int, r io.ReadCloser) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 16<<10)
	for {
		line, err := readLine(br, maxLog)
		if len(line) > 0 {
			t.add(fmt.Sprintf("[process %d] %s", n, strings.TrimRight(string(line), "\r\n")))
		}
		if err != nil {
			return
		}
	}
}

// notef adds a line of onceproof's own about process n.
func (t *tail) notef(n int, format string, args ...any) {
	t.add(fmt.Sprintf("[process %d] onceproof: %s", n, fmt.Sprintf(format, args...)))
}

func (t *tail) add(line string) {
	if len(line) > maxLog/4 {
		line = line[:maxLog/4] + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	for t.size > maxLog && len(t.lines) > 1 {
		t.size -= len(t.lines[0]) + 1
		t.lines = t.lines[1:]
		t.cut = true
	}
}

// String is the tail, oldest line first.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.Join(t.lines, "\n")
	if t.cut {
		s = "…\n" + s
	}
	return s
}

// last is the last n lines (for an error message).
func (t *tail) last(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	from := max(0, len(t.lines)-n)
	return strings.Join(t.lines[from:], "\n")
}
