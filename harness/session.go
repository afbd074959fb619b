package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness/report"
)

// ErrPreflight marks a tool that failed the preflight call: the tool, its
// spec or its oracle is wrong, and nothing about idempotency can be judged.
var ErrPreflight = errors.New("preflight failed")

// ErrUnreachable marks a tool or oracle that could not be reached at all.
var ErrUnreachable = errors.New("unreachable")

// ErrResultID marks a result_id pointer that finds nothing in a 2xx answer.
var ErrResultID = errors.New("result pointer matches nothing")

// FieldError is an error about one field of a tool's configuration, found
// when building the tool or by running it (the preflight call): Field is
// its path relative to the tool's spec entry ("result_id",
// "oracle.http.count"). The spec package turns it into an error naming the
// file, line and field.
type FieldError struct {
	Field string
	Err   error
}

// Error returns "FIELD: ERR".
func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }

// ConfigError is how a tool constructor reports a bad configuration:
// "tool NAME: FIELD: ERR", wrapping a [*FieldError] whose Field is the
// path of the field at fault relative to the tool's spec entry ("http.url",
// "mcp.arguments"), so that a caller locates it without reading the text.
func ConfigError(tool, field string, err error) error {
	return fmt.Errorf("tool %s: %w", tool, &FieldError{Field: field, Err: err})
}

// Session is one tool behind one fault proxy (one per replica, for a
// [Replicated] tool). Toxics act on every connection through the proxy, so
// a Session runs one trial at a time (one faulted attempt, or one group of
// held attempts); trials that overlap each run on their own Session, made
// with [Session.Fork]: its own proxy, the same tool, oracle and operation
// minter.
type Session struct {
	tool    Tool
	proxy   faults.Proxy
	oracle  Oracle
	ops     *Ops
	backend faults.Backend

	// replicas holds one proxy per replica of a [Replicated] tool (proxy
	// is the first), and balance which replica each attempt goes to.
	replicas []faults.Proxy
	balance  balancer

	// forked is set on a Session made by Fork: Close leaves the oracle to
	// the Session it was forked from, and the tool too unless the fork has
	// its own copy.
	forked, ownTool bool
}

// Open creates the proxy for tool on backend.
func Open(ctx context.Context, backend faults.Backend, tool Tool, format KeyFormat) (*Session, error) {
	s := &Session{tool: tool, oracle: tool.Oracle(), ops: NewOps(format), backend: backend, ownTool: true}
	if err := s.openProxy(ctx, 0); err != nil {
		return nil, err
	}
	return s, nil
}

// Forker is a tool that keeps per-connection state (an MCP session) and so
// cannot serve overlapping trials from one value: Fork returns an
// independent copy for another Session. Tools without it must be safe for
// concurrent use (an [*HTTPTool] is).
type Forker interface {
	Fork() Tool
}

// Fork returns a Session for overlapping trials: a new proxy (number n of
// this tool, for its name) in front of the same tool, with the same oracle
// and operation minter, so operations never repeat across Sessions.
func (s *Session) Fork(ctx context.Context, n int) (*Session, error) {
	f := &Session{tool: s.tool, oracle: s.oracle, ops: s.ops, backend: s.backend, forked: true}
	if fk, ok := s.tool.(Forker); ok {
		f.tool, f.ownTool = fk.Fork(), true
	}
	if err := f.openProxy(ctx, n); err != nil {
		f.closeTool()
		return nil, err
	}
	return f, nil
}

func (s *Session) openProxy(ctx context.Context, n int) error {
	name := fmt.Sprintf("onceproof-%s-%s", sanitize(s.tool.Name()), s.ops.nonce)
	if n > 0 {
		name += fmt.Sprintf("-w%d", n)
	}
	ups := upstreams(s.tool)
	for i, up := range ups {
		pname := name
		if len(ups) > 1 {
			pname += fmt.Sprintf("-r%d", i+1)
		}
		p, err := s.backend.NewProxy(ctx, pname, up)
		if err != nil {
			for _, q := range s.replicas {
				_ = q.Close(ctx)
			}
			s.replicas = nil
			return fmt.Errorf("tool %s: proxy: %w", s.tool.Name(), err)
		}
		s.replicas = append(s.replicas, p)
	}
	s.proxy = s.replicas[0]
	return nil
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
// tool's) connections; a forked Session leaves the oracle open.
func (s *Session) Close(ctx context.Context) error {
	if !s.forked {
		CloseOracle(s.oracle)
	}
	s.closeTool()
	var errs []error
	for _, p := range s.replicas {
		errs = append(errs, p.Close(ctx))
	}
	return errors.Join(errs...)
}

// closeTool closes the tool's connections (an MCP session) when this
// Session owns the tool value.
func (s *Session) closeTool() {
	if !s.ownTool {
		return
	}
	if c, ok := s.tool.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

// Tool returns the tool under test.
func (s *Session) Tool() Tool { return s.tool }

// Proxy returns the session's fault proxy (of the first replica, for a
// [Replicated] tool).
func (s *Session) Proxy() faults.Proxy { return s.proxy }

// NewOp mints a fresh operation whose payload draws come from seed.
func (s *Session) NewOp(seed uint64) Operation { return s.ops.Next(seed) }

// NewMarker mints a fresh marker (for re-rendering an operation).
func (s *Session) NewMarker() string { return s.ops.Marker() }

// Count asks the oracle how many effects carry marker.
func (s *Session) Count(ctx context.Context, marker string) (int, error) {
	return s.oracle.Count(ctx, marker)
}

// CountURL is where the session's oracle counts marker's effects, when it
// is an HTTP oracle ("" otherwise).
func (s *Session) CountURL(marker string) string { return CountURL(s.oracle, marker) }

// Arm installs fault on the proxy (on every replica's, for a [Replicated]
// tool); the caller disarms it.
func (s *Session) Arm(ctx context.Context, f faults.Fault) (faults.Disarm, error) {
	return armAll(ctx, f, s.replicas)
}

// GiveUp says when a caller stops waiting for an answer before the tool's
// timeout: After its request is on the wire (when After is set), or when
// When is closed (when When is set). The zero value waits the timeout.
type GiveUp struct {
	After time.Duration
	When  <-chan struct{}
	// Why describes When for the record ("37ms after the commit").
	Why string
}

// Send makes one attempt of call on a fresh connection to the proxy, without
// touching faults. origin is the trial's start, for the record's offsets.
// The caller waits the tool's Timeout for an answer, or less as giveUp
// says, then gives up and closes the connection. The attempt ends early,
// its connection closed, when ctx ends.
func (s *Session) Send(ctx context.Context, call *Call, origin time.Time, giveUp GiveUp) Attempt {
	return s.send(ctx, call, origin, giveUp, nil)
}

// SendWatched is Send that calls written (when not nil) exactly once: with
// true as soon as the whole request has been written to the connection,
// with false when the attempt ended before that.
func (s *Session) SendWatched(ctx context.Context, call *Call, origin time.Time, giveUp GiveUp, written func(whole bool)) Attempt {
	return s.send(ctx, call, origin, giveUp, written)
}

func (s *Session) send(ctx context.Context, call *Call, origin time.Time, g GiveUp, written func(whole bool)) Attempt {
	return s.sendTo(ctx, s.pickReplica(), call, origin, g, written)
}

// sendTo is send through the proxy of replica (from 0).
func (s *Session) sendTo(ctx context.Context, replica int, call *Call, origin time.Time, g GiveUp, written func(whole bool)) Attempt {
	timeout := s.tool.Timeout()
	a := Attempt{Op: call.Op.ID, Marker: call.Op.Marker, Deadline: timeout, Before: -1, After: -1, Sent: requestOf(s.tool, call)}
	if len(s.replicas) > 1 {
		a.Replica = replica + 1
	}
	if g.After >= timeout {
		g.After = 0
	}
	start := time.Now()
	a.Start = start.Sub(origin)
	deadline := start.Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	dialer := net.Dialer{Deadline: deadline}
	conn, err := dialer.DialContext(ctx, "tcp", s.replicas[replica].Addr())
	if err != nil {
		// Nothing is written before the connection exists: not delivered.
		a.Outcome, a.Error, a.Failure = Failed, fmt.Sprintf("dial: %v", err), failureOf(err)
		if ctx.Err() != nil {
			a.Error, a.Failure = fmt.Sprintf("abandoned: %v", context.Cause(ctx)), report.FailureAbandoned
		}
		a.End = time.Since(origin)
		if written != nil {
			written(false)
		}
		return a
	}
	// The caller goes away when the run does, or when it gives up: close
	// the connection, which ends any read or write in progress.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	var gaveUp atomic.Bool
	quit := func() { gaveUp.Store(true); _ = conn.Close() }
	ended := make(chan struct{})
	if g.When != nil {
		go func() {
			select {
			case <-g.When:
				quit()
			case <-ended:
			}
		}()
	}
	w := &watchedConn{Conn: conn, want: len(call.Wire)}
	var timer *time.Timer
	w.done = func(whole bool) {
		if written != nil {
			written(whole)
		}
		if whole && g.After > 0 {
			w.mu.Lock()
			timer = time.AfterFunc(g.After, quit)
			w.mu.Unlock()
		}
	}
	r := s.tool.Send(ctx, w, call, deadline)
	close(ended)
	stop()
	w.finish()
	w.mu.Lock()
	if timer != nil {
		timer.Stop()
	}
	w.mu.Unlock()
	_ = conn.Close()
	a.End = time.Since(origin)
	a.Outcome, a.Status, a.ResultID, a.Body, a.Note = r.Outcome, r.Status, r.ResultID, r.Body, r.Note
	a.Headers, a.Response = r.Headers, r.FullBody
	if r.Err != nil {
		a.Error, a.Failure = r.Err.Error(), failureOf(r.Err)
		switch {
		case ctx.Err() != nil:
			a.Error, a.Failure = fmt.Sprintf("abandoned: %v", context.Cause(ctx)), report.FailureAbandoned
		case gaveUp.Load() && g.After > 0:
			a.Error, a.Failure = fmt.Sprintf("the caller gave up %s after sending", report.Round(g.After)), report.FailureGaveUp
			a.Deadline = a.End - a.Start
		case gaveUp.Load():
			a.Error, a.Failure = "the caller gave up "+g.Why, report.FailureGaveUp
			a.Deadline = a.End - a.Start
		case isTimeout(r.Err):
			a.Error, a.Failure = fmt.Sprintf("the caller gave up after %s: %v", report.Round(timeout), r.Err), report.FailureTimeout
		}
	}
	if a.Outcome == "" {
		a.Outcome = Unknown
	}
	return a
}

// Framed is the connection a [Tool]'s Send is given: a transport whose
// framing is known only as it writes (an HTTP client's request head) tells
// it how many bytes the whole request is, once it knows, so that the
// harness learns when the request is on the wire.
type Framed interface {
	net.Conn
	// Expect says that the whole request is total bytes (from the start
	// of the connection), not len(Call.Wire).
	Expect(total int)
}

// watchedConn reports, once, whether want bytes were written: true as soon
// as they are, false from finish when they never were.
type watchedConn struct {
	net.Conn
	want int
	done func(whole bool)

	mu       sync.Mutex
	n        int
	reported bool
}

func (c *watchedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.mu.Lock()
	c.n += n
	rep := c.n >= c.want && !c.reported
	c.reported = c.reported || rep
	c.mu.Unlock()
	if rep {
		c.done(true)
	}
	return n, err
}

// Expect implements Framed.
func (c *watchedConn) Expect(total int) {
	c.mu.Lock()
	c.want = total
	rep := c.n >= c.want && !c.reported
	c.reported = c.reported || rep
	c.mu.Unlock()
	if rep {
		c.done(true)
	}
}

func (c *watchedConn) finish() {
	c.mu.Lock()
	rep := !c.reported
	c.reported = true
	c.mu.Unlock()
	if rep {
		c.done(false)
	}
}

// Renew makes the next attempts of a [Renewer] tool go to restarted
// server processes (nothing for another tool).
func (s *Session) Renew(ctx context.Context) error {
	if r, ok := s.tool.(Renewer); ok {
		return r.Renew(ctx)
	}
	return nil
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
func (s *Session) Do(ctx context.Context, call *Call, fault faults.Fault, origin time.Time, giveUp GiveUp) (Attempt, error) {
	return s.do(ctx, call, fault, origin, giveUp, nil)
}

// do is Do that calls answered (when not nil) with the attempt as soon as
// it ended, before the oracle counts again.
func (s *Session) do(ctx context.Context, call *Call, fault faults.Fault, origin time.Time, giveUp GiveUp, answered func(Attempt)) (Attempt, error) {
	if err := s.Ready(ctx); err != nil {
		return Attempt{}, err
	}
	before, err := s.Count(ctx, call.Op.Marker)
	if err != nil {
		return Attempt{}, err
	}
	// The fault goes on the proxy of the replica the attempt goes to.
	r := s.pickReplica()
	var disarm faults.Disarm
	if fault != nil {
		if disarm, err = armAll(ctx, fault, s.replicas[r:r+1]); err != nil {
			return Attempt{}, err
		}
	}
	a := s.sendTo(ctx, r, call, origin, giveUp, nil)
	if disarm != nil {
		if err := disarm(ctx); err != nil {
			return a, fmt.Errorf("disarm %s: %w", fault.Name(), err)
		}
		RecordFault(&a, fault)
	}
	if answered != nil {
		answered(a)
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
// result" check would compare empty values, or no count would be read. So
// is, for a long-running tool, a status call that does not know the
// operation the call started or says no state (wrapping ErrStatusCall).
func (s *Session) Preflight(ctx context.Context, readOnly bool) (Attempt, error) {
	op := s.NewOp(1)
	call, err := s.tool.Prepare(op)
	if err != nil {
		return Attempt{}, fmt.Errorf("%w: %w", ErrPreflight, err)
	}
	// A long-running tool's operation is polled as soon as the call is
	// answered (before it may have finished), and judged below.
	var statusErr error
	a, err := s.do(ctx, call, nil, time.Now(), GiveUp{}, func(a Attempt) {
		if !readOnly && a.Outcome == OK && a.Status/100 == 2 {
			statusErr = s.preflightStatus(ctx, op, a)
		}
	})
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
			ErrResultID, p.ResultIDPointer(), report.Dash(a.Body))})
	}
	if statusErr != nil {
		return a, fmt.Errorf("%w: %w", ErrPreflight, statusErr)
	}
	switch {
	case readOnly:
		return a, nil
	case a.Before != 0:
		return a, fmt.Errorf("%w: oracle %s counted %s for a fresh marker before any call", ErrPreflight, s.oracle, report.Plural(a.Before, "effect"))
	case a.After != 1:
		return a, fmt.Errorf("%w: one plain call moved oracle %s by %d, want exactly 1 (is the oracle counting the marker %s?)", ErrPreflight, s.oracle, a.After-a.Before, op.Marker)
	}
	return a, nil
}

// Restart restarts a crashed tool (a Crasher) and points the proxy at where
// it now listens. The tool's other Sessions (forks) must be re-pointed with
// Repoint.
func (s *Session) Restart(ctx context.Context) error {
	c, ok := s.tool.(Crasher)
	if !ok {
		panic("harness: Restart on a tool that cannot crash")
	}
	if err := c.Restart(ctx); err != nil {
		return err
	}
	return s.Repoint(ctx)
}

// Repoint points the proxy (every replica's) at where the tool listens now
// (a restarted container's port may have moved).
func (s *Session) Repoint(ctx context.Context) error {
	for i, up := range upstreams(s.tool) {
		if err := s.replicas[i].SetUpstream(ctx, up); err != nil {
			return err
		}
	}
	return nil
}

// failureOf classifies how an attempt without an answer ended, from the
// error's type (never its text).
func failureOf(err error) report.Failure {
	var ne net.Error
	switch {
	case err == nil:
		return ""
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return report.FailureTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return report.FailureRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return report.FailureReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return report.FailureEOF
	}
	return report.FailureOther
}
