package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Oracle counts the effects that carry a marker. It is always queried
// directly, never through the fault proxy.
type Oracle interface {
	// Count returns how many effects carry marker.
	Count(ctx context.Context, marker string) (int, error)
	// String describes the oracle for reports ("http GET URL /count").
	String() string
}

// ErrOracle marks every error an oracle returns, so callers can tell "the
// oracle could not count" from other failures.
var ErrOracle = errors.New("oracle")

// ErrOracleShape marks an oracle answer that arrived but has the wrong shape:
// the count pointer matches nothing, the value is not a count, the body is
// not JSON, a command printed something else than an integer. The oracle is
// reachable; its spec does not fit what it answers.
var ErrOracleShape = errors.New("oracle answer has the wrong shape")

// OracleFunc adapts a Go function to an Oracle, for library users.
type OracleFunc func(ctx context.Context, marker string) (int, error)

// Count implements Oracle.
func (f OracleFunc) Count(ctx context.Context, marker string) (int, error) {
	n, err := f(ctx, marker)
	if err != nil {
		return 0, fmt.Errorf("%w func: %w", ErrOracle, err)
	}
	return n, nil
}

// String implements Oracle.
func (f OracleFunc) String() string { return "func" }

// HTTPOracle GETs a URL (a template over the marker) and reads a count at a
// JSON pointer: a number, or the length of an array.
type HTTPOracle struct {
	URL     *Template
	Pointer Pointer
	Headers map[string]string
	// Timeout bounds one query (default 10s).
	Timeout time.Duration
	// Guard checks every connection the query makes, redirects included
	// (nil: loopback only, see [Guard]).
	Guard *Guard
	// Client, when set, is used as is instead of a client built from Timeout
	// and Guard: the caller answers for where it connects.
	Client *http.Client
	// Resolve maps the URL's host:port (a container alias) to where this
	// host reaches it, at every query (a restarted container's port moves);
	// nil leaves it as written. An address Resolve changes is one of the
	// run's own containers and is dialled as it is.
	Resolve func(hostport string) string
}

// DefaultOracleTimeout bounds one oracle query when the spec sets no
// timeout.
const DefaultOracleTimeout = 10 * time.Second

// NewHTTPOracle returns an oracle reading pointer count from GET url.
func NewHTTPOracle(url, count string) (*HTTPOracle, error) {
	t, err := ParseTemplate("oracle.http.url", url)
	if err != nil {
		return nil, fmt.Errorf("oracle url: %w", err)
	}
	p, err := ParsePointer(count)
	if err != nil {
		return nil, fmt.Errorf("oracle count: %w", err)
	}
	return &HTTPOracle{URL: t, Pointer: p}, nil
}

// String implements Oracle.
func (o *HTTPOracle) String() string {
	return fmt.Sprintf("http GET %s %s", o.URL, o.Pointer)
}

// Count implements Oracle.
func (o *HTTPOracle) Count(ctx context.Context, marker string) (int, error) {
	n, err := o.count(ctx, marker)
	if err != nil {
		return 0, fmt.Errorf("%w %s: %w", ErrOracle, o, err)
	}
	return n, nil
}

func (o *HTTPOracle) count(ctx context.Context, marker string) (int, error) {
	raw, err := o.URL.Render(Operation{Marker: marker})
	if err != nil {
		return 0, err
	}
	url, mapped, err := ResolveURL(raw, o.Resolve)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	for k, v := range o.Headers {
		req.Header.Set(k, v)
	}
	client := o.Client
	if client == nil {
		timeout := o.Timeout
		if timeout <= 0 {
			timeout = DefaultOracleTimeout
		}
		g := o.Guard
		if mapped != "" {
			g = g.Trusting(mapped) // one of the run's own containers
		}
		client = g.HTTPClient(timeout)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode/100 != 2 {
		return 0, fmt.Errorf("status %d: %s", resp.StatusCode, Snippet(body))
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return 0, &FieldError{Field: "oracle.http.url", Err: fmt.Errorf("%w: the response is not JSON: %w: %s", ErrOracleShape, err, Snippet(body))}
	}
	v, err := o.Pointer.Lookup(doc)
	if err != nil {
		return 0, &FieldError{Field: "oracle.http.count", Err: fmt.Errorf("%w: %w in %s", ErrOracleShape, err, Snippet(body))}
	}
	n, err := countOf(v)
	if err != nil {
		return 0, &FieldError{Field: "oracle.http.count", Err: fmt.Errorf("%w: %w", ErrOracleShape, err)}
	}
	return n, nil
}

// countOf reads a count from a JSON value: a non-negative integer or an
// array's length.
func countOf(v any) (int, error) {
	switch x := v.(type) {
	case []any:
		return len(x), nil
	case json.Number:
		f, err := x.Float64()
		if err != nil || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
			return 0, fmt.Errorf("count %s is not a non-negative integer", x)
		}
		return int(f), nil
	case float64:
		if x < 0 || x != math.Trunc(x) || x > math.MaxInt32 {
			return 0, fmt.Errorf("count %v is not a non-negative integer", x)
		}
		return int(x), nil
	}
	return 0, fmt.Errorf("count is a %T, want a number or an array", v)
}

// CommandOracle runs a program with ONCEPROOF_MARKER in its environment; the
// program prints the count as an integer.
type CommandOracle struct {
	Argv    []string
	Env     []string
	Timeout time.Duration
}

// String implements Oracle.
func (o *CommandOracle) String() string { return "command " + strings.Join(o.Argv, " ") }

// Count implements Oracle.
func (o *CommandOracle) Count(ctx context.Context, marker string) (int, error) {
	if len(o.Argv) == 0 {
		panic("harness: CommandOracle without a command")
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.Argv[0], o.Argv[1:]...)
	ownProcessGroup(cmd)
	cmd.WaitDelay = commandWaitDelay
	cmd.Env = append(append(os.Environ(), o.Env...), "ONCEPROOF_MARKER="+marker)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", context.Cause(ctx), err)
		}
		return 0, fmt.Errorf("%w %s: %w: %s", ErrOracle, o, err, Snippet(stderr.Bytes()))
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w %s: %w", ErrOracle, o, &FieldError{Field: "oracle.command",
			Err: fmt.Errorf("%w: printed %q, want a non-negative integer", ErrOracleShape, Snippet(out))})
	}
	return n, nil
}

// commandWaitDelay bounds how long a cancelled command oracle's output is
// waited for once the command is killed.
const commandWaitDelay = 200 * time.Millisecond

// Settled wraps o so that a count is returned only once it is stable: it
// counts, waits settle, and counts again until two counts agree (effects may
// land after the response, e.g. through a queue). A zero settle returns o.
func Settled(o Oracle, settle time.Duration) Oracle {
	if settle <= 0 {
		return o
	}
	return &settled{o: o, settle: settle}
}

type settled struct {
	o      Oracle
	settle time.Duration
}

// maxSettleRounds bounds how long a moving count is waited for.
const maxSettleRounds = 20

func (s *settled) String() string { return fmt.Sprintf("%s (settle %s)", s.o, s.settle) }

func (s *settled) Count(ctx context.Context, marker string) (int, error) {
	prev, err := s.o.Count(ctx, marker)
	if err != nil {
		return 0, err
	}
	timer := time.NewTimer(s.settle)
	defer timer.Stop()
	for i := range maxSettleRounds {
		if i > 0 {
			timer.Reset(s.settle)
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%w %s: settling: %w", ErrOracle, s.o, context.Cause(ctx))
		case <-timer.C:
		}
		n, err := s.o.Count(ctx, marker)
		if err != nil {
			return 0, err
		}
		if n == prev {
			return n, nil
		}
		prev = n
	}
	return 0, fmt.Errorf("%w %s: count for %s still moving after %d rounds of %s", ErrOracle, s.o, marker, maxSettleRounds, s.settle)
}

// Snippet shortens b for error messages: trimmed, cut at 200 bytes.
func Snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
