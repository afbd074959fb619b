package harness

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/onceproof/onceproof/faults"
)

// Tool is a write tool under certification, independent of its transport.
// HTTP tools are [*HTTPTool]; other transports implement the same interface.
type Tool interface {
	// Name identifies the tool in reports.
	Name() string
	// Upstream is the host:port the harness puts its fault proxy in front of.
	Upstream() string
	// Prepare renders op into a call. Rendering the same operation twice gives
	// the same call.
	Prepare(op Operation) (*Call, error)
	// Send transmits call once over conn, a fresh connection to the proxy
	// that the harness dialled and will close, and reads the reply until
	// deadline. It never re-sends.
	Send(ctx context.Context, conn net.Conn, call *Call, deadline time.Time) Reply
	// Timeout is how long the caller waits for one attempt.
	Timeout() time.Duration
	// Oracle counts the tool's effects for a marker.
	Oracle() Oracle
}

// Call is an operation rendered for a tool: the bytes one attempt puts on
// the wire.
type Call struct {
	Op Operation
	// Wire is the whole request as transmitted.
	Wire []byte
	// BodyStart is the offset of the body in Wire (len(Wire) when there is
	// none); a torn request is cut after it.
	BodyStart int
	// BodyEnd, when set, is the offset where the body ends, framing
	// following it (a JSON-RPC envelope's closing brace and newline); 0
	// means the body runs to the end of Wire. A torn request is cut before
	// it, so that what arrives is never the whole body.
	BodyEnd int
	// Summary describes the call in one line for logs ("POST /tickets").
	Summary string
}

// Reply is what one attempt got back.
type Reply struct {
	// Outcome is ok when a whole response arrived, unknown otherwise (the
	// harness alone decides failed, from how the connection failed).
	Outcome Outcome
	// Status is the response status (HTTP status code); 0 without a response.
	Status int
	// ResultID is the value the tool's result-id pointer found in a 2xx
	// response ("" when not configured or absent).
	ResultID string
	// Body is the start of the response body, for evidence.
	Body string
	// FullBody is the whole response body (up to the transport's bound),
	// for comparing a replay with the answer it repeats.
	FullBody []byte
	// Headers are the values of the response headers the tool's contract
	// compares, by canonical name (absent headers are left out).
	Headers map[string]string
	// Err is what went wrong on the wire, if anything.
	Err error
	// Note says how the attempt went out, when the transport has more to
	// say (an MCP call's session: same or new).
	Note string
}

// Readier is a tool that needs state set up through the proxy before an
// attempt's fault is armed (an MCP session). dial opens a connection to the
// proxy.
type Readier interface {
	Ready(ctx context.Context, dial func(context.Context) (net.Conn, error)) error
}

// Hinted is a tool whose server declares behaviour hints (MCP annotations):
// idempotent (calling again with the same arguments has no further effect)
// and read-only (no effect at all). known is false until the hints were
// read.
type Hinted interface {
	Hints() (idempotent, readOnly, known bool)
}

// isTimeout reports whether err is a deadline being met.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Crasher is a tool whose process the harness can kill and restart (a
// container, a server process onceproof started). Restart returns once the
// tool accepts connections again.
type Crasher interface {
	Crash(ctx context.Context) error
	Restart(ctx context.Context) error
}

// CrashNamer is a [Crasher] that says what a crash kills, for plans and
// attempt logs ("its process"); a Crasher without it runs as a container.
type CrashNamer interface {
	CrashTarget() string
}

// CrashTarget is what a crash of tool kills: "container" unless the tool
// says otherwise ([CrashNamer]).
func CrashTarget(tool Tool) string {
	if n, ok := tool.(CrashNamer); ok {
		return n.CrashTarget()
	}
	return "container"
}

// Renewer is a tool whose caller can start afresh before a retry, as an
// MCP stdio client does after a broken pipe: Renew makes the next attempts
// go to new server processes (started by the next [Session.Ready]), and
// their replies' notes say so. Scenarios draw, for such a tool, whether a
// retry goes to the same process or to a restarted one.
type Renewer interface {
	Renew(ctx context.Context) error
}

// Logged is a tool that keeps the tail of what its own processes wrote on
// standard error (bounded), for the report.
type Logged interface {
	Log() string
}

// Secretive is a tool whose requests carry secrets (values of environment
// variables its templates read with {{.Env}}): Secrets returns their
// names, and whoever writes what the tool sent redacts their values.
type Secretive interface {
	Secrets() []string
}

// Linked is a tool whose links to its dependencies run through fault
// proxies, by dependency name.
type Linked interface {
	Links() map[string]faults.Proxy
}

// BackendProvider is a tool that brings its own fault backend (the
// Toxiproxy container of its environment).
type BackendProvider interface {
	Backend() faults.Backend
}
