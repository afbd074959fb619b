package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onceproof/onceproof/faults"
)

// ErrPreflight marks a tool that failed the preflight call: the tool, its
// spec or its oracle is wrong, and nothing about idempotency can be judged.
var ErrPreflight = errors.New("preflight failed")

// ErrUnreachable marks a tool or oracle that could not be reached at all.
var ErrUnreachable = errors.New("unreachable")

// ErrResultID marks a result_id pointer that finds nothing in a 2xx answer.
var ErrResultID = errors.New("result pointer matches nothing")

// FieldError is an error about one field of a tool's spec found by running
// the tool (the preflight call): Field is its path relative to the tool
// ("result_id", "oracle.http.count"). [ToolSpec.Locate] turns it into an
// error naming the file, line and field.
type FieldError struct {
	Field string
	Err   error
}

// Error returns "FIELD: ERR".
func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }

// Session is one tool behind one fault proxy for a whole run. Toxics act on
// every connection through the proxy, so a Session runs one faulted attempt
// (or one group of held attempts) at a time; Lock serialises trials.
type Session struct {
	tool   Tool
	proxy  faults.Proxy
	oracle Oracle
	ops    *Ops

	mu sync.Mutex
}

// Open creates the proxy for tool on backend.
func Open(ctx context.Context, backend faults.Backend, tool Tool, format KeyFormat) (*Session, error) {
	ops := NewOps(format)
	name := fmt.Sprintf("onceproof-%s-%s", sanitize(tool.Name()), ops.nonce)
	p, err := backend.NewProxy(ctx, name, tool.Upstream())
	if err != nil {
		return nil, fmt.Errorf("tool %s: proxy: %w", tool.Name(), err)
	}
	return &Session{tool: tool, proxy: p, oracle: tool.Oracle(), ops: ops}, nil
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, s)
}

// Close deletes the session's proxy and releases the oracle's (and an MCP
// tool's) connections.
func (s *Session) Close(ctx context.Context) error {
	closeOracle(s.oracle)
	if c, ok := s.tool.(interface{ Close() error }); ok {
		_ = c.Close()
	}
	return s.proxy.Close(ctx)
}

// Tool returns the tool under test.
func (s *Session) Tool() Tool { return s.tool }

// Proxy returns the session's fault proxy.
func (s *Session) Proxy() faults.Proxy { return s.proxy }

// Lock reserves the proxy for one trial; Unlock releases it.
func (s *Session) Lock()   { s.mu.Lock() }
func (s *Session) Unlock() { s.mu.Unlock() }

// NewOp mints a fresh operation whose payload draws come from seed.
func (s *Session) NewOp(seed uint64) Operation { return s.ops.Next(seed) }

// NewMarker mints a fresh marker (for re-rendering an operation).
func (s *Session) NewMarker() string { return s.ops.Marker() }

// Count asks the oracle how many effects carry marker.
func (s *Session) Count(ctx context.Context, marker string) (int, error) {
	return s.oracle.Count(ctx, marker)
}

// Arm installs fault on the proxy; the caller disarms it.
func (s *Session) Arm(ctx context.Context, f faults.Fault) (faults.Disarm, error) {
	d, err := f.Arm(ctx, s.proxy)
	if err != nil {
		return nil, fmt.Errorf("arm %s: %w", f.Name(), err)
	}
	return d, nil
}

// Attempt is the record of one transmission.
type Attempt struct {
	// N numbers attempts within a trial from 1.
	N int `json:"n"`
	// Op is the operation id; Marker its marker.
	Op     string `json:"op"`
	Marker string `json:"marker,omitempty"`
	// Fault is the fault armed for this attempt ("" for none).
	Fault string `json:"fault,omitempty"`
	// Delay is the wait before the attempt (the retry backoff).
	Delay time.Duration `json:"delay_ns"`
	// Start and End are offsets from the start of the trial.
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
	// Outcome is ok, failed or unknown.
	Outcome  Outcome `json:"outcome"`
	Status   int     `json:"status,omitempty"`
	ResultID string  `json:"result_id,omitempty"`
	// Body is the start of the response body.
	Body  string `json:"body,omitempty"`
	Error string `json:"error,omitempty"`
	// Note says how the attempt went out (an MCP call's session).
	Note string `json:"note,omitempty"`
	// Before and After are the oracle's counts for the marker around the
	// attempt (-1 when not taken, e.g. for overlapping attempts).
	Before int `json:"before"`
	After  int `json:"after"`
}

// Line is the attempt as one log line.
func (a Attempt) Line() string {
	s := fmt.Sprintf("#%d %s fault=%s delay=%s outcome=%s", a.N, shortOp(a.Op), dash(a.Fault), round(a.Delay), a.Outcome)
	if a.Status != 0 {
		s += fmt.Sprintf(" status=%d", a.Status)
	}
	if a.ResultID != "" {
		s += " result_id=" + a.ResultID
	}
	if a.Before >= 0 || a.After >= 0 {
		s += " effects=" + counts(a.Before, a.After)
	}
	if a.Error != "" {
		s += " error=" + strconv.Quote(a.Error)
	}
	return s
}

// Send makes one attempt of call on a fresh connection to the proxy, without
// touching faults. origin is the trial's start, for the record's offsets.
func (s *Session) Send(ctx context.Context, call *Call, origin time.Time) Attempt {
	return s.send(ctx, call, origin, nil)
}

func (s *Session) send(ctx context.Context, call *Call, origin time.Time, wrap func(net.Conn) net.Conn) Attempt {
	timeout := s.tool.Timeout()
	a := Attempt{Op: call.Op.ID, Marker: call.Op.Marker, Before: -1, After: -1}
	start := time.Now()
	a.Start = start.Sub(origin)
	deadline := start.Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	dialer := net.Dialer{Deadline: deadline}
	conn, err := dialer.DialContext(ctx, "tcp", s.proxy.Addr())
	if err != nil {
		// Nothing is written before the connection exists: not delivered.
		a.Outcome, a.Error = Failed, fmt.Sprintf("dial: %v", err)
		if ctx.Err() != nil {
			a.Error = fmt.Sprintf("interrupted: %v", context.Cause(ctx))
		}
		a.End = time.Since(origin)
		return a
	}
	// The attempt ends when ctx does, whatever the tool's timeout: closing
	// the connection unblocks every read and write on it.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	if wrap != nil {
		conn = wrap(conn)
	}
	r := s.tool.Send(ctx, conn, call, deadline)
	stop()
	_ = conn.Close()
	a.End = time.Since(origin)
	a.Outcome, a.Status, a.ResultID, a.Body, a.Note = r.Outcome, r.Status, r.ResultID, r.Body, r.Note
	switch {
	case ctx.Err() != nil && r.Outcome != OK:
		a.Error = fmt.Sprintf("interrupted: %v", context.Cause(ctx))
		if r.Err != nil {
			a.Error += fmt.Sprintf(" (%v)", r.Err)
		}
	case r.Err != nil:
		a.Error = r.Err.Error()
		if isTimeout(r.Err) {
			a.Error = fmt.Sprintf("timeout after %s: %v", timeout, r.Err)
		}
	}
	if a.Outcome == "" {
		a.Outcome = Unknown
	}
	return a
}

// Ready prepares a Readier tool (an MCP session) through the proxy; call it
// before arming a fault.
func (s *Session) Ready(ctx context.Context) error {
	r, ok := s.tool.(Readier)
	if !ok {
		return nil
	}
	return r.Ready(ctx, func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{Timeout: s.tool.Timeout()}).DialContext(ctx, "tcp", s.proxy.Addr())
	})
}

// Do arms fault (nil for none), makes one attempt and disarms it. It counts
// the marker's effects before and after.
func (s *Session) Do(ctx context.Context, call *Call, fault faults.Fault, origin time.Time) (Attempt, error) {
	if err := s.Ready(ctx); err != nil {
		return Attempt{}, err
	}
	before, err := s.Count(ctx, call.Op.Marker)
	if err != nil {
		return Attempt{}, err
	}
	var disarm faults.Disarm
	if fault != nil {
		if disarm, err = s.Arm(ctx, fault); err != nil {
			return Attempt{}, err
		}
	}
	a := s.Send(ctx, call, origin)
	if disarm != nil {
		if err := disarm(ctx); err != nil {
			return a, fmt.Errorf("disarm %s: %w", fault.Name(), err)
		}
		a.Fault = fault.Name()
	}
	a.Before = before
	if a.After, err = s.Count(ctx, call.Op.Marker); err != nil {
		return a, err
	}
	return a, nil
}

// Preflight makes one plain call, which must return 2xx and move the oracle
// by exactly one (for a tool that claims to be read-only, only return 2xx:
// the annotations scenario checks that it makes no effect). Anything else
// means the spec or oracle is wrong; an error wrapping ErrPreflight (and
// ErrUnreachable when nothing answered) says how.
//
// A result_id pointer that finds nothing in the 2xx answer (of a tool that
// is not read-only), and an oracle answer of the wrong shape, are errors too (a [*FieldError] naming the
// field, wrapping ErrOracleShape for the oracle): with them every "same
// result" check would compare empty values, or no count would be read.
func (s *Session) Preflight(ctx context.Context, readOnly bool) (Attempt, error) {
	op := s.NewOp(1)
	call, err := s.tool.Prepare(op)
	if err != nil {
		return Attempt{}, fmt.Errorf("%w: %w", ErrPreflight, err)
	}
	a, err := s.Do(ctx, call, nil, time.Now())
	switch {
	case err != nil && ctx.Err() != nil:
		return a, fmt.Errorf("%w: %w", ErrPreflight, context.Cause(ctx))
	case errors.Is(err, ErrOracleShape), errors.Is(err, ErrRemoteTarget), errors.As(err, new(*FieldError)):
		// The oracle answered: it is reachable, its spec does not fit.
		return a, fmt.Errorf("%w: %w", ErrPreflight, err)
	case err != nil:
		return a, fmt.Errorf("%w: %w: %w", ErrPreflight, ErrUnreachable, err)
	}
	switch {
	case a.Outcome != OK:
		return a, fmt.Errorf("%w: %w: tool %s: %s %s got no response: %s", ErrPreflight, ErrUnreachable, s.tool.Name(), call.Summary, s.tool.Upstream(), a.Error)
	case a.Status/100 != 2:
		return a, fmt.Errorf("%w: tool %s: a plain call returned status %d, want 2xx (body: %s)", ErrPreflight, s.tool.Name(), a.Status, a.Body)
	}
	// A read-only tool's verdict compares no results: its result_id is moot.
	if p, ok := s.tool.(interface{ ResultIDPointer() string }); ok && !readOnly && p.ResultIDPointer() != "" && a.ResultID == "" {
		return a, fmt.Errorf("%w: %w", ErrPreflight, &FieldError{Field: "result_id", Err: fmt.Errorf(
			"%w: %s finds no value in the 2xx answer of a plain call (%s): every same-result check would compare empty values",
			ErrResultID, p.ResultIDPointer(), dash(a.Body))})
	}
	switch {
	case readOnly:
		return a, nil
	case a.Before != 0:
		return a, fmt.Errorf("%w: oracle %s counted %s for a fresh marker before any call", ErrPreflight, s.oracle, Plural(a.Before, "effect", "effects"))
	case a.After != 1:
		return a, fmt.Errorf("%w: one plain call moved oracle %s by %d, want exactly 1 (is the oracle counting the marker %s?)", ErrPreflight, s.oracle, a.After-a.Before, op.Marker)
	}
	return a, nil
}

// SendWatched is Send that calls written (when not nil) once the whole
// request has been written to the connection.
func (s *Session) SendWatched(ctx context.Context, call *Call, origin time.Time, written func()) Attempt {
	if written == nil {
		return s.Send(ctx, call, origin)
	}
	var once sync.Once
	defer once.Do(written) // the request never went out whole: do not block the caller
	return s.send(ctx, call, origin, func(c net.Conn) net.Conn {
		return &watchedConn{Conn: c, want: len(call.Wire), done: func() { once.Do(written) }}
	})
}

// watchedConn reports when want bytes have been written.
type watchedConn struct {
	net.Conn
	want, n int
	done    func()
}

func (c *watchedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.n += n
	if c.n >= c.want {
		c.done()
	}
	return n, err
}

// Restart restarts a crashed tool (a Crasher) and points the proxy at where
// it now listens.
func (s *Session) Restart(ctx context.Context) error {
	c, ok := s.tool.(Crasher)
	if !ok {
		panic("harness: Restart on a tool that cannot crash")
	}
	if err := c.Restart(ctx); err != nil {
		return err
	}
	return s.proxy.SetUpstream(ctx, s.tool.Upstream())
}
