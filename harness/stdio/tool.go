package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/mcp"
)

// DefaultProcesses is how many server processes a tool runs side by side
// unless its spec says otherwise: two agent sessions, each with its own
// server, sharing the server's store.
const DefaultProcesses = 2

// MaxProcesses bounds mcp.processes.
const MaxProcesses = 16

// maxSessions bounds how many harness sessions (each with its own
// processes) run a tool's trials at once.
const maxSessions = 8

// startup bounds a server's start and handshake.
const startup = 20 * time.Second

// Config describes a write tool served by an MCP server that onceproof
// starts and speaks to over its stdin and stdout.
type Config struct {
	Name string
	// Command is the server's command line (no shell).
	Command []string
	// Env adds variables to the server's environment; values are templates
	// rendered once, where {{.Env "NAME"}} passes a secret on.
	Env map[string]string
	// Dir is the server's working directory ("" for onceproof's).
	Dir string
	// Processes is how many server processes run side by side, sharing
	// whatever store the server keeps (default DefaultProcesses).
	Processes int
	// Call is the tools/call: tool, arguments, where the key travels,
	// key format and timeout.
	Call mcp.CallConfig
	// ResultID is a JSON pointer into the result's structured content
	// naming the result ("" for none).
	ResultID string
	// Contract is the idempotency contract the tool promises (its replay
	// headers are none).
	Contract harness.Contract
	Oracle   harness.Oracle
}

// Tool is a write tool reached with an MCP tools/call on the stdin of a
// server process. Each attempt goes out on a fresh connection through the
// fault proxy, which ends at a loopback bridge that writes the request
// line to a process's stdin and sends the process's answer back the same
// way: every fault is a real proxy fault. A Tool runs several processes
// ([harness.Replicated]: one proxy each), restarts them when the caller
// does ([harness.Renewer]) and can kill them ([harness.ReplicaCrasher]).
type Tool struct {
	c        Config
	caller   *mcp.Caller
	command  command
	resultID *harness.Pointer
	shared   *shared
	slots    []*slot

	mu     sync.Mutex
	served map[int64]*proc // attempt id → the process its request reached
	closed bool
}

// shared is what a tool and its forks share.
type shared struct {
	ids   atomic.Int64 // attempt ids: ten digits, see idWidth
	procs atomic.Int64 // process numbers
	log   tail

	mu     sync.Mutex
	listed *sdk.Tool
}

// The ids of attempts are fixed-width, so that every attempt of a call
// writes as many bytes, its body at the same offset.
const (
	firstID    = 1_000_000_000
	idWidth    = 10
	wirePrefix = `{"jsonrpc":"2.0","id":`
)

// New validates c and returns the tool; no process starts until the tool
// is made ready (Ready).
func New(c Config) (*Tool, error) {
	if c.Name == "" {
		return nil, fmt.Errorf("mcp stdio tool: %w", &harness.FieldError{Field: "name", Err: errors.New("name is empty")})
	}
	if len(c.Command) == 0 || c.Command[0] == "" {
		return nil, harness.ConfigError(c.Name, "mcp.command", errors.New("no command: want the server's command line, e.g. [node, build/index.js]"))
	}
	if c.Oracle == nil {
		return nil, harness.ConfigError(c.Name, "oracle", errors.New("no oracle: the harness cannot count effects without one"))
	}
	if c.Processes == 0 {
		c.Processes = DefaultProcesses
	}
	if c.Processes < 1 || c.Processes > MaxProcesses {
		return nil, harness.ConfigError(c.Name, "mcp.processes", fmt.Errorf("want 1 to %d, got %d", MaxProcesses, c.Processes))
	}
	if c.Call.KeyFormat == "" {
		c.Call.KeyFormat = harness.KeyUUID
	}
	if c.Call.Timeout <= 0 {
		c.Call.Timeout = 2 * time.Second
	}
	if len(c.Contract.ReplayHeaders) > 0 || c.Contract.ReplayedHeader != "" {
		return nil, harness.ConfigError(c.Name, "contract", fmt.Errorf("%w: an MCP result has no headers (replay_headers, replayed_header)", harness.ErrContract))
	}
	c.Contract.ReplayHeaders = []string{}
	var err error
	if c.Contract, err = c.Contract.Resolve(); err != nil {
		return nil, harness.ConfigError(c.Name, "contract", err)
	}
	t := &Tool{c: c, shared: &shared{}, served: map[int64]*proc{}}
	t.shared.ids.Store(firstID)
	if t.caller, err = mcp.NewCaller(c.Name, c.Call); err != nil {
		return nil, err
	}
	if t.command, err = renderCommand(c); err != nil {
		return nil, err
	}
	if t.resultID, err = harness.ParseResultID(c.Name, c.ResultID); err != nil {
		return nil, err
	}
	if err := harness.CheckMarker(t, "mcp.arguments", "arguments"); err != nil {
		return nil, err
	}
	if err := t.listen(); err != nil {
		return nil, err
	}
	return t, nil
}

// renderCommand renders the environment templates.
func renderCommand(c Config) (command, error) {
	cmd := command{argv: slices.Clone(c.Command), dir: c.Dir}
	names := make([]string, 0, len(c.Env))
	for k := range c.Env {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		tpl, err := harness.ParseTemplate("env "+k, c.Env[k])
		if err != nil {
			return cmd, harness.ConfigError(c.Name, "mcp.env."+k, err)
		}
		v, err := tpl.Render(harness.Operation{})
		if err != nil {
			return cmd, harness.ConfigError(c.Name, "mcp.env."+k, err)
		}
		cmd.env = append(cmd.env, k+"="+v)
	}
	return cmd, nil
}

// listen opens a bridge listener per process slot.
func (t *Tool) listen() error {
	for range t.c.Processes {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.closeListeners()
			return fmt.Errorf("tool %s: stdio bridge: %w", t.c.Name, err)
		}
		s := &slot{t: t, ln: ln}
		t.slots = append(t.slots, s)
		go s.serve()
	}
	return nil
}

func (t *Tool) closeListeners() {
	for _, s := range t.slots {
		_ = s.ln.Close()
	}
}

// Fork implements harness.Forker: a copy with its own processes and
// bridges, for a Session whose trials overlap with this one's.
func (t *Tool) Fork() harness.Tool {
	f := &Tool{c: t.c, caller: t.caller, command: t.command, resultID: t.resultID, shared: t.shared, served: map[int64]*proc{}}
	if err := f.listen(); err != nil {
		// The Session's proxy then has nowhere to forward to: its attempts
		// fail as unknown, and the first Ready says why.
		f.slots = nil
	}
	return f
}

// MaxProxies bounds the Sessions (each with its own processes) of one
// tool.
func (t *Tool) MaxProxies() int { return maxSessions }

// Name implements Tool.
func (t *Tool) Name() string { return t.c.Name }

// Upstream implements Tool: the bridge of the first process.
func (t *Tool) Upstream() string { return t.ReplicaUpstream(1) }

// Replicas implements harness.Replicated: the server processes.
func (t *Tool) Replicas() int { return t.c.Processes }

// ReplicaUpstream implements harness.Replicated: the bridge of process
// slot i (from 1).
func (t *Tool) ReplicaUpstream(i int) string {
	if i < 1 || i > len(t.slots) {
		return "127.0.0.1:1"
	}
	return t.slots[i-1].ln.Addr().String()
}

// Timeout implements Tool.
func (t *Tool) Timeout() time.Duration { return t.c.Call.Timeout }

// Oracle implements Tool.
func (t *Tool) Oracle() harness.Oracle { return t.c.Oracle }

// KeyFormat is how the tool spells idempotency keys.
func (t *Tool) KeyFormat() harness.KeyFormat { return t.c.Call.KeyFormat }

// Contract returns the idempotency contract the tool promises.
func (t *Tool) Contract() harness.Contract { return t.c.Contract }

// ResultIDPointer is the tool's result_id JSON pointer ("" for none).
func (t *Tool) ResultIDPointer() string { return t.c.ResultID }

// CrashTarget implements harness.CrashNamer.
func (t *Tool) CrashTarget() string { return "process" }

// Log implements harness.Logged: the tail of the servers' stderr.
func (t *Tool) Log() string { return t.shared.log.String() }

// Secrets implements harness.Secretive.
func (t *Tool) Secrets() []string {
	names := mcpTemplateEnv(t.c.Call.Arguments)
	for _, v := range t.c.Env {
		names = append(names, mcpTemplateEnv(v)...)
	}
	return names
}

func mcpTemplateEnv(src string) []string {
	tpl, err := harness.ParseTemplate("t", src)
	if err != nil {
		return nil
	}
	return tpl.EnvNames()
}

// Hints implements harness.Hinted.
func (t *Tool) Hints() (idempotent, readOnly, known bool) {
	t.shared.mu.Lock()
	defer t.shared.mu.Unlock()
	return mcp.Hints(t.shared.listed)
}

// Prepare implements Tool: Wire is the tools/call line written to the
// server's stdin, with a placeholder id of the width every attempt's id
// has; BodyStart is where its params start.
func (t *Tool) Prepare(op harness.Operation) (*harness.Call, error) {
	params, err := t.caller.Params(op)
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf(`%s%d,"method":"tools/call","params":`, wirePrefix, firstID)
	wire := append(append([]byte(head), params...), "}\n"...)
	return &harness.Call{Op: op, Wire: wire, BodyStart: len(head), BodyEnd: len(head) + len(params), Summary: "tools/call " + t.caller.Tool()}, nil
}

// stamp returns the call's line with attempt id id.
func stamp(wire []byte, id int64) ([]byte, error) {
	digits := strconv.FormatInt(id, 10)
	if len(digits) != idWidth || len(wire) < len(wirePrefix)+idWidth {
		return nil, fmt.Errorf("attempt id %d out of range", id)
	}
	line := slices.Clone(wire)
	copy(line[len(wirePrefix):], digits)
	return line, nil
}

// Send implements Tool: it writes the call's line, with a fresh id, on
// conn and reads until the answer to that id. Without an answer it tells
// the server the request is cancelled, as an MCP client does.
func (t *Tool) Send(ctx context.Context, conn net.Conn, call *harness.Call, deadline time.Time) harness.Reply {
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	id := t.shared.ids.Add(1)
	line, err := stamp(call.Wire, id)
	if err != nil {
		return harness.Reply{Outcome: harness.Unknown, Err: err}
	}
	r := t.exchange(conn, line, id)
	p := t.takeServed(id)
	r.Note = t.note(p)
	if r.Outcome != harness.OK && p != nil && p.usable() {
		_ = p.notify("notifications/cancelled", map[string]any{"requestId": id, "reason": "the caller gave up"})
	}
	return r
}

// exchange writes line on conn and reads the answer to id.
func (t *Tool) exchange(conn net.Conn, line []byte, id int64) harness.Reply {
	if _, err := conn.Write(line); err != nil {
		return harness.Reply{Outcome: harness.Unknown, Err: fmt.Errorf("write request: %w", err)}
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	for {
		msg, err := readLine(br, maxLine)
		if err != nil {
			return harness.Reply{Outcome: harness.Unknown, Err: fmt.Errorf("read response: %w", err)}
		}
		var m rpcMessage
		if json.Unmarshal(msg, &m) != nil || string(m.ID) != strconv.FormatInt(id, 10) {
			continue
		}
		if m.Error != nil {
			// As over Streamable HTTP: a protocol error leaves unknown
			// whether the tool ran.
			return harness.Reply{Outcome: harness.Unknown, Err: fmt.Errorf("tools/call: %w", m.Error)}
		}
		var res sdk.CallToolResult
		if err := json.Unmarshal(m.Result, &res); err != nil {
			return harness.Reply{Outcome: harness.Unknown, Err: fmt.Errorf("tools/call: the result is not a tool result: %w", err)}
		}
		return mcp.ResultReply(&res, t.resultID, "")
	}
}

// note says which process served an attempt, and whether it was new.
func (t *Tool) note(p *proc) string {
	if p == nil {
		return "no process (not delivered)"
	}
	if !p.firstServe() {
		return fmt.Sprintf("process %d (same)", p.n)
	}
	return fmt.Sprintf("process %d (new: %s)", p.n, p.why)
}

func (t *Tool) markServed(id int64, p *proc) {
	t.mu.Lock()
	t.served[id] = p
	t.mu.Unlock()
}

func (t *Tool) takeServed(id int64) *proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.served[id]
	delete(t.served, id)
	return p
}

// Ready implements harness.Readier: every process slot gets a live,
// initialised server, started afresh where the last one exited, was torn,
// killed, or renewed by the caller. The handshake goes straight to the
// process (no fault is armed yet).
func (t *Tool) Ready(ctx context.Context, _ func(context.Context) (net.Conn, error)) error {
	if len(t.slots) == 0 {
		return fmt.Errorf("tool %s: stdio bridge: no listener", t.c.Name)
	}
	for _, s := range t.slots {
		if err := s.ready(ctx); err != nil {
			return err
		}
	}
	t.shared.mu.Lock()
	listed := t.shared.listed
	t.shared.mu.Unlock()
	return t.caller.CheckKey(listed)
}

// Renew implements harness.Renewer: the next attempts go to new
// processes, as after a broken pipe.
func (t *Tool) Renew(context.Context) error {
	for _, s := range t.slots {
		s.renew("restarted by the caller after a broken pipe")
	}
	return nil
}

// Crash implements harness.Crasher: every process is killed (SIGKILL to
// its process group).
func (t *Tool) Crash(context.Context) error {
	for _, s := range t.slots {
		s.crash()
	}
	return nil
}

// CrashReplica implements harness.ReplicaCrasher: process slot i (from 1)
// is killed.
func (t *Tool) CrashReplica(_ context.Context, i int) error {
	if i < 1 || i > len(t.slots) {
		return fmt.Errorf("tool %s: no process %d", t.c.Name, i)
	}
	t.slots[i-1].crash()
	return nil
}

// Restart implements harness.Crasher: killed processes are started again
// and initialised.
func (t *Tool) Restart(ctx context.Context) error {
	for _, s := range t.slots {
		if err := s.ready(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close implements io.Closer: the bridges close and every process is
// stopped (stdin closed, then its process group killed).
func (t *Tool) Close() error {
	t.mu.Lock()
	closed := t.closed
	t.closed = true
	t.mu.Unlock()
	if closed {
		return nil
	}
	var wg sync.WaitGroup
	for _, s := range t.slots {
		_ = s.ln.Close()
		wg.Go(s.stop)
	}
	wg.Wait()
	return nil
}

// Request implements harness.RequestDescriber: the line and how to start
// the server (its environment as templates: no secret in it).
func (t *Tool) Request(call *harness.Call) harness.Request {
	return harness.Request{Transport: Record, Target: strings.Join(t.c.Command, " "), Wire: string(call.Wire),
		Command: slices.Clone(t.c.Command), Dir: t.c.Dir, Env: t.c.Env}
}

// Record is the Request.Transport of a stdio MCP tool's attempts.
const Record = "mcp-stdio"

// start starts and initialises a process for slot number i.
func (t *Tool) start(ctx context.Context, why string) (*proc, error) {
	n := int(t.shared.procs.Add(1))
	p, err := start(t.command, n, why, &t.shared.log)
	if err != nil {
		return nil, harness.ConfigError(t.c.Name, "mcp.command", fmt.Errorf("start %s: %w", strings.Join(t.c.Command, " "), err))
	}
	hctx, cancel := context.WithTimeout(ctx, startup)
	defer cancel()
	if err := t.initialise(hctx, p); err != nil {
		p.stop()
		return nil, fmt.Errorf("%w: tool %s: process %d (%s): %w%s", harness.ErrUnreachable, t.c.Name, n, strings.Join(t.c.Command, " "), err, stderrHint(t.shared.log.last(8)))
	}
	return p, nil
}

// initialise performs the handshake and, the first time, lists the tool.
func (t *Tool) initialise(ctx context.Context, p *proc) error {
	if err := p.handshake(ctx); err != nil {
		return err
	}
	t.shared.mu.Lock()
	listed := t.shared.listed
	t.shared.mu.Unlock()
	if listed != nil {
		return nil
	}
	tools, err := p.listTools(ctx)
	if err != nil {
		return err
	}
	var names []string
	for _, tool := range tools {
		if tool.Name == t.caller.Tool() {
			t.shared.mu.Lock()
			t.shared.listed = tool
			t.shared.mu.Unlock()
			return nil
		}
		names = append(names, tool.Name)
	}
	return &harness.FieldError{Field: "mcp.tool", Err: fmt.Errorf("the server has no tool %q (it has: %s)", t.caller.Tool(), strings.Join(names, ", "))}
}

func stderrHint(s string) string {
	if s == "" {
		return ""
	}
	return "; its stderr ends:\n" + s
}
