package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// slot is one place a server process runs: the loopback bridge that its
// fault proxy forwards to, and the process attempts through it reach.
type slot struct {
	t  *Tool
	ln net.Listener

	mu      sync.Mutex
	proc    *proc
	renewal string // why the next Ready replaces the process ("" for no reason)
	lastWhy string // why the last process went away
	open    int    // bridge connections not yet ended
	ended   chan struct{}
}

// settleWait bounds how long ready waits for the bridge connections of
// finished attempts to end (the proxy closes them just after the caller).
const settleWait = time.Second

// serve accepts the proxy's connections until the listener closes.
func (s *slot) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.bridge(c)
	}
}

// bridge carries one connection: each whole line it brings is written to
// the slot's process, whose answer to it comes back on the connection; a
// line cut short by the end of the connection tears the process's stdin
// (see proc.tear).
func (s *slot) bridge(c net.Conn) {
	defer c.Close()
	s.mu.Lock()
	p := s.proc
	s.open++
	s.mu.Unlock()
	defer s.end()
	if p == nil || !p.usable() || !p.attach(c) {
		return
	}
	defer p.detach(c)
	br := bufio.NewReaderSize(c, 64<<10)
	for {
		line, err := readRaw(br, maxLine)
		if err == nil {
			if id, ok := lineID(line); ok {
				p.expect(id, c)
				s.t.markServed(id, p)
			}
			_ = p.write(line)
			continue
		}
		if len(line) > 0 && errors.Is(err, io.EOF) {
			p.tear(line)
		}
		return
	}
}

// end records that a bridge connection ended.
func (s *slot) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open--
	if s.open == 0 && s.ended != nil {
		close(s.ended)
		s.ended = nil
	}
}

// settle waits (a bounded while) until the connections of earlier
// attempts have ended, so that what they did to the process (a torn
// stdin) is known before the next attempt.
func (s *slot) settle() {
	s.mu.Lock()
	if s.open == 0 {
		s.mu.Unlock()
		return
	}
	if s.ended == nil {
		s.ended = make(chan struct{})
	}
	ended := s.ended
	s.mu.Unlock()
	t := time.NewTimer(settleWait)
	defer t.Stop()
	select {
	case <-ended:
	case <-t.C:
	}
}

// readRaw reads one line with its newline (at most max bytes); at the end
// of the stream it returns what it read with io.EOF.
func readRaw(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, errors.New("line too long")
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// lineID is the numeric id of a JSON-RPC request line.
func lineID(line []byte) (int64, bool) {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil {
		return 0, false
	}
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	return id, err == nil
}

// ready makes sure the slot has a usable process, starting one when it
// has none, or replacing the one it has when it cannot serve or the
// caller renewed it.
func (s *slot) ready(ctx context.Context) error {
	s.settle()
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.proc
	why := s.renewal
	switch {
	case old == nil && s.lastWhy == "":
		why = "started"
	case old == nil:
		why = s.lastWhy
	case why != "":
	case !old.usable():
		why = old.gone2()
	default:
		return nil
	}
	if old != nil {
		old.stop()
		s.proc = nil
	}
	p, err := s.t.start(ctx, why)
	if err != nil {
		return err
	}
	s.proc, s.renewal = p, ""
	return nil
}

// gone2 says why a process can serve no more, for its successor's note.
func (p *proc) gone2() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.torn:
		return "the last one's stdin was torn"
	case p.killed:
		return "the last one was killed"
	}
	return "the last one exited"
}

// renew makes the next ready replace the process.
func (s *slot) renew(why string) {
	s.mu.Lock()
	s.renewal = why
	s.mu.Unlock()
}

// crash kills the slot's process: the next ready starts another.
func (s *slot) crash() {
	s.mu.Lock()
	p := s.proc
	s.proc, s.lastWhy = nil, "restarted after a crash (SIGKILL)"
	s.mu.Unlock()
	if p != nil {
		p.kill()
	}
}

// stop stops the slot's process for good.
func (s *slot) stop() {
	s.mu.Lock()
	p := s.proc
	s.proc = nil
	s.mu.Unlock()
	if p != nil {
		p.stop()
	}
}
