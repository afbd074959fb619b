package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/onceproof/onceproof/harness/report"
)

// DefaultFinishWithin is how long a long-running operation may take to
// finish when its tool declares nothing else.
const DefaultFinishWithin = 30 * time.Second

// LongRunningConfig says how a tool's write (the trigger) starts an
// operation that runs on after the answer (a workflow), and how the status
// call reports on it.
type LongRunningConfig struct {
	// StatusMethod is the status call's method (default GET).
	StatusMethod string
	// StatusURL is the status call's URL, a template that names the
	// operation with {{.OperationID}} (the id the trigger's answer gave)
	// or {{.Key}}, resolved against the tool's URL (so "{{.OperationID}}"
	// alone follows a Location header). It must be on the tool's host and
	// port: status calls go through the tool's fault proxy.
	StatusURL string
	// StatusHeaders are sent with every status call; values are templates.
	StatusHeaders map[string]string
	// OperationID is a JSON pointer into the trigger's 2xx answer to the
	// operation's id; "" means the tool's ResultID, unless
	// OperationIDHeader is set.
	OperationID string
	// OperationIDHeader, when set, is the response header of the
	// trigger's 2xx answer whose value is the operation's id (Location,
	// Operation-Location).
	OperationIDHeader string
	// State is a JSON pointer into a status answer to the operation's
	// state; a state among Done has finished, one among Failed has ended in
	// failure (finished too), any other is still running.
	State        string
	Done, Failed []string
	// FinishWithin is how long an operation may take to finish (default
	// DefaultFinishWithin).
	FinishWithin time.Duration
}

// OperationState is what one status poll said about an operation.
type OperationState string

// The states a status poll reads.
const (
	// StateRunning: a 2xx answer whose state is neither done nor failed.
	StateRunning OperationState = "running"
	// StateDone: a 2xx answer whose state is among the done values.
	StateDone OperationState = "done"
	// StateFailed: a 2xx answer whose state is among the failed values.
	StateFailed OperationState = "failed"
	// StateNotFound: 404 or 410: the tool does not know the operation.
	StateNotFound OperationState = "not-found"
	// StateUnknown: no answer, another status, or no state in the answer.
	StateUnknown OperationState = "unknown"
)

// Finished reports whether s is a terminal state (done or failed).
func (s OperationState) Finished() bool { return s == StateDone || s == StateFailed }

// OperationStatus is a status poll's reading: the state and the value the
// state pointer found ("" when none).
type OperationStatus struct {
	State OperationState
	Value string
}

// LongRunning is a tool whose writes start operations that run on after
// the answer, reported on by a status call (an [*HTTPTool] with
// [HTTPConfig.LongRunning]). The status calls are attempts the harness
// makes and records ([Session.Poll]).
type LongRunning interface {
	// LongRunning reports whether the tool declares long-running
	// operations.
	LongRunning() bool
	// OperationID is the operation a trigger's 2xx answer names ("" when
	// it names none).
	OperationID(trigger Attempt) string
	// PrepareStatus renders the status call of the operation id that op's
	// trigger was answered with.
	PrepareStatus(op Operation, id string) (*Call, error)
	// ReadStatus reads a status poll's answer.
	ReadStatus(poll Attempt) OperationStatus
	// FinishWithin is how long an operation may take to finish.
	FinishWithin() time.Duration
}

// ErrNotLongRunning marks a status poll asked of a tool that declares no
// long-running operations.
var ErrNotLongRunning = errors.New("the tool declares no long-running operations")

// ErrStatusCall marks a long_running section the preflight call shows to
// be wrong: the trigger's answer names no operation, or the status call
// does not know the operation a plain call just started, or says no state.
// Judging the tool by it would blame the tool for the spec.
var ErrStatusCall = errors.New("the status call does not follow the operation")

// longRunning is an HTTPTool's parsed long-running configuration.
type longRunning struct {
	method       string
	url          *Template
	headers      map[string]*Template
	operationID  Pointer
	idHeader     string
	state        Pointer
	done, failed []string
	within       time.Duration
}

// newLongRunning validates c for the tool t (its URL and result_id known).
func (t *HTTPTool) newLongRunning(c LongRunningConfig) (*longRunning, error) {
	lr := &longRunning{method: c.StatusMethod, headers: map[string]*Template{}, within: c.FinishWithin,
		done: slices.Clone(c.Done), failed: slices.Clone(c.Failed)}
	if lr.method == "" {
		lr.method = http.MethodGet
	}
	if lr.within <= 0 {
		lr.within = DefaultFinishWithin
	}
	var err error
	if lr.url, err = ParseTemplate("status url", c.StatusURL); err != nil {
		return nil, ConfigError(t.name, "long_running.status.url", err)
	}
	if !strings.Contains(c.StatusURL, ".OperationID") && !strings.Contains(c.StatusURL, ".Key") {
		return nil, ConfigError(t.name, "long_running.status.url", fmt.Errorf("url %q names no operation: use {{.OperationID}} (from the trigger's answer) or {{.Key}}", c.StatusURL))
	}
	for k, v := range c.StatusHeaders {
		tpl, err := ParseTemplate("header "+k, v)
		if err != nil {
			return nil, ConfigError(t.name, "long_running.status.headers."+k, err)
		}
		lr.headers[k] = tpl
	}
	if err := t.operationID(lr, c); err != nil {
		return nil, err
	}
	if lr.state, err = ParsePointer(c.State); err != nil || c.State == "" {
		if err == nil {
			err = errors.New("want a JSON pointer to the operation's state in a status answer, e.g. /status")
		}
		return nil, ConfigError(t.name, "long_running.done.pointer", err)
	}
	if len(lr.done) == 0 {
		return nil, ConfigError(t.name, "long_running.done.values", errors.New("no done values: a status poll could never see the operation finish"))
	}
	for _, v := range lr.failed {
		if slices.Contains(lr.done, v) {
			return nil, ConfigError(t.name, "long_running.done.failed", fmt.Errorf("%q is both done and failed", v))
		}
	}
	// The status call goes through the tool's proxy: same scheme and host.
	check := "operation-check"
	if lr.idHeader != "" {
		check = "/operation-check" // a header's id may be a path
	}
	u, err := lr.statusURL(t.url, Operation{ID: "op-check", Key: "key-check", Marker: "marker-check", Seed: 1}, check)
	if err != nil {
		return nil, ConfigError(t.name, "long_running.status.url", err)
	}
	if u.Scheme != t.url.Scheme || u.Host != t.url.Host {
		return nil, ConfigError(t.name, "long_running.status.url", fmt.Errorf("url %q is not on the tool's %s://%s: status calls go through the tool's fault proxy", c.StatusURL, t.url.Scheme, t.url.Host))
	}
	return lr, nil
}

// operationID sets where lr reads the operation's id: a header, or a
// pointer (operation_id, else result_id).
func (t *HTTPTool) operationID(lr *longRunning, c LongRunningConfig) error {
	if c.OperationIDHeader != "" {
		if c.OperationID != "" {
			return ConfigError(t.name, "long_running.operation_id_header", errors.New("operation_id names the operation too: keep one"))
		}
		lr.idHeader = http.CanonicalHeaderKey(c.OperationIDHeader)
		if !slices.Contains(t.capture, lr.idHeader) {
			t.capture = append(t.capture, lr.idHeader)
		}
		return nil
	}
	idPtr := c.OperationID
	field := "long_running.operation_id"
	if idPtr == "" {
		idPtr, field = t.ResultIDPointer(), "result_id"
	}
	if idPtr == "" {
		return ConfigError(t.name, "long_running.operation_id", errors.New("no pointer to the operation id: set operation_id (or result_id) to where the trigger's answer names the operation, or operation_id_header"))
	}
	var err error
	if lr.operationID, err = ParsePointer(idPtr); err != nil {
		return ConfigError(t.name, field, err)
	}
	return nil
}

// statusURL renders the status URL for op and id, resolved against base
// (the tool's URL).
func (lr *longRunning) statusURL(base *url.URL, op Operation, id string) (*url.URL, error) {
	s, err := lr.url.RenderOperation(op, id)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("url %q: want http://host:port/path", s)
	}
	return base.ResolveReference(u), nil
}

// LongRunning implements [LongRunning].
func (t *HTTPTool) LongRunning() bool { return t.lro != nil }

// OperationID implements [LongRunning].
func (t *HTTPTool) OperationID(trigger Attempt) string {
	switch {
	case t.lro == nil, trigger.Outcome != OK, trigger.Status/100 != 2:
		return ""
	case t.lro.idHeader != "":
		return trigger.Headers[t.lro.idHeader]
	}
	return ReadResultID(t.lro.operationID, trigger.Response)
}

// operationIDHeader is the header the operation's id is read from ("" for
// a pointer into the body).
func (t *HTTPTool) operationIDHeader() string {
	if t.lro == nil {
		return ""
	}
	return t.lro.idHeader
}

// FinishWithin implements [LongRunning].
func (t *HTTPTool) FinishWithin() time.Duration {
	if t.lro == nil {
		return 0
	}
	return t.lro.within
}

// PrepareStatus implements [LongRunning]: the status request, without a
// body.
func (t *HTTPTool) PrepareStatus(op Operation, id string) (*Call, error) {
	if t.lro == nil {
		return nil, fmt.Errorf("tool %s: %w", t.name, ErrNotLongRunning)
	}
	u, err := t.lro.statusURL(t.url, op, id)
	if err != nil {
		return nil, fmt.Errorf("tool %s: status url: %w", t.name, err)
	}
	if u.Scheme != t.url.Scheme || u.Host != t.url.Host {
		return nil, fmt.Errorf("tool %s: %w: the status url %s is not on the tool's %s://%s (status calls go through the tool's fault proxy)", t.name, ErrStatusCall, u, t.url.Scheme, t.url.Host)
	}
	var hdr bytes.Buffer
	if k, err := writeHead(&hdr, t.lro.method, u, t.lro.headers, op, id); err != nil {
		return nil, fmt.Errorf("tool %s: status header %s: %w", t.name, k, err)
	}
	return bodylessCall(op, t.lro.method, u, &hdr), nil
}

// ReadStatus implements [LongRunning].
func (t *HTTPTool) ReadStatus(poll Attempt) OperationStatus {
	switch {
	case t.lro == nil, poll.Outcome != OK:
		return OperationStatus{State: StateUnknown}
	case poll.Status == http.StatusNotFound, poll.Status == http.StatusGone:
		return OperationStatus{State: StateNotFound}
	case poll.Status/100 != 2:
		return OperationStatus{State: StateUnknown}
	}
	v := ReadResultID(t.lro.state, poll.Response)
	switch {
	case v == "":
		return OperationStatus{State: StateUnknown}
	case slices.Contains(t.lro.done, v):
		return OperationStatus{State: StateDone, Value: v}
	case slices.Contains(t.lro.failed, v):
		return OperationStatus{State: StateFailed, Value: v}
	}
	return OperationStatus{State: StateRunning, Value: v}
}

// Poll makes one status call of a [LongRunning] tool for the operation id
// that op's trigger was answered with, through the proxy with no fault, and
// records what it read in the attempt (Attempt.Poll; no effects counted).
func (s *Session) Poll(ctx context.Context, op Operation, id string, origin time.Time) (Attempt, OperationStatus, error) {
	lr, ok := s.tool.(LongRunning)
	if !ok || !lr.LongRunning() {
		return Attempt{}, OperationStatus{}, fmt.Errorf("tool %s: %w", s.tool.Name(), ErrNotLongRunning)
	}
	call, err := lr.PrepareStatus(op, id)
	if err != nil {
		return Attempt{}, OperationStatus{}, err
	}
	a := s.Send(ctx, call, origin, GiveUp{})
	st := lr.ReadStatus(a)
	a.Poll = string(st.State)
	if st.Value != "" && st.Value != string(st.State) {
		a.Poll += " (" + st.Value + ")"
	}
	return a, st, ctx.Err()
}

// preflightStatus follows the operation that the preflight call a (of op)
// started with one status poll, made as soon as a was answered: the
// trigger's answer must name the operation, and the status call must know
// it and say its state. Nothing to do for a tool that is not long-running.
func (s *Session) preflightStatus(ctx context.Context, op Operation, a Attempt) error {
	lr, ok := s.tool.(LongRunning)
	if !ok || !lr.LongRunning() {
		return nil
	}
	id := lr.OperationID(a)
	if id == "" {
		field, where := "long_running.operation_id", "the 2xx answer"
		if h, ok := s.tool.(interface{ operationIDHeader() string }); ok && h.operationIDHeader() != "" {
			field, where = "long_running.operation_id_header", "the "+h.operationIDHeader()+" header of the 2xx answer"
		}
		return &FieldError{Field: field, Err: fmt.Errorf(
			"%w: finds no operation id in %s of a plain call (%s)", ErrStatusCall, where, report.Dash(a.Body))}
	}
	answered := time.Now()
	p, st, err := s.Poll(ctx, op, id, answered)
	if errors.Is(err, ErrStatusCall) {
		return &FieldError{Field: "long_running.status.url", Err: err}
	}
	if err != nil {
		return err
	}
	switch {
	case p.Outcome != OK:
		return fmt.Errorf("%w: tool %s: the status call for operation %q got no response: %s", ErrUnreachable, s.tool.Name(), id, p.Error)
	case st.State == StateNotFound:
		return &FieldError{Field: "long_running.status.url", Err: fmt.Errorf(
			"%w: answered %d for operation %q, polled within %s of the answer of the plain call that started it: the url is wrong, or the tool forgets an operation that soon",
			ErrStatusCall, p.Status, id, report.Round(p.End))}
	case st.State == StateUnknown && p.Status/100 == 2:
		return &FieldError{Field: "long_running.done.pointer", Err: fmt.Errorf(
			"%w: finds no state in the status answer for operation %q (%s)", ErrStatusCall, id, report.Dash(p.Body))}
	case st.State == StateUnknown:
		return &FieldError{Field: "long_running.status.url", Err: fmt.Errorf(
			"%w: answered %d for operation %q, want 2xx with its state (body: %s)", ErrStatusCall, p.Status, id, report.Dash(p.Body))}
	}
	return nil
}
