package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onceproof/onceproof/harness"
)

// maxLine bounds one JSON-RPC message on the server's stdout.
const maxLine = 4 << 20

// stopGrace is how long a server may take to exit once its stdin is
// closed before its process group is killed.
const stopGrace = 500 * time.Millisecond

// protocolVersion is the MCP version onceproof asks for in initialize (the
// server answers with the one it speaks).
const protocolVersion = "2025-06-18"

// ErrExited marks a server process that exited (or closed its stdout)
// before answering.
var ErrExited = errors.New("the server process exited")

// proc is one server process: its stdin, which the bridge and the harness
// write whole lines to, and its stdout, whose messages it routes by id to
// the connection (or the waiter) that sent the request.
type proc struct {
	n   int
	cmd *exec.Cmd
	log *tail

	wmu   sync.Mutex // serialises writes to stdin
	stdin io.WriteCloser

	mu      sync.Mutex
	routes  map[int64]net.Conn               // attempt id → the bridge connection it came on
	waiters map[int64]chan<- json.RawMessage // handshake id → its waiter
	conns   map[net.Conn]struct{}            // bridge connections attached
	torn    bool                             // its stdin was closed mid-request
	killed  bool
	served  bool // an attempt reached it already
	why     string
	nextID  int64

	gone   chan struct{} // stdout closed: no answer can come
	exited chan struct{} // the process was reaped
	status error
}

// command is how to start a server.
type command struct {
	argv []string
	env  []string // KEY=VALUE added to onceproof's environment
	dir  string
}

// start starts the server (process number n, started because of why) in
// its own process group, which is killed with it: no process it starts
// outlives it. The caller performs the handshake.
func start(c command, n int, why string, log *tail) (*proc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, err
	}
	p := &proc{n: n, cmd: cmd, log: log, stdin: inW, why: why,
		routes: map[int64]net.Conn{}, waiters: map[int64]chan<- json.RawMessage{}, conns: map[net.Conn]struct{}{},
		gone: make(chan struct{}), exited: make(chan struct{})}
	go log.copy(n, errR)
	go p.readStdout(outR)
	go func() {
		p.status = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// rpcMessage is the part of a JSON-RPC message the router reads.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// readStdout routes every message the server writes: a response to the
// connection or waiter of its id, a request from the server answered at
// once (ping; anything else is not supported), notifications and noise
// into the log.
func (p *proc) readStdout(r io.ReadCloser) {
	defer r.Close()
	defer p.closeAll()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br, maxLine)
		if len(line) > 0 {
			p.route(line)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				p.log.notef(p.n, "stdout: %v", err)
			}
			return
		}
	}
}

// readLine reads one line (without its newline), at most max bytes; a
// longer line is an error. A last line without a newline is returned with
// io.EOF.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, fmt.Errorf("a line longer than %d bytes", max)
		}
		switch {
		case err == nil:
			return bytes.TrimRight(line, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return line, err
		}
	}
}

func (p *proc) route(line []byte) {
	var m rpcMessage
	if json.Unmarshal(line, &m) != nil {
		p.log.notef(p.n, "stdout (not JSON-RPC): %s", harness.Snippet(line))
		return
	}
	if m.Method != "" {
		if len(m.ID) > 0 && string(m.ID) != "null" {
			p.answerServer(m)
		}
		return
	}
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	if err != nil {
		p.log.notef(p.n, "stdout: a response with id %s, which onceproof never sent", harness.Snippet(m.ID))
		return
	}
	p.mu.Lock()
	conn, isAttempt := p.routes[id]
	w, isWaiter := p.waiters[id]
	delete(p.routes, id)
	delete(p.waiters, id)
	p.mu.Unlock()
	switch {
	case isAttempt:
		// The answer goes back the way the request came: through the
		// bridge connection and the fault proxy.
		_, _ = conn.Write(append(line, '\n'))
	case isWaiter:
		w <- append([]byte(nil), line...)
	}
}

// answerServer answers a request the server sends its client: ping gets
// its empty result; onceproof offers no other client feature.
func (p *proc) answerServer(m rpcMessage) {
	var resp []byte
	if m.Method == "ping" {
		resp = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
	} else {
		resp = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"onceproof does not support %s"}}`, m.ID, strconv.Quote(m.Method)[1:len(strconv.Quote(m.Method))-1])
	}
	_ = p.write(append(resp, '\n'))
}

// write writes one whole line to the server's stdin.
func (p *proc) write(line []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, err := p.stdin.Write(line)
	return err
}

// tear writes the start of a request that never arrived whole and closes
// stdin, as a client that died mid-write leaves it: the server reads the
// partial line, then end of file.
func (p *proc) tear(partial []byte) {
	p.mu.Lock()
	p.torn = true
	p.mu.Unlock()
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, _ = p.stdin.Write(partial)
	_ = p.stdin.Close()
}

// attach registers a bridge connection: it is closed when the server's
// stdout closes (no answer can come on it any more).
func (p *proc) attach(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isGone() {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// isGone reports whether the server's stdout closed.
func (p *proc) isGone() bool {
	select {
	case <-p.gone:
		return true
	default:
		return false
	}
}

func (p *proc) detach(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// expect registers attempt id as sent on bridge connection c.
func (p *proc) expect(id int64, c net.Conn) {
	p.mu.Lock()
	p.routes[id] = c
	p.mu.Unlock()
}

// closeAll marks stdout closed and closes every attached connection.
func (p *proc) closeAll() {
	p.mu.Lock()
	close(p.gone)
	conns := p.conns
	p.conns = map[net.Conn]struct{}{}
	waiters := p.waiters
	p.waiters = map[int64]chan<- json.RawMessage{}
	p.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
	for _, w := range waiters {
		close(w)
	}
}

// usable reports whether attempts may go to the process: it answers and
// its stdin is whole.
func (p *proc) usable() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.isGone() && !p.torn && !p.killed
}

// firstServe reports whether this is the first attempt the process
// serves.
func (p *proc) firstServe() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	first := !p.served
	p.served = true
	return first
}

// request sends a request of the client's own (the handshake) and waits
// for its result.
func (p *proc) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	body, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	ch := make(chan json.RawMessage, 1)
	p.mu.Lock()
	p.nextID++
	id := p.nextID
	if p.isGone() {
		p.mu.Unlock()
		return nil, p.exitError(method)
	}
	p.waiters[id] = ch
	p.mu.Unlock()
	if err := p.write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, body)); err != nil {
		return nil, fmt.Errorf("%s: write: %w (%w)", method, err, p.exitError(method))
	}
	select {
	case line, ok := <-ch:
		if !ok {
			return nil, p.exitError(method)
		}
		var m rpcMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %w", method, m.Error)
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no answer: %w", method, context.Cause(ctx))
	}
}

// exitError says that the process went away before answering method, with
// its exit status when known.
func (p *proc) exitError(method string) error {
	select {
	case <-p.exited:
		return fmt.Errorf("%w before answering %s (%v)", ErrExited, method, p.status)
	case <-time.After(100 * time.Millisecond):
		return fmt.Errorf("%w before answering %s (it closed its stdout)", ErrExited, method)
	}
}

// notify sends a notification of the client's.
func (p *proc) notify(method string, params any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return p.write(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":%q,"params":%s}`+"\n", method, body))
}

// handshake initialises the MCP session of a process.
func (p *proc) handshake(ctx context.Context) error {
	_, err := p.request(ctx, "initialize", map[string]any{
		"protocolVersion": protocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "onceproof", "version": "1"},
	})
	if err != nil {
		return err
	}
	return p.notify("notifications/initialized", map[string]any{})
}

// listTools lists the server's tools (every page).
func (p *proc) listTools(ctx context.Context) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	cursor := ""
	for range 100 {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, err := p.request(ctx, "tools/list", params)
		if err != nil {
			return nil, err
		}
		var page struct {
			Tools      []*mcp.Tool `json:"tools"`
			NextCursor string      `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		tools = append(tools, page.Tools...)
		if page.NextCursor == "" {
			return tools, nil
		}
		cursor = page.NextCursor
	}
	return nil, errors.New("tools/list: more than 100 pages")
}

// kill kills the process group at once (SIGKILL) and waits for the
// process to be reaped.
func (p *proc) kill() {
	p.mu.Lock()
	p.killed = true
	p.mu.Unlock()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

// stop ends the process as a client does: stdin closed, a grace to exit,
// then its whole process group killed (whatever it started goes too).
func (p *proc) stop() {
	p.wmu.Lock()
	_ = p.stdin.Close()
	p.wmu.Unlock()
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
	}
	p.kill()
}
